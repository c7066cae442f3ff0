// Turning run records into per-scenario statistics (summary.json's groups).
// Failed runs are counted, never dropped; metrics come from ok runs only.
import { quantile, median } from './stats.js';

export const SUMMARY_METRICS = ['response_start_ms', 'fcp_ms', 'lcp_ms', 'plt_ms', 'dom_content_loaded_ms', 'resource_count', 'transfer_bytes'];

export const scenarioKey = (s) => `${s.profile}|${s.loss_pct}|${s.protocol}|${s.site}`;

// Small seeded PRNG (mulberry32): the same data gives the same interval.
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Percentile bootstrap 95 % interval of the median.
export function bootstrapMedianCi(values, { resamples = 2000, seed = 1 } = {}) {
  if (values.length < 2) return [values[0] ?? null, values[0] ?? null];
  const next = rng(seed);
  const medians = [];
  for (let i = 0; i < resamples; i++) {
    const sample = values.map(() => values[Math.floor(next() * values.length)]);
    medians.push(median(sample));
  }
  return [quantile(medians, 0.025), quantile(medians, 0.975)];
}

export function describe(values, seed) {
  if (!values.length) return null;
  return {
    n: values.length,
    median: median(values),
    mean: values.reduce((a, b) => a + b, 0) / values.length,
    p10: quantile(values, 0.1),
    p90: quantile(values, 0.9),
    min: Math.min(...values),
    max: Math.max(...values),
    ci95: bootstrapMedianCi(values, { seed }),
  };
}

export function summarize(records, { seed = 1 } = {}) {
  const groups = new Map();
  for (const r of records) {
    const key = scenarioKey(r.scenario);
    if (!groups.has(key)) groups.set(key, { scenario: r.scenario, records: [] });
    groups.get(key).records.push(r);
  }
  return [...groups.values()].map(({ scenario, records: rs }) => {
    const ok = rs.filter((r) => r.ok);
    const metrics = {};
    for (const m of SUMMARY_METRICS) {
      const d = describe(ok.map((r) => r.metrics?.[m]).filter((v) => typeof v === 'number'), seed);
      if (d) metrics[m] = d;
    }
    const failures = rs.filter((r) => !r.ok).map((r) => ({ run: r.run, error: r.error }));
    return { scenario, runs: rs.length, failed: failures.length, failures, metrics };
  });
}
