// Shared by the integration tests: run the CLI, write short-delay
// profiles, and look at what exists on the machine, and what of it a run
// of ours made (other satbench runs may share the machine).
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from '../../harness/core/sys.js';
import { listNamespaces, STATE_DIR } from '../../harness/testbed/testbed.js';
import { parseNamespace } from '../../harness/testbed/addressing.js';
import { netemProbeNamespace } from '../../harness/testbed/link-backends.js';
import { alive, startTicks } from '../../harness/testbed/processes.js';
import { readResults, RESULTS } from '../../harness/results/store.js';

export { alive } from '../../harness/testbed/testbed.js';

export const CLI = path.join(ROOT, 'harness/cli.js');

// What the helpers below started and a test may leave running when it
// fails (a satbench process, a watcher's timer): each one's stop, run by
// stopStarted after every test (test/hooks.js), whatever happened.
const started = new Set();
const track = (stop) => {
  started.add(stop);
  return () => {
    started.delete(stop);
    return stop();
  };
};
// How long a satbench left running has to end on SIGTERM (recording its
// run as interrupted and tearing its testbed down takes a few seconds)
// before it is killed, leaving its testbed to `satbench cleanup`.
const STOP_MS = 15000;
const stopChild = (child) => async () => {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  let timer;
  const late = new Promise((r) => (timer = setTimeout(r, STOP_MS)));
  await Promise.race([gone, late]);
  clearTimeout(timer);
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
};

/** Stops every satbench process and watcher the helpers started that is still going. */
export async function stopStarted() {
  const stops = [...started];
  started.clear();
  await Promise.all(stops.map((stop) => stop()));
}

// `made`: what the run made (watchSatbench), for leftBehind.
export function satbench(args, { timeoutMs = 120000, env } = {}) {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [CLI, ...args],
      { timeout: timeoutMs, env: { ...process.env, ...env } },
      (err, stdout, stderr) => {
        done();
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        resolve({ code, stdout, stderr, made: watch.stop() });
      },
    );
    const done = track(stopChild(child));
    const watch = watchSatbench(child.pid);
  });
}

// satbench without CAP_NET_ADMIN (as root: with it dropped), so good input
// stops at "needs root" instead of building testbeds. Dropped rather than
// run as nobody, who could not read a clone under /root or in a mktemp -d
// folder; a non-root user lacks the capability the same way.
export function unprivilegedSatbench(args) {
  const [cmd, pre] =
    process.getuid() === 0
      ? ['setpriv', ['--bounding-set=-net_admin', '--inh-caps=-net_admin', process.execPath]]
      : [process.execPath, []];
  return new Promise((resolve) => {
    execFile(cmd, [...pre, CLI, ...args], { timeout: 30000 }, (err, stdout, stderr) =>
      resolve({ code: err ? err.code : 0, stdout, stderr }),
    );
  });
}

export function spawnSatbench(args) {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const done = track(stopChild(child));
  child.once('exit', done);
  return child;
}

export function exited(child) {
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

// A link with short delays (20 ms round trip over the satellite): the
// GEO/LEO presets are for bench, not for tests.
export const SHORT = {
  satellite: { forward: { delay: '10ms', rate: '20mbit' }, return: { delay: '10ms', rate: '20mbit' } },
  internet: { forward: { delay: '5ms' }, return: { delay: '5ms' } },
};

// The records of a results folder, as satbench reads them.
export const records = (dir) => readResults(path.join(dir, RESULTS));

export function writeProfile(obj) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-it-'));
  const file = path.join(dir, 'profile.json');
  fs.writeFileSync(file, JSON.stringify(obj));
  return file;
}

export async function namespacesOfTestbed(id) {
  return (await listNamespaces()).filter((n) => n.startsWith(`sbt-${id}-`));
}

export async function until(fn, ms = 10000) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 50));
  }
}

// A page of three resources (HTML, a stylesheet, an image) in a new folder.
export function tinySite() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-site-'));
  fs.writeFileSync(
    path.join(dir, 'index.html'),
    '<!doctype html><html><head><link rel="stylesheet" href="s.css"></head><body><h1>Over the satellite</h1><img src="p.gif" width="1" height="1"></body></html>',
  );
  fs.writeFileSync(path.join(dir, 's.css'), 'h1 { color: #123; }');
  fs.writeFileSync(
    path.join(dir, 'p.gif'),
    Buffer.from('R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==', 'base64'),
  );
  return dir;
}

// Every process and its command line (arguments joined by spaces).
export function cmdlines() {
  const out = [];
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      out.push({ pid: Number(d), cmd: fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').replaceAll('\0', ' ') });
    } catch {
      /* gone */
    }
  }
  return out;
}

// The testbeds satbench process `pid` owns now, from their state files.
export function testbedsOf(pid) {
  const out = [];
  for (const id of fs.existsSync(STATE_DIR) ? fs.readdirSync(STATE_DIR) : []) {
    try {
      const st = JSON.parse(fs.readFileSync(path.join(STATE_DIR, id, 'state.json'), 'utf8'));
      if (st.owner_pid === pid) out.push(st);
    } catch {
      /* being written or removed */
    }
  }
  return out;
}

/**
 * Watches satbench process `pid` while it runs: the testbeds it made (their
 * state names it their owner) and their helpers, plus the PIDs `more()`
 * gives, so that what it leaves can be told from what other satbench runs
 * on the machine have. stop() returns `made`, for leftBehind; a caller may
 * add the ids of testbeds it made detached (owned by nobody).
 */
export function watchSatbench(pid, more = () => []) {
  const made = { pid, ids: new Set(), pids: new Map() };
  const note = (p) => {
    if (!made.pids.has(p)) made.pids.set(p, startTicks(p));
  };
  const look = () => {
    for (const st of testbedsOf(pid)) {
      made.ids.add(st.id);
      for (const p of st.processes) note(p.pid);
    }
    for (const p of more()) note(p);
  };
  look();
  const timer = setInterval(look, 50);
  const untrack = track(() => clearInterval(timer));
  return {
    made,
    stop: () => {
      untrack();
      look();
      return made;
    },
  };
}

/**
 * What of `made` (watchSatbench) is still on the machine, in words: its
 * testbeds' namespaces, state and processes (those watched, and any whose
 * command line names a testbed's folder), and its netem probe's namespace.
 */
export async function leftBehind(made) {
  const found = [];
  const probe = netemProbeNamespace(made.pid);
  for (const n of await listNamespaces())
    if (n === probe || made.ids.has(parseNamespace(n)?.id)) found.push(`namespace ${n}`);
  for (const st of testbedsOf(made.pid)) found.push(`testbed state ${st.id}`);
  for (const id of made.ids) if (fs.existsSync(path.join(STATE_DIR, id))) found.push(`state folder ${id}`);
  for (const [p, ticks] of made.pids) if (alive(p) && startTicks(p) === ticks) found.push(`process ${p}`);
  // and any other process naming a testbed's folder (a helper's child, say)
  const folders = [...made.ids].map((id) => `${path.join(STATE_DIR, id)}/`);
  for (const p of cmdlines())
    if (!made.pids.has(p.pid) && folders.some((f) => p.cmd.includes(f)) && alive(p.pid))
      found.push(`process ${p.pid}: ${p.cmd.slice(0, 80)}`);
  return found;
}

// Runs `satbench CMD ARGS` once over SHORT into a fresh folder (named
// after `tag`) that must succeed and leave nothing of its own behind; its
// records.
export async function runShort(cmd, args, tag) {
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), `satbench-${tag}-`)), 'r');
  const r = await satbench([cmd, '--profile', writeProfile(SHORT), ...args, '-n', '1', '--out', out], {
    timeoutMs: 240000,
  });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(await leftBehind(r.made), [], 'a run left these behind');
  return records(out);
}
