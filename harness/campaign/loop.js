// The one run loop of a campaign (bench's page loads, bulk's downloads):
// each (scenario, run) not yet in results.jsonl runs once, its record is
// appended and flushed before the next starts (an interrupted campaign
// loses one run at most; --resume continues it), and progress goes to the
// caller (stderr) as a line when a run starts and one when it ends.
// Every run ends in a record, and a signal ends the loop: the run in
// progress is recorded as interrupted (testbed/teardown.js), and the
// caller writes its outputs and exits with the signal's status.
import { UsageError } from '../core/errors.js';
import { appendFlushed } from '../results/store.js';
import { endOnItsOwn, interruptedBy } from '../testbed/teardown.js';
import { groupKey, kindNamed } from '../kinds/index.js';
import { runId } from './results-dir.js';
import { timeLeftMs, startLine, doneLine } from './progress.js';

// Pure: the record of a run that threw instead of returning one (a bug
// of the run; each kind turns its own failures into records first).
export function thrownRecord(kind, item, error) {
  return kindNamed(kind).tag({
    scenario: item.scenario,
    run: item.run,
    ok: false,
    error: String(error?.message ?? error).split('\n')[0],
  });
}

// Pure: a run's record when `signal` interrupted it: a finished
// measurement stays as it is; a failed run (its browser or download
// killed by the teardown) says it was interrupted.
export function markInterrupted(record, signal) {
  if (!signal || record.ok) return record;
  return { ...record, ok: false, error: `interrupted by ${signal}`, interrupted: signal };
}

/**
 * Runs `items` ({scenario, run} of `kind`, in order) except those in `done`:
 * `runOne(item)` returns the run's record (or its records, a page-load
 * pair's two, the item's own last), appended to `resultsFile` at once. `name(scenario)` and `describe(record)` word the
 * progress lines; `runs` is the runs per scenario. A run that throws is a
 * failed record, and the campaign goes on; a UsageError (bad input, the
 * same for every run) ends it. A signal ends it after the run in progress
 * is recorded (`interrupted()`, default the process's, says by which).
 * `weight(scenario)`: its expected run time up to a factor (progress.js
 * scenarioWeight), for the time left before it has run. Returns how many
 * runs ran.
 */
export async function runCampaign({
  kind,
  items,
  done = new Set(),
  resultsFile,
  runOne,
  name,
  describe,
  runs,
  onProgress = () => {},
  weight = () => null,
  now = Date.now,
  interrupted = interruptedBy,
}) {
  // the process's own signals (a caller with its own `interrupted` keeps its handlers)
  if (interrupted === interruptedBy) endOnItsOwn();
  const todo = items.filter((x) => !done.has(runId(kind, x.scenario, x.run)));
  const scenarioId = (x) => groupKey(kind, x.scenario);
  const durations = new Map(); // scenario id → ms of its runs so far
  const weights = new Map(todo.map((x) => [scenarioId(x), weight(x.scenario)])); // id → expected, from its profile
  let ran = 0;
  for (const [i, item] of todo.entries()) {
    if (interrupted()) break;
    const line = { index: i + 1, total: todo.length, name: name(item.scenario), run: item.run, runs };
    const leftMs = timeLeftMs(todo.slice(i).map(scenarioId), durations, (id) => weights.get(id) ?? null);
    onProgress(startLine({ ...line, leftMs }));
    const started = now();
    let records;
    try {
      records = [await runOne(item)].flat();
    } catch (e) {
      if (e instanceof UsageError) throw e;
      records = [thrownRecord(kind, item, e)];
    }
    const signal = interrupted();
    records = records.map((r) => markInterrupted(r, signal));
    const id = scenarioId(item);
    durations.set(id, [...(durations.get(id) ?? []), now() - started]);
    appendFlushed(resultsFile, records);
    ran++;
    onProgress(doneLine({ ...line, result: records.map(describe).join(', ') }));
  }
  return ran;
}
