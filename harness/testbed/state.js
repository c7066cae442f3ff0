// Where satbench keeps what it builds on the host, so that another process
// (`testbed down`, `testbed status`, `cleanup`) and a run after a crash can
// find it: a folder per testbed under STATE_DIR, and the host settings it
// changed beside it.
import fs from 'node:fs';
import path from 'node:path';
import { isValidId } from './addressing.js';

export const STATE_DIR = process.env.SATBENCH_STATE_DIR || '/run/satbench/testbeds';
export const HOST_SETTINGS_FILE = path.join(path.dirname(STATE_DIR), 'host-settings.json');

const stateFile = (id) => path.join(STATE_DIR, id, 'state.json');

export function readState(id) {
  try {
    return JSON.parse(fs.readFileSync(stateFile(id), 'utf8'));
  } catch {
    return null;
  }
}

export function writeState(state) {
  fs.mkdirSync(path.dirname(stateFile(state.id)), { recursive: true });
  fs.writeFileSync(stateFile(state.id), JSON.stringify(state, null, 2));
}

// Pure: the entries of the state folder split into testbed ids and stray
// names (no testbed can have them: a folder someone made, a half-copied
// one); strays must not stop `status` or `cleanup`.
export function splitEntries(names) {
  return {
    ids: names.filter(isValidId).sort(),
    stray: names.filter((n) => !isValidId(n)).sort(),
  };
}

export function stateEntries() {
  return splitEntries(fs.existsSync(STATE_DIR) ? fs.readdirSync(STATE_DIR) : []);
}

export function removeStray(name) {
  fs.rmSync(path.join(STATE_DIR, name), { recursive: true, force: true });
}
