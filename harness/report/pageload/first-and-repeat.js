// The page-load "First and repeat views" section (bench --view repeat or
// revisit): per scenario, the pair's first view and its repeat (revisit)
// view one above the other: their medians, the second against the first
// (ratio of medians, Mann–Whitney p, Cliff's δ: part.js viewPairs, the
// comparison the Comparisons section has, in every view metric measured),
// and what each load found already there: the medians of its cache counts
// and of each server's handshake counts (summary.json's `cache_use` and
// `handshakes`, harness/kinds/pageload-counts.js).
import { MIN_RUNS_FOR_COMPARISON, fmtP } from '../../core/stats.js';
import { CACHE_COUNTS, HANDSHAKE_COUNTS, HANDSHAKE_SERVERS } from '../../kinds/pageload-counts.js';
import { h, fmtMs, fmtRatio, fmtDelta } from '../render.js';

// summary.json may come without its records, or edited: only numbers are shown as numbers
const num = (v) => (typeof v === 'number' && Number.isFinite(v) ? v : null);
// a median of counts: whole, or halfway between two
const fmtCount = (v) => (num(v) === null ? '–' : String(Math.round(v * 10) / 10));

// the handshake counts shown: `full` is the connections not resumed
const SHOWN_HANDSHAKE_COUNTS = HANDSHAKE_COUNTS.filter((name) => name !== 'full');
const COUNT_LABELS = {
  from_cache: 'from cache',
  revalidated: 'revalidated (304)',
  fetched: 'fetched',
  connections: 'connections',
  resumed: 'resumed',
  early_offered: '0-RTT offered',
  early_accepted: '0-RTT accepted',
  early_requests: 'requests in 0-RTT',
};
const SERVER_LABELS = { origin: 'origin', proxy_st: 'Proxy-ST' };

/**
 * Pure: the count columns the pairs have: the cache counts when some load
 * recorded them, and each server's handshake counts when some load
 * recorded that server's ([{title, counts: g → {name: median}|null, names}]).
 */
function countColumns(pairs) {
  const groups = pairs.flatMap((p) => [p.first, p.second]);
  const cols = [];
  if (groups.some((g) => g.cache_use))
    cols.push({ title: 'responses', names: CACHE_COUNTS, counts: (g) => g.cache_use ?? null });
  for (const server of HANDSHAKE_SERVERS)
    if (groups.some((g) => g.handshakes?.[server]))
      cols.push({
        title: `${SERVER_LABELS[server]} handshakes`,
        names: SHOWN_HANDSHAKE_COUNTS,
        counts: (g) => g.handshakes?.[server] ?? null,
      });
  return cols;
}

function loadRow(part, g, load, cols) {
  const runs = num(g.runs) ?? 0;
  const failed = num(g.failed) ?? 0;
  const counts = cols.flatMap((c) => {
    const m = c.counts(g);
    const title = num(m?.n) === null ? '' : ` title="median of ${h(m.n)} run(s)"`;
    return c.names.map((name) => `<td class="num"${title}>${fmtCount(m?.[name])}</td>`);
  });
  return (
    `<td class="load"><a href="#g${h(g.index)}">${h(load)}</a></td><td class="num">${h(runs - failed)}${failed ? ` <span class="failed">(${h(failed)} failed)</span>` : ''}</td>` +
    part.viewMetrics.map((km) => `<td class="num">${fmtMs(num(g.metrics?.[km.key]?.median))}</td>`).join('') +
    counts.join('')
  );
}

function comparisonCell(x) {
  const p = num(x.p);
  const warn = x.few ? ' <span class="warn" title="fewer than 10 runs a side">⚠</span>' : '';
  const sig = p !== null && p < 0.05 ? ' class="sig"' : '';
  return `<td class="num">${fmtRatio(num(x.ratio))}${warn}<small${sig}>p ${h(fmtP(p))}</small><small>δ ${fmtDelta(num(x.cliffs_delta))}${x.magnitude ? ` ${h(x.magnitude)}` : ''}</small></td>`;
}

function renderPairs(part) {
  const cols = countColumns(part.viewPairs);
  const countCount = cols.reduce((a, c) => a + c.names.length, 0);
  const head =
    `<tr><th rowspan="2">scenario</th><th rowspan="2">load</th><th rowspan="2">n</th><th colspan="${part.viewMetrics.length}">medians, ms</th>` +
    cols.map((c) => `<th colspan="${c.names.length}">${h(c.title)} <small class="unit">medians</small></th>`).join('') +
    '</tr><tr>' +
    part.viewMetrics.map((km) => `<th>${h(km.label)}</th>`).join('') +
    cols.flatMap((c) => c.names.map((name) => `<th>${h(COUNT_LABELS[name])}</th>`)).join('') +
    '</tr>';
  const body = part.viewPairs
    .map(({ view, first, second, comparison: c }) => {
      const s = second.scenario;
      const scenario = `${s.profile} · loss ${s.loss_pct} % · ${s.protocol} · ${s.site}`;
      return `<tbody class="view-pair" data-view="${h(view)}">
<tr class="first"><th rowspan="3">${h(scenario)}</th>${loadRow(part, first, 'first view', cols)}</tr>
<tr>${loadRow(part, second, `${view} view`, cols)}</tr>
<tr class="ratio"><td class="load">${h(view)} / first</td><td></td>${c.metrics.map(comparisonCell).join('')}${countCount ? `<td colspan="${countCount}"></td>` : ''}</tr>
</tbody>`;
    })
    .join('\n');
  return `<div class="scroll"><table class="view-pairs">
<thead>${head}</thead>
${body}
</table></div>${cols.length ? '' : '\n<p class="note">These records have no cache or handshake counts.</p>'}`;
}

export const firstAndRepeat = {
  nav: (part) => (part.viewPairs.length ? '<a href="#first-and-repeat">First and repeat views</a>' : ''),
  render: (part) =>
    part.viewPairs.length
      ? `<section id="first-and-repeat"><h2>First and repeat views</h2>
<p class="legend-note">Each scenario's repeat or revisit view (<code>--view</code>) under the first view of its pairs (the same run's first load, on the same testbed): the medians over the successful runs (n), and below them the second load against the first: the ratio of medians (below 1: the second is faster), the two-sided Mann–Whitney U p-value (bold below 0.05) and Cliff's δ (negative: the second tends to be faster; |δ| ≥ 0.474 is large); ⚠: fewer than ${MIN_RUNS_FOR_COMPARISON} runs on a side. Then the median counts of each load: its responses by the browser cache (from cache: no request went out; revalidated: a 304 on the wire; fetched: the whole response over the network), and the handshakes each server accepted (connections, of them resumed, the others full handshakes; 0-RTT offered and accepted; requests that rode in 0-RTT), our origin's and, through the QUIC PEP, Proxy-ST's. –: not recorded.</p>
${renderPairs(part)}
</section>`
      : '',
};
