// The bulk-transfer part of the report: the objectives judged, the medians
// per profile × loss × download, the goodput and PEP-ratio curves over
// time, and the runs. build() makes plain data (pure); the rest renders
// it, escaping every string that comes from input.
import { MARKS_S, markMetric } from '../results/goodput.js';
import { h, medianList, ordered, runsTable, runFailures } from './render.js';
import { quicTunnelModes, tunnelSentence } from '../kinds/pep-variants.js';

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

const BULK_SCENARIO_FIELDS = ['profile', 'loss_pct', 'protocol', 'duration_s', 'size_bytes', 'direction'];

const fmtBytes = (b) => (b >= 1e6 ? `${Number((b / 1e6).toPrecision(4))} MB` : `${Math.round(b)} bytes`);

// "geo · loss 1 % · 10 s download": a bulk scenario without its protocol.
// A null loss is the profile's own (the quic4sat preset's).
export function bulkTitle(s) {
  const parts = [
    String(s.profile),
    s.loss_pct === null || s.loss_pct === undefined ? "the profile's loss" : `loss ${s.loss_pct} %`,
  ];
  const way = s.direction === 'up' ? 'upload' : 'download';
  if (s.duration_s != null) parts.push(`${s.duration_s} s ${way}`);
  else if (s.size_bytes != null) parts.push(`${fmtBytes(s.size_bytes)} ${way}`);
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
function build(groups, { kind, byKey, matrix: m = {}, records = null, meta = {} }) {
  const bg = groups.map((g, i) => {
    const { protocol, ...rest } = g.scenario ?? {};
    return {
      ...g,
      index: i,
      anchor: `bg${i}`,
      protocol: String(protocol),
      blockKey: kind.key(rest),
      rest,
      recs: byKey.get(kind.key(g.scenario)) ?? [],
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
      // log-scale chart: a ratio of 0 (nothing yet with the PEP) cannot be drawn, so it is a gap like "nothing yet without";
      // each variant over its plain protocol, then each -qpep over the -vpn and -pep beside it, each -masque over the -pep
      ratio: members
        .flatMap((g) => [g.vs_no_pep, ...(g.vs_variants ?? [])].filter((v) => v?.ratio?.length).map((v) => [g, v]))
        .map(([g, v]) => ({
          protocol: g.protocol,
          base: String(v.protocol),
          ...curveSeries(
            v.t_ms,
            v.ratio.map((r) => (r > 0 ? r : null)),
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
      direction: g.scenario.direction ?? 'down',
      protocol: g.protocol,
      title: bulkTitle(g.rest),
      scenario: g.objectives.scenario,
      source: g.objectives.source,
      runs: g.runs,
      failed: g.failed,
      results: g.objectives.results,
      sat_hop: g.sat_hop ?? null,
      busiest: g.cpu?.[0] ?? null,
    }));
  // how the QUIC PEP's satellite hop ran for quic-pep and tcp-qpep
  const tunnelNote = tunnelSentence(protocols, quicTunnelModes({ protocols, records, meta }));
  return { groups: bg, blocks, columns, objectives, hasRecords: Boolean(records), tunnelNote };
}

// ---------------------------------------------------------------- rendering

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
<p class="legend-note">Per profile, loss and transfer, each protocol's median over its successful runs and the median's bootstrap 95 % interval. MB are 10<sup>6</sup> bytes; times from t0, just before connecting; an upload's bytes are counted where they arrive, at the server. “Time to 90 % of the link rate”: the start of the first 500 ms whose goodput averaged 90 % of the profile's rate the way the bytes went (an upload's: the return link's); “sender's slow start ended”: its first loss response (with a PEP: the server's hop). The protocol links to its runs.</p>
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
    `<td class="verdict ${r.met ? 'met' : 'missed'}" data-bytes="${h(r.bytes)}" data-limit-s="${h(r.limit_s)}" data-median-s="${r.median_s === null ? '' : h(r.median_s)}" data-met="${r.met ? 'true' : 'false'}" data-runs-met="${h(r.runs_met)}" data-runs="${h(r.runs)}"${r.over_s !== undefined ? ` data-over-s="${h(r.over_s)}"` : ''}>` +
    `${r.met ? '✓ met' : '✗ missed'}${r.over_s !== undefined ? `<small class="shortfall">by ${fmtS(r.over_s)} s</small>` : ''}<small>${h(r.runs_met)} of ${h(r.runs)} runs</small></td>`;
  const medianCell = (r) =>
    r.median_s !== null
      ? fmtS(r.median_s)
      : `<span class="note">not reached</span>${r.median_received_bytes !== undefined ? `<small class="shortfall">median run got ${h(fmtBytes(r.median_received_bytes))}</small>` : ''}`;
  const busiest = (o) =>
    o.busiest?.median_share != null
      ? `<td class="cpu" data-role="${h(o.busiest.role)}" data-share="${h(o.busiest.median_share)}">${h(o.busiest.role)}<small>${fmtS(o.busiest.median_share * 100, 0)} % of a core</small></td>`
      : '<td class="empty">–</td>';
  // objectives come block by block: the scenario cell spans its protocols
  const rows = bulk.objectives
    .map((o, i) => {
      const first = i === 0 || bulk.objectives[i - 1].title !== o.title;
      let span = 0;
      while (first && bulk.objectives[i + span]?.title === o.title) span++;
      return (
        `<tr class="${first ? 'first' : ''}" data-profile="${h(o.profile)}" data-protocol="${h(o.protocol)}">${first ? `<td rowspan="${span}">${h(o.profile)}<small class="note">${h(o.scenario)}${o.direction === 'up' ? ' · upload' : ''}${o.loss_pct !== null ? ` · loss ${h(o.loss_pct)} %` : ''}</small></td>` : ''}` +
        `<th><a href="#${o.anchor}">${h(o.protocol)}</a></th><td class="sat-hop">${o.sat_hop ? h(o.sat_hop) : '<span class="note">no PEP</span>'}</td><td class="num">${okRuns(o)}</td>` +
        sizes
          .map((bytes) => {
            const r = o.results.find((x) => x.bytes === bytes);
            if (!r) return '<td class="empty" colspan="3">–</td>';
            return `<td class="num">≤ ${h(r.limit_s)}</td><td class="num">${medianCell(r)}</td>${verdict(r)}`;
          })
          .join('') +
        busiest(o) +
        '</tr>'
      );
    })
    .join('\n');
  return `<h3>Objectives</h3>
<p class="legend-note">${sources.map(h).join(', ')}: the time from t0 until the receiver (the client of a download, the server of an upload) had the first 2, 10 and 100 MB (10<sup>6</sup> bytes), in s, against the scenario's limit. An objective is <b>met</b> when the median run is within the limit (a run that never got there counts as slower than any that did; failed runs count with what they received); “k of n runs” met it on their own; a missed one says how late the median run was, or how much it received. “Satellite hop”: the PEP setting of the runs. “Busiest process”: the testbed process with the most CPU time over the download's duration, median over runs (100 % is one core busy the whole download, so near it the run was CPU-bound; the kernel's netem is not counted).</p>
<p class="objectives-total"><b>${met}</b> of <b>${all.length}</b> objectives met.</p>
<div class="scroll"><table class="objectives">
<thead><tr><th rowspan="2">scenario</th><th rowspan="2">protocol</th><th rowspan="2">satellite hop</th><th rowspan="2">runs ok</th>${sizes.map((b) => `<th colspan="3">${h(fmtBytes(b))}</th>`).join('')}<th rowspan="2">busiest process</th></tr>
<tr>${sizes.map(() => '<th>limit<small class="unit">s</small></th><th>median<small class="unit">s</small></th><th>result</th>').join('')}</tr></thead>
<tbody>
${rows}
</tbody></table></div>`;
}

function renderBulkCharts(bulk) {
  return `<h3>Over time</h3>
<p class="legend-note">Per profile, loss and download: the goodput in Mbit/s per ${h([...new Set(bulk.blocks.flatMap((b) => b.goodput.map((s) => s.step_ms)).filter(Boolean))].join(' or ') || '100')} ms bin from t0, averaged over the successful runs (a run adds nothing after its end), with the link rate as a grey line; and, as Kosek et al.'s Figure 2, the bytes received so far with the PEP (or through QPEP, -qpep, the MASQUE tunnel, -masque, or the VPN tunnel, -vpn) over the bytes without it, QPEP's over the VPN's and the split-TCP PEP's, and the MASQUE tunnel's over the QUIC PEP's (log scale; above 1 the first is ahead; gaps where either had received nothing yet).</p>${bulk.tunnelNote ? `\n<p class="legend-note tunnel-mode">${h(bulk.tunnelNote)}</p>` : ''}
${bulk.blocks
  .map(
    (b) => `<h4>${h(b.title)}</h4>
<div class="charts wide">
${b.goodput.length ? `<div class="chart"><div class="chart-title">Goodput, mean over runs</div><div class="chart-box"><canvas data-bulk="${b.id}" data-chart="goodput" role="img" aria-label="${h(`Goodput over time, ${b.title}`)}"></canvas></div></div>` : '<p class="note">No goodput curve (no successful run with bins).</p>'}
${b.ratio.length ? `<div class="chart"><div class="chart-title">Bytes received with PEP, QPEP or VPN / without</div><div class="chart-box"><canvas data-bulk="${b.id}" data-chart="ratio" role="img" aria-label="${h(`Ratio of bytes received with PEP, QPEP or VPN to without, ${b.title}`)}"></canvas></div></div>` : ''}
</div>`,
  )
  .join('\n')}`;
}

function sections(bulk) {
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

function renderRuns(bulk) {
  return `<p class="legend-note">Every bulk run: bytes received, set-up and goodput; open a run for its whole record as results.jsonl has it (with its bins, the sender's trace and the PEP's counters)${bulk.hasRecords ? '' : ' (not available: this report was built from summary.json)'}.</p>
${bulk.groups
  .map(
    (
      g,
    ) => `<details id="${g.anchor}"><summary><b>${h(bulkLabel(g.scenario))}</b> — ${h(g.runs)} run(s)${g.failed ? `, <span class="failed">${h(g.failed)} failed</span>` : ''}</summary>
<p class="legend-note">Medians: ${medianList(g.metrics) || 'none'}</p>
${runsTable(
  g.recs,
  `run-${g.anchor}`,
  `<th>protocol seen</th>${BULK_RUN_COLUMNS.map((c) => `<th>${h(c.label)} <small class="unit">${h(c.unit)}</small></th>`).join('')}`,
  (r) =>
    `<td>${h(typeof r.protocol_seen === 'string' ? r.protocol_seen : r.protocol_seen ? JSON.stringify(r.protocol_seen) : '–')}</td>` +
    BULK_RUN_COLUMNS.map((c) => `<td class="num">${fmtIn(r.metrics?.[c.key], c)}</td>`).join(''),
)}
</details>`,
  )
  .join('\n')}`;
}

export const bulkReport = {
  build,
  lead: { subject: 'bulk downloads', setting: 'with and without PEPs' },
  nav: (bulk) => (bulk.groups.length ? '<a href="#bulk">Bulk transfers</a>' : ''),
  sections,
  failures: (bulk) =>
    runFailures(
      bulk.groups,
      (g) => bulkLabel(g.scenario),
      (g) => `run-${g.anchor}`,
    ),
  runsTitle: 'Bulk transfers',
  runs: renderRuns,
  // the page's script draws the curves from these
  data: (bulk) =>
    bulk.groups.length
      ? {
          bulk: bulk.blocks.map((b) => ({
            id: b.id,
            link_rate_mbps: b.link_rate_mbps,
            goodput: b.goodput,
            ratio: b.ratio,
          })),
        }
      : {},
};
