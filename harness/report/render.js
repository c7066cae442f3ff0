// Low-level pieces of the HTML report that every section uses: escaping,
// embedding data and scripts safely, number formats, the order of values
// and the parts of a per-run table. No knowledge of kinds of records.

export function escapeHtml(s) {
  return String(s).replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c],
  );
}
// Escaped, with null and undefined as nothing.
export const h = (s) => (s === null || s === undefined ? '' : escapeHtml(s));

// JSON inside <script type="application/json">: only "</script" (and
// "<!--") could end or confuse the element, so every "<" is escaped; U+2028
// and U+2029 for older parsers.
export const jsonForScript = (v) =>
  JSON.stringify(v)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');

// JavaScript inlined into <script>: "</script" becomes "<\/script", which
// means the same in strings, templates and regular expressions; "<!--"
// cannot be rewritten safely everywhere, so it is refused.
export function inlineScript(js) {
  if (js.includes('<!--')) throw new Error('inlined script contains "<!--"');
  return js.replace(/<\/(script)/gi, '<\\/$1');
}

// Links and reads only of files in the results folder: a relative path of
// plain names, no scheme (javascript:, …), no way up.
export const isRelativePath = (p) =>
  typeof p === 'string' && /^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*$/.test(p) && !p.split('/').includes('..');

export const fmtMs = (v) => (v === null || v === undefined ? '–' : String(Math.round(v)));
export const fmtRatio = (r) => (r === null || r === undefined ? '–' : `×${r.toFixed(2)}`);
export const fmtDelta = (d) => (d === null || d === undefined ? '–' : (d > 0 ? '+' : '') + d.toFixed(2));

// "name median · name median …" of a group's metrics, three decimals at most.
export const medianList = (metrics) =>
  Object.entries(metrics ?? {})
    .map(([k, v]) => `${h(k)} ${h(Math.round(v.median * 1000) / 1000)}`)
    .join(' · ');

// Values in the order the matrix listed them, the rest in order of appearance.
export function ordered(values, preferred = []) {
  const uniq = [...new Set(values)];
  const idx = (v) => {
    const i = preferred.findIndex((p) => p === v || String(p) === String(v));
    return i < 0 ? preferred.length : i;
  };
  return uniq
    .map((v, i) => [v, i])
    .sort((x, y) => idx(x[0]) - idx(y[0]) || x[1] - y[1])
    .map(([v]) => v);
}

// The failed runs of a report part's groups, each linked to its row among
// the runs (`anchor(group)`-run, runsTable's row ids).
export const runFailures = (groups, label, anchor) =>
  groups.flatMap((g) =>
    (g.failures ?? []).map((f) => ({ label: label(g), anchor: `${anchor(g)}-${f.run}`, run: f.run, error: f.error })),
  );

/**
 * A group's runs as a table: per run its number, ok or its error, the
 * kind's cells (`head` and `cells(record)`), and its whole record (filled
 * in by the page's script from the embedded records). Row ids are
 * `idPrefix`-run, what the failures link to. `recs`: [{line, record}].
 * `after(record)`, optional: HTML of a full-width row under the run's ('':
 * none).
 */
export function runsTable(recs, idPrefix, head, cells, after = () => '') {
  if (!recs.length) return '<p class="note">No per-run records.</p>';
  const columns = 3 + (head.match(/<th\b/g) ?? []).length;
  return `<div class="scroll"><table><thead><tr><th>run</th><th>ok</th>${head}<th>record</th></tr></thead><tbody>
${recs
  .map(({ line, record: r }) => {
    const below = after(r);
    return (
      `<tr id="${idPrefix}-${h(r.run)}"><td class="num">${h(r.run)}</td><td>${r.ok ? 'ok' : `<span class="failed">${h(r.error ?? 'failed')}</span>`}</td>` +
      `${cells(r)}<td><details class="raw" data-line="${line}"><summary>results.jsonl line ${line}</summary><pre class="raw"></pre></details></td></tr>` +
      (below ? `\n<tr class="run-below"><td colspan="${columns}">${below}</td></tr>` : '')
    );
  })
  .join('\n')}
</tbody></table></div>`;
}
