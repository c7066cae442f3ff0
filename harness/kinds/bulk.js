// Bulk downloads (`satbench bulk`): a scenario is profile × loss × protocol
// × download (duration_s or size_bytes); keyed and labelled like any kind,
// every numeric metric summarised. Its groups get what needs all runs at
// once: the mean goodput curve, the objectives judged, and the PEP's lead.
import { defineKind, stableJson } from './generic.js';
import { variantPairs, satHopSetting } from './pep-variants.js';
import { baseProtocol } from '../core/protocols.js';
import { judgeGroup, meanCurve, pepRatio } from '../results/goodput.js';
import { median } from '../core/stats.js';
import { objectivesFor } from '../results/objectives.js';

/**
 * Pure: summary.json's bulk groups ([{group, records}]) completed: the
 * goodput curve averaged over the ok runs (meanCurve), the objectives
 * judged (quic4sat profiles), and for a -pep, -qpep, -masque or -vpn
 * protocol the ratio of its bytes over time to the same scenario without it
 * (`vs_no_pep`); a -qpep protocol also gets its ratio to the -vpn and -pep
 * of its protocol, a -masque one to the -pep (`vs_variants`: [{protocol,
 * bin_ms, t_ms, ratio}]).
 */
export function withBulkExtras(entries) {
  const out = entries.map(({ group: g, records: rs }) => {
    const ok = rs.filter((r) => r.ok);
    const obj = objectivesFor(g.scenario.profile, g.scenario.direction);
    return {
      ...g,
      link_rate_mbps: rs[0]?.link_rate_mbps ?? null,
      sat_hop: [...new Set(rs.map((r) => satHopSetting(r.pep)).filter(Boolean))].join('; ') || null,
      cpu: cpuByProcess(rs),
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
  // -vpn (the tunnel without PEP) and -qpep against their plain protocol, as
  // -pep is; -qpep also against -vpn and -pep, over the same scenario
  const pairs = variantPairs([...new Set(out.map((g) => g.scenario.protocol))]);
  for (const g of out) {
    for (const pair of pairs.filter((p) => p.a === g.scenario.protocol)) {
      const other = out.find((x) => stableJson(x.scenario) === stableJson({ ...g.scenario, protocol: pair.b }));
      if (!other) continue;
      const vs = { protocol: pair.b, ...pepRatio(g.curve, other.curve) };
      if (pair.b === baseProtocol(pair.a)) g.vs_no_pep = vs;
      else (g.vs_variants ??= []).push(vs);
    }
  }
  return out;
}

/**
 * Pure: per process of the runs (records' cpu_ms, by role), the median CPU
 * time and the median share of the download's duration it took (1 = one
 * core busy the whole download; set-up counts too), busiest first. A
 * process near 1 made the run CPU-bound.
 */
export function cpuByProcess(records) {
  const roles = [...new Set(records.flatMap((r) => Object.keys(r.cpu_ms ?? {})))];
  return roles
    .map((role) => {
      const runs = records.filter((r) => typeof r.cpu_ms?.[role] === 'number');
      const shares = runs.filter((r) => r.metrics?.duration_ms > 0).map((r) => r.cpu_ms[role] / r.metrics.duration_ms);
      return {
        role,
        median_ms: median(runs.map((r) => r.cpu_ms[role])),
        median_share: shares.length ? median(shares) : null,
      };
    })
    .sort((a, b) => (b.median_share ?? -1) - (a.median_share ?? -1));
}

export const bulk = defineKind({
  name: 'bulk',
  // which way is better: by the metric's name (the default; goodput higher)
  budgetMatch: ['profile', 'loss_pct', 'protocol', 'direction', 'view'],
  // without --budget, compare fails a mean goodput more than 10 % lower, and significantly so
  defaultBudget: { mean_goodput_mbps: { max_slowdown_pct: 10 } },
  // a download's scenario has no direction
  matrixAxes: {
    profiles: 'profile',
    losses: 'loss_pct',
    protocols: 'protocol',
    directions: ['direction', 'down'],
    views: ['view', 'first'],
  },
  matrixScalars: ['duration_s', 'size_bytes'],
  complete: withBulkExtras,
  command: 'bulk',
  report: 'bulk',
});
