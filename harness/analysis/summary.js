// Turning run records into per-scenario statistics (summary.json's groups).
// Failed runs are counted, never dropped; metrics come from ok runs only.
// What a group is, which metrics it has and what it adds beyond them is
// its kind's to say (harness/kinds/).
import { describe } from '../core/stats.js';
import { kindOf } from '../kinds/index.js';
import { boundarySummary } from './boundary-split.js';

export { bootstrapMedianCi, describe } from '../core/stats.js';

function summarizeGroup(kind, scenario, rs, seed) {
  const ok = rs.filter((r) => r.ok);
  const metrics = {};
  for (const m of kind.metricNames(ok)) {
    const d = describe(
      ok.map((r) => r.metrics?.[m]).filter((v) => typeof v === 'number' && Number.isFinite(v)),
      seed,
    );
    if (d) metrics[m] = d;
  }
  const failures = rs.filter((r) => !r.ok).map((r) => ({ run: r.run, error: r.error }));
  // over a LEO slot process: each metric with and without a handover in the load
  const split = boundarySummary(rs, Object.keys(metrics));
  return kind.tag({
    scenario,
    runs: rs.length,
    failed: failures.length,
    failures,
    metrics,
    ...(split ? { boundary_split: split } : {}),
  });
}

/**
 * Pure: summary.json's groups, one per kind and scenario in the order of
 * their first record, each completed by its kind (bulk: curve, objectives,
 * vs_no_pep).
 */
export function summarize(records, { seed = 1 } = {}) {
  const byKey = new Map();
  for (const r of records) {
    const kind = kindOf(r);
    const key = `${kind.name}\n${kind.key(r.scenario)}`;
    if (!byKey.has(key)) byKey.set(key, { kind, scenario: r.scenario, records: [] });
    byKey.get(key).records.push(r);
  }
  const entries = [...byKey.values()].map((e) => ({
    ...e,
    group: summarizeGroup(e.kind, e.scenario, e.records, seed),
  }));
  const done = new Map();
  for (const kind of new Set(entries.map((e) => e.kind))) {
    const own = entries.filter((e) => e.kind === kind);
    kind.complete(own).forEach((g, i) => done.set(own[i], g));
  }
  return entries.map((e) => done.get(e));
}
