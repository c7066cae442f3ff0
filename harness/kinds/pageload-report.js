// The page-load part of the report: the medians matrix (with the paper's
// values), the protocol comparisons, the distributions, Lighthouse and the
// runs. build() makes plain data (pure); the rest renders it, escaping
// every string that comes from input. The kind's facts (its key metrics
// and labels) come in with the kind, so that this module needs no import
// of pageload.js.
import { compareSamples, MIN_RUNS_FOR_COMPARISON } from '../core/stats.js';
import { usesQuicPep } from '../core/protocols.js';
import { campaignSettings } from '../results/meta.js';
import { paperMedian } from '../../reports/paper.js';
import { runFailures } from './generic.js';
import { variantPairs, quicTunnelModes, tunnelSentence } from './pep-variants.js';
import { h, fmtMs, fmtRatio, fmtP, fmtDelta, ordered, runsTable } from '../../reports/render.js';

// Comparisons the report shows: each -pep, -qpep and -vpn protocol against
// the same protocol without PEP (without tunnel), each -qpep against the
// -vpn and -pep of its protocol, and HTTP/3 against HTTP/1.1 (the paper's).
export function comparisonPairs(protocols) {
  const pairs = variantPairs(protocols);
  for (const [a, b] of [
    ['h3', 'h1'],
    ['h3-pep', 'h1-pep'],
    ['h3-vpn', 'h1-vpn'],
  ]) {
    if (protocols.includes(a) && protocols.includes(b)) pairs.push({ a, b, kind: 'HTTP/3 vs HTTP/1.1' });
  }
  return pairs;
}

const okValues = (recs, metric) =>
  recs
    .filter((x) => x.record.ok)
    .map((x) => x.record.metrics?.[metric])
    .filter((v) => typeof v === 'number' && Number.isFinite(v));

// The Lighthouse audits bench --lighthouse put into the records.
export const lighthouseEntries = (records) =>
  (records ?? []).filter((r) => r.lighthouse).map((r) => ({ scenario: r.scenario, run: r.run, ...r.lighthouse }));

/**
 * Pure: the page-load part of the report from summary.json's page-load
 * groups and (optional) the records grouped by key: the matrix of medians
 * per site, the comparisons, and the distribution blocks and series.
 */
function build(groups, { kind, byKey, matrix: m = {}, records = null, reference = null, meta = {} }) {
  const KEY_METRICS = kind.keyMetrics;
  const gi = groups.map((g, i) => ({
    ...g,
    index: i,
    key: kind.key(g.scenario),
    recs: byKey.get(kind.key(g.scenario)) ?? [],
  }));
  const find = (s) =>
    gi.find(
      (g) =>
        g.scenario.site === s.site &&
        g.scenario.profile === s.profile &&
        String(g.scenario.loss_pct) === String(s.loss_pct) &&
        g.scenario.protocol === s.protocol,
    );

  // a scenario field's values, in the matrix's order
  const axis = (field, preferred) =>
    ordered(
      gi.map((g) => g.scenario[field]),
      preferred,
    );
  const sites = axis('site', m.sites);
  const profiles = axis('profile', m.profiles);
  const losses = axis('loss_pct', m.losses);
  const protocolsAll = axis('protocol', m.protocols);
  // how the QUIC PEP's satellite hop ran for h3-pep and the -qpep protocols
  const tunnelModes = quicTunnelModes({ protocols: protocolsAll, records, meta });

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
            tunnel: usesQuicPep(pair.a) || usesQuicPep(pair.b) ? tunnelModes.join(', ') || null : null,
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

  return {
    label: kind.label,
    keyMetrics: KEY_METRICS,
    groups: gi,
    matrix,
    comparisons,
    blocks,
    series,
    lighthouse: lighthouseEntries(records),
    // replayed archives: what each origin cost (kinds/pageload-origins.js)
    originGroups: gi.filter((g) => g.origins),
    hasRecords: Boolean(records),
    tunnelNote: tunnelSentence(protocolsAll, tunnelModes),
    altSvcNote: altSvcSentence(protocolsAll, campaignSettings(meta).alt_svc),
  };
}

/**
 * Pure: the sentence saying that HTTP/3 page loads made with `--alt-svc
 * all` are not like for like with the paper's (its testbed matches tcp),
 * or null when no h3 protocol ran or Alt-Svc was tcp (or not recorded).
 */
export function altSvcSentence(protocols, altSvc) {
  if (altSvc !== 'all' || !protocols.some((p) => p.startsWith('h3'))) return null;
  return "HTTP/3 here: our origin sent Alt-Svc on every response (--alt-svc all), so Chromium requested every image at once. Kosek et al.'s testbed matches --alt-svc tcp (Chromium keeps 6 images in flight over h3), so beside their HTTP/3 medians ours are expected to be faster.";
}

function warnings(part) {
  const small = part.groups.filter((g) => (g.metrics?.plt_ms?.n ?? 0) < MIN_RUNS_FOR_COMPARISON);
  return small.length
    ? [
        `${small.length} of ${part.groups.length} scenarios have fewer than ${MIN_RUNS_FOR_COMPARISON} successful runs: their comparisons (marked ⚠) have little power.`,
      ]
    : [];
}

// ---------------------------------------------------------------- rendering

function matrixCell(c) {
  if (!c) return '<td class="empty">–</td>';
  const s = c.stat;
  const attrs = `data-key="${h(c.key)}" data-median="${s ? h(String(s.median)) : ''}" data-n="${s ? h(s.n) : 0}"`;
  if (!s)
    return `<td ${attrs} class="empty">no successful run<span class="n failed">${h(c.failed)} of ${h(c.runs)} failed</span></td>`;
  const vsPaper =
    c.paper !== null
      ? `<span class="paper" data-paper="${h(String(c.paper))}">paper ${fmtMs(c.paper)} · ${fmtRatio(s.median / c.paper)}</span>`
      : '';
  const n = `<span class="n${c.failed ? ' failed' : ''}">n ${h(s.n)}${c.failed ? `, ${h(c.failed)} failed` : ''}</span>`;
  return `<td ${attrs}><a class="med" href="#g${c.index}">${fmtMs(s.median)}</a><span class="ci">[${fmtMs(s.ci95?.[0])}–${fmtMs(s.ci95?.[1])}]</span>${vsPaper}${n}</td>`;
}

function renderMatrix(part) {
  if (!part.matrix.length) return '<p class="note">No page-load results.</p>';
  return part.matrix
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

function renderComparisons(part) {
  if (!part.comparisons.length)
    return '<p class="note">No pair of protocols to compare (PEP, QPEP or VPN and neither, QPEP and VPN or PEP, or HTTP/3 and HTTP/1.1, over the same profile, loss and site).</p>';
  const head = part.keyMetrics.map((km) => `<th colspan="4">${h(km.label)}</th>`).join('');
  const sub = part.keyMetrics.map(() => '<th>ours</th><th>paper</th><th>p</th><th>Cliff’s δ</th>').join('');
  const rows = part.comparisons
    .map(
      (c) =>
        `<tr><td>${h(c.kind)}${c.tunnel ? `<br><small class="note tunnel-mode">tunnel ${h(c.tunnel)}</small>` : ''}</td><th>${h(c.a)} / ${h(c.b)}</th><td>${h(`${c.profile} · loss ${c.loss_pct} % · ${c.site}`)}</td>` +
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
  return `<p class="legend-note">Ratio of medians (first protocol over second; below 1 means the first is faster), the paper's ratio where it has both, the two-sided Mann–Whitney U p-value (bold below 0.05) and Cliff's delta of the first against the second (negative: the first tends to be faster; |δ| ≥ 0.474 is large). ⚠: fewer than ${MIN_RUNS_FOR_COMPARISON} runs on a side. Under a comparison through the QUIC PEP: its satellite hop's mode (warm: the standing tunnel; per-connection).</p>
<div class="scroll"><table>
<thead><tr><th rowspan="2">comparison</th><th rowspan="2">protocols</th><th rowspan="2">scenario</th>${head}</tr><tr>${sub}</tr></thead>
<tbody>
${rows}
</tbody></table></div>`;
}

function renderDistributions(part) {
  if (!part.blocks.length)
    return `<p class="note">${part.hasRecords ? 'No successful runs to plot.' : 'Needs results.jsonl.'}</p>`;
  return (
    '<p class="legend-note">Per profile, loss and site: the empirical CDF of each metric with every successful run as a dot (in the colour of the plain protocol; dashed lines and triangles: with PEP, dotted lines and squares: QPEP, dash-dotted lines and crosses: through the VPN), and Page Load Time in run order, where drifts and outliers show. Hover a dot for its run.</p>' +
    part.blocks
      .map(
        (b) => `
<h3>${h(b.title)}</h3>
<div class="charts">
${part.keyMetrics.map((km) => `<div class="chart"><div class="chart-title">${h(km.label)} (CDF)</div><div class="chart-box"><canvas data-block="${b.id}" data-metric="${h(km.key)}" data-chart="cdf" role="img" aria-label="${h(`CDF of ${km.label}, ${b.title}`)}"></canvas></div></div>`).join('\n')}
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

function renderLighthouse(part) {
  if (!part.lighthouse.length) return '';
  const cols = [
    ['first-contentful-paint', 'FCP'],
    ['largest-contentful-paint', 'LCP'],
    ['speed-index', 'Speed Index'],
    ['total-blocking-time', 'TBT'],
    ['interactive', 'TTI'],
  ];
  const rows = part.lighthouse
    .map(
      (l) =>
        `<tr><td>${h(part.label(l.scenario))}</td><td class="num">${l.score === null || l.score === undefined ? '–' : Math.round(l.score * 100)}</td>` +
        cols.map(([k]) => `<td class="num">${fmtMs(l.metrics?.[k])}</td>`).join('') +
        `<td class="num">${typeof l.metrics?.['cumulative-layout-shift'] !== 'number' ? '–' : h(l.metrics['cumulative-layout-shift'].toFixed(3))}</td>` +
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

function renderRuns(part) {
  return `<p class="legend-note">Every run of every scenario, in ms. Open a run for its whole record as results.jsonl has it${part.hasRecords ? '' : ' (not available: this report was built from summary.json)'}.</p>
${part.groups
  .map(
    (
      g,
    ) => `<details id="g${g.index}"><summary><b>${h(part.label(g.scenario))}</b> — ${h(g.runs)} run(s)${g.failed ? `, <span class="failed">${h(g.failed)} failed</span>` : ''}</summary>
${runsTable(
  g.recs,
  `run-g${g.index}`,
  `${part.keyMetrics.map((km) => `<th>${h(km.label)}</th>`).join('')}<th>resources</th><th>protocol seen</th>`,
  (r) =>
    part.keyMetrics.map((km) => `<td class="num">${fmtMs(r.metrics?.[km.key])}</td>`).join('') +
    `<td class="num">${h(r.metrics?.resource_count ?? '–')}</td><td>${h(
      r.protocol_seen
        ? `${r.protocol_seen.document ?? '?'}; ${Object.entries(r.protocol_seen.resources ?? {})
            .map(([p, n]) => `${p} ×${n}`)
            .join(', ')}`
        : '–',
    )}</td>`,
)}
</details>`,
  )
  .join('\n')}`;
}

// A replayed archive's origins, per scenario: the medians over its ok runs
// of each origin's DNS, connect and TLS times and connections, and what
// the archive could not answer.
function renderOrigins(part) {
  return part.originGroups
    .map((g) => {
      const list = Array.isArray(g.origins.origins) ? g.origins.origins : [];
      const rows = list
        .map(
          (o) =>
            `<tr><td>${h(o.origin)}</td><td class="num">${h(o.runs)}</td><td class="num">${fmtMs(o.dns_ms)}</td><td class="num">${fmtMs(o.connect_ms)}</td><td class="num">${fmtMs(o.tls_ms)}</td><td class="num">${h(o.connections ?? '–')}</td></tr>`,
        )
        .join('\n');
      const u = g.origins.unmatched ?? {};
      const unmatched =
        Array.isArray(u.requests) && u.requests.length
          ? `<p class="warn">Unmatched requests (answered 404: the archive has no response for them), in ${h(u.runs)} run(s): ${u.requests.map((x) => `<code>${h(x)}</code>`).join(', ')}</p>`
          : '<p class="note">Unmatched requests: none.</p>';
      return `<h3>${h(part.label(g.scenario))}: ${h(list.length)} origins</h3>
<table><thead><tr><th>origin</th><th>runs</th><th>DNS ms</th><th>connect ms</th><th>TLS ms</th><th>connections</th></tr></thead><tbody>
${rows}
</tbody></table>
${unmatched}`;
    })
    .join('\n');
}

// The sections are shown for page loads, and for an empty report (they say
// there is nothing); Lighthouse whenever there are audits.
const sections = (part) => {
  const main = `<section id="medians"><h2>Medians</h2>
<p class="legend-note">Each cell: our median (links to its runs), its bootstrap 95 % interval, and where the scenario is one of Kosek et al. (IFIP Networking 2022, Table II: the kepler page over geo or leo) the paper's median and ours relative to it.</p>
${part.tunnelNote ? `<p class="legend-note tunnel-mode">${h(part.tunnelNote)}</p>\n` : ''}${part.altSvcNote ? `<p class="legend-note alt-svc">${h(part.altSvcNote)}</p>\n` : ''}${renderMatrix(part)}
</section>
<section id="comparisons"><h2>Comparisons</h2>
${renderComparisons(part)}
</section>
<section id="distributions"><h2>Distributions</h2>
${renderDistributions(part)}
</section>`;
  const origins = part.originGroups.length
    ? `\n<section id="origins"><h2>Origins</h2>
<p class="legend-note">A replayed site archive: per origin, the medians over the ok runs of its DNS lookup, TCP or QUIC connect and TLS times (Resource Timing; an origin pays them once, on its first connection; a reused or cross-origin-hidden one shows none) and of the connections Chromium opened to it.</p>
${renderOrigins(part)}
</section>`
    : '';
  return `${main}${origins}${part.lighthouse.length ? `\n${renderLighthouse(part)}` : ''}`;
};

export const pageloadReport = {
  build,
  warnings,
  lead: { subject: 'page loads in Chromium', unit: 'ms' },
  withoutRecords: ['distributions', 'p-values'],
  nav: (part) =>
    '<a href="#medians">Medians</a><a href="#comparisons">Comparisons</a><a href="#distributions">Distributions</a>' +
    (part.originGroups.length ? '<a href="#origins">Origins</a>' : '') +
    (part.lighthouse.length ? '<a href="#lighthouse">Lighthouse</a>' : ''),
  sections,
  failures: (part) =>
    runFailures(
      part.groups,
      (g) => part.label(g.scenario),
      (g) => `run-g${g.index}`,
    ),
  runsTitle: 'Page loads',
  runs: renderRuns,
  // the page's script draws the distributions from these
  data: (part) => ({
    metrics: part.keyMetrics.map(({ key, label }) => ({ key, label })),
    blocks: part.blocks,
    series: part.series,
  }),
};
