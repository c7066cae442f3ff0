// Turning run records into per-scenario statistics (summary.json's groups).
// Failed runs are counted, never dropped; metrics come from ok runs only.
import { describe } from '../core/stats.js';
import { judgeGroup, meanCurve, pepRatio } from './goodput.js';
import { objectivesFor } from '../bulk/presets.js';

export { bootstrapMedianCi, describe } from '../core/stats.js';

export const SUMMARY_METRICS = [
  'response_start_ms',
  'fcp_ms',
  'lcp_ms',
  'plt_ms',
  'dom_content_loaded_ms',
  'resource_count',
  'transfer_bytes',
];

// The metrics the report's matrix and `compare` look at first, with labels.
export const KEY_METRICS = [
  { key: 'response_start_ms', label: 'Response Start', paper: 'response_start' },
  { key: 'fcp_ms', label: 'First Contentful Paint', paper: 'fcp' },
  { key: 'plt_ms', label: 'Page Load Time', paper: 'plt' },
];

// Records without a kind are page loads (results.jsonl before kinds existed).
export const recordKind = (r) => r.kind ?? 'pageload';

export const scenarioKey = (s) => `${s.profile}|${s.loss_pct}|${s.protocol}|${s.site}`;

// Object keys in sorted order, so that equal scenarios of other kinds give
// equal keys whatever order their writer used.
const stableJson = (v) =>
  v && typeof v === 'object' && !Array.isArray(v)
    ? `{${Object.keys(v)
        .sort()
        .map((k) => `${JSON.stringify(k)}:${stableJson(v[k])}`)
        .join(',')}}`
    : JSON.stringify(v);

// The key of a record's group: page loads keep scenarioKey (bench --resume
// and compare match on it); other kinds (bulk, …) are keyed by kind and
// their whole scenario, whatever fields it has.
export const groupKey = (kind, scenario) =>
  kind === 'pageload' ? scenarioKey(scenario) : `${kind}:${stableJson(scenario)}`;

// Human-readable name of a scenario, for reports and messages.
export function scenarioLabel(s, kind = 'pageload') {
  if (kind !== 'pageload')
    return `${kind} ${Object.entries(s ?? {})
      .map(([k, v]) => `${k}=${v}`)
      .join(' ')}`;
  return `${s.profile} loss ${s.loss_pct} % ${s.protocol} ${s.site}`;
}

// Page loads summarise the fixed metric list; other kinds every numeric
// metric their records carry.
function metricNames(kind, okRecords) {
  if (kind === 'pageload') return SUMMARY_METRICS;
  const names = new Set();
  for (const r of okRecords)
    for (const [k, v] of Object.entries(r.metrics ?? {})) if (typeof v === 'number') names.add(k);
  return [...names].sort();
}

export function summarize(records, { seed = 1 } = {}) {
  return withBulkExtras(summarizeGroups(records, seed), records);
}

function summarizeGroups(records, seed) {
  const groups = new Map();
  for (const r of records) {
    const kind = recordKind(r);
    const key = groupKey(kind, r.scenario);
    if (!groups.has(key)) groups.set(key, { kind, scenario: r.scenario, records: [] });
    groups.get(key).records.push(r);
  }
  return [...groups.values()].map(({ kind, scenario, records: rs }) => {
    const ok = rs.filter((r) => r.ok);
    const metrics = {};
    for (const m of metricNames(kind, ok)) {
      const d = describe(
        ok.map((r) => r.metrics?.[m]).filter((v) => typeof v === 'number' && Number.isFinite(v)),
        seed,
      );
      if (d) metrics[m] = d;
    }
    const failures = rs.filter((r) => !r.ok).map((r) => ({ run: r.run, error: r.error }));
    const g = { scenario, runs: rs.length, failed: failures.length, failures, metrics };
    return kind === 'pageload' ? g : { kind, ...g };
  });
}

/**
 * Pure: summary.json's bulk groups completed with what needs all runs at
 * once: the goodput curve averaged over the ok runs (meanCurve), the
 * objectives judged (quic4sat profiles), and for a -pep protocol the
 * ratio of its bytes over time to the same scenario without the PEP.
 * Page-load groups pass unchanged.
 */
function withBulkExtras(groups, records) {
  const byKey = new Map();
  for (const r of records) {
    if ((r.kind ?? 'pageload') !== 'bulk') continue;
    const k = groupKey('bulk', r.scenario);
    if (!byKey.has(k)) byKey.set(k, []);
    byKey.get(k).push(r);
  }
  const out = groups.map((g) => {
    if (g.kind !== 'bulk') return g;
    const rs = byKey.get(groupKey('bulk', g.scenario)) ?? [];
    const ok = rs.filter((r) => r.ok);
    const obj = objectivesFor(g.scenario.profile);
    return {
      ...g,
      link_rate_mbps: rs[0]?.link_rate_mbps ?? null,
      curve: meanCurve(ok.map((r) => r.goodput).filter(Boolean)),
      // every run counts, a failed one with what it got to (a stalled 100 MB
      // download may still have met the 2 MB objective); one without metrics misses
      objectives: obj
        ? {
            source: obj.source,
            scenario: obj.scenario,
            results: judgeGroup(
              rs.map((r) => r.metrics ?? {}),
              obj,
            ),
          }
        : null,
    };
  });
  for (const g of out) {
    if (g.kind !== 'bulk' || !g.scenario.protocol.endsWith('-pep')) continue;
    const plainScenario = { ...g.scenario, protocol: g.scenario.protocol.replace(/-pep$/, '') };
    const plain = out.find(
      (x) => x.kind === 'bulk' && groupKey('bulk', x.scenario) === groupKey('bulk', plainScenario),
    );
    if (plain) g.vs_no_pep = { protocol: plainScenario.protocol, ...pepRatio(g.curve, plain.curve) };
  }
  return out;
}
