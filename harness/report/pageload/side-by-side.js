// The page-load "Side by side" section (WebPageTest's compare view): for
// each pair of the Comparisons, the median run of each protocol, both
// filmstrips, progress curves and waterfalls on one time axis. Shown when
// the runs recorded HARs or filmstrips (issue 28); run-views.js builds the
// views and the page's script draws one when it is opened.
import { renderCompareView, legend } from './run-views.js';

function render(part) {
  const compares = part.views.compares;
  if (!compares.length) return '';
  return `<section id="side-by-side"><h2>Side by side</h2>
<p class="legend-note">For each comparison above, the median run (by Page Load Time) of each protocol, the first above the second, on one time axis: their filmstrips (a frame every step, the frames where the page changed outlined), visual progress, and waterfalls (${legend()}; thin grey lines: every satellite round trip of the profile). Open one to draw it.</p>
${compares.map((c) => renderCompareView(c)).join('\n')}
</section>`;
}

export const sideBySide = {
  nav: (part) => (part.views.compares.length ? '<a href="#side-by-side">Side by side</a>' : ''),
  render,
};
