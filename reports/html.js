// The report: one self-contained HTML file (Chart.js, the data, the styles
// and the script all inlined; a Content-Security-Policy that forbids any
// network use when it is opened). buildReport() turns a summary and its run
// records into a plain model (pure); renderReport() turns the model into
// HTML, escaping every string that comes from input; writeReport() is the
// I/O.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { KEY_METRICS, groupKey, recordKind, scenarioLabel } from '../harness/results/summary.js';
import { compareSamples, MIN_RUNS_FOR_COMPARISON } from '../harness/core/stats.js';
import { MARKS_S, markMetric } from '../harness/results/goodput.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));

export function escapeHtml(s) {
  return String(s).replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c],
  );
}
const h = (s) => (s === null || s === undefined ? '' : escapeHtml(s));

// JSON inside <script type="application/json">: only "</script" (and
// "<!--") could end or confuse the element, so every "<" is escaped; U+2028
// and U+2029 for older parsers.
export const jsonForScript = (v) =>
  JSON.stringify(v)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');

// JavaScript inlined into <script>: "</script" becomes "<\/script", which
// means the same in strings, templates and regular expressions; "<!--"
// cannot be rewritten safely everywhere, so it is refused.
export function inlineScript(js) {
  if (js.includes('<!--')) throw new Error('inlined script contains "<!--"');
  return js.replace(/<\/(script)/gi, '<\\/$1');
}

// The paper's medians (a copy of shared/reference/ifip2022-table2.json).
export function loadReference() {
  return JSON.parse(fs.readFileSync(path.join(HERE, 'reference/ifip2022-table2.json'), 'utf8'));
}

// The paper's median for a scenario, or null: the kepler page over the
// paper's geo or leo profile at one of its losses and protocols.
export function paperMedian(reference, s, paperKey) {
  if (!reference || s.site !== 'kepler') return null;
  return reference.medians?.[s.profile]?.[s.protocol]?.[String(s.loss_pct)]?.[paperKey] ?? null;
}

// Comparisons the report shows: each -pep protocol against the same
// protocol without PEP, and HTTP/3 against HTTP/1.1 (the paper's).
export function comparisonPairs(protocols) {
  const pairs = [];
  for (const p of protocols) {
    const base = p.replace(/-pep$/, '');
    if (base !== p && protocols.includes(base)) pairs.push({ a: p, b: base, kind: 'PEP vs no PEP' });
  }
  for (const [a, b] of [
    ['h3', 'h1'],
    ['h3-pep', 'h1-pep'],
  ]) {
    if (protocols.includes(a) && protocols.includes(b)) pairs.push({ a, b, kind: 'HTTP/3 vs HTTP/1.1' });
  }
  return pairs;
}

// Values in the order the matrix listed them, the rest in order of appearance.
function ordered(values, preferred = []) {
  const uniq = [...new Set(values)];
  const idx = (v) => {
    const i = preferred.findIndex((p) => p === v || String(p) === String(v));
    return i < 0 ? preferred.length : i;
  };
  return uniq
    .map((v, i) => [v, i])
    .sort((x, y) => idx(x[0]) - idx(y[0]) || x[1] - y[1])
    .map(([v]) => v);
}

const okValues = (recs, metric) =>
  recs
    .filter((x) => x.record.ok)
    .map((x) => x.record.metrics?.[metric])
    .filter((v) => typeof v === 'number' && Number.isFinite(v));

// The Lighthouse audits bench --lighthouse put into the records.
export const lighthouseEntries = (records) =>
  (records ?? []).filter((r) => r.lighthouse).map((r) => ({ scenario: r.scenario, run: r.run, ...r.lighthouse }));

// The bulk medians the report tabulates, in order; a column shows only when
// some group has the metric (a 3 s download has no bytes at 5 s).
export const BULK_COLUMNS = [
  ...MARKS_S.map((t) => ({ key: markMetric(t), label: `bytes at ${t} s`, unit: 'MB', scale: 1e-6, digits: 2 })),
  { key: 'time_to_90pct_rate_ms', label: 'time to 90 % of the link rate', unit: 's', scale: 1e-3, digits: 2 },
  { key: 'sender_slow_start_exit_ms', label: "sender's slow start ended", unit: 's', scale: 1e-3, digits: 2 },
  { key: 'connect_ms', label: 'connect', unit: 'ms', scale: 1, digits: 0 },
  { key: 'ttfb_ms', label: 'first byte', unit: 'ms', scale: 1, digits: 0 },
  { key: 'mean_goodput_mbps', label: 'mean goodput', unit: 'Mbit/s', scale: 1, digits: 1 },
];

const BULK_SCENARIO_FIELDS = ['profile', 'loss_pct', 'protocol', 'duration_s', 'size_bytes'];

const fmtBytes = (b) => (b >= 1e6 ? `${Number((b / 1e6).toPrecision(4))} MB` : `${b} bytes`);

// "geo · loss 1 % · 10 s download": a bulk scenario without its protocol.
// A null loss is the profile's own (the quic4sat preset's).
export function bulkTitle(s) {
  const parts = [
    String(s.profile),
    s.loss_pct === null || s.loss_pct === undefined ? "the profile's loss" : `loss ${s.loss_pct} %`,
  ];
  if (s.duration_s != null) parts.push(`${s.duration_s} s download`);
  else if (s.size_bytes != null) parts.push(`${fmtBytes(s.size_bytes)} download`);
  for (const [k, v] of Object.entries(s))
    if (!BULK_SCENARIO_FIELDS.includes(k)) parts.push(`${k}=${typeof v === 'object' ? JSON.stringify(v) : v}`);
  return parts.join(' · ');
}

// Chart series are small on purpose: values rounded to what a chart shows,
// times given as the bin length (summary curves are bin by bin from t0).
const round = (v, digits) => (typeof v === 'number' && Number.isFinite(v) ? Number(v.toFixed(digits)) : null);
const curveSeries = (t, values, digits) => ({
  t0_ms: t?.[0] ?? null,
  step_ms: t && t.length > 1 ? t[1] - t[0] : null,
  y: values.map((v) => round(v, digits)),
});

/**
 * Pure: the bulk part of the report from summary.json's bulk groups (and
 * their records, if any): blocks of one profile × loss × download with a
 * group per protocol, the columns to tabulate, and the objectives judged.
 */
export function buildBulk(groups, byKey, m = {}) {
  const bg = groups.map((g, i) => {
    const { protocol, ...rest } = g.scenario ?? {};
    return {
      ...g,
      index: i,
      anchor: `bg${i}`,
      protocol: String(protocol),
      blockKey: groupKey('bulk', rest),
      rest,
      recs: byKey.get(groupKey('bulk', g.scenario)) ?? [],
    };
  });
  const profiles = ordered(
    bg.map((g) => g.scenario.profile),
    m.profiles,
  );
  const losses = ordered(
    bg.map((g) => g.scenario.loss_pct ?? null),
    m.losses,
  );
  const protocols = ordered(
    bg.map((g) => g.protocol),
    m.protocols,
  );
  const rank = (g) => [
    profiles.indexOf(g.scenario.profile),
    losses.findIndex((l) => String(l) === String(g.scenario.loss_pct ?? null)),
  ];
  const blockKeys = ordered(
    bg
      .slice()
      .sort((a, b) => rank(a)[0] - rank(b)[0] || rank(a)[1] - rank(b)[1])
      .map((g) => g.blockKey),
  );
  const blocks = blockKeys.map((key, i) => {
    const members = bg
      .filter((g) => g.blockKey === key)
      .sort((a, b) => protocols.indexOf(a.protocol) - protocols.indexOf(b.protocol));
    const rates = [...new Set(members.map((g) => g.link_rate_mbps).filter((v) => typeof v === 'number'))];
    return {
      id: `bb${i}`,
      title: bulkTitle(members[0].rest),
      groups: members,
      // one reference line; if the groups disagree there is none to draw
      link_rate_mbps: rates.length === 1 ? rates[0] : null,
      goodput: members
        .filter((g) => g.curve?.mean_mbps?.length)
        .map((g) => ({ protocol: g.protocol, ...curveSeries(g.curve.t_ms, g.curve.mean_mbps, 3) })),
      // log-scale chart: a ratio of 0 (nothing yet with the PEP) cannot be drawn, so it is a gap like "nothing yet without"
      ratio: members
        .filter((g) => g.vs_no_pep?.ratio?.length)
        .map((g) => ({
          protocol: g.protocol,
          base: String(g.vs_no_pep.protocol),
          ...curveSeries(
            g.vs_no_pep.t_ms,
            g.vs_no_pep.ratio.map((r) => (r > 0 ? r : null)),
            4,
          ),
        })),
    };
  });
  const columns = BULK_COLUMNS.filter((c) => bg.some((g) => g.metrics?.[c.key]));
  const objectives = blocks
    .flatMap((b) => b.groups)
    .filter((g) => g.objectives?.results?.length)
    .map((g) => ({
      index: g.index,
      anchor: g.anchor,
      profile: g.scenario.profile,
      loss_pct: g.scenario.loss_pct ?? null,
      protocol: g.protocol,
      title: bulkTitle(g.rest),
      scenario: g.objectives.scenario,
      source: g.objectives.source,
      runs: g.runs,
      failed: g.failed,
      results: g.objectives.results,
    }));
  return { groups: bg, blocks, columns, objectives };
}

/**
 * The report's content as plain data. `records` (results.jsonl, in file
 * order) are optional: without them there are no distributions, p-values,
 * per-run rows or Lighthouse audits.
 */
export function buildReport({ summary, records = null, reference = null }) {
  const lighthouse = lighthouseEntries(records);
  const meta = summary.meta ?? {};
  const m = meta.matrix ?? {};
  const allGroups = summary.groups ?? [];
  const groups = allGroups.filter((g) => (g.kind ?? 'pageload') === 'pageload');
  const others = allGroups.filter((g) => !['pageload', 'bulk'].includes(g.kind ?? 'pageload'));
  const byKey = new Map(); // group key → [{line in results.jsonl, record}]
  (records ?? []).forEach((record, i) => {
    const key = groupKey(recordKind(record), record.scenario);
    if (!byKey.has(key)) byKey.set(key, []);
    byKey.get(key).push({ line: i + 1, record });
  });
  const gi = groups.map((g, i) => ({
    ...g,
    index: i,
    key: groupKey('pageload', g.scenario),
    recs: byKey.get(groupKey('pageload', g.scenario)) ?? [],
  }));
  const find = (s) =>
    gi.find(
      (g) =>
        g.scenario.site === s.site &&
        g.scenario.profile === s.profile &&
        String(g.scenario.loss_pct) === String(s.loss_pct) &&
        g.scenario.protocol === s.protocol,
    );

  const sites = ordered(
    gi.map((g) => g.scenario.site),
    m.sites,
  );
  const profiles = ordered(
    gi.map((g) => g.scenario.profile),
    m.profiles,
  );
  const losses = ordered(
    gi.map((g) => g.scenario.loss_pct),
    m.losses,
  );
  const protocolsAll = ordered(
    gi.map((g) => g.scenario.protocol),
    m.protocols,
  );

  const matrix = sites.map((site) => {
    const protocols = protocolsAll.filter((p) => gi.some((g) => g.scenario.site === site && g.scenario.protocol === p));
    const rows = [];
    for (const profile of profiles)
      for (const loss_pct of losses) {
        if (
          !gi.some(
            (g) =>
              g.scenario.site === site &&
              g.scenario.profile === profile &&
              String(g.scenario.loss_pct) === String(loss_pct),
          )
        )
          continue;
        rows.push({
          profile,
          loss_pct,
          cells: protocols.map((protocol) => find({ site, profile, loss_pct, protocol }) ?? null),
        });
      }
    return {
      site,
      protocols,
      tables: KEY_METRICS.map((km) => ({
        metric: km,
        rows: rows.map((r) => ({
          profile: r.profile,
          loss_pct: r.loss_pct,
          cells: r.cells.map(
            (g) =>
              g && {
                key: g.key,
                index: g.index,
                runs: g.runs,
                failed: g.failed,
                stat: g.metrics?.[km.key] ?? null,
                paper: paperMedian(reference, g.scenario, km.paper),
              },
          ),
        })),
      })),
    };
  });

  const comparisons = [];
  for (const site of sites)
    for (const profile of profiles)
      for (const loss_pct of losses) {
        for (const pair of comparisonPairs(protocolsAll)) {
          const ga = find({ site, profile, loss_pct, protocol: pair.a });
          const gb = find({ site, profile, loss_pct, protocol: pair.b });
          if (!ga || !gb) continue;
          comparisons.push({
            ...pair,
            site,
            profile,
            loss_pct,
            metrics: KEY_METRICS.map((km) => {
              const ma = ga.metrics?.[km.key]?.median ?? null;
              const mb = gb.metrics?.[km.key]?.median ?? null;
              const pa = paperMedian(reference, ga.scenario, km.paper);
              const pb = paperMedian(reference, gb.scenario, km.paper);
              const c =
                records && ga.recs.length && gb.recs.length
                  ? compareSamples(okValues(gb.recs, km.key), okValues(ga.recs, km.key))
                  : null;
              return {
                metric: km,
                a: ma,
                b: mb,
                ratio: ma !== null && mb ? ma / mb : null,
                paper_ratio: pa !== null && pb ? pa / pb : null,
                p: c?.p ?? null,
                cliffs_delta: c?.cliffs_delta ?? null,
                magnitude: c?.magnitude ?? null,
                few: Math.min(ga.metrics?.[km.key]?.n ?? 0, gb.metrics?.[km.key]?.n ?? 0) < MIN_RUNS_FOR_COMPARISON,
              };
            }),
          });
        }
      }

  const blocks = [];
  const series = {};
  if (records) {
    for (const site of sites)
      for (const profile of profiles)
        for (const loss_pct of losses) {
          const members = protocolsAll
            .map((protocol) => find({ site, profile, loss_pct, protocol }))
            .filter((g) => g && g.recs.length);
          if (!members.length) continue;
          blocks.push({
            id: `b${blocks.length}`,
            title: `${profile} · loss ${loss_pct} % · ${site}`,
            keys: members.map((g) => g.key),
          });
          for (const g of members) {
            series[g.key] = {
              protocol: g.scenario.protocol,
              // [run, one value per KEY_METRICS] of each ok run; compact on purpose.
              runs: g.recs
                .filter((x) => x.record.ok)
                .map((x) => [x.record.run, ...KEY_METRICS.map((km) => x.record.metrics?.[km.key] ?? null)]),
            };
          }
        }
  }

  const bulk = buildBulk(
    allGroups.filter((g) => g.kind === 'bulk'),
    byKey,
    m,
  );

  const failures = [
    ...gi.map((g) => ({ g, kind: 'pageload', anchor: `run-g${g.index}` })),
    ...bulk.groups.map((g) => ({ g, kind: 'bulk', anchor: `run-${g.anchor}` })),
  ].flatMap(({ g, kind, anchor }) =>
    (g.failures ?? []).map((f) => ({
      kind,
      anchor: `${anchor}-${f.run}`,
      scenario: g.scenario,
      run: f.run,
      error: f.error ?? '(no reason recorded)',
    })),
  );
  const reasons = new Map();
  for (const f of failures) {
    const reason = String(f.error).slice(0, 160);
    reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
  }

  const warnings = [];
  const small = gi.filter((g) => (g.metrics?.plt_ms?.n ?? 0) < MIN_RUNS_FOR_COMPARISON);
  if (small.length)
    warnings.push(
      `${small.length} of ${gi.length} scenarios have fewer than ${MIN_RUNS_FOR_COMPARISON} successful runs: their comparisons (marked ⚠) have little power.`,
    );
  if (!records)
    warnings.push(
      gi.length || !bulk.groups.length
        ? 'Built from summary.json alone: no distributions, p-values or per-run records (results.jsonl was not available).'
        : 'Built from summary.json alone: no per-run records (results.jsonl was not available).',
    );
  if (meta.shard)
    warnings.push(
      `This is shard ${meta.shard.index}/${meta.shard.count} of the matrix; \`satbench merge\` joins the shards.`,
    );
  for (const w of meta.warnings ?? []) warnings.push(String(w));
  const runsTotal = allGroups.reduce((a, g) => a + (g.runs ?? 0), 0);
  const failedTotal = allGroups.reduce((a, g) => a + (g.failed ?? 0), 0);

  return {
    meta,
    matrix,
    comparisons,
    blocks,
    series,
    failures,
    reasons: [...reasons.entries()].sort((a, b) => b[1] - a[1]),
    groups: gi,
    bulk,
    others,
    lighthouse,
    warnings,
    hasRecords: Boolean(records),
    totals: { scenarios: allGroups.length, runs: runsTotal, failed: failedTotal },
  };
}

// ---------------------------------------------------------------- rendering

const fmtMs = (v) => (v === null || v === undefined ? '–' : String(Math.round(v)));
const fmtRatio = (r) => (r === null || r === undefined ? '–' : `×${r.toFixed(2)}`);
const fmtP = (p) => (p === null || p === undefined ? '–' : p < 0.001 ? '<0.001' : p.toFixed(3));
const fmtDelta = (d) => (d === null || d === undefined ? '–' : (d > 0 ? '+' : '') + d.toFixed(2));

function matrixCell(c) {
  if (!c) return '<td class="empty">–</td>';
  const s = c.stat;
  const attrs = `data-key="${h(c.key)}" data-median="${s ? h(String(s.median)) : ''}" data-n="${s ? s.n : 0}"`;
  if (!s)
    return `<td ${attrs} class="empty">no successful run<span class="n failed">${c.failed} of ${c.runs} failed</span></td>`;
  const vsPaper =
    c.paper !== null
      ? `<span class="paper" data-paper="${h(String(c.paper))}">paper ${fmtMs(c.paper)} · ${fmtRatio(s.median / c.paper)}</span>`
      : '';
  const n = `<span class="n${c.failed ? ' failed' : ''}">n ${s.n}${c.failed ? `, ${c.failed} failed` : ''}</span>`;
  return `<td ${attrs}><a class="med" href="#g${c.index}">${fmtMs(s.median)}</a><span class="ci">[${fmtMs(s.ci95?.[0])}–${fmtMs(s.ci95?.[1])}]</span>${vsPaper}${n}</td>`;
}

function renderMatrix(model) {
  if (!model.matrix.length) return '<p class="note">No page-load results.</p>';
  return model.matrix
    .map(
      (site) =>
        `<div class="matrix-set">${site.tables
          .map(
            (t) => `<div>
<h3>${h(t.metric.label)} <small class="note">(${h(t.metric.key)})</small> — ${h(site.site)}</h3>
<div class="scroll matrix" data-metric="${h(t.metric.key)}"><table>
<thead><tr><th>profile</th><th>loss %</th>${site.protocols.map((p) => `<th>${h(p)}</th>`).join('')}</tr></thead>
<tbody>
${t.rows.map((r) => `<tr><th>${h(r.profile)}</th><td>${h(r.loss_pct)}</td>${r.cells.map(matrixCell).join('')}</tr>`).join('\n')}
</tbody></table></div></div>`,
          )
          .join('\n')}</div>`,
    )
    .join('\n');
}

function renderComparisons(model) {
  if (!model.comparisons.length)
    return '<p class="note">No pair of protocols to compare (PEP and no PEP, or HTTP/3 and HTTP/1.1, over the same profile, loss and site).</p>';
  const head = KEY_METRICS.map((km) => `<th colspan="4">${h(km.label)}</th>`).join('');
  const sub = KEY_METRICS.map(() => '<th>ours</th><th>paper</th><th>p</th><th>Cliff’s δ</th>').join('');
  const rows = model.comparisons
    .map(
      (c) =>
        `<tr><td>${h(c.kind)}</td><th>${h(c.a)} / ${h(c.b)}</th><td>${h(`${c.profile} · loss ${c.loss_pct} % · ${c.site}`)}</td>` +
        c.metrics
          .map(
            (x) =>
              `<td class="num" data-ratio="${x.ratio ?? ''}">${fmtRatio(x.ratio)}${x.few ? ' <span class="warn" title="fewer than 10 runs a side">⚠</span>' : ''}</td>` +
              `<td class="num">${fmtRatio(x.paper_ratio)}</td><td class="num${x.p !== null && x.p < 0.05 ? ' sig' : ''}">${fmtP(x.p)}</td>` +
              `<td class="num" title="${h(x.magnitude ?? '')}">${fmtDelta(x.cliffs_delta)}${x.magnitude ? ` <small>${h(x.magnitude)}</small>` : ''}</td>`,
          )
          .join('') +
        '</tr>',
    )
    .join('\n');
  return `<p class="legend-note">Ratio of medians (first protocol over second; below 1 means the first is faster), the paper's ratio where it has both, the two-sided Mann–Whitney U p-value (bold below 0.05) and Cliff's delta of the first against the second (negative: the first tends to be faster; |δ| ≥ 0.474 is large). ⚠: fewer than ${MIN_RUNS_FOR_COMPARISON} runs on a side.</p>
<div class="scroll"><table>
<thead><tr><th rowspan="2">comparison</th><th rowspan="2">protocols</th><th rowspan="2">scenario</th>${head}</tr><tr>${sub}</tr></thead>
<tbody>
${rows}
</tbody></table></div>`;
}

function renderDistributions(model) {
  if (!model.blocks.length)
    return `<p class="note">${model.hasRecords ? 'No successful runs to plot.' : 'Needs results.jsonl.'}</p>`;
  return (
    '<p class="legend-note">Per profile, loss and site: the empirical CDF of each metric with every successful run as a dot (dashed lines and triangles: with PEP), and Page Load Time in run order, where drifts and outliers show. Hover a dot for its run.</p>' +
    model.blocks
      .map(
        (b) => `
<h3>${h(b.title)}</h3>
<div class="charts">
${KEY_METRICS.map((km) => `<div class="chart"><div class="chart-title">${h(km.label)} (CDF)</div><div class="chart-box"><canvas data-block="${b.id}" data-metric="${h(km.key)}" data-chart="cdf" role="img" aria-label="${h(`CDF of ${km.label}, ${b.title}`)}"></canvas></div></div>`).join('\n')}
<div class="chart"><div class="chart-title">Page Load Time by run</div><div class="chart-box"><canvas data-block="${b.id}" data-metric="plt_ms" data-chart="runs" role="img" aria-label="${h(`Page Load Time by run, ${b.title}`)}"></canvas></div></div>
</div>`,
      )
      .join('\n')
  );
}

// Links only to files in the results folder: no scheme (javascript:, …),
// no way up.
const isRelativePath = (p) =>
  typeof p === 'string' && /^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*$/.test(p) && !p.split('/').includes('..');

function renderLighthouse(model) {
  if (!model.lighthouse.length) return '';
  const cols = [
    ['first-contentful-paint', 'FCP'],
    ['largest-contentful-paint', 'LCP'],
    ['speed-index', 'Speed Index'],
    ['total-blocking-time', 'TBT'],
    ['interactive', 'TTI'],
  ];
  const rows = model.lighthouse
    .map(
      (l) =>
        `<tr><td>${h(scenarioLabel(l.scenario))}</td><td class="num">${l.score === null || l.score === undefined ? '–' : Math.round(l.score * 100)}</td>` +
        cols.map(([k]) => `<td class="num">${fmtMs(l.metrics?.[k])}</td>`).join('') +
        `<td class="num">${l.metrics?.['cumulative-layout-shift'] === undefined ? '–' : h(l.metrics['cumulative-layout-shift'].toFixed(3))}</td>` +
        `<td>${l.error ? `<span class="failed">${h(l.error)}</span>` : ''}${[
          ['HTML', l.html],
          ['JSON', l.json],
        ]
          .filter(([, p]) => isRelativePath(p))
          .map(([t, p]) => `<a href="${h(p)}">${t}</a>`)
          .join(' · ')}</td></tr>`,
    )
    .join('\n');
  return `<section id="lighthouse"><h2>Lighthouse</h2>
<p class="legend-note">One separate load per scenario (performance category, throttling off: the emulated link is the throttle). Times in ms. The links open the stored reports next to this file.</p>
<div class="scroll"><table><thead><tr><th>scenario</th><th>score</th>${cols.map(([, l]) => `<th>${h(l)}</th>`).join('')}<th>CLS</th><th>reports</th></tr></thead>
<tbody>
${rows}
</tbody></table></div></section>`;
}

function renderFailures(model) {
  if (!model.failures.length) return '<p>No failed runs.</p>';
  return `<p>${model.failures.length} failed run(s). Failed runs are counted, never dropped: their metrics are left out of the statistics.</p>
<table><thead><tr><th>runs</th><th>reason</th></tr></thead><tbody>
${model.reasons.map(([reason, n]) => `<tr><td class="num">${n}</td><td>${h(reason)}</td></tr>`).join('\n')}
</tbody></table>
<details><summary>every failed run</summary><table><thead><tr><th>scenario</th><th>run</th><th>reason</th></tr></thead><tbody>
${model.failures.map((f) => `<tr><td>${h(f.kind === 'bulk' ? bulkLabel(f.scenario) : scenarioLabel(f.scenario))}</td><td class="num">${model.hasRecords ? `<a href="#${h(f.anchor)}">${h(f.run)}</a>` : h(f.run)}</td><td class="failed">${h(f.error)}</td></tr>`).join('\n')}
</tbody></table></details>`;
}

const kvRows = (pairs) =>
  pairs
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `<tr><th>${h(k)}</th><td>${v === null ? '<span class="note">not recorded</span>' : v}</td></tr>`)
    .join('\n');

function renderEnvironment(model) {
  const meta = model.meta;
  const env = meta.environment ?? {};
  const code = (v) =>
    v === null || v === undefined ? null : `<code>${h(typeof v === 'string' ? v : JSON.stringify(v))}</code>`;
  const libs = env.libraries
    ? Object.entries(env.libraries)
        .map(([k, v]) => `${h(k)} ${h(v ?? '–')}`)
        .join(', ')
    : null;
  const git = env.git
    ? `${code(env.git.commit)}${env.git.dirty ? ' <span class="warn">(uncommitted changes)</span>' : ''}`
    : null;
  const rows = kvRows([
    ['satbench', env.satbench ? h(env.satbench) : null],
    ['git commit', git],
    ['Chromium', env.chromium ? h(`${env.chromium.version ?? '?'} (${env.chromium.path ?? '?'})`) : null],
    ['kernel', env.kernel ? h(env.kernel) : null],
    ['operating system', env.os ? h(env.os) : null],
    ['CPU', env.cpu ? h(`${env.cpu.model} × ${env.cpu.cores}, ${env.cpu.memory_gib} GiB memory`) : null],
    ['Node.js', env.node ? h(env.node) : null],
    ['libraries', libs],
    ['link emulation', meta.link !== undefined ? h(meta.link) : null],
    ['origin server', meta.origin !== undefined ? h(meta.origin) : undefined],
    ['seed', meta.seed !== undefined ? h(meta.seed) : null],
    ['preset', meta.preset !== undefined ? h(meta.preset) : undefined],
    [
      'command line',
      meta.argv ? code(`satbench ${meta.kind === 'bulk' ? 'bulk' : 'bench'} ${meta.argv.join(' ')}`) : undefined,
    ],
    ['settings', meta.settings ? code(meta.settings) : undefined],
    ['matrix', meta.matrix ? code(meta.matrix) : null],
    ['TCP', meta.tcp ? code(meta.tcp) : undefined],
    ['QUIC', meta.quic && Object.keys(meta.quic).length ? code(meta.quic) : undefined],
    ['shard', meta.shard ? h(`${meta.shard.index}/${meta.shard.count}`) : undefined],
    [
      'merged from',
      meta.merged_from
        ? meta.merged_from
            .map((x) => `${h(x.dir)}${x.shard ? ` (shard ${h(x.shard.index)}/${h(x.shard.count)})` : ''}`)
            .join('<br>')
        : undefined,
    ],
    ['generated', meta.generated ? h(meta.generated) : null],
  ]);
  const flags = env.chromium_flags
    ? Object.entries(env.chromium_flags)
        .map(
          ([p, args]) =>
            `<details><summary>Chromium flags for ${h(p)}</summary><pre class="raw">${h(args.join('\n'))}</pre></details>`,
        )
        .join('\n')
    : '<p class="note">Chromium flags: not recorded.</p>';
  const profiles = env.profiles
    ? `<table><thead><tr><th>profile</th><th>RTT ms</th><th>forward / return Mbit/s</th><th>loss %</th><th>description</th></tr></thead><tbody>
${Object.entries(env.profiles)
  .map(
    ([name, p]) =>
      `<tr><td>${h(name)}</td><td class="num">${h(p.configured?.rtt_ms ?? '–')}</td><td class="num">${h(p.configured?.forward_mbps ?? '∞')} / ${h(p.configured?.return_mbps ?? '∞')}</td><td class="num">${h(p.configured?.loss_pct ?? '–')}</td><td>${h(p.description ?? '')}<details><summary>links</summary><pre class="raw">${h(JSON.stringify(p.links, null, 2))}</pre></details></td></tr>`,
  )
  .join('\n')}
</tbody></table>`
    : '<p class="note">Link profiles: not recorded.</p>';
  return `<table class="kv">${rows}</table>\n<h3>Link profiles</h3>\n${profiles}\n<h3>Chromium</h3>\n${flags}`;
}

function renderRuns(model) {
  const bulkNote = `<p class="legend-note">Every bulk run: bytes received, set-up and goodput; open a run for its whole record as results.jsonl has it (with its bins, the sender's trace and the PEP's counters)${model.hasRecords ? '' : ' (not available: this report was built from summary.json)'}.</p>`;
  if (!model.groups.length)
    return model.bulk.groups.length
      ? `${bulkNote}\n${renderBulkRuns(model)}`
      : '<p class="note">No page-load results.</p>';
  const pageloads = renderPageLoadRuns(model);
  return model.bulk.groups.length
    ? `<h3>Page loads</h3>\n${pageloads}\n<h3>Bulk transfers</h3>\n${bulkNote}\n${renderBulkRuns(model)}`
    : pageloads;
}

function renderPageLoadRuns(model) {
  return `<p class="legend-note">Every run of every scenario, in ms. Open a run for its whole record as results.jsonl has it${model.hasRecords ? '' : ' (not available: this report was built from summary.json)'}.</p>
${model.groups
  .map(
    (
      g,
    ) => `<details id="g${g.index}"><summary><b>${h(scenarioLabel(g.scenario))}</b> — ${g.runs} run(s)${g.failed ? `, <span class="failed">${g.failed} failed</span>` : ''}</summary>
${
  g.recs.length
    ? `<div class="scroll"><table><thead><tr><th>run</th><th>ok</th>${KEY_METRICS.map((km) => `<th>${h(km.label)}</th>`).join('')}<th>resources</th><th>protocol seen</th><th>record</th></tr></thead><tbody>
${g.recs
  .map(
    ({ line, record: r }) =>
      `<tr id="run-g${g.index}-${h(r.run)}"><td class="num">${h(r.run)}</td><td>${r.ok ? 'ok' : `<span class="failed">${h(r.error ?? 'failed')}</span>`}</td>` +
      KEY_METRICS.map((km) => `<td class="num">${fmtMs(r.metrics?.[km.key])}</td>`).join('') +
      `<td class="num">${h(r.metrics?.resource_count ?? '–')}</td><td>${h(
        r.protocol_seen
          ? `${r.protocol_seen.document ?? '?'}; ${Object.entries(r.protocol_seen.resources ?? {})
              .map(([p, n]) => `${p} ×${n}`)
              .join(', ')}`
          : '–',
      )}</td>` +
      `<td><details class="raw" data-line="${line}"><summary>results.jsonl line ${line}</summary><pre class="raw"></pre></details></td></tr>`,
  )
  .join('\n')}
</tbody></table></div>`
    : '<p class="note">No per-run records.</p>'
}
</details>`,
  )
  .join('\n')}`;
}

// ------------------------------------------------------------ bulk transfers

const bulkLabel = (s) => `bulk ${s?.protocol} · ${bulkTitle(s ?? {})}`;
const fmtIn = (v, c) => (typeof v === 'number' && Number.isFinite(v) ? (v * c.scale).toFixed(c.digits) : '–');
const fmtS = (v, digits = 2) => (typeof v === 'number' && Number.isFinite(v) ? v.toFixed(digits) : '–');
const okRuns = (g) =>
  `<span class="${g.failed ? 'failed' : ''}">${h((g.runs ?? 0) - (g.failed ?? 0))}${g.failed ? `, ${h(g.failed)} failed` : ''}</span>`;

function bulkCell(g, c) {
  const s = g.metrics?.[c.key];
  if (!s) return `<td class="empty" data-metric="${h(c.key)}">–</td>`;
  return `<td data-metric="${h(c.key)}" data-median="${h(String(s.median))}" data-n="${h(s.n)}"><span class="med">${fmtIn(s.median, c)}</span><span class="ci">[${fmtIn(s.ci95?.[0], c)}–${fmtIn(s.ci95?.[1], c)}]</span></td>`;
}

function renderBulkMedians(bulk) {
  const cols = bulk.columns;
  return `<h3>Medians</h3>
<p class="legend-note">Per profile, loss and download, each protocol's median over its successful runs and the median's bootstrap 95 % interval. MB are 10<sup>6</sup> bytes; times from t0, just before connecting. “Time to 90 % of the link rate”: the start of the first 500 ms whose goodput averaged 90 % of the profile's forward rate; “sender's slow start ended”: its first loss response (with a PEP: the server's hop). The protocol links to its runs.</p>
<div class="scroll"><table class="bulk-medians">
<thead><tr><th>protocol</th><th>runs ok</th>${cols.map((c) => `<th>${h(c.label)}<small class="unit">${h(c.unit)}</small></th>`).join('')}</tr></thead>
${bulk.blocks
  .map(
    (
      b,
    ) => `<tbody data-block="${b.id}"><tr class="block-head"><th colspan="${cols.length + 2}">${h(b.title)}${b.link_rate_mbps !== null ? ` <small class="note">link ${h(b.link_rate_mbps)} Mbit/s</small>` : ''}</th></tr>
${b.groups.map((g) => `<tr data-protocol="${h(g.protocol)}"><th><a href="#${g.anchor}">${h(g.protocol)}</a></th><td class="num">${okRuns(g)}</td>${cols.map((c) => bulkCell(g, c)).join('')}</tr>`).join('\n')}
</tbody>`,
  )
  .join('\n')}
</table></div>`;
}

function renderObjectives(bulk) {
  if (!bulk.objectives.length) return '';
  const sizes = [...new Set(bulk.objectives.flatMap((o) => o.results.map((r) => r.bytes)))].sort((a, b) => a - b);
  const all = bulk.objectives.flatMap((o) => o.results);
  const met = all.filter((r) => r.met).length;
  const sources = [...new Set(bulk.objectives.map((o) => o.source))];
  const verdict = (r) =>
    `<td class="verdict ${r.met ? 'met' : 'missed'}" data-bytes="${h(r.bytes)}" data-limit-s="${h(r.limit_s)}" data-median-s="${r.median_s === null ? '' : h(r.median_s)}" data-met="${r.met ? 'true' : 'false'}" data-runs-met="${h(r.runs_met)}" data-runs="${h(r.runs)}">` +
    `${r.met ? '✓ met' : '✗ missed'}<small>${h(r.runs_met)} of ${h(r.runs)} runs</small></td>`;
  // objectives come block by block: the scenario cell spans its protocols
  const rows = bulk.objectives
    .map((o, i) => {
      const first = i === 0 || bulk.objectives[i - 1].title !== o.title;
      let span = 0;
      while (first && bulk.objectives[i + span]?.title === o.title) span++;
      return (
        `<tr class="${first ? 'first' : ''}" data-profile="${h(o.profile)}" data-protocol="${h(o.protocol)}">${first ? `<td rowspan="${span}">${h(o.profile)}<small class="note">${h(o.scenario)}${o.loss_pct !== null ? ` · loss ${h(o.loss_pct)} %` : ''}</small></td>` : ''}` +
        `<th><a href="#${o.anchor}">${h(o.protocol)}</a></th><td class="num">${okRuns(o)}</td>` +
        sizes
          .map((bytes) => {
            const r = o.results.find((x) => x.bytes === bytes);
            if (!r) return '<td class="empty" colspan="3">–</td>';
            return `<td class="num">≤ ${h(r.limit_s)}</td><td class="num">${r.median_s === null ? '<span class="note">not reached</span>' : fmtS(r.median_s)}</td>${verdict(r)}`;
          })
          .join('') +
        '</tr>'
      );
    })
    .join('\n');
  return `<h3>Download objectives</h3>
<p class="legend-note">${sources.map(h).join(', ')}: the time from t0 to receive the first 2, 10 and 100 MB (10<sup>6</sup> bytes), in s, against the scenario's limit. An objective is <b>met</b> when the median run is within the limit (a run that never got there counts as slower than any that did; failed runs count with what they received); “k of n runs” met it on their own.</p>
<p class="objectives-total"><b>${met}</b> of <b>${all.length}</b> objectives met.</p>
<div class="scroll"><table class="objectives">
<thead><tr><th rowspan="2">scenario</th><th rowspan="2">protocol</th><th rowspan="2">runs ok</th>${sizes.map((b) => `<th colspan="3">${h(fmtBytes(b))}</th>`).join('')}</tr>
<tr>${sizes.map(() => '<th>limit<small class="unit">s</small></th><th>median<small class="unit">s</small></th><th>result</th>').join('')}</tr></thead>
<tbody>
${rows}
</tbody></table></div>`;
}

function renderBulkCharts(bulk) {
  return `<h3>Over time</h3>
<p class="legend-note">Per profile, loss and download: the goodput in Mbit/s per ${h([...new Set(bulk.blocks.flatMap((b) => b.goodput.map((s) => s.step_ms)).filter(Boolean))].join(' or ') || '100')} ms bin from t0, averaged over the successful runs (a run adds nothing after its end), with the link rate as a grey line; and, as Kosek et al.'s Figure 2, the bytes received so far with the PEP over the bytes without it (log scale; above 1 the PEP is ahead; gaps where either had received nothing yet).</p>
${bulk.blocks
  .map(
    (b) => `<h4>${h(b.title)}</h4>
<div class="charts wide">
${b.goodput.length ? `<div class="chart"><div class="chart-title">Goodput, mean over runs</div><div class="chart-box"><canvas data-bulk="${b.id}" data-chart="goodput" role="img" aria-label="${h(`Goodput over time, ${b.title}`)}"></canvas></div></div>` : '<p class="note">No goodput curve (no successful run with bins).</p>'}
${b.ratio.length ? `<div class="chart"><div class="chart-title">Bytes received with PEP / without</div><div class="chart-box"><canvas data-bulk="${b.id}" data-chart="ratio" role="img" aria-label="${h(`Ratio of bytes received with PEP to without, ${b.title}`)}"></canvas></div></div>` : ''}
</div>`,
  )
  .join('\n')}`;
}

function renderBulk(model) {
  const bulk = model.bulk;
  if (!bulk.groups.length) return '';
  return `<section id="bulk"><h2>Bulk transfers</h2>
${renderObjectives(bulk)}
${renderBulkMedians(bulk)}
${renderBulkCharts(bulk)}
</section>`;
}

// Per bulk run: what it got and its whole record; per group every median
// (also the metrics the tables leave out).
const BULK_RUN_COLUMNS = [
  { key: 'bytes', label: 'bytes', unit: 'MB', scale: 1e-6, digits: 2 },
  ...BULK_COLUMNS.filter((c) =>
    ['connect_ms', 'ttfb_ms', 'time_to_90pct_rate_ms', 'mean_goodput_mbps'].includes(c.key),
  ),
];

function renderBulkRuns(model) {
  return model.bulk.groups
    .map(
      (
        g,
      ) => `<details id="${g.anchor}"><summary><b>${h(bulkLabel(g.scenario))}</b> — ${h(g.runs)} run(s)${g.failed ? `, <span class="failed">${h(g.failed)} failed</span>` : ''}</summary>
<p class="legend-note">Medians: ${
        Object.entries(g.metrics ?? {})
          .map(([k, v]) => `${h(k)} ${h(Math.round(v.median * 1000) / 1000)}`)
          .join(' · ') || 'none'
      }</p>
${
  g.recs.length
    ? `<div class="scroll"><table><thead><tr><th>run</th><th>ok</th><th>protocol seen</th>${BULK_RUN_COLUMNS.map((c) => `<th>${h(c.label)} <small class="unit">${h(c.unit)}</small></th>`).join('')}<th>record</th></tr></thead><tbody>
${g.recs
  .map(
    ({ line, record: r }) =>
      `<tr id="run-${g.anchor}-${h(r.run)}"><td class="num">${h(r.run)}</td><td>${r.ok ? 'ok' : `<span class="failed">${h(r.error ?? 'failed')}</span>`}</td><td>${h(typeof r.protocol_seen === 'string' ? r.protocol_seen : r.protocol_seen ? JSON.stringify(r.protocol_seen) : '–')}</td>` +
      BULK_RUN_COLUMNS.map((c) => `<td class="num">${fmtIn(r.metrics?.[c.key], c)}</td>`).join('') +
      `<td><details class="raw" data-line="${line}"><summary>results.jsonl line ${line}</summary><pre class="raw"></pre></details></td></tr>`,
  )
  .join('\n')}
</tbody></table></div>`
    : '<p class="note">No per-run records.</p>'
}
</details>`,
    )
    .join('\n');
}

function renderOthers(model) {
  if (!model.others.length) return '';
  return `<section id="other"><h2>Other results</h2>
<p class="legend-note">Records of other kinds (e.g. bulk transfers): medians of each metric.</p>
<table><thead><tr><th>scenario</th><th>runs</th><th>failed</th><th>medians</th></tr></thead><tbody>
${model.others
  .map(
    (g) =>
      `<tr><td>${h(scenarioLabel(g.scenario, g.kind))}</td><td class="num">${h(g.runs)}</td><td class="num">${h(g.failed)}</td><td>${Object.entries(
        g.metrics ?? {},
      )
        .map(([k, v]) => `${h(k)} ${h(Math.round(v.median * 1000) / 1000)}`)
        .join(' · ')}</td></tr>`,
  )
  .join('\n')}
</tbody></table></section>`;
}

let assets = null;
function readAssets() {
  if (!assets) {
    const require = createRequire(import.meta.url);
    assets = {
      // The UMD build sits next to the package's main file (its exports map
      // does not list it).
      chartJs: fs.readFileSync(path.join(path.dirname(require.resolve('chart.js')), 'chart.umd.min.js'), 'utf8'),
      clientJs: fs.readFileSync(path.join(HERE, 'client.js'), 'utf8'),
      css: fs.readFileSync(path.join(HERE, 'report.css'), 'utf8'),
    };
  }
  return assets;
}

// Compressed so that thousands of 20-kB records stay a file a browser opens.
const packRecords = (records) =>
  zlib.gzipSync(records.map((r) => JSON.stringify(r)).join('\n') + '\n').toString('base64');

// No network whatever the content: scripts and styles inline only, images
// from data: only, no fetch, no frames, no forms.
const CSP =
  "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'";

/**
 * The whole report as an HTML string. `summary` is summary.json's content;
 * options: records (results.jsonl's, in file order), reference (the
 * paper's medians; default the stored copy).
 */
export function renderReport(summary, { records = null, reference = loadReference() } = {}) {
  const model = buildReport({ summary, records, reference });
  const { chartJs, clientJs, css } = readAssets();
  const t = model.totals;
  const data = {
    metrics: KEY_METRICS.map(({ key, label }) => ({ key, label })),
    blocks: model.blocks,
    series: model.series,
  };
  const hasBulk = model.bulk.groups.length > 0;
  // A bulk-only report has no empty page-load sections; an empty one keeps them (they say so).
  const pageLoads = model.groups.length > 0 || !hasBulk;
  if (hasBulk)
    data.bulk = model.bulk.blocks.map((b) => ({
      id: b.id,
      link_rate_mbps: b.link_rate_mbps,
      goodput: b.goodput,
      ratio: b.ratio,
    }));
  const generated = h(model.meta.generated ?? 'at an unknown time');
  const lead = !hasBulk
    ? `Page loads in Chromium over emulated satellite links. Medians in ms over the successful runs of each scenario, with a seeded bootstrap 95 % interval; generated ${generated}.`
    : `${pageLoads ? 'Page loads in Chromium and bulk downloads' : 'Bulk downloads'} over emulated satellite links, with and without PEPs. Medians over the successful runs of each scenario, with a seeded bootstrap 95 % interval; generated ${generated}.`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>satbench report${model.meta.generated ? ` — ${h(model.meta.generated)}` : ''}</title>
<style>${css}</style>
</head><body>
<nav class="toc">${pageLoads ? '<a href="#medians">Medians</a><a href="#comparisons">Comparisons</a><a href="#distributions">Distributions</a>' : ''}${model.lighthouse.length ? '<a href="#lighthouse">Lighthouse</a>' : ''}${hasBulk ? '<a href="#bulk">Bulk transfers</a>' : ''}<a href="#failures">Failures</a><a href="#environment">Environment</a><a href="#runs">Runs</a></nav>
<main>
<h1>satbench report</h1>
<p class="lead">${lead}</p>
<div class="headline"><div><b>${t.scenarios}</b> scenarios</div><div><b>${t.runs}</b> runs</div><div class="${t.failed ? 'failed' : ''}"><b>${t.failed}</b> failed</div>${model.meta.seed !== undefined ? `<div>seed <b>${h(model.meta.seed)}</b></div>` : ''}</div>
${model.warnings.length ? `<ul class="warnings">${model.warnings.map((w) => `<li>${h(w)}</li>`).join('')}</ul>` : ''}
${
  pageLoads
    ? `<section id="medians"><h2>Medians</h2>
<p class="legend-note">Each cell: our median (links to its runs), its bootstrap 95 % interval, and where the scenario is one of Kosek et al. (IFIP Networking 2022, Table II: the kepler page over geo or leo) the paper's median and ours relative to it.</p>
${renderMatrix(model)}
</section>
<section id="comparisons"><h2>Comparisons</h2>
${renderComparisons(model)}
</section>
<section id="distributions"><h2>Distributions</h2>
${renderDistributions(model)}
</section>`
    : ''
}
${renderLighthouse(model)}${renderBulk(model)}
${renderOthers(model)}
<section id="failures"><h2>Failures</h2>
${renderFailures(model)}
</section>
<section id="environment"><h2>Environment</h2>
${renderEnvironment(model)}
</section>
<section id="runs" class="runs"><h2>Runs</h2>
${renderRuns(model)}
</section>
</main>
<script type="application/json" id="summary">${jsonForScript(summary)}</script>
<script type="application/json" id="report-data">${jsonForScript(data)}</script>
${records ? `<script type="application/octet-stream" id="raw-records" data-encoding="gzip+base64">${packRecords(records)}</script>` : ''}
<script>${inlineScript(chartJs)}</script>
<script>${inlineScript(clientJs)}</script>
</body></html>
`;
}

export function writeReport(outDir, summary, options = {}) {
  const file = path.join(outDir, 'index.html');
  fs.writeFileSync(file, renderReport(summary, options));
  return file;
}
