// The progress lines of a campaign (bench, bulk) and their time-left
// estimate. Plain functions; the loop (loop.js) prints them.
import { mean } from '../core/stats.js';

export const fmtDuration = (ms) => (ms < 90000 ? `${Math.round(ms / 1000)} s` : `${Math.round(ms / 60000)} min`);

/**
 * Pure: a scenario's expected run time, in ms up to a factor, from what its
 * profile says (`link`: configuredSummary's rtt_ms and rates): a page load
 * is round trips, so its RTT; a transfer its duration, or its size at the
 * link's rate, plus a round trip. null when the profile says too little.
 */
export function scenarioWeight(scenario, link) {
  const rtt = link?.rtt_ms ?? 0;
  if (scenario.duration_s) return scenario.duration_s * 1000 + rtt;
  const mbps = scenario.direction === 'up' ? link?.return_mbps : link?.forward_mbps;
  if (scenario.size_bytes && mbps) return (scenario.size_bytes * 8) / (mbps * 1000) + rtt;
  return rtt > 0 ? rtt : null;
}

/**
 * Pure: how long the runs still to go will take. Each counts its own
 * scenario's mean run time so far; a scenario not yet run, its weight
 * (scenarioWeight: its profile's RTT and rate) at the measured scenarios'
 * time per unit of weight (a GEO page load takes 3–5 times a LEO one, and
 * the first scenarios say nothing of that), or the mean of every finished
 * run where weights are unknown. null before any run has finished.
 * `remaining`: the scenario ids of the runs to go; `durations`: id → [ms];
 * `weightOf`: id → weight or null.
 */
export function timeLeftMs(remaining, durations, weightOf = () => null) {
  const all = [...durations.values()].flat();
  if (!all.length) return null;
  const overall = mean(all);
  const weighed = [...durations.keys()].filter((id) => weightOf(id) > 0);
  const total = (xs) => xs.reduce((a, b) => a + b, 0);
  const perUnit = weighed.length
    ? total(weighed.map((id) => mean(durations.get(id)))) / total(weighed.map(weightOf))
    : null;
  const unmeasured = (id) => (perUnit !== null && weightOf(id) > 0 ? perUnit * weightOf(id) : overall);
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
