// bench --cc-axis: the end hosts' congestion control as a matrix axis (keys
// of campaigns without it as they were), each value reaching the run's
// TCP and QUIC settings, the starlink preset's Cubic and BBR, and what
// summary, compare, merge and the report make of it. That the kernel runs
// it: test/integration/cc-axis.test.js.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CC_AXIS_VALUES, baselineCc, ccSettings, variantLabel, variantLabels } from '../../harness/core/cc-axis.js';
import { checkCcAxis } from '../../harness/testbed/congestion-control.js';
import { expandMatrix, scenarioKey, scenarioLabel, pageload } from '../../harness/kinds/pageload.js';
import { benchInput } from '../../harness/cli/bench.js';
import { checkBench } from '../../harness/cli/bench-plan.js';
import { BENCH_PRESETS } from '../../harness/pageload/presets.js';
import { profileCache } from '../../harness/campaign/scenario.js';
import { bench } from '../../harness/pageload/bench.js';
import { failedRunRecord } from '../../harness/pageload/run.js';
import { summarize } from '../../harness/analysis/summary.js';
import { mergeSets, outsideMatrix } from '../../harness/analysis/merge.js';
import { parseBudget } from '../../harness/analysis/compare/budget.js';
import { compareResults } from '../../harness/analysis/compare/judge.js';
import { buildReport, renderReport } from '../../harness/report/html.js';
import { formatBenchSummary } from '../../harness/pageload/summary-table.js';
import { originQuicArgs } from '../../harness/core/quic-options.js';
import { gatherersFor } from '../../harness/pageload/gather/index.js';
import { ssCongestionControls } from '../../harness/pageload/gather/tcp-cc.js';

const BASE = { profile: 'geo', loss_pct: 0, protocol: 'h3', site: 'kepler' };
const CUBIC = { ...BASE, cc: 'cubic' };
const BBR = { ...BASE, cc: 'bbr' };
const CLI = { preset: 'quick', link: 'auto', seed: '1', timeout: '30', 'cpu-slowdown': '1', device: 'desktop' };
const MATRIX = { profiles: ['geo'], losses: [0], protocols: ['h1', 'h3'], sites: ['kepler'], runs: 12 };
const KERNEL = { congestionControls: ['reno', 'cubic', 'bbr'] };

// A page-load record of `scenario`'s run `run` with PLT `plt` (Response Start a tenth of it, FCP half).
const rec = (scenario, run, plt) => ({
  scenario,
  run,
  seed: 1 + run,
  ok: true,
  metrics: { plt_ms: plt, response_start_ms: plt / 10, fcp_ms: plt / 2 },
});
// `n` runs of `scenario` around `plt` ms, spread a little.
const runs = (scenario, n, plt) => Array.from({ length: n }, (_, i) => rec(scenario, i + 1, plt + ((i * 37) % 101)));

describe('the end hosts’ congestion control as a matrix axis (bench --cc-axis)', () => {
  it('without the axis a scenario keeps its key and label of old; with it, each names its cc', () => {
    assert.equal(scenarioKey(BASE), 'geo|0|h3|kepler');
    assert.equal(scenarioLabel(BASE), 'geo loss 0 % h3 kepler');
    assert.equal(scenarioKey(BBR), 'geo|0|h3|kepler|cc=bbr');
    assert.equal(scenarioLabel(BBR), 'geo loss 0 % h3 kepler cc=bbr');
    const repeat = { ...BBR, view: 'repeat' };
    assert.equal(scenarioKey(repeat), 'geo|0|h3|kepler|repeat|cc=bbr');
    assert.equal(scenarioKey({ ...repeat, first_view: true }), 'geo|0|h3|kepler|repeat|first|cc=bbr');
    assert.equal(scenarioLabel(repeat), 'geo loss 0 % h3 kepler cc=bbr repeat view');
    assert.equal(variantLabel(BASE), '');
    assert.deepEqual(variantLabels({}), ['']);
    assert.deepEqual(variantLabels({ ccs: ['cubic', 'bbr'], views: ['first', 'repeat'] }), [
      'cc=cubic',
      "cc=cubic repeat pair's first view",
      'cc=cubic repeat view',
      'cc=bbr',
      "cc=bbr repeat pair's first view",
      'cc=bbr repeat view',
    ]);
  });

  it('a matrix without ccs expands as before; with them, a scenario’s ccs run one after the other', () => {
    const old = expandMatrix(MATRIX);
    assert.deepEqual(expandMatrix({ ...MATRIX, ccs: [null] }), old);
    assert.ok(old.every((x) => !('cc' in x.scenario)));
    assert.deepEqual(
      expandMatrix({ ...MATRIX, ccs: ['cubic', 'bbr'], runs: 1 }).map((x) => scenarioKey(x.scenario)),
      ['geo|0|h1|kepler|cc=cubic', 'geo|0|h1|kepler|cc=bbr', 'geo|0|h3|kepler|cc=cubic', 'geo|0|h3|kepler|cc=bbr'],
    );
  });

  it('--cc-axis: a list without repeats, in the matrix only when given; not beside --cc or --quic cc=', () => {
    assert.equal('ccs' in benchInput(CLI).matrix, false, "summary.json's matrix of old");
    const { matrix, settings } = benchInput({ ...CLI, 'cc-axis': 'cubic, bbr', quic: 'initial-window=20' });
    assert.deepEqual(matrix.ccs, ['cubic', 'bbr']);
    assert.deepEqual(Object.keys(matrix).slice(-2), ['ccs', 'runs']);
    assert.deepEqual(settings.tcp, {});
    assert.deepEqual(settings.quic, { 'initial-window': '20' });
    assert.throws(() => benchInput({ ...CLI, 'cc-axis': 'bbr,bbr' }), /^UsageError: --cc-axis: bbr is given twice/);
    for (const [beside, named] of [
      [{ cc: 'bbr' }, '--cc'],
      [{ quic: 'cc=bbr' }, '--quic cc='],
      [{ cc: 'bbr', quic: 'cc=cubic,initial-window=20' }, '--cc and --quic cc='],
    ])
      assert.throws(() => benchInput({ ...CLI, 'cc-axis': 'cubic,bbr', ...beside }), {
        name: 'UsageError',
        message: `--cc-axis sets the end hosts' TCP and our QUIC senders' congestion control per scenario; leave out ${named}`,
      });
  });

  it('each value must be both a kernel and a QUIC controller, in this kernel, and one the origin has: one line', async () => {
    assert.deepEqual(CC_AXIS_VALUES, ['cubic', 'newreno', 'bbr']);
    assert.deepEqual(checkCcAxis(['cubic', 'newreno', 'bbr'], { available: ['reno', 'cubic', 'bbr'] }), [
      'cubic',
      'newreno',
      'bbr',
    ]);
    for (const [ccs, options, message] of [
      [['cubic', 'vegas'], {}, /^--cc-axis: unknown congestion control "vegas"; expected cubic, newreno or bbr /],
      [['sat'], {}, /^--cc-axis: unknown congestion control "sat"/],
      [['reno'], {}, /^--cc-axis: unknown congestion control "reno"/],
      [
        ['bbr'],
        { available: ['reno', 'cubic'] },
        /^--cc-axis: "bbr" is not available in this kernel; available: reno, cubic/,
      ],
      [
        ['cubic', 'bbr'],
        { origin: 'h2o', originCcs: ['newreno', 'cubic'] },
        /^--cc-axis: --origin h2o's QUIC has no bbr/,
      ],
    ])
      assert.throws(
        () => checkCcAxis(ccs, options),
        (e) => e.name === 'UsageError' && message.test(e.message),
      );
    const profiles = profileCache();
    const matrix = { ...MATRIX, ccs: ['cubic', 'bbr'], runs: 1 };
    await assert.rejects(
      checkBench(matrix, {}, { congestionControls: ['reno', 'cubic'], profiles }),
      /--cc-axis: "bbr" is not available in this kernel/,
    );
    await assert.rejects(
      checkBench(matrix, { origin: 'h2o' }, { ...KERNEL, profiles }),
      /--origin h2o's QUIC has no bbr/,
    );
    assert.deepEqual((await checkBench(matrix, {}, { ...KERNEL, profiles })).matrix.ccs, ['cubic', 'bbr']);
  });

  it('--preset starlink runs cubic and bbr: twice the runs of one; --cc-axis cubic, or --cc, runs one', () => {
    const starlink = { ...CLI, preset: 'starlink' };
    const { matrix } = benchInput(starlink);
    assert.deepEqual(matrix.ccs, ['cubic', 'bbr']);
    const items = expandMatrix(matrix);
    assert.equal(items.length, 3 * 6 * 3 * 2 * BENCH_PRESETS.starlink.runs);
    assert.equal(items.filter((x) => x.scenario.cc === 'bbr').length, items.length / 2);
    assert.deepEqual(benchInput({ ...starlink, 'cc-axis': 'cubic' }).matrix.ccs, ['cubic']);
    // one congestion control for the whole campaign, as before the axis
    for (const one of [{ cc: 'bbr' }, { quic: 'cc=bbr' }])
      assert.equal('ccs' in benchInput({ ...starlink, ...one }).matrix, false);
    assert.equal('ccs' in benchInput({ ...CLI, preset: 'ifip2022' }).matrix, false);
  });

  it('a run of the axis gets its cc as the end hosts’ TCP and our origin’s QUIC; one without, the campaign’s', async () => {
    assert.deepEqual(ccSettings(BASE, { tcp: { initcwnd: 20 }, quic: {} }), {});
    assert.deepEqual(ccSettings(BBR, { tcp: { initcwnd: 20 }, quic: { 'initial-window': '20' } }), {
      tcp: { initcwnd: 20, cc: 'bbr' },
      quic: { 'initial-window': '20', cc: 'bbr' },
    });
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-cc-axis-'));
    try {
      const matrix = { ...MATRIX, protocols: ['h3'], ccs: ['cubic', 'bbr'], runs: 1 };
      const plan = await checkBench(matrix, { tcp: { initcwnd: 20 } }, { ...KERNEL, profiles: profileCache() });
      const seen = [];
      const run = async (resolved, runNo) => {
        seen.push(resolved);
        const { scenario, seed, link, origin } = resolved;
        return failedRunRecord({ scenario, run: runNo, seed: seed + runNo, link, origin }, 'not run: a test');
      };
      await bench(plan, { outDir: path.join(tmp, 'bench'), run });
      assert.deepEqual(
        seen.map((r) => [r.scenario.cc, r.tcp, r.quic.cc]),
        [
          ['cubic', { initcwnd: 20, cc: 'cubic' }, 'cubic'],
          ['bbr', { initcwnd: 20, cc: 'bbr' }, 'bbr'],
        ],
      );
      // what our origin is started with
      const args = originQuicArgs(seen[1].quic, { bdpBytes: seen[1].bdpBytes });
      assert.equal(args[args.indexOf('--quic-cc') + 1], 'bbr');
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });

  it('summary and the bench table keep each cc apart', () => {
    const groups = summarize([...runs(CUBIC, 3, 2000), ...runs(BBR, 3, 1500), rec(BASE, 1, 1800)]);
    assert.deepEqual(
      groups.map((g) => scenarioKey(g.scenario)),
      ['geo|0|h3|kepler|cc=cubic', 'geo|0|h3|kepler|cc=bbr', 'geo|0|h3|kepler'],
    );
    const table = formatBenchSummary({ groups });
    assert.match(table.split('\n')[1], /^profile +loss +protocol +site +cc +Response Start/);
    assert.match(table, /h3 +kepler +cubic +20\d /);
    assert.match(table, /h3 +kepler +bbr +15\d /);
    assert.match(table, /h3 +kepler +- +180 /);
    assert.doesNotMatch(formatBenchSummary({ groups: summarize([rec(BASE, 1, 1)]) }), / cc /, 'no axis, no column');
  });

  it('merge: a cc outside the matrix is refused; shards come back in the matrix order', () => {
    const matrix = { ...MATRIX, protocols: ['h3'], ccs: ['cubic', 'bbr'], runs: 2 };
    assert.equal(outsideMatrix(rec(BBR, 1, 1), matrix), null);
    assert.match(outsideMatrix(rec({ ...BASE, cc: 'newreno' }, 1, 1), matrix), /^cc "newreno" is not one of/);
    assert.match(outsideMatrix(rec(BASE, 1, 1), matrix), /^cc null is not one of/, 'a run without the axis');
    assert.equal(outsideMatrix(rec(BBR, 1, 1), { ...matrix, ccs: undefined }), null, 'no axis, no check');
    const all = [rec(CUBIC, 1, 1), rec(BBR, 1, 1), rec(CUBIC, 2, 1), rec(BBR, 2, 1)];
    const meta = { matrix, seed: 1 };
    const { records } = mergeSets([
      { dir: 'a', records: [all[3], all[0]], meta },
      { dir: 'b', records: [all[2], all[1]], meta },
    ]);
    const id = (r) => `${scenarioKey(r.scenario)}#${r.run}`;
    assert.deepEqual(records.map(id), all.map(id));
  });

  it('compare: each cc matches the same cc of the baseline, and a budget can name the cc', () => {
    const set = (records) => ({ path: 'x', source: 'x', records, summary: { meta: {}, groups: summarize(records) } });
    const base = set([...runs(CUBIC, 12, 2000), ...runs(BBR, 12, 1500)]);
    const slower = set([...runs(CUBIC, 12, 2000), ...runs(BBR, 12, 1900)]);
    const limit = (pct) => ({ plt_ms: { max_slowdown_pct: pct } });
    const budget = parseBudget(
      { metrics: limit(50), scenarios: [{ match: { cc: 'bbr' }, metrics: limit(10) }] },
      'b.yml',
    );
    const out = compareResults(base, slower, budget);
    const row = (key) => out.rows.find((r) => r.key === key && r.metric === 'plt_ms');
    assert.equal(row('geo|0|h3|kepler|cc=bbr').status, 'fail', 'bbr got 27 % slower, beyond its own 10 %');
    assert.equal(row('geo|0|h3|kepler|cc=cubic').status, 'ok');
    assert.equal(
      compareResults(base, slower, parseBudget({ metrics: limit(50) }, 'c.yml')).rows.find(
        (r) => r.key === 'geo|0|h3|kepler|cc=bbr' && r.metric === 'plt_ms',
      ).status,
      'ok',
    );
    assert.ok(pageload.budgetMatch.includes('cc'));
  });

  it('the report: a table set per cc, protocols compared within one, and bbr against cubic per scenario', () => {
    const h1 = (s) => ({ ...s, protocol: 'h1' });
    const records = [
      ...runs(CUBIC, 12, 3000),
      ...runs(BBR, 12, 2000),
      ...runs(h1(CUBIC), 12, 4000),
      ...runs(h1(BBR), 12, 3900),
    ];
    const summary = { meta: { matrix: { ...MATRIX, ccs: ['cubic', 'bbr'] } }, groups: summarize(records) };
    const part = buildReport({ summary, records }).pageload;
    assert.deepEqual(
      part.matrix.map((t) => `${t.site}:${t.load}`),
      ['kepler:cc=cubic', 'kepler:cc=bbr'],
    );
    const h3h1 = part.comparisons.filter((c) => c.kind === 'HTTP/3 vs HTTP/1.1').map((c) => c.a_load);
    assert.deepEqual(h3h1, ['cc=cubic', 'cc=bbr']);
    const ccs = part.comparisons.filter((c) => c.kind === 'bbr vs cubic (end hosts)');
    assert.deepEqual(
      ccs.map((c) => [c.a, c.a_load, c.b, c.b_load]),
      [
        ['h3', 'cc=bbr', 'h3', 'cc=cubic'],
        ['h1', 'cc=bbr', 'h1', 'cc=cubic'],
      ],
    );
    const h3 = ccs.find((c) => c.a === 'h3').metrics.find((x) => x.metric.key === 'plt_ms');
    assert.ok(h3.ratio < 0.75, `bbr over cubic ${h3.ratio}`);
    assert.ok(h3.p < 0.001, `p ${h3.p}`);
    assert.equal(h3.cliffs_delta, -1);
    const html = renderReport(summary, { records });
    assert.match(html, /— kepler · cc=bbr<\/h3>/);
    assert.match(html, /<th>h3 cc=bbr \/ h3 cc=cubic<\/th>/);
    // a report without the axis compares no cc
    const plain = buildReport({ summary: { meta: { matrix: MATRIX }, groups: summarize(runs(BASE, 3, 1)) } }).pageload;
    assert.equal(plain.comparisons.filter((c) => /end hosts/.test(c.kind)).length, 0);
  });

  it('cubic is what the others are compared with where it ran, else the axis’s first', () => {
    assert.equal(baselineCc(['bbr', 'cubic']), 'cubic');
    assert.equal(baselineCc(['bbr', 'newreno']), 'bbr');
    assert.equal(baselineCc([]), null);
  });

  it('each load records the congestion control of the end hosts’ TCP connections, as ss shows them', () => {
    const ss = [
      '0      0      198.18.0.2:443 198.18.1.2:40110',
      '\t ts sack cubic wscale:7,7 rto:204 rtt:1.2/0.6 mss:1448 cwnd:10 app_limited',
      '0      0      198.18.0.2:443 198.18.1.2:40112',
      '\t bbr wscale:10,10 rto:200 rtt:0.02/0.01 bbr:(bw:0bps,mrtt:0.02) app_limited rcv_space:65483',
      '0      0      198.18.0.2:443 198.18.1.2:40114',
      '\t ts sack ecn ecnseen cubic wscale:7,7 rto:204',
      '',
    ].join('\n');
    assert.deepEqual(ssCongestionControls(ss), ['bbr', 'cubic']);
    assert.deepEqual(ssCongestionControls(''), [], 'no TCP connection (HTTP/3)');
    const keys = (o) => gatherersFor(o).map((g) => g.key);
    assert.ok(keys({ endHosts: { client: 'sbt-x-client', server: 'sbt-x-server' } }).includes('tcp_cc'));
    assert.ok(!keys({}).includes('tcp_cc'), 'without a testbed, nothing to read');
  });
});
