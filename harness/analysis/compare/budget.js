// A budget: the limits `satbench compare` holds the current results to,
// for every scenario and per matching scenario. Reading the file is here,
// beside the checks whose errors name it: `readBudget` is this module's one
// I/O edge (a YAML or JSON file read with the `yaml` package); everything
// else is a plain function of a parsed document or a checked budget.
import fs from 'node:fs';
import YAML from 'yaml';
import { UsageError } from '../../core/errors.js';
import { kindOf, kinds } from '../../kinds/index.js';

// Without --budget: the limits each kind gives (page loads: a median more
// than 10 % slower, and significantly so, fails Response Start, FCP or
// PLT), for every scenario (asked when used: kinds may be registered late).
// Given the result sets' `groups`, only the limits of the kinds present and
// on metrics they have: two bulk folders are held to bulk's limits, not
// refused for lacking page-load metrics.
export function defaultBudget(groups = null) {
  const present = groups && new Set(groups.map((g) => kindOf(g).name));
  const have = groups && new Set(groups.flatMap((g) => Object.keys(g.metrics ?? {})));
  const limits = kinds()
    .filter((k) => !present || present.has(k.name))
    .flatMap((k) => Object.entries(k.defaultBudget));
  return {
    alpha: 0.05,
    metrics: Object.fromEntries(limits.filter(([metric]) => !have || have.has(metric))),
    scenarios: [],
  };
}

const LIMIT_KEYS = ['max_median', 'min_median', 'max_slowdown_pct'];

// Pure: a budget's limits for every scenario in words, metrics with the
// same limits together ("10 % on response_start_ms, fcp_ms, plt_ms"), for help.
export function describeLimits(metrics) {
  const words = {
    max_slowdown_pct: (v) => `${v} %`,
    max_median: (v) => `at most ${v}`,
    min_median: (v) => `at least ${v}`,
  };
  const metricsByLimits = new Map();
  for (const [metric, limits] of Object.entries(metrics)) {
    const text = LIMIT_KEYS.filter((k) => limits[k] !== undefined)
      .map((k) => words[k](limits[k]))
      .join(', ');
    metricsByLimits.set(text, [...(metricsByLimits.get(text) ?? []), metric]);
  }
  return [...metricsByLimits].map(([text, names]) => `${text} on ${names.join(', ')}`).join('; ') || 'no limit';
}

// What a budget's `match` may name: the kind, and the scenario fields the
// kinds offer (asked when a budget is read: kinds may be registered late).
const matchKeys = () => [...new Set(['kind', ...kinds().flatMap((k) => k.budgetMatch)])];

// Pure: {metric: {limit: number}} checked; `where` starts each error.
function checkedLimits(doc, where) {
  if (!doc || typeof doc !== 'object' || Array.isArray(doc))
    throw new UsageError(`${where}: expected an object of metric names`);
  const out = {};
  for (const [metric, limits] of Object.entries(doc)) {
    if (!limits || typeof limits !== 'object' || Array.isArray(limits))
      throw new UsageError(`${where}.${metric}: expected {max_median, min_median, max_slowdown_pct}`);
    out[metric] = {};
    for (const [key, value] of Object.entries(limits)) {
      if (!LIMIT_KEYS.includes(key))
        throw new UsageError(`${where}.${metric}.${key}: unknown limit; expected ${LIMIT_KEYS.join(', ')}`);
      if (typeof value !== 'number' || !Number.isFinite(value) || value < 0)
        throw new UsageError(`${where}.${metric}.${key}: expected a number >= 0, got ${JSON.stringify(value)}`);
      out[metric][key] = value;
    }
  }
  return out;
}

// Pure: one entry of `scenarios` checked; `where` is "FILE: scenarios[i]".
function checkedRule(rule, where) {
  if (!rule || typeof rule !== 'object') throw new UsageError(`${where}: expected {match, metrics}`);
  for (const key of Object.keys(rule))
    if (!['match', 'metrics'].includes(key))
      throw new UsageError(`${where}.${key}: unknown key; expected match, metrics`);
  const match = rule.match ?? {};
  const allowed = matchKeys();
  if (typeof match !== 'object' || Array.isArray(match))
    throw new UsageError(`${where}.match: expected a mapping of ${allowed.join(', ')}`);
  for (const key of Object.keys(match))
    if (!allowed.includes(key))
      throw new UsageError(`${where}.match.${key}: unknown key; expected ${allowed.join(', ')}`);
  return { match, metrics: checkedLimits(rule.metrics ?? {}, `${where}.metrics`) };
}

/**
 * Pure: a budget document (parsed YAML or JSON) checked and normalised.
 *   alpha: 0.05                       # significance level (optional)
 *   metrics:                          # for every scenario
 *     plt_ms: { max_median: 12000, max_slowdown_pct: 10 }
 *     goodput_mbps: { min_median: 15 }   # a rate: higher is better
 *   scenarios:                        # optional; later entries win
 *     - match: { profile: geo, protocol: [h3, h3-pep] }
 *       metrics: { plt_ms: { max_median: 9000 } }
 * Errors name `file` and the key.
 */
export function parseBudget(doc, file = 'budget') {
  if (!doc || typeof doc !== 'object' || Array.isArray(doc))
    throw new UsageError(`${file}: expected a mapping with "metrics" and/or "scenarios"`);
  for (const key of Object.keys(doc))
    if (!['alpha', 'metrics', 'scenarios'].includes(key))
      throw new UsageError(`${file}: ${key}: unknown key; expected alpha, metrics, scenarios`);
  const alpha = doc.alpha ?? 0.05;
  if (typeof alpha !== 'number' || !(alpha > 0 && alpha < 1))
    throw new UsageError(`${file}: alpha: expected a number between 0 and 1, got ${JSON.stringify(doc.alpha)}`);
  const metrics = doc.metrics === undefined ? {} : checkedLimits(doc.metrics, `${file}: metrics`);
  if (doc.scenarios !== undefined && !Array.isArray(doc.scenarios))
    throw new UsageError(`${file}: scenarios: expected a list`);
  const scenarios = (doc.scenarios ?? []).map((rule, i) => checkedRule(rule, `${file}: scenarios[${i}]`));
  if (!Object.keys(metrics).length && !scenarios.some((s) => Object.keys(s.metrics).length))
    throw new UsageError(`${file}: sets no limit (metrics: {plt_ms: {max_slowdown_pct: 10}}, …)`);
  return { file, alpha, metrics, scenarios };
}

// The budget in `file`, checked. YAML 1.2 reads JSON too.
export function readBudget(file) {
  let text;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    throw new UsageError(`${file}: cannot read the budget file`);
  }
  let doc;
  try {
    doc = YAML.parse(text);
  } catch (e) {
    throw new UsageError(`${file}: neither YAML nor JSON (${e.message.split('\n')[0]})`);
  }
  return parseBudget(doc, file);
}

// Pure: whether a rule's `match` holds for a scenario of `kind` (a value
// or any value of a list, compared as text: YAML's 0 is the scenario's 0).
const ruleMatches = (match, kind, scenario) =>
  Object.entries(match).every(([key, wanted]) => {
    const have = key === 'kind' ? kind : scenario[key];
    return (Array.isArray(wanted) ? wanted : [wanted]).some((w) => String(w) === String(have));
  });

// Pure: a scenario field's values in `groups`, as text (the kind's name for `kind`).
const valuesOf = (groups, key) =>
  [...new Set(groups.map((g) => (key === 'kind' ? kindOf(g).name : g.scenario?.[key])))]
    .filter((v) => v !== undefined)
    .map(String);

// Pure: the values of the budget's `match` lists that no scenario of
// `groups` has (`protocol: [h3, h3-pepp]` matches through h3 alone, so the
// typo would pass silently). Each is {rule: "scenarios[i]", key, value, have}.
export function unmatchedValues(budget, groups) {
  const out = [];
  budget.scenarios.forEach((rule, i) => {
    for (const [key, wanted] of Object.entries(rule.match)) {
      const have = valuesOf(groups, key);
      for (const value of Array.isArray(wanted) ? wanted : [wanted])
        if (!have.includes(String(value))) out.push({ rule: `scenarios[${i}]`, key, value, have });
    }
  });
  return out;
}

// Pure: the budget's rules that match none of `groups` (a typo such as
// `profile: goe` would otherwise pass every check silently). Each is
// {rule: "scenarios[i]", match, have: {key: values present}}.
export function unmatchedRules(budget, groups) {
  const out = [];
  budget.scenarios.forEach((rule, i) => {
    if (groups.some((g) => ruleMatches(rule.match, kindOf(g).name, g.scenario ?? {}))) return;
    const have = Object.fromEntries(Object.keys(rule.match).map((key) => [key, valuesOf(groups, key)]));
    out.push({ rule: `scenarios[${i}]`, match: rule.match, have });
  });
  return out;
}

// Pure: every metric the budget puts a limit on, anywhere.
export const budgetedMetrics = (budget) =>
  new Set([...Object.keys(budget.metrics), ...budget.scenarios.flatMap((s) => Object.keys(s.metrics))]);

// Pure: the limits per metric for one scenario (defaults, then each
// matching scenario entry in order, key by key).
export function limitsFor(budget, kind, scenario) {
  const out = {};
  for (const [metric, limits] of Object.entries(budget.metrics)) out[metric] = { ...limits };
  for (const rule of budget.scenarios) {
    if (!ruleMatches(rule.match, kind, scenario)) continue;
    for (const [metric, limits] of Object.entries(rule.metrics)) out[metric] = { ...out[metric], ...limits };
  }
  return out;
}
