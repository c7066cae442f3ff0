// A first report: one self-contained HTML file with the summary as a table.
// Every string from input is escaped.
import fs from 'node:fs';
import path from 'node:path';

export function escapeHtml(s) {
  return String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));
}

const cell = (m) => (m ? `${Math.round(m.median)} <small>[${Math.round(m.ci95[0])}–${Math.round(m.ci95[1])}]</small>` : '–');

export function renderReport(summary) {
  const rows = summary.groups.map((g) => `<tr><td>${escapeHtml(g.scenario.profile)}</td><td>${escapeHtml(g.scenario.loss_pct)}</td>` +
    `<td>${escapeHtml(g.scenario.protocol)}</td><td>${escapeHtml(g.scenario.site)}</td><td>${g.runs}</td><td>${g.failed}</td>` +
    `<td>${cell(g.metrics.response_start_ms)}</td><td>${cell(g.metrics.fcp_ms)}</td><td>${cell(g.metrics.plt_ms)}</td></tr>`).join('\n');
  const failures = summary.groups.flatMap((g) => g.failures.map((f) => `<li>${escapeHtml(`${g.scenario.profile} ${g.scenario.loss_pct} % ${g.scenario.protocol} ${g.scenario.site} run ${f.run}: ${f.error}`)}</li>`));
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>satbench report</title>
<style>body{font:14px system-ui,sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}td:nth-child(-n+4){text-align:left}small{color:#666}</style>
</head><body>
<h1>satbench report</h1>
<p>Medians in ms with their bootstrap 95 % interval, over the ok runs of each scenario. Generated ${escapeHtml(summary.meta.generated)}, seed ${escapeHtml(summary.meta.seed)}, link ${escapeHtml(summary.meta.link)}.</p>
<table><thead><tr><th>profile</th><th>loss %</th><th>protocol</th><th>site</th><th>runs</th><th>failed</th><th>Response Start</th><th>FCP</th><th>PLT</th></tr></thead>
<tbody>
${rows}
</tbody></table>
${failures.length ? `<h2>Failed runs</h2><ul>${failures.join('\n')}</ul>` : ''}
<script type="application/json" id="summary">${JSON.stringify(summary).replace(/</g, '\\u003c')}</script>
</body></html>
`;
}

export function writeReport(outDir, summary) {
  fs.writeFileSync(path.join(outDir, 'index.html'), renderReport(summary));
}
