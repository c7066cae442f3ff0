// The page-load report's Runs: each run's machine CPU (record.machine),
// runs measured on a busy machine flagged, and a warning counting them.
import assert from 'node:assert/strict';
import { renderReport } from '../../harness/report/html.js';
import { machineCell, busyWarning } from '../../harness/report/pageload/machine.js';
import { summarize } from '../../harness/analysis/summary.js';
import { scenarios, makeRecords } from '../fixtures.js';

describe('report: the machine during each run', () => {
  it('a run’s cell: its CPU use and load average, "busy" flagged; – when not recorded', () => {
    assert.equal(
      machineCell({ machine: { load_1m: 0.5, cpu_busy_pct: 31.6, browser_cpu_pct: 20.2, cores: 2, busy: false } }),
      '<td class="num">32 % (browser 20 %) · load 0.50</td>',
    );
    assert.equal(
      machineCell({ machine: { load_1m: 3.02, cpu_busy_pct: 97, cores: 2, busy: true } }),
      '<td class="num">97 % · load 3.02 <span class="warn" title="measured while the machine was busy">busy</span></td>',
    );
    assert.equal(
      machineCell({ machine: { load_1m: null, cpu_busy_pct: 20, busy: false } }),
      '<td class="num">20 %</td>',
    );
    assert.equal(machineCell({}), '<td class="num">–</td>', 'a record from before');
    assert.equal(machineCell({ machine: null }), '<td class="num">–</td>', 'a gatherer that failed');
  });

  it('the warning counts the busy runs among all, or is none', () => {
    const recs = (flags) => flags.map((busy) => ({ record: { machine: { busy } } }));
    assert.match(
      busyWarning([{ recs: recs([true, false]) }, { recs: recs([true]) }]),
      /^2 of 3 runs were measured while the machine was busy/,
    );
    assert.equal(busyWarning([{ recs: recs([false, null]) }, { recs: [{ record: {} }] }]), null);
  });

  it('the report flags a busy run in its Runs table and warns at the top', () => {
    const records = makeRecords(scenarios({ profiles: ['geo'], protocols: ['h1'] }), { runs: 3 });
    records[0].machine = { load_1m: 0.2, cpu_busy_pct: 12, cores: 2, busy: false };
    records[1].machine = { load_1m: 2.7, cpu_busy_pct: 91.4, browser_cpu_pct: 30, cores: 2, busy: true };
    const html = renderReport({ meta: {}, groups: summarize(records) }, { records });
    assert.match(html, /<th title="[^"]*">machine CPU<\/th><th>record<\/th>/);
    assert.match(
      html,
      /<tr id="run-g0-2">.*<td class="num">91 % \(browser 30 %\) · load 2\.70 <span class="warn"[^>]*>busy<\/span><\/td>/,
    );
    assert.match(html, /<tr id="run-g0-1">.*<td class="num">12 % · load 0\.20<\/td>/);
    assert.match(html, /<tr id="run-g0-3">.*<td class="num">–<\/td><td><details/);
    assert.match(html, /<ul class="warnings">.*<li>1 of 3 runs were measured while the machine was busy/);
    delete records[1].machine;
    assert.doesNotMatch(renderReport({ meta: {}, groups: summarize(records) }, { records }), /machine was busy/);
  });
});
