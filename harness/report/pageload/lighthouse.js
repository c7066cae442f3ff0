// The page-load Lighthouse section, shown when bench --lighthouse put
// audits into the records: a row per audit, linked to its stored reports.
import { h, fmtMs, isRelativePath } from '../render.js';

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
<p class="legend-note">One separate load per scenario (performance category, with the runs' CPU slowdown and device, no network throttling: the emulated link is the throttle). Times in ms. The links open the stored reports next to this file.</p>
<div class="scroll"><table><thead><tr><th>scenario</th><th>score</th>${cols.map(([, l]) => `<th>${h(l)}</th>`).join('')}<th>CLS</th><th>reports</th></tr></thead>
<tbody>
${rows}
</tbody></table></div></section>`;
}

export const lighthouse = {
  nav: (part) => (part.lighthouse.length ? '<a href="#lighthouse">Lighthouse</a>' : ''),
  render: renderLighthouse,
};
