// A scenario's page loads over a LEO slot process split by whether a slot
// boundary (a handover, with its delay spike and loss burst) fell inside
// the load (the record's `slot.boundary_in_load`, pageload/slot-phase.js):
// a Starlink user's bad loads are expected among the first.
import { mannWhitneyU, median } from '../core/stats.js';

/**
 * Pure: `{with: {n, median, values}, without: {n, median, values}, p}` of
 * `metric` over the successful runs that have a `slot`, `with` those that
 * had a boundary inside the load; `p` is the two-sided Mann–Whitney U
 * p-value of the two groups (null when one is empty), a median null when
 * its group is. Runs without `slot` are in neither group; null when no
 * record has one (a link without a slot process).
 */
export function splitByBoundary(records, metric) {
  const slotted = records.filter((r) => r.slot);
  if (!slotted.length) return null;
  const side = (inLoad) => {
    const values = slotted
      .filter((r) => r.ok && Boolean(r.slot.boundary_in_load) === inLoad)
      .map((r) => r.metrics?.[metric])
      .filter((v) => typeof v === 'number' && Number.isFinite(v));
    return { n: values.length, median: median(values), values };
  };
  const withBoundary = side(true);
  const without = side(false);
  return { with: withBoundary, without, p: mannWhitneyU(withBoundary.values, without.values).p };
}

/**
 * Pure: how many runs with a `slot` failed, with a boundary between
 * navigation start and the failure and without: a handover that makes a
 * load fail is a Starlink user's worst load, and no metric shows it.
 */
export function failedByBoundary(records) {
  const failed = records.filter((r) => r.slot && !r.ok);
  const withBoundary = failed.filter((r) => r.slot.boundary_in_load).length;
  return { with: withBoundary, without: failed.length - withBoundary };
}

/**
 * Pure: what summary.json keeps of the split per scenario, or null without
 * a slot process: the slot period, the failed runs on each side
 * (failedByBoundary) and, for each of `metrics` that has a
 * value on either side, each group's n and median and the p-value (the
 * values themselves are in results.jsonl).
 */
export function boundarySummary(records, metrics) {
  const period = records.find((r) => r.slot)?.slot.period_s;
  if (period === undefined) return null;
  const out = {};
  for (const m of metrics) {
    const s = splitByBoundary(records, m);
    if (!s.with.n && !s.without.n) continue;
    out[m] = {
      with: { n: s.with.n, median: s.with.median },
      without: { n: s.without.n, median: s.without.median },
      p: s.p,
    };
  }
  return { period_s: period, failed: failedByBoundary(records), metrics: out };
}
