// The comparison as Markdown for a pull-request comment (GitHub's
// flavour): the verdict as a heading, the failed and warned checks in a
// table, the passed ones folded away.
import { fmtP } from '../../core/stats.js';
import { escapeEntities, fmtPct, fmtValue, runsNote } from './format.js';

// Pure: text for a table cell or a sentence. GitHub renders inline HTML
// and entity references, so `&` and `<`, which could start either (an
// autolink too), are written as entities (with `>` and the quotes, as this
// output always had them: escapeEntities); Markdown's own syntax in a site
// or scenario name (links and images `[a](…)`, `![x](…)`, code, emphasis)
// is backslash-escaped, the backslash first (an `_` inside a word, as in
// plt_ms, emphasises nothing and stays); a `|` would end the cell and a
// newline the row.
const MARKDOWN_SYNTAX = /[\\`*~[\]|]|(?<![\p{L}\p{N}])_|_(?![\p{L}\p{N}])/gu;
export const markdownCell = (s) => escapeEntities(String(s).replace(MARKDOWN_SYNTAX, '\\$&')).replace(/\n/g, ' ');

// Pure: `s` as an inline code span, shown literally whatever it holds: the
// fence is a backtick run longer than any in `s` (CommonMark), and a
// newline, which would end the paragraph, a space.
export function markdownCode(s) {
  const text = String(s).replace(/\n/g, ' ');
  const fence = '`'.repeat(Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length)) + 1);
  const pad = text.startsWith('`') || text.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${text}${pad}${fence}`;
}

const ICON = { fail: '❌', warn: '⚠️', ok: '✅' };
const TABLE_HEAD =
  "| | scenario | metric | baseline | current | change | p | Cliff's δ | notes |\n|---|---|---|---:|---:|---:|---:|---|---|";

// Pure: one check's table row.
function checkRow(row) {
  const cells = [
    ICON[row.status],
    markdownCell(row.label),
    markdownCell(row.metric),
    fmtValue(row.base.median, row.metric),
    fmtValue(row.current.median, row.metric),
    fmtPct(row.change_pct),
    fmtP(row.p),
    row.cliffs_delta === null ? '–' : `${row.cliffs_delta.toFixed(2)} ${row.magnitude}`,
    markdownCell([...row.failures, ...row.warnings].join('; ')),
  ];
  return `| ${cells.join(' | ')} |`;
}

// Pure: the comparison (compareResults) as Markdown.
export function toMarkdown(res) {
  const flagged = res.rows.filter((row) => row.status !== 'ok');
  const passed = res.rows.filter((row) => row.status === 'ok');
  const out = [
    `### satbench: ${res.failed ? `❌ ${res.regressions} regression(s) in ${res.failed_scenarios.length} scenario(s)` : '✅ no regression'}`,
    '',
    `Baseline ${markdownCode(res.baseline.source)}${runsNote(res.baseline)}, current ${markdownCode(res.current.source)}${runsNote(res.current)}. ` +
      `A slowdown fails only when it is over the budget and significant (${markdownCell(res.significance)}, p < ${res.alpha}); a median past a ceiling or floor fails outright.`,
    '',
  ];
  if (flagged.length) out.push(TABLE_HEAD, ...flagged.map(checkRow), '');
  if (passed.length)
    out.push(
      `<details><summary>${passed.length} check(s) passed</summary>`,
      '',
      TABLE_HEAD,
      ...passed.map(checkRow),
      '',
      '</details>',
      '',
    );
  if (res.missing.length)
    out.push(`In the baseline but not in the current results: ${res.missing.map(markdownCell).join('; ')}`, '');
  if (res.emulation_differs.length)
    out.push(
      `Emulated otherwise (baseline → current): ${res.emulation_differs.map((e) => markdownCell(`${e.label} (${e.baseline} → ${e.current})`)).join('; ')}`,
      '',
    );
  if (res.added.length) out.push(`New, without a baseline: ${res.added.map(markdownCell).join('; ')}`, '');
  return out.join('\n');
}
