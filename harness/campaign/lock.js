// A results folder belongs to the one campaign that writes it: two `bench
// --resume DIR` at once would both run the missing runs. The holder's
// lock file (DIR/campaign.lock: its PID, the start time of that process
// so that a recycled PID is not taken for it, its command) is made with
// O_EXCL; a second campaign is refused in one line naming the holder. A
// lock whose process is gone (killed, crashed) is taken over.
import fs from 'node:fs';
import path from 'node:path';
import { UsageError } from '../core/errors.js';
import { alive, startTicks } from '../testbed/processes.js';

export const LOCK = 'campaign.lock';

const held = new Set();
let exitHooked = false;
// however the process ends, its locks go with it (a SIGKILL leaves one,
// which the next campaign takes over); installed with the first lock, not
// on import
const dropHeld = () => {
  for (const file of held) fs.rmSync(file, { force: true });
};

// Pure: whether a lock's content names a process that still runs, as
// `now` (alive, startTicks) sees it.
export function holderAlive(holder, now = { alive, startTicks }) {
  if (!holder || !Number.isInteger(holder.pid)) return false;
  return now.alive(holder.pid) && (holder.start == null || now.startTicks(holder.pid) === holder.start);
}

/**
 * Takes `dir`'s lock for `command` (bench, bulk) and returns its release.
 * The process that holds it may take it again (a test's resume).
 */
export function lockResults(dir, command) {
  const file = path.join(dir, LOCK);
  const me = { pid: process.pid, start: startTicks(process.pid), command, since: new Date().toISOString() };
  // written whole beside it, then linked: the lock appears with its content or not at all
  const tmp = `${file}.${process.pid}`;
  fs.writeFileSync(tmp, JSON.stringify(me) + '\n');
  try {
    for (let attempt = 0; attempt < 2; attempt++) {
      if (tryLink(tmp, file)) {
        if (!exitHooked) process.once('exit', dropHeld);
        exitHooked = true;
        held.add(file);
        return () => release(file);
      }
      const holder = readHolder(file);
      if (holder?.pid === process.pid) return () => release(file);
      if (holderAlive(holder))
        throw new UsageError(
          `${dir}: in use by satbench ${holder.command ?? ''} (pid ${holder.pid}, since ${holder.since ?? '?'}); one campaign writes a results folder at a time: wait for it to end, or stop it`,
        );
      fs.rmSync(file, { force: true }); // its holder is gone: take it over
    }
  } finally {
    fs.rmSync(tmp, { force: true });
  }
  throw new UsageError(`${dir}: another campaign took ${LOCK} at the same moment; try again`);
}

function tryLink(from, to) {
  try {
    fs.linkSync(from, to);
    return true;
  } catch (e) {
    if (e.code === 'EEXIST') return false;
    throw e;
  }
}

function readHolder(file) {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    return null; // unreadable (not ours): no live holder to wait for
  }
}

function release(file) {
  if (!held.delete(file)) return;
  fs.rmSync(file, { force: true });
}
