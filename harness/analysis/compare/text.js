// The comparison as `satbench compare` prints it: a line per check in
// aligned columns, its failures and warnings under it, the verdict last.
import { fmtP } from '../../core/stats.js';
import { terminalSafe } from '../../core/terminal.js';
import { fmtCliffsDelta, fmtPct, fmtValue, runsNote } from './format.js';

const MARK = { fail: 'FAIL', warn: 'warn', ok: 'ok' };

// Pure: one check's line.
function checkLine(row, labelWidth) {
  const values = `${fmtValue(row.base.median, row.metric).padStart(10)} → ${fmtValue(row.current.median, row.metric).padEnd(10)}`;
  const effect = `δ ${fmtCliffsDelta(row.cliffs_delta)}${row.magnitude ? ` ${row.magnitude}` : ''}`;
  return (
    `${MARK[row.status].padEnd(5)}${row.label.padEnd(labelWidth + 2)}${row.metric.padEnd(20)}${values}` +
    `${fmtPct(row.change_pct).padStart(9)}  p ${fmtP(row.p).padEnd(6)}  ${effect}`
  );
}

// Pure: the comparison (compareResults) as text, without a final newline;
// each line terminal-safe (scenario labels and sources come from the results).
export function formatText(res) {
  const lines = [
    `baseline ${res.baseline.source}${runsNote(res.baseline)}`,
    `current  ${res.current.source}${runsNote(res.current)}`,
    `significance: ${res.significance}, alpha ${res.alpha}`,
    '',
  ];
  const labelWidth = Math.max(...res.rows.map((row) => row.label.length), 8);
  for (const row of res.rows) {
    lines.push(checkLine(row, labelWidth));
    for (const failure of row.failures) lines.push(`       ✗ ${failure}`);
    for (const warning of row.warnings) lines.push(`       ! ${warning}`);
  }
  for (const label of res.missing) lines.push(`warn  ${label}: in the baseline, not in the current results`);
  for (const e of res.emulation_differs)
    lines.push(`warn  ${e.label}: emulated otherwise: baseline ${e.baseline}, current ${e.current}`);
  for (const label of res.added) lines.push(`note  ${label}: new, no baseline to compare with`);
  lines.push('');
  lines.push(
    res.failed
      ? `REGRESSED: ${res.regressions} check(s) failed in ${res.failed_scenarios.length} scenario(s): ${res.failed_scenarios.join('; ')}`
      : `ok: nothing regressed (${res.rows.length} checks)`,
  );
  return lines.map(terminalSafe).join('\n');
}
