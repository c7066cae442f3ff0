// The page-load Comparisons section: each pair of protocols the part
// compares (part.js comparisonPairs), and each repeat or revisit view
// against its pair's first view, per scenario and key metric, as a
// ratio of medians beside the paper's, with p-value and Cliff's delta.
import { MIN_RUNS_FOR_COMPARISON, fmtP } from '../../core/stats.js';
import { h, fmtRatio, fmtDelta } from '../render.js';

// Pure: a comparison's two sides: each its protocol, and its load where
// they differ (a repeat view against its pair's first view).
export const comparisonSides = (c) =>
  c.a_load === c.b_load ? [c.a, c.b] : [`${c.a} ${c.a_load}`, `${c.b} ${c.b_load}`];

function renderComparisons(part) {
  if (!part.comparisons.length)
    return '<p class="note">No pair of protocols to compare (PEP, QPEP or VPN and neither, QPEP and VPN or PEP, or HTTP/3 and HTTP/1.1, over the same profile, loss, site and view), and no repeat or revisit view.</p>';
  const head = part.keyMetrics.map((km) => `<th colspan="4">${h(km.label)}</th>`).join('');
  const sub = part.keyMetrics.map(() => '<th>ours</th><th>paper</th><th>p</th><th>Cliff’s δ</th>').join('');
  const rows = part.comparisons
    .map(
      (c) =>
        `<tr><td>${h(c.kind)}${c.tunnel ? `<br><small class="note tunnel-mode">tunnel ${h(c.tunnel)}</small>` : ''}</td><th>${h(comparisonSides(c).join(' / '))}</th><td>${h(`${c.profile} · loss ${c.loss_pct} % · ${c.site}${c.a_load === c.b_load && c.a_load ? ` · ${c.a_load}` : ''}`)}</td>` +
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

export const comparisons = {
  nav: () => '<a href="#comparisons">Comparisons</a>',
  render: (part) => `<section id="comparisons"><h2>Comparisons</h2>
${renderComparisons(part)}
</section>`,
};
