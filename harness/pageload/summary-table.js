// The table `satbench bench` prints at its end without --json, before the
// path of its results (as sitespeed.io does): per scenario, the medians of
// Response Start, FCP, Speed Index, LCP and PLT ('-' where no run measured
// one: Speed Index comes with the visual capture), its runs and failed runs.
// With repeat or revisit views, what each load found already there, as
// medians: its responses by the cache and our origin's resumed handshakes
// and 0-RTT (the report has the rest: harness/report/pageload/first-and-repeat.js).
import { formatTable } from '../core/text-table.js';
import { loadLabel } from '../core/views.js';
import { ccOf } from '../core/cc-axis.js';
import { CACHE_COUNTS } from '../kinds/pageload-counts.js';

const COLUMNS = [
  ['response_start_ms', 'Response Start'],
  ['fcp_ms', 'FCP'],
  ['speed_index_ms', 'Speed Index'],
  ['lcp_ms', 'LCP'],
  ['plt_ms', 'PLT'],
];

// a median of counts ('-': not recorded)
const count = (v) => (typeof v === 'number' ? String(Math.round(v * 10) / 10) : '-');

// Pure: the count columns of `groups` with views: [header, group → cell],
// each where some group recorded its counts.
function countColumns(groups) {
  const cols = [];
  if (groups.some((g) => g.cache_use))
    cols.push([
      'cached/304/fetched',
      (g) => (g.cache_use ? CACHE_COUNTS.map((k) => count(g.cache_use[k])).join('/') : '-'),
    ]);
  if (groups.some((g) => g.handshakes?.origin))
    cols.push(
      [
        'resumed/conns',
        (g) =>
          g.handshakes?.origin
            ? `${count(g.handshakes.origin.resumed)}/${count(g.handshakes.origin.connections)}`
            : '-',
      ],
      ['0-RTT', (g) => count(g.handshakes?.origin?.early_accepted)],
    );
  return cols;
}

/**
 * Pure: the table of summary.json's page-load groups (ms, rounded); with
 * repeat or revisit views, a column says which load of its view each is,
 * and the count columns what it found already there; with --cc-axis, a
 * column its end hosts' congestion control.
 */
export function formatBenchSummary(summary) {
  const groups = summary.groups.filter((g) => !g.kind);
  const ms = (v) => (v?.median == null ? '-' : Math.round(v.median));
  const views = groups.some((g) => loadLabel(g.scenario));
  const view = (g) => (views ? [loadLabel(g.scenario) || 'first view'] : []);
  const ccs = groups.some((g) => ccOf(g.scenario) !== null);
  const cc = (g) => (ccs ? [ccOf(g.scenario) ?? '-'] : []);
  const counts = views ? countColumns(groups) : [];
  const rows = [
    [
      'profile',
      'loss',
      'protocol',
      'site',
      ...(views ? ['view'] : []),
      ...(ccs ? ['cc'] : []),
      ...COLUMNS.map(([, label]) => label),
      ...counts.map(([label]) => label),
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
      ...counts.map(([, cell]) => cell(g)),
      g.runs,
      g.failed,
    ]),
  ];
  return `Medians in ms over each scenario's successful runs:\n${formatTable(rows)}`;
}
