// Bulk downloads (`satbench bulk`): a scenario is profile × loss × protocol
// × download (duration_s or size_bytes); keyed and labelled like any kind,
// every numeric metric summarised. Its groups get what needs all runs at
// once: the mean goodput curve, the objectives judged, and the PEP's lead.
import { defineKind, stableJson } from './generic.js';
import { bulkReport } from './bulk-report.js';
import { judgeGroup, meanCurve, pepRatio } from '../results/goodput.js';
import { objectivesFor } from '../results/objectives.js';

/**
 * Pure: summary.json's bulk groups ([{group, records}]) completed: the
 * goodput curve averaged over the ok runs (meanCurve), the objectives
 * judged (quic4sat profiles), and for a -pep or -vpn protocol the ratio of its
 * bytes over time to the same scenario without the PEP.
 */
export function withBulkExtras(entries) {
  const out = entries.map(({ group: g, records: rs }) => {
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
    // -vpn (the tunnel without PEP) against its plain protocol, as -pep is
    if (!/-(pep|vpn)$/.test(g.scenario.protocol)) continue;
    const plainScenario = { ...g.scenario, protocol: g.scenario.protocol.replace(/-(pep|vpn)$/, '') };
    const plain = out.find((x) => stableJson(x.scenario) === stableJson(plainScenario));
    if (plain) g.vs_no_pep = { protocol: plainScenario.protocol, ...pepRatio(g.curve, plain.curve) };
  }
  return out;
}

export const bulk = defineKind({
  name: 'bulk',
  // which way is better: by the metric's name (the default; goodput higher)
  budgetMatch: ['profile', 'loss_pct', 'protocol'],
  complete: withBulkExtras,
  command: 'bulk',
  report: bulkReport,
});
