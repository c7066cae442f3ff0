// What the page-load report says of the machine during each run
// (record.machine, pageload/gather/machine.js): a column of the Runs
// tables, with the runs measured while the machine was busy flagged, and
// a warning counting them.
import { h } from '../render.js';

export const machineHead =
  '<th title="share of all cores in use during the load (of it the browser\'s); the 1-minute load average as it started">machine CPU</th>';

/** Pure: a run's cell: its CPU use (the browser's of it) and load, "busy" flagged; '–' when not recorded. */
export function machineCell(r) {
  const m = r.machine;
  if (!m || m.cpu_busy_pct === null || m.cpu_busy_pct === undefined) return '<td class="num">–</td>';
  const browser = typeof m.browser_cpu_pct === 'number' ? ` (browser ${h(Math.round(m.browser_cpu_pct))} %)` : '';
  const load = typeof m.load_1m === 'number' ? ` · load ${h(m.load_1m.toFixed(2))}` : '';
  const flag = m.busy ? ' <span class="warn" title="measured while the machine was busy">busy</span>' : '';
  return `<td class="num">${h(Math.round(m.cpu_busy_pct))} %${browser}${load}${flag}</td>`;
}

/** Pure: the warning of a part whose groups' records ({record}) include busy runs, or null. */
export function busyWarning(groups) {
  const all = groups.flatMap((g) => g.recs.map((x) => x.record));
  const busy = all.filter((r) => r.machine?.busy === true);
  if (!busy.length) return null;
  return `${busy.length} of ${all.length} runs were measured while the machine was busy (processes other than the browser used more than half a core during the load; flagged "busy" under Runs): the browser's CPU-bound work, after the last byte above all, may have waited for a core.`;
}
