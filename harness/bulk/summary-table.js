// The table `satbench bulk` prints without --json: per scenario, the
// medians of bytes at the marks, of the time to 90 % of the link rate and
// to each objective size, and the objectives met or missed.
import { formatTable } from '../core/text-table.js';
import { MARKS_S, markMetric, sizeMetric, OBJECTIVE_SIZES } from '../results/goodput.js';

/** Pure: the table `satbench bulk` prints without --json. */
export function formatBulkSummary(summary) {
  const mb = (v) => (v?.median == null ? '-' : (v.median / 1e6).toFixed(2));
  const s = (v) => (v?.median == null ? '-' : (v.median / 1000).toFixed(2));
  const rows = [
    [
      'profile',
      'loss',
      'protocol',
      'way',
      'runs',
      'failed',
      ...MARKS_S.map((t) => `MB@${t}s`),
      't90% s',
      ...OBJECTIVE_SIZES.map((b) => `t${b / 1e6}MB s`),
      'objectives',
    ],
  ];
  for (const g of summary.groups.filter((x) => x.kind === 'bulk')) {
    const m = g.metrics ?? {};
    const obj = g.objectives
      ? g.objectives.results.map((o) => `${o.bytes / 1e6}MB≤${o.limit_s}s ${o.met ? 'met' : 'missed'}`).join(', ')
      : '';
    rows.push([
      g.scenario.profile,
      g.scenario.loss_pct ?? 'profile',
      g.scenario.protocol,
      `${g.scenario.direction ?? 'down'}${g.scenario.view === 'revisit' ? ' revisit' : ''}${g.scenario.revisit_capacity != null ? ` ${g.scenario.revisit_capacity}×` : ''}`,
      g.runs,
      g.failed,
      ...MARKS_S.map((t) => mb(m[markMetric(t)])),
      s(m.time_to_90pct_rate_ms),
      ...OBJECTIVE_SIZES.map((b) => s(m[sizeMetric(b)])),
      obj,
    ]);
  }
  return formatTable(rows);
}
