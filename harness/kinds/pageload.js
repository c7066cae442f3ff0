// Page loads (`satbench bench`): records without a `kind` are these. A
// scenario is profile × loss × protocol × site × view (× the end hosts'
// congestion control, with --cc-axis); summary.json's
// page-load groups carry no `kind` (their shape predates kinds).
import { defineKind } from './generic.js';
import { originStats } from './pageload-origins.js';
import { countStats } from './pageload-counts.js';
import { DEFAULT_VIEWS, opensPair, pairedScenario, viewOf, withView } from '../core/views.js';
import { DEFAULT_CCS, ccOf, variantLabel, withCc } from '../core/cc-axis.js';

// Pure: a scenario's view in its key: nothing for a first view (keys of
// old stay), else the view, and `first` for the load that opened its pair.
const viewKey = (s) => (viewOf(s) === 'first' ? '' : `|${viewOf(s)}${opensPair(s) ? '|first' : ''}`);

// Pure: a scenario's congestion control in its key: nothing without --cc-axis (keys of old stay).
const ccKey = (s) => (ccOf(s) === null ? '' : `|cc=${ccOf(s)}`);

// The key bench --resume, shards and compare match runs on.
export const scenarioKey = (s) => `${s.profile}|${s.loss_pct}|${s.protocol}|${s.site}${viewKey(s)}${ccKey(s)}`;

export const scenarioLabel = (s) =>
  `${s.profile} loss ${s.loss_pct} % ${s.protocol} ${s.site}${variantLabel(s) ? ` ${variantLabel(s)}` : ''}`;

// What the visual gatherer (pageload/gather/visual.js) adds to a record's
// metrics: ms from navigation start, CLS unitless; all worse when higher.
export const VISUAL_METRICS = [
  'first_visual_change_ms',
  'speed_index_ms',
  'visual_complete_85_ms',
  'visual_complete_95_ms',
  'visual_complete_99_ms',
  'last_visual_change_ms',
  'cls',
  'tbt_ms',
];

export const SUMMARY_METRICS = [
  'connect_ms',
  'response_start_ms',
  'fcp_ms',
  'lcp_ms',
  'plt_ms',
  'dom_content_loaded_ms',
  'resource_count',
  'transfer_bytes',
  // from the screenshots and the page's observers (bench --visual)
  ...VISUAL_METRICS,
];

// The metrics the report's matrix looks at first, with labels and the
// paper's (Kosek et al. 2022) names for them.
export const KEY_METRICS = [
  { key: 'response_start_ms', label: 'Response Start', paper: 'response_start' },
  { key: 'fcp_ms', label: 'First Contentful Paint', paper: 'fcp' },
  { key: 'plt_ms', label: 'Page Load Time', paper: 'plt' },
];

// What the report's First and repeat views section sets side by side: the
// key metrics, then those a run may not have (LCP when the page painted
// one, Speed Index with bench --visual), shown where measured.
export const VIEW_METRICS = [
  ...KEY_METRICS,
  { key: 'lcp_ms', label: 'Largest Contentful Paint' },
  { key: 'speed_index_ms', label: 'Speed Index' },
];

// Pure: every (scenario, run) of the matrix, run-major so that slow drifts
// of the machine spread over all scenarios instead of hitting one. A
// repeat or revisit item's scenario is its second load's; its run records
// the pair's first view too (core/views.js loadScenarios). A matrix
// without views (campaigns of old) has first views only; one without ccs
// (no --cc-axis) no `cc`. A scenario's congestion controls run one after
// the other, so that the machine's drifts touch each alike.
export function expandMatrix({ profiles, losses, protocols, sites, views = DEFAULT_VIEWS, ccs = DEFAULT_CCS, runs }) {
  const scenarios = [];
  for (const profile of profiles)
    for (const loss_pct of losses)
      for (const protocol of protocols)
        for (const site of sites)
          for (const view of views)
            for (const cc of ccs) scenarios.push(withCc(withView({ profile, loss_pct, protocol, site }, view), cc));
  const out = [];
  for (let run = 1; run <= runs; run++) for (const scenario of scenarios) out.push({ scenario, run });
  return out;
}

// Without --budget, compare fails a median more than 10 % slower, and
// significantly so, in Response Start, FCP or PLT; nothing has a ceiling.
export const DEFAULT_BUDGET = {
  response_start_ms: { max_slowdown_pct: 10 },
  fcp_ms: { max_slowdown_pct: 10 },
  plt_ms: { max_slowdown_pct: 10 },
};

// A page-load matrix's lists and the scenario field each one varies (a
// first view's scenario has no view; without --cc-axis, none has a cc).
export const MATRIX_AXES = {
  profiles: 'profile',
  losses: 'loss_pct',
  protocols: 'protocol',
  sites: 'site',
  views: ['view', 'first'],
  ccs: ['cc', null],
};

// Pure: merge puts page loads back in the matrix's order (a record's
// position in expandMatrix, a pair's first view just before its second
// load), when the matrix is a page-load one (views or not, ccs or not).
function matrixOrder(matrix) {
  const m = matrix && { ...matrix, views: matrix.views ?? DEFAULT_VIEWS, ccs: matrix.ccs ?? DEFAULT_CCS };
  if (!m || !Object.keys(MATRIX_AXES).every((k) => Array.isArray(m[k])) || !Number.isInteger(m.runs)) return null;
  const pos = new Map(expandMatrix(m).map((x, i) => [`${scenarioKey(x.scenario)}#${x.run}`, 2 * i + 1]));
  return (r) => {
    const item = opensPair(r.scenario) ? pairedScenario(r.scenario) : r.scenario;
    return (pos.get(`${scenarioKey(item)}#${r.run}`) ?? Infinity) - (opensPair(r.scenario) ? 1 : 0);
  };
}

export const pageload = defineKind({
  name: 'pageload',
  key: scenarioKey,
  label: scenarioLabel,
  metricNames: () => SUMMARY_METRICS,
  keyMetrics: KEY_METRICS,
  viewMetrics: VIEW_METRICS,
  // its metrics are times, counts and bytes: the default (worse when higher) holds
  budgetMatch: ['profile', 'loss_pct', 'protocol', 'site', 'view', 'cc'],
  defaultBudget: DEFAULT_BUDGET,
  // records and groups carry no `kind` (their shape predates kinds)
  tag: (fields) => fields,
  matrixAxes: MATRIX_AXES,
  matrixScalars: [],
  matrixOrder,
  command: 'bench',
  report: 'pageload',
  // the medians of the cache and handshake counts (pageload-counts.js);
  // a replayed archive's groups: what each origin cost (pageload-origins.js)
  complete: (entries) =>
    entries.map(({ group, records }) => ({
      ...group,
      ...countStats(records),
      ...(records.some((r) => r.archive) ? { origins: originStats(records) } : {}),
    })),
});
