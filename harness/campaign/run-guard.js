// What every run of a campaign (a page load, a bulk download) does around
// its own steps, so that every run ends in a record and leaves nothing
// behind: a fresh testbed; its helpers watched (the first that dies ends the
// run, naming itself, its exit status and its log's last lines); a signal
// ends it at once; a failed set-up, helper or browser makes a failed
// record; the testbed is always torn down. Every run ends within its
// deadline and TEARDOWN_MS, whatever a step waits on.
import fs from 'node:fs';
import path from 'node:path';
import { UsageError } from '../core/errors.js';
import { createTestbed } from '../testbed/testbed.js';
import { interruption } from '../testbed/teardown.js';
import { watchHelpers, helperDeath } from '../testbed/processes.js';
import { settlesWithin, unlessAborted } from '../core/abort.js';

// How often a run's helpers are looked at: a dead one ends its run within
// this, and /proc is read a few times a second at most.
export const WATCH_MS = 200;
// What a run's set-up and counters may take besides the time its kind
// bounds itself (a load's timeout, a transfer's): the testbed, the origin,
// a PEP chain and the resolver each wait 10 s at most for their helper's
// ready, Chromium's launch 30 s, each counter 2 s; together they take
// seconds, so a run still going past this is stuck.
export const SETUP_MS = 60000;
// How long a run's teardown may take: its processes get 2 s after SIGTERM
// and 2 s after SIGKILL, in up to three rounds (12 s), and the namespaces
// go in well under a second each. A teardown past this is stuck (the
// kernel, not us): the run ends anyway, and `satbench cleanup` removes
// what is left.
export const TEARDOWN_MS = 20000;
// setTimeout's longest delay: a longer one fires at once.
const MAX_TIMER_MS = 2 ** 31 - 1;

// Pure: a failed run's reason: why its signal aborted (a helper died, the
// process was interrupted), else the error's first line.
export function failureReason(error, signal) {
  const why = signal?.aborted ? signal.reason : error;
  return String(why?.message ?? why ?? 'failed').split('\n')[0];
}

const deadHelper = (tb) => (tb ? (tb.state.processes.map(helperDeath).find(Boolean) ?? null) : null);

/**
 * Pure: the logs to keep of a testbed, as [from, name]: every *.log under
 * its folder (`files`, relative paths: the proxies' own logs and their
 * stderr, linkem's, satbulk's, OpenVPN's), and any helper log kept
 * elsewhere (H2O's), each once.
 */
export function logsToKeep(dir, files, processes) {
  const out = new Map();
  for (const f of files.filter((f) => f.endsWith('.log'))) out.set(path.join(dir, f), f.replaceAll('/', '_'));
  for (const p of processes.filter((p) => p.log))
    if (!out.has(p.log)) out.set(p.log, `${p.role}-${path.basename(p.log)}`);
  return [...out];
}

/**
 * Copies the logs of testbed `tb` (logsToKeep) into `dir` before the
 * testbed and its folder go: a failed run keeps its evidence (both
 * proxies' logs name why a tunnel closed). Synchronous, so that it is done
 * before an abort's teardown. Returns `dir`, or null when there was
 * nothing to keep.
 */
export function saveHelperLogs(tb, dir) {
  if (!dir || !tb) return null;
  let files = [];
  try {
    files = fs.readdirSync(tb.dir, { recursive: true });
  } catch {
    // the testbed's folder is gone already: what the helpers logged elsewhere still counts
  }
  const keep = logsToKeep(tb.dir, files, tb.state.processes).filter(([from]) => fs.existsSync(from));
  if (!keep.length) return null;
  fs.mkdirSync(dir, { recursive: true });
  for (const [from, name] of keep) {
    try {
      fs.copyFileSync(from, path.join(dir, name));
    } catch {
      // a log the teardown already took: the others still count
    }
  }
  return dir;
}

/**
 * Builds a testbed from `testbed` (createTestbed's options, built by
 * `create`) and returns `steps(tb, signal)`'s record. `signal` aborts when
 * the process is interrupted (`interrupt`), a helper dies or the run is
 * still going `deadlineMs` after it started (its kind's bound: SETUP_MS and
 * what its steps bound themselves to); the testbed is then torn down at
 * once, the run stops waiting for its steps, and its record is
 * `failed(reason, tb)` (tb is undefined when the testbed could not be
 * built; a run that records several loads returns a list from `steps` and
 * `failed` alike). The teardown is waited for `teardownMs` at most. A UsageError (bad
 * input, a missing binary) is thrown on: it would fail every run alike. A
 * failed run's helper logs are copied into `logsDir` first
 * (saveHelperLogs), and its record's `logs_dir` says so.
 */
export async function guardedRun({
  testbed,
  steps,
  failed,
  deadlineMs,
  interrupt = interruption,
  watchMs = WATCH_MS,
  logsDir = null,
  create = createTestbed,
  teardownMs = TEARDOWN_MS,
}) {
  if (!(deadlineMs > 0)) throw new Error(`guardedRun: deadlineMs must be a number of ms > 0, got ${deadlineMs}`);
  const death = new AbortController();
  const late = new AbortController();
  const deadline = setTimeout(
    () => late.abort(new Error(`the run did not end within ${deadlineMs / 1000} s`)),
    Math.min(deadlineMs, MAX_TIMER_MS),
  );
  const signal = AbortSignal.any([interrupt, death.signal, late.signal]);
  let tb;
  let stopWatch = () => {};
  let saved = null;
  const keepLogs = () => (saved ??= saveHelperLogs(tb, logsDir));
  // a failed run's record says where its helpers' logs went (of a run's
  // records, a page-load pair's, each failed one)
  const failedRun = (out) => {
    if (![out].flat().some((rec) => rec?.ok === false)) return out;
    const dir = keepLogs();
    const mark = (rec) => (dir && rec?.ok === false ? { ...rec, logs_dir: dir } : rec);
    return Array.isArray(out) ? out.map(mark) : mark(out);
  };
  // What the steps wait on (a helper's ready, a download, the tunnel) goes
  // with the testbed; the final destroy below runs again once they settle.
  const onAbort = () => {
    keepLogs();
    tb?.destroy().catch(() => {});
  };
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    // A build that is aborted tears down what it made itself.
    tb = await unlessAborted(create({ ...testbed, signal }), signal);
    stopWatch = watchHelpers(tb.state, (why) => death.abort(new Error(why)), { intervalMs: watchMs });
    const record = await unlessAborted(steps(tb, signal), signal);
    signal.throwIfAborted();
    // a helper that died since the watch last looked: its counters are
    // missing, whatever the record says
    const dead = deadHelper(tb);
    return failedRun(dead ? failed(dead, tb) : record);
  } catch (e) {
    if (e instanceof UsageError) throw e;
    // a step that failed because a helper died (the origin: the browser's
    // "connection refused") is failed for that helper
    return failedRun(failed((!signal.aborted && deadHelper(tb)) || failureReason(e, signal), tb));
  } finally {
    clearTimeout(deadline);
    stopWatch();
    signal.removeEventListener('abort', onAbort);
    if (tb && !(await settlesWithin(tb.destroy(), teardownMs)))
      process.stderr.write(
        `satbench: testbed ${tb.id} not torn down within ${teardownMs / 1000} s; \`satbench cleanup\` removes what is left\n`,
      );
  }
}
