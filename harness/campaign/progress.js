// The progress lines of a campaign (bench, bulk) and their time-left
// estimate. Plain functions; the loop (loop.js) prints them.
import { mean } from '../core/stats.js';

export const fmtDuration = (ms) => (ms < 90000 ? `${Math.round(ms / 1000)} s` : `${Math.round(ms / 60000)} min`);

// A page load's round trips, for a scenario not yet run: kepler takes
// about 15 over h1 and 5 over h3 (its geo runs less its leo runs, per ms of
// RTT, in the runs issue 27 measured).
export const PAGE_ROUND_TRIPS = 10;

/**
 * Pure: the part of a scenario's run time its profile decides, in ms,
 * from what the profile says (`link`: configuredSummary's rtt_ms and
 * rates): a page load is round trips (PAGE_ROUND_TRIPS of its RTT); a
 * transfer its duration, or its size at the link's rate, plus a round
 * trip. null when the profile says too little.
 */
export function scenarioWeight(scenario, link) {
  const rtt = link?.rtt_ms ?? 0;
  if (scenario.duration_s) return scenario.duration_s * 1000 + rtt;
  const mbps = scenario.direction === 'up' ? link?.return_mbps : link?.forward_mbps;
  if (scenario.size_bytes && mbps) return (scenario.size_bytes * 8) / (mbps * 1000) + rtt;
  return rtt > 0 ? PAGE_ROUND_TRIPS * rtt : null;
}

/**
 * Pure: how long the runs still to go will take. Each counts its own
 * scenario's mean run time so far; a scenario not yet run, its weight
 * (scenarioWeight: what its profile decides) plus the part of a run no
 * profile moves (set-up, the browser's start, teardown: the measured
 * scenarios' mean time less their weight), or the mean of every finished
 * run where weights are unknown. Scaling the weight alone was off by a
 * factor of about 3 either way between leo and geo, as a run's start-up
 * does not shrink with the RTT. null before any run has finished.
 * `remaining`: the scenario ids of the runs to go; `durations`: id → [ms];
 * `weightOf`: id → weight or null.
 */
export function timeLeftMs(remaining, durations, weightOf = () => null) {
  const all = [...durations.values()].flat();
  if (!all.length) return null;
  const overall = mean(all);
  const weighed = [...durations.keys()].filter((id) => weightOf(id) > 0);
  const fixed = weighed.length ? mean(weighed.map((id) => mean(durations.get(id)) - weightOf(id))) : null;
  const unmeasured = (id) => (fixed !== null && weightOf(id) > 0 ? Math.max(0, fixed + weightOf(id)) : overall);
  return remaining.reduce((sum, id) => sum + (durations.has(id) ? mean(durations.get(id)) : unmeasured(id)), 0);
}

/** Pure: the line as a run starts: which one, and the time left. */
export function startLine({ index, total, name, run, runs, leftMs }) {
  return `[${index}/${total}] ${name}: run ${run} of ${runs} · about ${leftMs === null ? '?' : fmtDuration(leftMs)} left`;
}

/** Pure: the line as a run ends, naming that run and its own result. */
export function doneLine({ index, total, name, run, runs, result }) {
  return `[${index}/${total}] ${name}: run ${run} of ${runs} done · ${result}`;
}
