// Judging CURRENT against BASELINE under a budget, for `satbench compare`:
// plain functions of loaded result sets ({path, source, records|null,
// summary}) and a checked budget. Per scenario in both sets and metric
// with limits: the change of medians, the significance of a worsening
// (Mann–Whitney U and Cliff's delta on the runs, else the medians' 95 %
// intervals), and the verdict of the current median against the budget's
// ceiling, floor and allowed slowdown.
import { UsageError } from '../../core/errors.js';
import { compareSamples, MIN_RUNS_FOR_COMPARISON } from '../../core/stats.js';
import { kindOf } from '../../kinds/index.js';
import { campaignSettings } from '../../results/meta.js';
import { budgetedMetrics, defaultBudget, limitsFor, unmatchedRules, unmatchedValues } from './budget.js';
import { fmtValue, pInWords } from './format.js';

// Pure: a run's CPU and device emulation (record.emulation, or
// meta.settings.emulation) in words; "not recorded" for none: a page load
// from before --device and --cpu-slowdown (laid out at 800×600), or a kind
// that emulates nothing.
export const describeEmulation = (e) =>
  e ? `${e.device}, ${e.cpu_slowdown === 1 ? 'CPU not slowed' : `CPU ${e.cpu_slowdown}× slower`}` : 'not recorded';

// Pure: one set's groups keyed as bench keys them, each with its kind, its
// successful runs' finite values per metric, and how its runs were
// emulated (`emulation`, describeEmulation's words, " and " between
// several): its records', else (a summary.json) its campaign's settings.
export function groupsByKey(set) {
  const byKey = new Map();
  const fromSettings = set.records ? null : describeEmulation(campaignSettings(set.summary.meta).emulation);
  for (const group of set.summary.groups) {
    const kind = kindOf(group);
    byKey.set(kind.key(group.scenario), { kind, group, values: {}, emulation: fromSettings });
  }
  const emulations = new Map();
  for (const record of set.records ?? []) {
    const entry = byKey.get(kindOf(record).key(record.scenario));
    if (!entry) continue;
    (emulations.get(entry) ?? emulations.set(entry, new Set()).get(entry)).add(describeEmulation(record.emulation));
    if (!record.ok) continue;
    for (const [metric, value] of Object.entries(record.metrics ?? {}))
      if (typeof value === 'number' && Number.isFinite(value)) (entry.values[metric] ??= []).push(value);
  }
  for (const [entry, seen] of emulations) entry.emulation = [...seen].sort().join(' and ');
  return byKey;
}

// Pure: throws when the budget names a metric that no group of either set
// has, or has a rule that matches no group (a typo would otherwise pass
// every check silently); `groups` are both sets' summary groups.
export function checkBudgetFitsResults(budget, groups) {
  const file = budget.file ?? 'budget';
  const known = new Set(groups.flatMap((g) => Object.keys(g.metrics ?? {})));
  for (const metric of budgetedMetrics(budget)) {
    if (!known.has(metric))
      throw new UsageError(
        `${file}: ${metric}: no such metric in either result set (they have ${[...known].sort().join(', ')})`,
      );
  }
  const [value] = unmatchedValues(budget, groups);
  if (value)
    throw new UsageError(
      `${file}: ${value.rule}.match.${value.key}: ${JSON.stringify(value.value)} matches no scenario of either result set (they have ${value.key}: ${value.have.join(', ') || 'none'})`,
    );
  const [unmatched] = unmatchedRules(budget, groups);
  if (unmatched) {
    const present = Object.entries(unmatched.have)
      .map(([key, values]) => `${key}: ${values.join(', ') || 'none'}`)
      .join('; ');
    throw new UsageError(
      `${file}: ${unmatched.rule}.match ${JSON.stringify(unmatched.match)} matches no scenario of either result set (they have ${present})`,
    );
  }
}

// Pure: one side of a row, a metric's statistics in a group's summary.
export function metricSide(group, metric) {
  const stats = group.metrics?.[metric];
  return {
    n: stats?.n ?? 0,
    median: stats?.median ?? null,
    ci95: stats?.ci95 ?? null,
    runs: group.runs ?? null,
    failed: group.failed ?? 0,
  };
}

// Pure: the current median against the baseline's: their ratio, the change
// in percent, and the worsening in percent (the change, negated for a
// metric where higher is better); all null without both medians or with a
// baseline of 0.
export function medianChange(baseMedian, currentMedian, higherIsBetter) {
  if (baseMedian === null || currentMedian === null || baseMedian === 0)
    return { ratio: null, change_pct: null, worse_pct: null };
  const ratio = currentMedian / baseMedian;
  const changePct = (ratio - 1) * 100;
  return { ratio, change_pct: changePct, worse_pct: higherIsBetter ? -changePct : changePct };
}

/**
 * Pure: whether the current side is significantly worse than its baseline.
 * With both sides' runs (`samples`: [baseline values, current values]):
 * the two-sided Mann–Whitney p below `alpha` and the current median worse;
 * else, with both sides' bootstrap 95 % intervals: the intervals not
 * overlapping, the current one on the worse side. Returns {p, test,
 * cliffs_delta, magnitude, significant (null when neither test applies),
 * warnings}.
 */
export function significanceAgainstBaseline(baseSide, currentSide, samples, { alpha, higherIsBetter }) {
  const none = { p: null, test: null, cliffs_delta: null, magnitude: null, significant: null, warnings: [] };
  if (samples) {
    const mannWhitney = compareSamples(...samples);
    const worse = higherIsBetter ? currentSide.median < baseSide.median : currentSide.median > baseSide.median;
    return {
      p: mannWhitney.p,
      test: `Mann–Whitney U (${mannWhitney.test})`,
      cliffs_delta: mannWhitney.cliffs_delta,
      magnitude: mannWhitney.magnitude,
      significant: mannWhitney.p < alpha && worse,
      warnings: mannWhitney.warning ? [mannWhitney.warning] : [],
    };
  }
  if (!baseSide.ci95 || !currentSide.ci95) return none;
  return {
    ...none,
    test: '95 % intervals',
    significant: higherIsBetter ? currentSide.ci95[1] < baseSide.ci95[0] : currentSide.ci95[0] > baseSide.ci95[1],
    warnings:
      Math.min(baseSide.n, currentSide.n) < MIN_RUNS_FOR_COMPARISON
        ? [`fewer than ${MIN_RUNS_FOR_COMPARISON} runs on a side (${baseSide.n} vs ${currentSide.n})`]
        : [],
  };
}

// Pure: a current median against the budget's ceiling (max_median) and
// floor (min_median): the failures, none when within both.
export function ceilingAndFloorFailures(median, limits, metric) {
  const failures = [];
  if (limits.max_median !== undefined && median > limits.max_median)
    failures.push(`median ${fmtValue(median, metric)} is over the ceiling of ${fmtValue(limits.max_median, metric)}`);
  if (limits.min_median !== undefined && median < limits.min_median)
    failures.push(`median ${fmtValue(median, metric)} is under the floor of ${fmtValue(limits.min_median, metric)}`);
  return failures;
}

/**
 * Pure: a worsening (`worsePct`, null when unknown) against the budget's
 * max_slowdown_pct: past it, a failure when significant, else a warning.
 * `p` is the Mann–Whitney p-value, null when the intervals decided.
 * Returns {failures, warnings}.
 */
export function slowdownVerdict(worsePct, limits, { higherIsBetter, p, significant }) {
  const max = limits.max_slowdown_pct;
  if (max === undefined || worsePct === null || !(worsePct > max)) return { failures: [], warnings: [] };
  const what = `${worsePct.toFixed(1)} % ${higherIsBetter ? 'lower' : 'slower'}, over the ${max} % allowed`;
  if (significant)
    return {
      failures: [`${what}, and significant (${p !== null ? pInWords(p) : 'by non-overlapping 95 % intervals'})`],
      warnings: [],
    };
  return {
    failures: [],
    warnings: [`${what}, but not significant (${p !== null ? pInWords(p) : 'the 95 % intervals overlap'})`],
  };
}

// Pure: a metric's current side against its limits: no value at all
// fails; else its median against the ceiling and floor, and (with a
// baseline) its worsening against the allowed slowdown. Returns
// {failures, warnings}.
export function limitsVerdict(
  baseSide,
  currentSide,
  limits,
  metric,
  { worsePct, higherIsBetter, p, significant, currentAllFailed },
) {
  if (!currentSide.n)
    return {
      failures: [
        currentAllFailed
          ? `no successful run in the current results (${currentSide.failed} of ${currentSide.runs} failed)`
          : 'no value in the current results',
      ],
      warnings: [],
    };
  const failures = ceilingAndFloorFailures(currentSide.median, limits, metric);
  if (!baseSide.n)
    return { failures, warnings: ['no successful run in the baseline: only the ceiling and floor are checked'] };
  const slowdown = slowdownVerdict(worsePct, limits, { higherIsBetter, p, significant });
  return { failures: [...failures, ...slowdown.failures], warnings: slowdown.warnings };
}

/**
 * Pure: one metric of one scenario judged, its current side against the
 * limits and its baseline: a row of the comparison, or null when neither
 * side has the metric (a bulk metric on a page load) and the current runs
 * did not all fail. `baseline` and `current` are groupsByKey entries.
 */
export function judgeMetric(key, baseline, current, metric, limits, { alpha, withRuns }) {
  const { kind, group } = baseline;
  const baseSide = metricSide(baseline.group, metric);
  const currentSide = metricSide(current.group, metric);
  const currentAllFailed = (current.group.runs ?? 0) > 0 && current.group.failed === current.group.runs;
  if (!baseSide.n && !currentSide.n && !currentAllFailed) return null;
  const higherIsBetter = kind.higherIsBetter(metric);
  const change = medianChange(baseSide.median, currentSide.median, higherIsBetter);
  const samples =
    withRuns && baseline.values[metric]?.length && current.values[metric]?.length
      ? [baseline.values[metric], current.values[metric]]
      : null;
  const significance = significanceAgainstBaseline(baseSide, currentSide, samples, { alpha, higherIsBetter });
  const verdict = limitsVerdict(baseSide, currentSide, limits, metric, {
    worsePct: change.worse_pct,
    higherIsBetter,
    p: significance.p,
    significant: significance.significant,
    currentAllFailed,
  });
  const failures = verdict.failures;
  const warnings = [...significance.warnings, ...verdict.warnings];
  return {
    key,
    kind: kind.name,
    scenario: group.scenario,
    label: kind.label(group.scenario),
    metric,
    limits,
    base: baseSide,
    current: currentSide,
    ...change,
    p: significance.p,
    test: significance.test,
    cliffs_delta: significance.cliffs_delta,
    magnitude: significance.magnitude,
    significant: significance.significant,
    warnings,
    failures,
    status: failures.length ? 'fail' : warnings.length ? 'warn' : 'ok',
  };
}

// Pure: the rows of one scenario in both sets, a row per metric the budget
// limits for it (and either side has).
export function judgeScenario(key, baseline, current, budget, { withRuns }) {
  return Object.entries(limitsFor(budget, baseline.kind.name, baseline.group.scenario))
    .filter(([, limits]) => Object.keys(limits).length)
    .map(([metric, limits]) => judgeMetric(key, baseline, current, metric, limits, { alpha: budget.alpha, withRuns }))
    .filter((row) => row !== null);
}

const STATUS_ORDER = { fail: 0, warn: 1, ok: 2 };

/**
 * Pure: `baseSet` and `currentSet` are loaded result sets. Returns
 * {baseline, current, alpha, significance, rows (failures first), missing,
 * emulation_differs (the scenarios in both whose runs were emulated
 * otherwise: {label, baseline, current}), added, regressions,
 * failed_scenarios, failed}. A slowdown past
 * max_slowdown_pct fails only when significant (significanceAgainstBaseline);
 * a median above max_median (or below min_median) fails outright. "Worse"
 * is higher for times, lower for rates (the kind's higherIsBetter).
 */
export function compareResults(baseSet, currentSet, givenBudget = null) {
  const baseline = groupsByKey(baseSet);
  const current = groupsByKey(currentSet);
  const common = [...baseline.keys()].filter((key) => current.has(key));
  if (!common.length) throw new UsageError(`no scenario in common between ${baseSet.path} and ${currentSet.path}`);
  const groups = [...baseline.values(), ...current.values()].map((entry) => entry.group);
  // without a budget, the limits of the kinds present (budget.js defaultBudget)
  const budget = givenBudget ?? defaultBudget(groups);
  checkBudgetFitsResults(budget, groups);
  const withRuns = Boolean(baseSet.records && currentSet.records);
  const rows = common
    .flatMap((key) => judgeScenario(key, baseline.get(key), current.get(key), budget, { withRuns }))
    .sort((x, y) => STATUS_ORDER[x.status] - STATUS_ORDER[y.status]);
  const labelOf = ({ kind, group }) => kind.label(group.scenario);
  const failedRows = rows.filter((row) => row.status === 'fail');
  const sideOf = (set) => ({ path: set.path, source: set.source, runs: set.records ? set.records.length : null });
  return {
    baseline: sideOf(baseSet),
    current: sideOf(currentSet),
    alpha: budget.alpha,
    significance: withRuns
      ? 'Mann–Whitney U, two-sided'
      : 'non-overlapping bootstrap 95 % intervals of the medians (a side has no runs)',
    rows,
    missing: [...baseline.keys()].filter((key) => !current.has(key)).map((key) => labelOf(baseline.get(key))),
    // times of pages emulated otherwise differ for that alone (a phone's screen, a slower CPU)
    emulation_differs: common
      .filter((key) => baseline.get(key).emulation !== current.get(key).emulation)
      .map((key) => ({
        label: labelOf(baseline.get(key)),
        baseline: baseline.get(key).emulation,
        current: current.get(key).emulation,
      })),
    added: [...current.keys()].filter((key) => !baseline.has(key)).map((key) => labelOf(current.get(key))),
    regressions: failedRows.length,
    failed_scenarios: [...new Set(failedRows.map((row) => row.label))],
    failed: failedRows.length > 0,
  };
}
