// The table of medians `bench` prints at its end (before the path of its
// results), drawn as `bulk` draws its own (core/text-table.js).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { formatTable } from '../../harness/core/text-table.js';
import { formatBenchSummary } from '../../harness/pageload/summary-table.js';
import { campaignCommand } from '../../harness/cli/campaign.js';
import { hasNetAdmin } from '../../harness/core/sys.js';
import { summarize } from '../../harness/analysis/summary.js';
import { scenarios, makeRecords } from '../fixtures.js';

describe('the table of medians at the end of bench', () => {
  it('draws columns as wide as their widest cell, two spaces apart, no trailing blanks', () => {
    assert.equal(
      formatTable([
        ['a', 'long header', 'c'],
        ['wide cell', 1, ''],
        [null, 22, 'x'],
      ]),
      ['a          long header  c', 'wide cell  1', '           22           x'].join('\n'),
    );
  });

  it('a row per scenario: Response Start, FCP, Speed Index, LCP, PLT medians in ms, runs and failed', () => {
    const recs = makeRecords(scenarios({ profiles: ['geo'], protocols: ['h1', 'h3-pep'] }), {
      runs: 3,
      fail: [[1, 2, 'boom']],
    });
    const groups = summarize(recs);
    // Speed Index as the visual capture's runs give it (the summary's groups then carry it)
    groups.find((x) => x.scenario.protocol === 'h3-pep').metrics.speed_index_ms = { median: 2000.4, n: 2 };
    const bulkGroup = { kind: 'bulk', scenario: { profile: 'geo', protocol: 'quic' }, runs: 1, failed: 0, metrics: {} };
    const text = formatBenchSummary({ meta: {}, groups: [...groups, bulkGroup] });
    const [title, head, ...rows] = text.split('\n');
    assert.equal(title, "Medians in ms over each scenario's successful runs:");
    assert.deepEqual(head.split(/\s{2,}/), [
      'profile',
      'loss',
      'protocol',
      'site',
      'Response Start',
      'FCP',
      'Speed Index',
      'LCP',
      'PLT',
      'runs',
      'failed',
    ]);
    assert.equal(rows.length, 2, 'page-load scenarios only');
    const cells = (protocol) =>
      rows
        .find((r) => r.split(/\s+/)[2] === protocol)
        .trim()
        .split(/\s+/);
    const g = (protocol) => groups.find((x) => x.scenario.protocol === protocol);
    const m = (protocol, k) => String(Math.round(g(protocol).metrics[k].median));
    assert.deepEqual(cells('h1'), [
      'geo',
      '0',
      'h1',
      'kepler',
      m('h1', 'response_start_ms'),
      m('h1', 'fcp_ms'),
      '-', // no run of h1 measured a Speed Index
      m('h1', 'lcp_ms'),
      m('h1', 'plt_ms'),
      '3',
      '0',
    ]);
    assert.deepEqual(cells('h3-pep').slice(4), [
      m('h3-pep', 'response_start_ms'),
      m('h3-pep', 'fcp_ms'),
      '2000',
      m('h3-pep', 'lcp_ms'),
      m('h3-pep', 'plt_ms'),
      '3',
      '1',
    ]);
    // the columns line up under their headers
    const at = head.indexOf('PLT');
    for (const r of rows) assert.match(r.slice(at), /^\d+ /);
  });

  it('a scenario whose every run failed shows - for its medians', () => {
    const recs = makeRecords(scenarios({ profiles: ['leo'], protocols: ['h3'] }), {
      runs: 1,
      fail: [[0, 1, 'boom']],
    });
    const [, , row] = formatBenchSummary({ groups: summarize(recs) }).split('\n');
    assert.deepEqual(row.trim().split(/\s+/), ['leo', '0', 'h3', 'kepler', '-', '-', '-', '-', '-', '1', '1']);
  });

  it('bench prints the table before the line saying where the results are; --json prints no table', async function () {
    if (!hasNetAdmin()) this.skip(); // the command asks for root before it runs
    const out = [];
    const write = (stream) => (s) => out.push([stream, String(s)]) && true;
    const saved = [process.stdout.write, process.stderr.write];
    const summary = {
      meta: {},
      groups: summarize(makeRecords(scenarios({ profiles: ['geo'], protocols: ['h1'] }), { runs: 2 })),
    };
    const command = (argv) =>
      campaignCommand(argv, {
        name: 'bench',
        help: '',
        options: {},
        input: () => ({ matrix: {}, settings: {} }),
        check: async () => ({}),
        run: async () => summary,
        show: (s) => process.stdout.write(formatBenchSummary(s) + '\n'),
      });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-table-'));
    try {
      process.stdout.write = write('stdout');
      process.stderr.write = write('stderr');
      await command(['--out', path.join(dir, 'a')]);
      const tableAt = out.findIndex(([s, t]) => s === 'stdout' && t.startsWith('Medians in ms'));
      const pathAt = out.findIndex(([s, t]) => s === 'stderr' && t.startsWith('results in '));
      assert.ok(tableAt >= 0 && pathAt > tableAt, JSON.stringify(out));
      out.length = 0;
      await command(['--out', path.join(dir, 'b'), '--json']);
      assert.ok(!out.some(([, t]) => t.startsWith('Medians in ms')), 'summary.json only');
      assert.deepEqual(
        JSON.parse(out.find(([s]) => s === 'stdout')[1]).groups,
        JSON.parse(JSON.stringify(summary.groups)),
      );
    } finally {
      [process.stdout.write, process.stderr.write] = saved;
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
