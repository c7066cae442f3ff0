// compare: budgets, verdicts and the command's exit codes on hand-made
// results with realistic noise.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  parseBudget,
  limitsFor,
  compareResults,
  toMarkdown,
  toJUnit,
  defaultBudget,
  describeLimits,
} from '../../harness/analysis/compare.js';
import { loadResultSet } from '../../harness/analysis/result-set.js';
import { summarize } from '../../harness/analysis/summary.js';
import { scenarios, makeRecords, writeResultsDir } from '../fixtures.js';
import { CLI } from '../integration/helpers.js';

function satbench(args) {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { timeout: 60000 }, (err, stdout, stderr) =>
      resolve({ code: err ? err.code : 0, stdout, stderr }),
    );
  });
}

// A copy of `records` with one metric scaled (only where `only` says).
const scaled = (records, metric, factor, only = () => true) =>
  records.map((r) =>
    r.ok && only(r.scenario)
      ? { ...r, metrics: { ...r.metrics, [metric]: Math.round(r.metrics[metric] * factor * 10) / 10 } }
      : r,
  );

describe('compare', () => {
  const list = scenarios({ protocols: ['h1', 'h3'] });
  const A = makeRecords(list, { runs: 20, seed: 11 });
  let dirA;
  let tmp;
  before(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-compare-'));
    dirA = writeResultsDir(A, { dir: path.join(tmp, 'A') });
  });
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it('A against A: exit 0', async () => {
    const r = await satbench(['compare', dirA, dirA]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /nothing regressed \(12 checks\)/);
  });

  it('PLT 30 % higher over 20 runs: exit 1, naming the regressed scenario', async () => {
    const geoH3 = (s) => s.profile === 'geo' && s.protocol === 'h3';
    const dir = writeResultsDir(scaled(A, 'plt_ms', 1.3, geoH3), { dir: path.join(tmp, 'slow-geo-h3') });
    const md = path.join(tmp, 'pr.md');
    const junit = path.join(tmp, 'junit.xml');
    const r = await satbench(['compare', dirA, dir, '--markdown', md, '--junit', junit]);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stdout, /REGRESSED: 1 check\(s\) failed in 1 scenario\(s\): geo loss 0 % h3 kepler$/m);
    assert.match(r.stdout, /^FAIL +geo loss 0 % h3 kepler +plt_ms .*\+30\.0 %/m);
    assert.match(
      fs.readFileSync(md, 'utf8'),
      /❌ 1 regression\(s\) in 1 scenario\(s\)[\s\S]*\| ❌ \| geo loss 0 % h3 kepler \| plt_ms \|/,
    );
    const xml = fs.readFileSync(junit, 'utf8');
    assert.match(xml, /<testsuites name="satbench compare" tests="12" failures="1">/);
    assert.match(xml, /<testsuite name="geo loss 0 % h3 kepler" tests="3" failures="1"/);
    const all = writeResultsDir(scaled(A, 'plt_ms', 1.3), { dir: path.join(tmp, 'slow-all') });
    const r2 = await satbench(['compare', dirA, all]);
    assert.equal(r2.code, 1);
    assert.match(r2.stdout, /4 check\(s\) failed in 4 scenario\(s\)/);
  });

  it('PLT 3 % higher: exit 0 (significant, but within the 10 % allowed)', async () => {
    const dir = writeResultsDir(scaled(A, 'plt_ms', 1.03), { dir: path.join(tmp, 'bit') });
    const r = await satbench(['compare', dirA, dir]);
    assert.equal(r.code, 0, r.stdout);
    // an independent noisy sample 3 % slower passes too
    const other = writeResultsDir(makeRecords(list, { runs: 20, seed: 12, scale: { plt_ms: 1.03 } }), {
      dir: path.join(tmp, 'bit2'),
    });
    assert.equal((await satbench(['compare', dirA, other])).code, 0);
  });

  it('a slowdown over the budget that is not significant warns instead of failing', () => {
    // 5 noisy runs against 5 others, 12 % slower: too few runs to tell from noise.
    const few = makeRecords(list, { runs: 5, seed: 3, cv: 0.15 });
    const slower = makeRecords(list, { runs: 5, seed: 4, cv: 0.15, scale: { plt_ms: 1.12 } });
    const set = (records) => ({ path: 'x', source: 'x', records, summary: { meta: {}, groups: [] } });
    const load = (records) => {
      const s = set(records);
      s.summary.groups = loadResultSet(
        writeResultsDir(records, { dir: fs.mkdtempSync(path.join(tmp, 'few-')) }),
      ).summary.groups;
      return s;
    };
    const res = compareResults(load(few), load(slower), parseBudget({ metrics: { plt_ms: { max_slowdown_pct: 5 } } }));
    const row = res.rows.find((r) => r.change_pct > 5 && r.p >= 0.05);
    assert.ok(row, 'expected a slower but not significant row');
    assert.equal(row.status, 'warn');
    assert.match(row.warnings.join(' '), /not significant/);
    assert.match(row.warnings.join(' '), /fewer than 10 runs on a side \(5 vs 5\)/);
  });

  it('budgets: a ceiling on the median fails outright; per-scenario limits override the defaults', async () => {
    const budget = parseBudget(
      {
        metrics: { plt_ms: { max_slowdown_pct: 10 } },
        scenarios: [
          { match: { profile: 'geo', protocol: ['h3', 'h3-pep'] }, metrics: { plt_ms: { max_median: 7000 } } },
        ],
      },
      'b.yaml',
    );
    assert.deepEqual(limitsFor(budget, 'pageload', list[1]), { plt_ms: { max_slowdown_pct: 10, max_median: 7000 } });
    assert.deepEqual(limitsFor(budget, 'pageload', list[0]), { plt_ms: { max_slowdown_pct: 10 } });
    const file = path.join(tmp, 'budget.yaml');
    fs.writeFileSync(
      file,
      'metrics:\n  plt_ms: { max_slowdown_pct: 10 }\nscenarios:\n  - match: { profile: geo, protocol: h3 }\n    metrics:\n      plt_ms: { max_median: 7000 }\n',
    );
    const r = await satbench(['compare', dirA, dirA, '--budget', file, '--json']);
    assert.equal(r.code, 1);
    const res = JSON.parse(r.stdout);
    assert.deepEqual(res.failed_scenarios, ['geo loss 0 % h3 kepler']);
    assert.match(res.rows[0].failures[0], /median \d+ ms is over the ceiling of 7000 ms/);
    fs.writeFileSync(file, JSON.stringify({ metrics: { fcp_ms: { max_median: 100000 } } }));
    assert.equal((await satbench(['compare', dirA, dirA, '--budget', file])).code, 0, 'JSON budgets work too');
  });

  it('with summary.json only: ceilings and non-overlapping intervals decide, and it says so', async () => {
    const slow = writeResultsDir(scaled(A, 'plt_ms', 1.3), { dir: path.join(tmp, 'slow-summary') });
    const r = await satbench(['compare', path.join(dirA, 'summary.json'), path.join(slow, 'summary.json')]);
    assert.equal(r.code, 1, r.stdout);
    assert.match(r.stdout, /significance: non-overlapping bootstrap 95 % intervals/);
    assert.match(r.stdout, /by non-overlapping 95 % intervals/);
    assert.equal((await satbench(['compare', path.join(dirA, 'summary.json'), dirA])).code, 0);
  });

  it('a current scenario whose runs all failed fails', () => {
    const failing = A.map((r) =>
      r.scenario.protocol === 'h1' && r.scenario.profile === 'leo'
        ? { ...r, ok: false, error: 'timeout', metrics: null }
        : r,
    );
    const res = compareResults(
      loadResultSet(dirA),
      loadResultSet(writeResultsDir(failing, { dir: path.join(tmp, 'failing') })),
    );
    assert.deepEqual(res.failed_scenarios, ['leo loss 0 % h1 kepler']);
    assert.match(res.rows[0].failures[0], /no successful run in the current results \(20 of 20 failed\)/);
  });

  it('unusable inputs exit 2 with a message naming the file and key', async () => {
    const bad = path.join(tmp, 'bad');
    fs.mkdirSync(bad);
    fs.writeFileSync(
      path.join(bad, 'summary.json'),
      JSON.stringify({ groups: [{ scenario: {}, metrics: { plt_ms: { median: 'fast' } } }] }),
    );
    let r = await satbench(['compare', dirA, bad]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /^satbench: .*bad\/summary\.json: groups\[0\]\.metrics\.plt_ms\.median is not a number\n$/);
    fs.rmSync(path.join(bad, 'summary.json'));
    // a bad line before the last (a bad last line is a torn one, with its repair)
    fs.writeFileSync(path.join(bad, 'results.jsonl'), `${JSON.stringify(A[0])}\nnot json\n${JSON.stringify(A[1])}\n`);
    r = await satbench(['compare', dirA, bad]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /bad\/results\.jsonl: line 2 is not JSON/);
    r = await satbench(['compare', dirA, path.join(tmp, 'nowhere')]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /nowhere: no such file or folder/);
    const budget = path.join(tmp, 'b2.yaml');
    fs.writeFileSync(budget, 'metrics:\n  plt_ms: { max_slowdown: 10 }\n');
    r = await satbench(['compare', dirA, dirA, '--budget', budget]);
    assert.equal(r.code, 2);
    assert.match(
      r.stderr,
      /b2\.yaml: metrics\.plt_ms\.max_slowdown: unknown limit; expected max_median, min_median, max_slowdown_pct/,
    );
    fs.writeFileSync(budget, 'metrics:\n  plt: { max_slowdown_pct: 10 }\n');
    r = await satbench(['compare', dirA, dirA, '--budget', budget]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /b2\.yaml: plt: no such metric in either result set/);
    // a rule whose match has a typo matches nothing: an error naming the file and the rule
    fs.writeFileSync(
      budget,
      'metrics:\n  plt_ms: { max_slowdown_pct: 10 }\nscenarios:\n  - match: { profile: leo }\n    metrics: { plt_ms: { max_median: 1e9 } }\n  - match: { profile: goe, protocol: h3 }\n    metrics: { plt_ms: { max_median: 1 } }\n',
    );
    r = await satbench(['compare', dirA, dirA, '--budget', budget]);
    assert.equal(r.code, 2, r.stdout + r.stderr);
    assert.equal(
      r.stderr,
      `satbench: ${budget}: scenarios[1].match {"profile":"goe","protocol":"h3"} matches no scenario of either result set (they have profile: geo, leo; protocol: h1, h3)\n`,
    );
    assert.equal(r.stdout, '', 'no verdict');
    // --junit and --markdown into a folder that does not exist: one line, before anything is read
    for (const flag of ['--junit', '--markdown']) {
      const file = path.join(tmp, 'no-such-folder', 'out.xml');
      r = await satbench(['compare', dirA, path.join(tmp, 'nowhere'), flag, file]);
      assert.equal(r.code, 2, r.stderr);
      assert.equal(r.stderr, `satbench: ${flag} ${file}: no folder ${path.dirname(file)} to write it in\n`);
      assert.ok(!fs.existsSync(path.dirname(file)));
    }
    r = await satbench(['compare', dirA, dirA, '--junit', tmp]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /^satbench: --junit .*: is a folder; expected a file name\n$/);
    const other = writeResultsDir(makeRecords(scenarios({ sites: ['kuhn-a'] }), { runs: 3 }), {
      dir: path.join(tmp, 'other'),
    });
    r = await satbench(['compare', dirA, other]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /no scenario in common/);
  });

  it('for rates (bulk goodput) a drop is the slowdown, and min_median is their floor', () => {
    const bulk = (factor, seed) => {
      const next = (i) => 1 + 0.03 * Math.sin(seed * 7 + i * 3.1); // a few percent of spread
      return Array.from({ length: 20 }, (_, i) => ({
        kind: 'bulk',
        scenario: { profile: 'geo', protocol: 'tcp-pep', size_mb: 10 },
        run: i + 1,
        ok: true,
        metrics: { goodput_mbps: 18 * factor * next(i) },
      }));
    };
    const set = (records) => ({ path: 'p', source: 'p', records, summary: { meta: {}, groups: summarize(records) } });
    const budget = parseBudget({ metrics: { goodput_mbps: { max_slowdown_pct: 10, min_median: 12 } } });
    assert.equal(compareResults(set(bulk(1, 1)), set(bulk(1.3, 2)), budget).failed, false, 'faster is fine');
    const drop = compareResults(set(bulk(1, 1)), set(bulk(0.7, 2)), budget);
    assert.equal(drop.failed, true);
    assert.match(drop.rows[0].failures.join(' '), /^(29|30)\.\d % lower, over the 10 % allowed, and significant/);
    assert.match(
      compareResults(set(bulk(1, 1)), set(bulk(0.6, 2)), budget).rows[0].failures.join(' '),
      /under the floor of 12/,
    );
  });

  it('escapes input in Markdown and JUnit', () => {
    const evil = makeRecords(
      [{ profile: 'geo', loss_pct: 0, protocol: 'h3', site: '<img src=x onerror=alert(1)>|x' }],
      { runs: 12 },
    );
    const set = (records) => ({
      path: 'p',
      source: 'p',
      records,
      summary: {
        meta: {},
        groups: loadResultSet(writeResultsDir(records, { dir: fs.mkdtempSync(path.join(tmp, 'evil-')) })).summary
          .groups,
      },
    });
    const res = compareResults(set(evil), set(scaled(evil, 'plt_ms', 1.5)), defaultBudget());
    const md = toMarkdown(res);
    assert.ok(!md.includes('<img'));
    assert.ok(md.includes('&lt;img src=x onerror=alert(1)&gt;\\|x'));
    const xml = toJUnit(res);
    assert.ok(!xml.includes('<img'));
    assert.ok(xml.includes('name="geo loss 0 % h3 &lt;img src=x onerror=alert(1)&gt;|x"'));
  });

  it("without --budget: the limits the kinds give (page loads': 10 % on three times), said so in words", () => {
    assert.deepEqual(defaultBudget(), {
      alpha: 0.05,
      metrics: {
        response_start_ms: { max_slowdown_pct: 10 },
        fcp_ms: { max_slowdown_pct: 10 },
        plt_ms: { max_slowdown_pct: 10 },
      },
      scenarios: [],
    });
    assert.equal(describeLimits(defaultBudget().metrics), '10 % on response_start_ms, fcp_ms, plt_ms');
    assert.equal(
      describeLimits({ a: { max_median: 5 }, b: { max_slowdown_pct: 5, min_median: 1 }, c: { max_median: 5 } }),
      'at most 5 on a, c; at least 1, 5 % on b',
    );
    assert.equal(describeLimits({}), 'no limit');
  });

  it('rejects malformed budgets', () => {
    assert.throws(() => parseBudget([], 'b'), /b: expected a mapping/);
    assert.throws(() => parseBudget({ metric: {} }, 'b'), /b: metric: unknown key/);
    assert.throws(
      () => parseBudget({ alpha: 2, metrics: { plt_ms: { max_median: 1 } } }, 'b'),
      /alpha: expected a number between 0 and 1/,
    );
    assert.throws(
      () => parseBudget({ metrics: { plt_ms: { max_median: -1 } } }, 'b'),
      /metrics\.plt_ms\.max_median: expected a number >= 0/,
    );
    assert.throws(
      () => parseBudget({ scenarios: [{ match: { host: 'x' }, metrics: { plt_ms: { max_median: 1 } } }] }, 'b'),
      /scenarios\[0\]\.match\.host: unknown key/,
    );
    assert.throws(() => parseBudget({}, 'b'), /sets no limit/);
  });

  it('a rule must match a scenario of either side; one value of a list is enough', () => {
    const set = (records) => ({ path: 'p', source: 'p', records, summary: { meta: {}, groups: summarize(records) } });
    const rule = (match) => parseBudget({ scenarios: [{ match, metrics: { plt_ms: { max_median: 1e9 } } }] }, 'b.yaml');
    const some = set(A.slice(0, 8));
    assert.equal(compareResults(some, some, rule({ profile: 'geo', protocol: ['h3', 'h3-pep'] })).failed, false);
    assert.equal(compareResults(some, some, rule({ kind: 'pageload', loss_pct: 0 })).failed, false);
    assert.throws(
      () => compareResults(some, some, rule({ profile: 'goe' })),
      /^UsageError: b\.yaml: scenarios\[0\]\.match/,
    );
    assert.throws(() => compareResults(some, some, rule({ kind: 'bulk' })), /matches no scenario .*kind: pageload/);
    assert.throws(() => compareResults(some, some, rule({ loss_pct: 1 })), /\(they have loss_pct: 0\)/);
  });
});

describe('the CI example and the example budget', () => {
  it('docs/budget-example.yaml is a valid budget', async () => {
    const { readBudget } = await import('../../harness/analysis/compare.js');
    const b = readBudget(path.join(import.meta.dirname, '../../docs/budget-example.yaml'));
    assert.deepEqual(Object.keys(b.metrics), ['response_start_ms', 'fcp_ms', 'plt_ms']);
    assert.equal(b.scenarios.length, 3);
  });

  it('docs/ci-example.yml shards, merges, compares and uploads the report', async () => {
    const YAML = (await import('yaml')).default;
    const wf = YAML.parse(fs.readFileSync(path.join(import.meta.dirname, '../../docs/ci-example.yml'), 'utf8'));
    const runs = (job) => wf.jobs[job].steps.map((s) => s.run ?? '').join('\n');
    assert.deepEqual(wf.jobs.bench.strategy.matrix.shard, [1, 2, 3, 4]);
    assert.match(
      runs('bench'),
      /cli\.js bench \$BENCH_ARGS --shard \$\{\{ matrix\.shard \}\}\/\$SHARDS --out out\/shard-/,
    );
    assert.match(runs('gate'), /npx satbench merge shards\/\* --out out\/merged/);
    assert.match(
      runs('gate'),
      /npx satbench compare bench\/baseline out\/merged --budget bench\/budget\.yaml --junit out\/junit\.xml --markdown out\/compare\.md/,
    );
    assert.ok(
      wf.jobs.gate.steps.some(
        (s) => s.uses?.startsWith('actions/upload-artifact') && s.with.path.includes('out/merged'),
      ),
    );
  });
});
