// The page-load Slot boundaries section, shown for scenarios over a LEO
// slot process (the starlink profile): per scenario and key metric, the
// median of the runs with a slot boundary (a handover) inside the load and
// of those without, their n and the Mann–Whitney p (summary.json's
// `boundary_split`, harness/analysis/boundary-split.js).
import { MIN_RUNS_FOR_COMPARISON, fmtP } from '../../core/stats.js';
import { h, fmtMs } from '../render.js';

// summary.json may come without its records: only numbers are shown as numbers
const num = (v) => (typeof v === 'number' && Number.isFinite(v) ? v : null);

function groupCell(side) {
  const n = num(side?.n) ?? 0;
  return `<td class="num">${fmtMs(num(side?.median))} <span class="n">n ${h(n)}</span></td>`;
}

function metricCells({ split }) {
  if (!split) return '<td class="empty" colspan="3">–</td>';
  const p = num(split.p);
  const few = Math.min(num(split.with?.n) ?? 0, num(split.without?.n) ?? 0) < MIN_RUNS_FOR_COMPARISON;
  return (
    groupCell(split.with) +
    groupCell(split.without) +
    `<td class="num${p !== null && p < 0.05 ? ' sig' : ''}">${fmtP(p)}${few ? ' <span class="warn" title="fewer than 10 runs on a side">⚠</span>' : ''}</td>`
  );
}

function renderSplits(part) {
  const head = part.keyMetrics.map((km) => `<th colspan="3">${h(km.label)}</th>`).join('');
  const sub = part.keyMetrics.map(() => '<th>boundary</th><th>none</th><th>p</th>').join('');
  const rows = part.boundarySplits
    .map(
      (s) =>
        `<tr><th><a href="#g${h(s.index)}">${h(part.label(s.scenario))}</a></th><td class="num">${h(num(s.period_s) ?? '–')}</td>` +
        s.metrics.map(metricCells).join('') +
        `<td class="num">${h(num(s.failed?.with) ?? '–')}</td><td class="num">${h(num(s.failed?.without) ?? '–')}</td>` +
        '</tr>',
    )
    .join('\n');
  return `<div class="scroll"><table class="boundary-split">
<thead><tr><th rowspan="2">scenario</th><th rowspan="2">slot s</th>${head}<th colspan="2">failed runs</th></tr><tr>${sub}<th>boundary</th><th>none</th></tr></thead>
<tbody>
${rows}
</tbody></table></div>`;
}

export const boundarySplit = {
  nav: (part) => (part.boundarySplits.length ? '<a href="#slot-boundaries">Slot boundaries</a>' : ''),
  render: (part) =>
    part.boundarySplits.length
      ? `<section id="slot-boundaries"><h2>Slot boundaries</h2>
<p class="legend-note">Over a link with a slot process (a LEO terminal's handovers: the <code>starlink</code> profile), each scenario's successful runs split by whether a slot boundary, with its delay spike and loss burst, fell between navigation start and the load event (the record's <code>slot.boundary_in_load</code>): the median in ms of the runs with a boundary and of those without, each with its n, and the two-sided Mann–Whitney U p-value of the two groups (bold below 0.05); then the runs that failed, split by whether a boundary fell between navigation start and the failure (– for a summary.json from before failed runs were split). A load of L seconds meets a boundary of slots P seconds long with a chance of about L / P (with 15 s slots a 1.5 s load, 1 in 10), so few runs fall in the first group: ⚠ marks fewer than ${MIN_RUNS_FOR_COMPARISON} on a side, where the test has little power. The Distributions section draws both groups.</p>
${renderSplits(part)}
</section>`
      : '',
};
