// `satbench compare` end to end: its verdicts, outputs and exit codes on
// hand-made results with realistic noise. The budget, the judging and the
// writers alone: compare-budget, compare-judge and compare-writers.test.js.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
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

  it('budgets: a ceiling on the median fails outright; per-scenario limits override the defaults', async () => {
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
    // a rule whose match has a typo matches nothing: an error naming the file, the rule and the value
    fs.writeFileSync(
      budget,
      'metrics:\n  plt_ms: { max_slowdown_pct: 10 }\nscenarios:\n  - match: { profile: leo }\n    metrics: { plt_ms: { max_median: 1e9 } }\n  - match: { profile: goe, protocol: h3 }\n    metrics: { plt_ms: { max_median: 1 } }\n',
    );
    r = await satbench(['compare', dirA, dirA, '--budget', budget]);
    assert.equal(r.code, 2, r.stdout + r.stderr);
    assert.equal(
      r.stderr,
      `satbench: ${budget}: scenarios[1].match.profile: "goe" matches no scenario of either result set (they have profile: geo, leo)\n`,
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
});

describe('the CI example', () => {
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
