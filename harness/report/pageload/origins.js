// The page-load Origins section, shown for replayed site archives: what
// each origin cost (summary.json's `origins`, harness/kinds/pageload-origins.js).
import { h, fmtMs } from '../render.js';

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

export const origins = {
  nav: (part) => (part.originGroups.length ? '<a href="#origins">Origins</a>' : ''),
  render: (part) =>
    part.originGroups.length
      ? `<section id="origins"><h2>Origins</h2>
<p class="legend-note">A replayed site archive: per origin, the medians over the ok runs of its DNS lookup, TCP or QUIC connect and TLS times (Resource Timing; an origin pays them once, on its first connection; a reused or cross-origin-hidden one shows none) and of the connections Chromium opened to it.</p>
${renderOrigins(part)}
</section>`
      : '',
};
