// The helper processes of a testbed (linkem, the origin, the PEPs, satbulk,
// OpenVPN): starting one and waiting for its "ready", telling a live one
// from a dead one (a zombie is dead), and saying why one died: its exit
// status and the last lines of its log. The wording and /proc parsing are
// plain functions; spawnHelper and watchHelpers are the I/O.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';

/**
 * Pure: the fields of /proc/PID/stat we use: state (R, S, D, Z, X, …),
 * ppid, CPU time (user + system) and start time in clock ticks, and
 * (Linux >= 3.5) the exit status a zombie carries, in waitpid's form.
 * null when unreadable.
 */
export function parseStat(text) {
  const close = text.lastIndexOf(')');
  if (close < 0) return null;
  const f = text
    .slice(close + 2)
    .trim()
    .split(' ');
  if (f.length < 20) return null;
  const exit = f.length > 49 ? Number(f[49]) : null;
  return {
    state: f[0],
    ppid: Number(f[1]),
    cpuTicks: Number(f[11]) + Number(f[12]),
    startTicks: Number(f[19]),
    exitStatus: Number.isFinite(exit) ? exit : null,
  };
}

export function procStat(pid) {
  try {
    return parseStat(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return null;
  }
}

// /proc counts CPU time in USER_HZ ticks, which Linux fixes at 100 for
// user space on every architecture.
const USER_HZ = 100;

/** CPU time (user + system) `pid` has used, in ms; null when it is gone. */
export function cpuMs(pid) {
  const t = procStat(pid)?.cpuTicks;
  return Number.isFinite(t) ? (t * 1000) / USER_HZ : null;
}

// Pure: whether a process in `state` still runs: a zombie (Z) or a dead
// one (X) has ended and only waits for its parent to reap it.
export const runningState = (state) => state != null && state !== 'Z' && state !== 'X';

/** Whether `pid` is a running process (not a zombie). */
export function alive(pid) {
  return Number.isInteger(pid) && pid > 0 && runningState(procStat(pid)?.state);
}

// A process's start time (clock ticks since boot), so that a recycled PID
// is not taken for the process it once was.
export const startTicks = (pid) => procStat(pid)?.startTicks ?? null;

// Pure: waitpid's status (as /proc/PID/stat's exit_code) as {code, signal}.
export function fromWaitStatus(status) {
  if (status == null) return null;
  const sig = status & 0x7f;
  if (sig) return { code: null, signal: signalName(sig) };
  return { code: (status >> 8) & 0xff, signal: null };
}

const signalName = (n) => Object.entries(os.constants.signals).find(([, v]) => v === n)?.[0] ?? `signal ${n}`;

// Pure: how a process ended, in words ({code, signal} as node's 'exit' event gives them).
export function exitWords(exit) {
  if (exit?.signal) return `was killed by ${exit.signal}`;
  if (exit?.code != null) return `exited with status ${exit.code}`;
  return 'is gone (exit status unknown)';
}

// Pure: the last `n` non-empty lines of a log, joined into one line and
// cut to `max` characters (a reason is one line).
export function tailText(text, n = 3, max = 300) {
  const lines = String(text ?? '')
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .slice(-n);
  const s = lines.join(' | ');
  return s.length > max ? `…${s.slice(-max)}` : s;
}

// The end of a helper's log, for a reason ('' when there is none to read:
// a testbed already removed takes its logs with it).
export function logTail(logPath) {
  try {
    const t = tailText(fs.readFileSync(logPath, 'utf8'));
    return t ? `; log: ${t}` : '';
  } catch {
    return '';
  }
}

// How the helpers this process started ended, by PID: node reaps its
// children at once, after which /proc no longer knows their status.
const exits = new Map();

/**
 * Why the helper `p` ({pid, role, what, log} from a testbed's state) is no
 * longer running, in one line, or null while it runs.
 */
export function helperDeath(p) {
  const stat = procStat(p.pid);
  if (runningState(stat?.state)) return null;
  const exit = exits.get(p.pid) ?? (stat?.state === 'Z' ? fromWaitStatus(stat.exitStatus) : null);
  return `${p.what ?? p.role} (pid ${p.pid}) ${exitWords(exit)}${p.log ? logTail(p.log) : ''}`;
}

/**
 * Starts a long-running helper detached in its own process group, stderr
 * to `logPath`, and waits for it to print "ready" on stdout (or, for a
 * program that cannot be taught to, for its log to match `readyInLog`).
 * `onSpawn(child)` runs before any wait, so that whoever tears down knows
 * the process even if the wait never ends. Rejects, naming `what`, its exit
 * status and its log's last lines, when it exits or is not ready within
 * `timeoutMs`; rejects with `signal.reason` when `signal` aborts (the
 * helper is left to the testbed's teardown). Resolves to the child, no
 * longer holding the event loop open.
 */
export function spawnHelper(cmd, args, { logPath, what, timeoutMs = 10000, onSpawn = () => {}, readyInLog, signal }) {
  signal?.throwIfAborted();
  const log = fs.openSync(logPath, 'a');
  let child;
  try {
    child = spawn(cmd, args, { detached: true, stdio: ['ignore', 'pipe', log] });
  } finally {
    fs.closeSync(log);
  }
  child.on('exit', (code, sig) => exits.set(child.pid, { code, signal: sig }));
  if (child.pid) onSpawn(child);
  return new Promise((resolve, reject) => {
    let buf = '';
    const timer = setTimeout(
      () => fail(`did not report ready within ${timeoutMs / 1000} s (pid ${child.pid} still running)`),
      timeoutMs,
    );
    const poll =
      readyInLog &&
      setInterval(() => {
        try {
          if (readyInLog.test(fs.readFileSync(logPath, 'utf8'))) ready();
        } catch {
          /* the log is not there (yet, or any more) */
        }
      }, 25);
    const onAbort = () => settle(() => reject(signal.reason));
    signal?.addEventListener('abort', onAbort, { once: true });
    function settle(then) {
      clearTimeout(timer);
      clearInterval(poll);
      signal?.removeEventListener('abort', onAbort);
      child.removeListener('exit', onExit);
      child.stdout.destroy();
      child.unref();
      then();
    }
    function fail(why) {
      settle(() => reject(new Error(`${what} ${why}${logTail(logPath)}`)));
    }
    function ready() {
      settle(() => resolve(child));
    }
    function onExit(code, sig) {
      fail(`${exitWords({ code, signal: sig })} before it was ready`);
    }
    child.on('error', (e) => fail(`could not start: ${e.message}`));
    child.on('exit', onExit);
    child.stdout.on('data', (d) => {
      buf += d;
      if (!readyInLog && buf.includes('ready\n')) ready();
    });
  });
}

/**
 * Watches the helpers listed in `state.processes` (the list may grow as a
 * run starts more) every `intervalMs`; the first that is no longer running
 * is reported once with `onDeath(reason)`. Returns stop(), to call before
 * a teardown ends them on purpose.
 */
export function watchHelpers(state, onDeath, { intervalMs = 200 } = {}) {
  const timer = setInterval(() => {
    for (const p of state.processes) {
      const why = helperDeath(p);
      if (why) {
        clearInterval(timer);
        onDeath(why);
        return;
      }
    }
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
