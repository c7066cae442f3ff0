// The table `satbench bench` prints at its end without --json, before the
// path of its results (as sitespeed.io does): per scenario, the medians of
// Response Start, FCP, Speed Index, LCP and PLT ('-' where no run measured
// one: Speed Index comes with the visual capture), its runs and failed runs.
import { formatTable } from '../core/text-table.js';
import { loadLabel } from '../core/views.js';
import { ccOf } from '../core/cc-axis.js';

const COLUMNS = [
  ['response_start_ms', 'Response Start'],
  ['fcp_ms', 'FCP'],
  ['speed_index_ms', 'Speed Index'],
  ['lcp_ms', 'LCP'],
  ['plt_ms', 'PLT'],
];

/**
 * Pure: the table of summary.json's page-load groups (ms, rounded); with
 * repeat or revisit views, a column says which load of its view each is;
 * with --cc-axis, one its end hosts' congestion control.
 */
export function formatBenchSummary(summary) {
  const groups = summary.groups.filter((g) => !g.kind);
  const ms = (v) => (v?.median == null ? '-' : Math.round(v.median));
  const views = groups.some((g) => loadLabel(g.scenario));
  const view = (g) => (views ? [loadLabel(g.scenario) || 'first view'] : []);
  const ccs = groups.some((g) => ccOf(g.scenario) !== null);
  const cc = (g) => (ccs ? [ccOf(g.scenario) ?? '-'] : []);
  const rows = [
    [
      'profile',
      'loss',
      'protocol',
      'site',
      ...(views ? ['view'] : []),
      ...(ccs ? ['cc'] : []),
      ...COLUMNS.map(([, label]) => label),
      'runs',
      'failed',
    ],
    ...groups.map((g) => [
      g.scenario.profile,
      g.scenario.loss_pct,
      g.scenario.protocol,
      g.scenario.site,
      ...view(g),
      ...cc(g),
      ...COLUMNS.map(([key]) => ms(g.metrics?.[key])),
      g.runs,
      g.failed,
    ]),
  ];
  return `Medians in ms over each scenario's successful runs:\n${formatTable(rows)}`;
}
