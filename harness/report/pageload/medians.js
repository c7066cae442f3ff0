// The page-load Medians section: per site (and view: a repeat or revisit
// pair's first view, its second) and key metric, a matrix of
// profile × loss against protocol whose cells give our median, its
// interval, and the paper's median where Kosek et al. measured the scenario.
import { h, fmtMs, fmtRatio } from '../render.js';

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
<h3>${h(t.metric.label)} <small class="note">(${h(t.metric.key)})</small> — ${h(site.site)}${site.load ? ` · ${h(site.load)}` : ''}</h3>
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

export const medians = {
  nav: () => '<a href="#medians">Medians</a>',
  render: (part) => `<section id="medians"><h2>Medians</h2>
<p class="legend-note">Each cell: our median (links to its runs), its bootstrap 95 % interval, and where the scenario is one of Kosek et al. (IFIP Networking 2022, Table II: the kepler page over geo or leo) the paper's median and ours relative to it.</p>
${part.tunnelNote ? `<p class="legend-note tunnel-mode">${h(part.tunnelNote)}</p>\n` : ''}${part.altSvcNote ? `<p class="legend-note alt-svc">${h(part.altSvcNote)}</p>\n` : ''}${renderMatrix(part)}
</section>`,
};
