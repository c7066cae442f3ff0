// What every run of a campaign (a page load, a bulk download) does around
// its own steps, so that every run ends in a record and leaves nothing
// behind: a fresh testbed; its helpers watched (the first that dies ends the
// run, naming itself, its exit status and its log's last lines); a signal
// ends it at once; a failed set-up, helper or browser makes a failed
// record; the testbed is always torn down.
import fs from 'node:fs';
import path from 'node:path';
import { UsageError } from '../core/errors.js';
import { createTestbed } from '../testbed/testbed.js';
import { interruption } from '../testbed/teardown.js';
import { watchHelpers, helperDeath } from '../testbed/processes.js';

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
 * Builds a testbed from `testbed` (createTestbed's options) and returns
 * `steps(tb, signal)`'s record. `signal` aborts when the process is
 * interrupted (`interrupt`) or a helper dies; the testbed is then torn down
 * at once, which ends any step waiting on it, and the run's record is
 * `failed(reason, tb)` (tb is undefined when the testbed could not be
 * built). A UsageError (bad input, a missing binary) is thrown on: it
 * would fail every run alike. A failed run's helper logs are copied into
 * `logsDir` first (saveHelperLogs), and its record's `logs_dir` says so.
 */
export async function guardedRun({ testbed, steps, failed, interrupt = interruption, watchMs = 200, logsDir = null }) {
  const death = new AbortController();
  const signal = AbortSignal.any([interrupt, death.signal]);
  let tb;
  let stopWatch = () => {};
  let saved = null;
  const keepLogs = () => (saved ??= saveHelperLogs(tb, logsDir));
  // a failed run's record says where its helpers' logs went
  const failedRun = (rec) => {
    if (rec?.ok !== false) return rec;
    const dir = keepLogs();
    return dir ? { ...rec, logs_dir: dir } : rec;
  };
  // What the steps wait on (a helper's ready, a download, the tunnel) goes
  // with the testbed; the final destroy below runs again once they settle.
  const onAbort = () => {
    keepLogs();
    tb?.destroy().catch(() => {});
  };
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    tb = await createTestbed({ ...testbed, signal });
    stopWatch = watchHelpers(tb.state, (why) => death.abort(new Error(why)), { intervalMs: watchMs });
    const record = await steps(tb, signal);
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
    stopWatch();
    signal.removeEventListener('abort', onAbort);
    await tb?.destroy();
  }
}
