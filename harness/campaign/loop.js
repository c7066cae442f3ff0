// The one run loop of a campaign (bench's page loads, bulk's downloads):
// each (scenario, run) not yet in results.jsonl runs once, its record is
// appended and flushed before the next starts (an interrupted campaign
// loses one run at most; --resume continues it), and progress goes to the
// caller (stderr) as a line when a run starts and one when it ends.
import { appendFlushed } from '../results/store.js';
import { groupKey } from '../kinds/index.js';
import { runId } from './results-dir.js';
import { timeLeftMs, startLine, doneLine } from './progress.js';

/**
 * Runs `items` ({scenario, run} of `kind`, in order) except those in `done`:
 * `runOne(item)` returns the run's record, which is appended to
 * `resultsFile` at once. `name(scenario)` and `describe(record)` word the
 * progress lines; `runs` is the runs per scenario. An error from `runOne`
 * ends the campaign (each kind of run turns its own failures into failed
 * records first). Returns how many runs ran.
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
  now = Date.now,
}) {
  const todo = items.filter((x) => !done.has(runId(kind, x.scenario, x.run)));
  const scenarioId = (x) => groupKey(kind, x.scenario);
  const durations = new Map(); // scenario id → ms of its runs so far
  for (const [i, item] of todo.entries()) {
    const line = { index: i + 1, total: todo.length, name: name(item.scenario), run: item.run, runs };
    const leftMs = timeLeftMs(todo.slice(i).map(scenarioId), durations);
    onProgress(startLine({ ...line, leftMs }));
    const started = now();
    const record = await runOne(item);
    const id = scenarioId(item);
    durations.set(id, [...(durations.get(id) ?? []), now() - started]);
    appendFlushed(resultsFile, record);
    onProgress(doneLine({ ...line, result: describe(record) }));
  }
  return todo.length;
}
