// The progress lines of a campaign (bench, bulk) and their time-left
// estimate. Plain functions; the loop (loop.js) prints them.
import { mean } from '../core/stats.js';

export const fmtDuration = (ms) => (ms < 90000 ? `${Math.round(ms / 1000)} s` : `${Math.round(ms / 60000)} min`);

/**
 * Pure: how long the runs still to go will take. Each counts its own
 * scenario's mean run time so far, or the mean of every finished run where
 * its scenario has none yet (scenarios differ a lot: a GEO page load takes
 * ten times a LEO one). null before any run has finished.
 * `remaining`: the scenario ids of the runs to go; `durations`: id → [ms].
 */
export function timeLeftMs(remaining, durations) {
  const all = [...durations.values()].flat();
  if (!all.length) return null;
  const overall = mean(all);
  return remaining.reduce((sum, id) => sum + (durations.has(id) ? mean(durations.get(id)) : overall), 0);
}

/** Pure: the line as a run starts: which one, and the time left. */
export function startLine({ index, total, name, run, runs, leftMs }) {
  return `[${index}/${total}] ${name}: run ${run} of ${runs} · about ${leftMs === null ? '?' : fmtDuration(leftMs)} left`;
}

/** Pure: the line as a run ends, naming that run and its own result. */
export function doneLine({ index, total, name, run, runs, result }) {
  return `[${index}/${total}] ${name}: run ${run} of ${runs} done · ${result}`;
}
