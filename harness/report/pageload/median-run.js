// Pure: which run of a scenario stands for it in the report's run views
// and compare view, as WebPageTest's median run: the successful run whose
// Page Load Time is the median (of an even count, the faster of the middle
// two, so that it is a run that happened), ties by run number.

export const MEDIAN_METRIC = 'plt_ms';

/** Pure: the median run among `records` by `metric`, or null when no successful run has it. */
export function medianRun(records, metric = MEDIAN_METRIC) {
  const ok = records
    .filter((r) => r?.ok && typeof r.metrics?.[metric] === 'number' && Number.isFinite(r.metrics[metric]))
    .sort((a, b) => a.metrics[metric] - b.metrics[metric] || a.run - b.run);
  return ok.length ? ok[Math.floor((ok.length - 1) / 2)] : null;
}
