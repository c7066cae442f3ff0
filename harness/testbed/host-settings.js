// The one host setting satbench changes: net.ipv4.tcp_allowed_congestion_
// control. A namespace other than the host's may only default to an
// algorithm the host allows (else EPERM), so one a scenario needs is added
// there. What was added is written to HOST_SETTINGS_FILE, and taken out
// again when satbench ends (after a signal too) unless another satbench
// still runs a testbed; `satbench cleanup` does it after a killed run, and
// `satbench doctor` says what is still changed.
import fs from 'node:fs';
import path from 'node:path';
import { HOST_SETTINGS_FILE, STATE_DIR, stateEntries } from './state.js';
import { alive } from './processes.js';

export const ALLOWED_CC = 'net.ipv4.tcp_allowed_congestion_control';
const PROC_FILE = `/proc/sys/${ALLOWED_CC.replaceAll('.', '/')}`;
export const WHY = 'testbed namespaces may only default to a congestion control the host allows';

const words = (s) => s.trim().split(/\s+/).filter(Boolean);

// Pure: the record after adding `cc` to a list that was `allowed`: what the
// list was before satbench first touched it, and everything it added.
export function recordAddition(record, allowed, cc) {
  return {
    was: record?.was ?? allowed.join(' '),
    added: [...new Set([...(record?.added ?? []), cc])],
    why: WHY,
  };
}

// Pure: the list to write back: the current one without what satbench
// added (an algorithm someone else added meanwhile stays).
export const restoredList = (current, added) => current.filter((c) => !added.includes(c));

export function readHostChanges(file = HOST_SETTINGS_FILE) {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    return null;
  }
}

/**
 * Makes sure the host allows congestion control `cc`, adding it (and
 * recording that) if not. `say` words what is changed for the user.
 */
export function allowCongestionControl(cc, say = () => {}) {
  restoreAtExit();
  const allowed = words(fs.readFileSync(PROC_FILE, 'utf8'));
  if (allowed.includes(cc)) return;
  say(
    `adding ${cc} to ${ALLOWED_CC} (was: ${allowed.join(' ')}) so testbed namespaces can use it; put back when satbench ends`,
  );
  const changes = readHostChanges() ?? {};
  changes[ALLOWED_CC] = recordAddition(changes[ALLOWED_CC], allowed, cc);
  fs.mkdirSync(path.dirname(HOST_SETTINGS_FILE), { recursive: true });
  fs.writeFileSync(HOST_SETTINGS_FILE, JSON.stringify(changes, null, 2));
  fs.writeFileSync(PROC_FILE, [...allowed, cc].join(' '));
}

// Whether a satbench process other than this one owns a testbed now: it
// may still need what was added, so the host stays as it is.
function othersRunning() {
  return stateEntries().ids.some((id) => {
    try {
      const owner = JSON.parse(fs.readFileSync(path.join(STATE_DIR, id, 'state.json'), 'utf8')).owner_pid;
      return owner != null && owner !== process.pid && alive(owner);
    } catch {
      return false;
    }
  });
}

/**
 * Puts back what satbench changed on the host, unless another satbench
 * still runs a testbed. Synchronous, so that it can run as the process
 * exits. Returns what was put back ({setting: value}) or null.
 */
export function restoreHostSettings() {
  const changes = readHostChanges();
  if (!changes?.[ALLOWED_CC] || othersRunning()) return null;
  const value = restoredList(words(fs.readFileSync(PROC_FILE, 'utf8')), changes[ALLOWED_CC].added).join(' ');
  fs.writeFileSync(PROC_FILE, value);
  fs.rmSync(HOST_SETTINGS_FILE, { force: true });
  return { [ALLOWED_CC]: value };
}

let armed = false;
function restoreAtExit() {
  if (armed) return;
  armed = true;
  process.on('exit', () => {
    try {
      restoreHostSettings();
    } catch (e) {
      process.stderr.write(`satbench: could not put ${ALLOWED_CC} back: ${e.message}\n`);
    }
  });
}
