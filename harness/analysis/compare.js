// `satbench compare BASELINE CURRENT`: judging two result sets against a
// budget. Everything here is plain functions of already-loaded data (the
// CLI reads the files): match scenarios, compute per metric the ratio of
// medians, the Mann–Whitney p-value and Cliff's delta, apply the budget's
// limits, and format the verdict as text, Markdown or JUnit XML.
import fs from 'node:fs';
import YAML from 'yaml';
import { UsageError } from '../core/errors.js';
import { compareSamples, MIN_RUNS_FOR_COMPARISON } from '../core/stats.js';
import { kindOf, kinds } from '../kinds/index.js';
import { escapeHtml } from '../report/render.js';
import { fmtP } from '../core/stats.js';

// Without --budget: the limits each kind gives (page loads: a median more
// than 10 % slower, and significantly so, fails Response Start, FCP or
// PLT), for every scenario (asked when used: kinds may be registered late).
export const defaultBudget = () => ({
  alpha: 0.05,
  metrics: Object.assign({}, ...kinds().map((k) => k.defaultBudget)),
  scenarios: [],
});

const LIMIT_KEYS = ['max_median', 'min_median', 'max_slowdown_pct'];

// Pure: a budget's limits for every scenario in words, metrics with the
// same limits together ("10 % on response_start_ms, fcp_ms, plt_ms"), for help.
export function describeLimits(metrics) {
  const words = {
    max_slowdown_pct: (v) => `${v} %`,
    max_median: (v) => `at most ${v}`,
    min_median: (v) => `at least ${v}`,
  };
  const byLimits = new Map();
  for (const [metric, lim] of Object.entries(metrics)) {
    const text = LIMIT_KEYS.filter((k) => lim[k] !== undefined)
      .map((k) => words[k](lim[k]))
      .join(', ');
    byLimits.set(text, [...(byLimits.get(text) ?? []), metric]);
  }
  return [...byLimits].map(([text, names]) => `${text} on ${names.join(', ')}`).join('; ') || 'no limit';
}

// What a budget's `match` may name: the kind, and the scenario fields the
// kinds offer (asked when a budget is read: kinds may be registered late).
const matchKeys = () => [...new Set(['kind', ...kinds().flatMap((k) => k.budgetMatch)])];

function limitsOf(obj, where) {
  if (!obj || typeof obj !== 'object' || Array.isArray(obj))
    throw new UsageError(`${where}: expected an object of metric names`);
  const out = {};
  for (const [metric, lim] of Object.entries(obj)) {
    if (!lim || typeof lim !== 'object' || Array.isArray(lim))
      throw new UsageError(`${where}.${metric}: expected {max_median, min_median, max_slowdown_pct}`);
    out[metric] = {};
    for (const [k, v] of Object.entries(lim)) {
      if (!LIMIT_KEYS.includes(k))
        throw new UsageError(`${where}.${metric}.${k}: unknown limit; expected ${LIMIT_KEYS.join(', ')}`);
      if (typeof v !== 'number' || !Number.isFinite(v) || v < 0)
        throw new UsageError(`${where}.${metric}.${k}: expected a number >= 0, got ${JSON.stringify(v)}`);
      out[metric][k] = v;
    }
  }
  return out;
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
  for (const k of Object.keys(doc))
    if (!['alpha', 'metrics', 'scenarios'].includes(k))
      throw new UsageError(`${file}: ${k}: unknown key; expected alpha, metrics, scenarios`);
  const alpha = doc.alpha ?? 0.05;
  if (typeof alpha !== 'number' || !(alpha > 0 && alpha < 1))
    throw new UsageError(`${file}: alpha: expected a number between 0 and 1, got ${JSON.stringify(doc.alpha)}`);
  const metrics = doc.metrics === undefined ? {} : limitsOf(doc.metrics, `${file}: metrics`);
  if (doc.scenarios !== undefined && !Array.isArray(doc.scenarios))
    throw new UsageError(`${file}: scenarios: expected a list`);
  const scenarios = (doc.scenarios ?? []).map((s, i) => {
    const where = `${file}: scenarios[${i}]`;
    if (!s || typeof s !== 'object') throw new UsageError(`${where}: expected {match, metrics}`);
    for (const k of Object.keys(s))
      if (!['match', 'metrics'].includes(k))
        throw new UsageError(`${where}.${k}: unknown key; expected match, metrics`);
    const match = s.match ?? {};
    const MATCH_KEYS = matchKeys();
    if (typeof match !== 'object' || Array.isArray(match))
      throw new UsageError(`${where}.match: expected a mapping of ${MATCH_KEYS.join(', ')}`);
    for (const k of Object.keys(match))
      if (!MATCH_KEYS.includes(k))
        throw new UsageError(`${where}.match.${k}: unknown key; expected ${MATCH_KEYS.join(', ')}`);
    return { match, metrics: limitsOf(s.metrics ?? {}, `${where}.metrics`) };
  });
  if (!Object.keys(metrics).length && !scenarios.some((s) => Object.keys(s.metrics).length))
    throw new UsageError(`${file}: sets no limit (metrics: {plt_ms: {max_slowdown_pct: 10}}, …)`);
  return { file, alpha, metrics, scenarios };
}

export function readBudget(file) {
  let text;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    throw new UsageError(`${file}: cannot read the budget file`);
  }
  let doc;
  try {
    doc = YAML.parse(text); // YAML 1.2 reads JSON too
  } catch (e) {
    throw new UsageError(`${file}: neither YAML nor JSON (${e.message.split('\n')[0]})`);
  }
  return parseBudget(doc, file);
}

const matches = (match, kind, s) =>
  Object.entries(match).every(([k, want]) => {
    const have = k === 'kind' ? kind : s[k];
    return (Array.isArray(want) ? want : [want]).some((w) => String(w) === String(have));
  });

// Pure: the budget's rules that match none of `groups` (a typo such as
// `profile: goe` would otherwise pass every check silently). Each is
// {rule: "scenarios[i]", match, have: {key: values present}}.
export function unmatchedRules(budget, groups) {
  const out = [];
  budget.scenarios.forEach((s, i) => {
    if (groups.some((g) => matches(s.match, kindOf(g).name, g.scenario ?? {}))) return;
    const have = {};
    for (const k of Object.keys(s.match))
      have[k] = [...new Set(groups.map((g) => (k === 'kind' ? kindOf(g).name : g.scenario?.[k])))]
        .filter((v) => v !== undefined)
        .map(String);
    out.push({ rule: `scenarios[${i}]`, match: s.match, have });
  });
  return out;
}

// Pure: the limits per metric for one scenario (defaults, then each
// matching scenario entry in order, key by key).
export function limitsFor(budget, kind, scenario) {
  const out = {};
  for (const [m, l] of Object.entries(budget.metrics)) out[m] = { ...l };
  for (const s of budget.scenarios) {
    if (!matches(s.match, kind, scenario)) continue;
    for (const [m, l] of Object.entries(s.metrics)) out[m] = { ...out[m], ...l };
  }
  return out;
}

// One side's groups keyed as bench keys them, with each group's ok values.
function indexSet(set) {
  const map = new Map();
  for (const g of set.summary.groups) {
    const kind = kindOf(g);
    map.set(kind.key(g.scenario), { kind, group: g, values: {} });
  }
  for (const r of set.records ?? []) {
    if (!r.ok) continue;
    const e = map.get(kindOf(r).key(r.scenario));
    if (!e) continue;
    for (const [m, v] of Object.entries(r.metrics ?? {}))
      if (typeof v === 'number' && Number.isFinite(v)) (e.values[m] ??= []).push(v);
  }
  return map;
}

const side = (e, metric) => {
  const d = e.group.metrics?.[metric];
  return {
    n: d?.n ?? 0,
    median: d?.median ?? null,
    ci95: d?.ci95 ?? null,
    runs: e.group.runs ?? null,
    failed: e.group.failed ?? 0,
  };
};

const unit = (metric) => (metric.endsWith('_ms') ? ' ms' : metric.endsWith('_bytes') ? ' B' : '');
export const fmtValue = (v, metric) => (v === null || v === undefined ? '–' : `${Math.round(v)}${unit(metric)}`);
const fmtPct = (x) => (x === null ? '–' : `${x >= 0 ? '+' : ''}${x.toFixed(1)} %`);
const pIs = (p) => (p < 0.001 ? 'p < 0.001' : `p = ${p.toFixed(3)}`);

/**
 * Pure: `base` and `current` are loaded result sets ({path, records|null,
 * summary}). Returns {rows, missing, added, failed, …}; a row per scenario
 * in both and metric with limits. A slowdown past max_slowdown_pct fails
 * only when significant: with runs on both sides, the two-sided
 * Mann–Whitney p below alpha; with a summary.json side, the two medians'
 * bootstrap 95 % intervals not overlapping. A median above max_median (or
 * below min_median) fails outright. "Worse" is higher for times, lower
 * for rates (the kind's higherIsBetter).
 */
export function compareResults(base, current, budget = defaultBudget()) {
  const B = indexSet(base);
  const C = indexSet(current);
  const common = [...B.keys()].filter((k) => C.has(k));
  if (!common.length) throw new UsageError(`no scenario in common between ${base.path} and ${current.path}`);
  const known = new Set();
  for (const e of [...B.values(), ...C.values()]) for (const m of Object.keys(e.group.metrics ?? {})) known.add(m);
  const budgeted = new Set([
    ...Object.keys(budget.metrics),
    ...budget.scenarios.flatMap((s) => Object.keys(s.metrics)),
  ]);
  for (const m of budgeted) {
    if (!known.has(m))
      throw new UsageError(
        `${budget.file ?? 'budget'}: ${m}: no such metric in either result set (they have ${[...known].sort().join(', ')})`,
      );
  }
  const [miss] = unmatchedRules(
    budget,
    [...B.values(), ...C.values()].map((e) => e.group),
  );
  if (miss) {
    const present = Object.entries(miss.have)
      .map(([k, v]) => `${k}: ${v.join(', ') || 'none'}`)
      .join('; ');
    throw new UsageError(
      `${budget.file ?? 'budget'}: ${miss.rule}.match ${JSON.stringify(miss.match)} matches no scenario of either result set (they have ${present})`,
    );
  }
  const withRuns = Boolean(base.records && current.records);
  const rows = [];
  for (const key of common) {
    const b = B.get(key);
    const c = C.get(key);
    for (const [metric, lim] of Object.entries(limitsFor(budget, b.kind.name, b.group.scenario))) {
      if (!Object.keys(lim).length) continue;
      const bs = side(b, metric);
      const cs = side(c, metric);
      // A metric this kind of scenario does not have (bulk vs page load).
      const curAllFailed = (c.group.runs ?? 0) > 0 && c.group.failed === c.group.runs;
      if (!bs.n && !cs.n && !curAllFailed) continue;
      const row = {
        key,
        kind: b.kind.name,
        scenario: b.group.scenario,
        label: b.kind.label(b.group.scenario),
        metric,
        limits: lim,
        base: bs,
        current: cs,
        ratio: null,
        change_pct: null,
        worse_pct: null,
        p: null,
        test: null,
        cliffs_delta: null,
        magnitude: null,
        significant: null,
        warnings: [],
        failures: [],
      };
      const up = b.kind.higherIsBetter(metric);
      const worse = (x, y) => (up ? x < y : x > y); // is x worse than y
      if (bs.median !== null && cs.median !== null && bs.median !== 0) {
        row.ratio = cs.median / bs.median;
        row.change_pct = (row.ratio - 1) * 100;
        row.worse_pct = up ? -row.change_pct : row.change_pct;
      }
      if (withRuns && b.values[metric]?.length && c.values[metric]?.length) {
        const s = compareSamples(b.values[metric], c.values[metric]);
        Object.assign(row, {
          p: s.p,
          test: `Mann–Whitney U (${s.test})`,
          cliffs_delta: s.cliffs_delta,
          magnitude: s.magnitude,
        });
        row.significant = s.p < budget.alpha && worse(cs.median, bs.median);
        if (s.warning) row.warnings.push(s.warning);
      } else if (bs.ci95 && cs.ci95) {
        row.test = '95 % intervals';
        row.significant = up ? cs.ci95[1] < bs.ci95[0] : cs.ci95[0] > bs.ci95[1];
        if (Math.min(bs.n, cs.n) < MIN_RUNS_FOR_COMPARISON)
          row.warnings.push(`fewer than ${MIN_RUNS_FOR_COMPARISON} runs on a side (${bs.n} vs ${cs.n})`);
      }
      if (!cs.n) {
        row.failures.push(
          curAllFailed
            ? `no successful run in the current results (${cs.failed} of ${cs.runs} failed)`
            : 'no value in the current results',
        );
      } else {
        if (lim.max_median !== undefined && cs.median > lim.max_median) {
          row.failures.push(
            `median ${fmtValue(cs.median, metric)} is over the ceiling of ${fmtValue(lim.max_median, metric)}`,
          );
        }
        if (lim.min_median !== undefined && cs.median < lim.min_median) {
          row.failures.push(
            `median ${fmtValue(cs.median, metric)} is under the floor of ${fmtValue(lim.min_median, metric)}`,
          );
        }
        if (!bs.n) row.warnings.push('no successful run in the baseline: only the ceiling and floor are checked');
        else if (lim.max_slowdown_pct !== undefined && row.worse_pct !== null && row.worse_pct > lim.max_slowdown_pct) {
          const how = row.p !== null ? pIs(row.p) : 'by non-overlapping 95 % intervals';
          const what = `${row.worse_pct.toFixed(1)} % ${up ? 'lower' : 'slower'}, over the ${lim.max_slowdown_pct} % allowed`;
          if (row.significant) row.failures.push(`${what}, and significant (${how})`);
          else
            row.warnings.push(
              `${what}, but not significant (${row.p !== null ? pIs(row.p) : 'the 95 % intervals overlap'})`,
            );
        }
      }
      row.status = row.failures.length ? 'fail' : row.warnings.length ? 'warn' : 'ok';
      rows.push(row);
    }
  }
  const order = { fail: 0, warn: 1, ok: 2 };
  rows.sort((x, y) => order[x.status] - order[y.status]);
  const label = (k, m) => m.get(k).kind.label(m.get(k).group.scenario);
  const failedScenarios = [...new Set(rows.filter((r) => r.status === 'fail').map((r) => r.label))];
  return {
    baseline: { path: base.path, source: base.source, runs: base.records ? base.records.length : null },
    current: { path: current.path, source: current.source, runs: current.records ? current.records.length : null },
    alpha: budget.alpha,
    significance: withRuns
      ? 'Mann–Whitney U, two-sided'
      : 'non-overlapping bootstrap 95 % intervals of the medians (a side has no runs)',
    rows,
    missing: [...B.keys()].filter((k) => !C.has(k)).map((k) => label(k, B)),
    added: [...C.keys()].filter((k) => !B.has(k)).map((k) => label(k, C)),
    regressions: rows.filter((r) => r.status === 'fail').length,
    failed_scenarios: failedScenarios,
    failed: rows.some((r) => r.status === 'fail'),
  };
}

// ---------------------------------------------------------------- output

const MARK = { fail: 'FAIL', warn: 'warn', ok: 'ok' };

export function formatText(res) {
  const lines = [
    `baseline ${res.baseline.source}${res.baseline.runs !== null ? ` (${res.baseline.runs} runs)` : ''}`,
    `current  ${res.current.source}${res.current.runs !== null ? ` (${res.current.runs} runs)` : ''}`,
    `significance: ${res.significance}, alpha ${res.alpha}`,
    '',
  ];
  const w = Math.max(...res.rows.map((r) => r.label.length), 8);
  for (const r of res.rows) {
    lines.push(
      `${MARK[r.status].padEnd(5)}${r.label.padEnd(w + 2)}${r.metric.padEnd(20)}${fmtValue(r.base.median, r.metric).padStart(10)} → ${fmtValue(r.current.median, r.metric).padEnd(10)}` +
        `${fmtPct(r.change_pct).padStart(9)}  p ${fmtP(r.p).padEnd(6)}  δ ${r.cliffs_delta === null ? '–' : r.cliffs_delta.toFixed(2)}${r.magnitude ? ` ${r.magnitude}` : ''}`,
    );
    for (const f of r.failures) lines.push(`       ✗ ${f}`);
    for (const x of r.warnings) lines.push(`       ! ${x}`);
  }
  for (const m of res.missing) lines.push(`warn  ${m}: in the baseline, not in the current results`);
  for (const a of res.added) lines.push(`note  ${a}: new, no baseline to compare with`);
  lines.push('');
  lines.push(
    res.failed
      ? `REGRESSED: ${res.regressions} check(s) failed in ${res.failed_scenarios.length} scenario(s): ${res.failed_scenarios.join('; ')}`
      : `ok: nothing regressed (${res.rows.length} checks)`,
  );
  return lines.join('\n');
}

// Markdown table cells: pipes would split the cell; HTML is rendered on
// GitHub, so input is escaped as HTML too.
const md = (s) => escapeHtml(s).replace(/\|/g, '\\|').replace(/\n/g, ' ');

export function toMarkdown(res) {
  const icon = { fail: '❌', warn: '⚠️', ok: '✅' };
  const row = (r) =>
    `| ${icon[r.status]} | ${md(r.label)} | ${md(r.metric)} | ${fmtValue(r.base.median, r.metric)} | ${fmtValue(r.current.median, r.metric)} | ${fmtPct(r.change_pct)} | ${fmtP(r.p)} | ${r.cliffs_delta === null ? '–' : `${r.cliffs_delta.toFixed(2)} ${r.magnitude}`} | ${md([...r.failures, ...r.warnings].join('; '))} |`;
  const head =
    "| | scenario | metric | baseline | current | change | p | Cliff's δ | notes |\n|---|---|---|---:|---:|---:|---:|---|---|";
  const bad = res.rows.filter((r) => r.status !== 'ok');
  const good = res.rows.filter((r) => r.status === 'ok');
  const out = [
    `### satbench: ${res.failed ? `❌ ${res.regressions} regression(s) in ${res.failed_scenarios.length} scenario(s)` : '✅ no regression'}`,
    '',
    `Baseline \`${md(res.baseline.source)}\`${res.baseline.runs !== null ? ` (${res.baseline.runs} runs)` : ''}, current \`${md(res.current.source)}\`${res.current.runs !== null ? ` (${res.current.runs} runs)` : ''}. ` +
      `A slowdown fails only when it is over the budget and significant (${md(res.significance)}, p < ${res.alpha}); a median past a ceiling or floor fails outright.`,
    '',
  ];
  if (bad.length) out.push(head, ...bad.map(row), '');
  if (good.length)
    out.push(
      `<details><summary>${good.length} check(s) passed</summary>`,
      '',
      head,
      ...good.map(row),
      '',
      '</details>',
      '',
    );
  if (res.missing.length)
    out.push(`In the baseline but not in the current results: ${res.missing.map(md).join('; ')}`, '');
  if (res.added.length) out.push(`New, without a baseline: ${res.added.map(md).join('; ')}`, '');
  return out.join('\n');
}

export function toJUnit(res) {
  const x = escapeHtml; // the five XML entities are HTML's
  const byScenario = new Map();
  for (const r of res.rows) {
    if (!byScenario.has(r.label)) byScenario.set(r.label, []);
    byScenario.get(r.label).push(r);
  }
  const suites = [...byScenario.entries()].map(([label, rows]) => {
    const cases = rows.map((r) => {
      const detail = `baseline ${fmtValue(r.base.median, r.metric)} (n ${r.base.n}), current ${fmtValue(r.current.median, r.metric)} (n ${r.current.n}), ${fmtPct(r.change_pct)}, p ${fmtP(r.p)}, Cliff's delta ${r.cliffs_delta === null ? '–' : r.cliffs_delta.toFixed(2)}`;
      const body =
        r.status === 'fail'
          ? `<failure message="${x(r.failures.join('; '))}" type="regression">${x(`${detail}\n${[...r.failures, ...r.warnings].join('\n')}`)}</failure>`
          : `<system-out>${x(`${detail}${r.warnings.length ? `\n${r.warnings.join('\n')}` : ''}`)}</system-out>`;
      return `    <testcase classname="${x(`satbench.${label}`)}" name="${x(r.metric)}" time="0">${body}</testcase>`;
    });
    return `  <testsuite name="${x(label)}" tests="${rows.length}" failures="${rows.filter((r) => r.status === 'fail').length}" errors="0" skipped="0">\n${cases.join('\n')}\n  </testsuite>`;
  });
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="satbench compare" tests="${res.rows.length}" failures="${res.regressions}">\n${suites.join('\n')}\n</testsuites>\n`;
}
