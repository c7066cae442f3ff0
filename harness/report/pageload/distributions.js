// The page-load Distributions section: per profile, loss and site, charts
// the page's script draws (harness/report/client.js) from the part's
// blocks and series.
import { h } from '../render.js';

// Over a slot process: per key metric, the CDF of the runs with a
// boundary inside the load beside the CDF of those without, on one scale.
function splitCharts(part, b) {
  const chart = (km, split, what) =>
    `<div class="chart"><div class="chart-title">${h(km.label)} (CDF), ${what}</div><div class="chart-box"><canvas data-block="${b.id}" data-metric="${h(km.key)}" data-chart="cdf" data-split="${split}" role="img" aria-label="${h(`CDF of ${km.label}, ${what}, ${b.title}`)}"></canvas></div></div>`;
  return `
<h4>Split by slot boundary</h4>
<div class="charts split">
${part.keyMetrics.map((km) => `<div class="chart-pair">${chart(km, 'with', 'a boundary during the load')}${chart(km, 'without', 'no boundary during the load')}</div>`).join('\n')}
</div>`;
}

const SPLIT_NOTE =
  " Over a link with a slot process, under each block: per metric, the runs with a slot boundary (a handover) during the load beside those without, on the same scale (the legend gives each protocol's n).";

function renderDistributions(part) {
  if (!part.blocks.length)
    return `<p class="note">${part.hasRecords ? 'No successful runs to plot.' : 'Needs results.jsonl.'}</p>`;
  return (
    `<p class="legend-note">Per profile, loss and site: the empirical CDF of each metric with every successful run as a dot (in the colour of the plain protocol; dashed lines and triangles: with PEP, dotted lines and squares: QPEP, dash-dotted lines and crosses: through the VPN), and Page Load Time in run order, where drifts and outliers show. Hover a dot for its run.${part.blocks.some((b) => b.split) ? SPLIT_NOTE : ''}</p>` +
    part.blocks
      .map(
        (b) => `
<h3>${h(b.title)}</h3>
<div class="charts">
${part.keyMetrics.map((km) => `<div class="chart"><div class="chart-title">${h(km.label)} (CDF)</div><div class="chart-box"><canvas data-block="${b.id}" data-metric="${h(km.key)}" data-chart="cdf" role="img" aria-label="${h(`CDF of ${km.label}, ${b.title}`)}"></canvas></div></div>`).join('\n')}
<div class="chart"><div class="chart-title">Page Load Time by run</div><div class="chart-box"><canvas data-block="${b.id}" data-metric="plt_ms" data-chart="runs" role="img" aria-label="${h(`Page Load Time by run, ${b.title}`)}"></canvas></div></div>
</div>${b.split ? splitCharts(part, b) : ''}`,
      )
      .join('\n')
  );
}

export const distributions = {
  nav: () => '<a href="#distributions">Distributions</a>',
  render: (part) => `<section id="distributions"><h2>Distributions</h2>
${renderDistributions(part)}
</section>`,
  // the page's script draws the distributions from these
  data: (part) => ({
    metrics: part.keyMetrics.map(({ key, label }) => ({ key, label })),
    blocks: part.blocks,
    series: part.series,
  }),
};
