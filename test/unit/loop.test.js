// The campaign loop (bench and bulk): records on disk run by run, --resume,
// the progress lines and their time-left estimate, errors.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { UsageError } from '../../harness/core/errors.js';
import { runCampaign, markInterrupted, thrownRecord } from '../../harness/campaign/loop.js';
import { openResults } from '../../harness/campaign/results-dir.js';
import { timeLeftMs, fmtDuration, scenarioWeight } from '../../harness/campaign/progress.js';
import { scenarioLabel } from '../../harness/kinds/pageload.js';
import { describeRun as describePageload } from '../../harness/pageload/run.js';
import { scenarioName as bulkName, describeRun as describeBulk } from '../../harness/bulk/run.js';

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-loop-'));
const lines = (file) =>
  fs.existsSync(file)
    ? fs
        .readFileSync(file, 'utf8')
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l))
    : [];
const sc = (protocol, profile = 'geo') => ({ profile, loss_pct: 0, protocol, site: 'kepler' });
// Two scenarios, two runs each, run-major as expandMatrix gives them.
const ITEMS = [
  { scenario: sc('h1'), run: 1 },
  { scenario: sc('h1-pep'), run: 1 },
  { scenario: sc('h1'), run: 2 },
  { scenario: sc('h1-pep'), run: 2 },
];
const PLT = { h1: 10218, 'h1-pep': 4000 };

// A fake clock that each fake run advances by its scenario's duration.
function fakeRuns(durations = { h1: 60000, 'h1-pep': 6000 }) {
  let t = 0;
  const calls = [];
  return {
    now: () => t,
    calls,
    runOne: async (item) => {
      calls.push(item);
      t += durations[item.scenario.protocol];
      return { scenario: item.scenario, run: item.run, ok: true, metrics: { plt_ms: PLT[item.scenario.protocol] } };
    },
  };
}

function campaign(dir, fake, extra = {}) {
  const progress = [];
  const { file, done } = openResults(dir, { resume: extra.resume ?? false, kind: extra.kind ?? 'pageload' });
  const run = runCampaign({
    kind: 'pageload',
    items: ITEMS,
    done,
    resultsFile: file,
    runOne: fake.runOne,
    name: scenarioLabel,
    describe: describePageload,
    runs: 2,
    onProgress: (l) => progress.push(l),
    now: fake.now,
    interrupted: () => null,
    ...extra.options,
  });
  return { file, progress, run };
}

describe('campaign loop', () => {
  it("appends each run's record in order and on disk before the next run starts", async () => {
    const dir = tmp();
    const file = path.join(dir, 'results.jsonl');
    const fake = fakeRuns();
    const onDisk = [];
    const { run } = campaign(dir, {
      ...fake,
      runOne: async (item) => {
        onDisk.push(lines(file).length);
        return fake.runOne(item);
      },
    });
    assert.equal(await run, 4);
    assert.deepEqual(onDisk, [0, 1, 2, 3]);
    assert.deepEqual(
      lines(file).map((r) => [r.scenario.protocol, r.run]),
      [
        ['h1', 1],
        ['h1-pep', 1],
        ['h1', 2],
        ['h1-pep', 2],
      ],
    );
  });

  it('names each finished run with its own scenario and result', async () => {
    const { progress, run } = campaign(tmp(), fakeRuns());
    await run;
    assert.equal(progress.length, 8, 'a line as each run starts and one as it ends');
    assert.match(progress[0], /^\[1\/4\] geo loss 0 % h1 kepler: run 1 of 2 · about \? left$/);
    assert.equal(progress[1], '[1/4] geo loss 0 % h1 kepler: run 1 of 2 done · PLT 10218 ms');
    assert.match(progress[2], /^\[2\/4\] geo loss 0 % h1-pep kepler: run 1 of 2 · about /);
    assert.doesNotMatch(progress[2], /PLT/, "the line naming the next run carries no other run's result");
    assert.equal(progress[3], '[2/4] geo loss 0 % h1-pep kepler: run 1 of 2 done · PLT 4000 ms');
  });

  it("estimates the time left from each scenario's own mean run time", async () => {
    const { progress, run } = campaign(tmp(), fakeRuns({ h1: 60000, 'h1-pep': 6000 }));
    await run;
    // before run 2: only h1 has run (60 s); h1-pep counts the overall mean, 60 s: 3 × 60 s = 3 min
    assert.match(progress[2], /about 3 min left$/);
    // before run 3: h1 60 s + h1-pep 6 s
    assert.match(progress[4], /about 66 s left$/);
    // before run 4: h1-pep alone, 6 s (the mean of all runs so far would say 42 s)
    assert.match(progress[6], /about 6 s left$/);
  });

  it("estimates a scenario not yet run from its profile's RTT, not from the first scenario's times", async () => {
    // the quick preset's order: leo's scenarios first, then geo's (about twice as long: issue 27's kepler runs)
    const items = [sc('h1', 'leo'), sc('h3', 'leo'), sc('h1', 'geo'), sc('h3', 'geo')].map((s) => ({
      scenario: s,
      run: 1,
    }));
    let t = 0;
    const progress = [];
    const rtt = { leo: 112, geo: 580 };
    await runCampaign({
      kind: 'pageload',
      items,
      resultsFile: path.join(tmp(), 'results.jsonl'),
      runOne: async ({ scenario, run }) => {
        t += scenario.profile === 'leo' ? 5300 : 10000;
        return { scenario, run, ok: true, metrics: { plt_ms: 1 } };
      },
      name: scenarioLabel,
      describe: describePageload,
      runs: 1,
      onProgress: (l) => progress.push(l),
      weight: (s) => scenarioWeight(s, { rtt_ms: rtt[s.profile] }),
      now: () => t,
      interrupted: () => null,
    });
    // before the second leo run: 5.3 s for it, 5.3 s - 1.12 s + 5.8 s ≈ 10 s for each geo one
    // (not 5.3 s as the first scenario's times, nor 27 s as 5.3 s scaled by 580/112)
    assert.match(progress[2], /about 25 s left$/);
  });

  it('time left: a scenario not yet run is its weight (RTT, rate) plus the part no profile moves', () => {
    const d = new Map([['leo', [4000, 4000]]]);
    const weight = (id) => ({ leo: 1120, geo: 5800 })[id] ?? null;
    assert.equal(timeLeftMs(['geo'], d, weight), 4000 - 1120 + 5800);
    assert.equal(timeLeftMs(['leo', 'geo', 'x'], d, weight), 4000 + (4000 - 1120 + 5800) + 4000, 'no weight: the mean');
    assert.equal(timeLeftMs(['leo'], new Map([['geo', [3000]]]), weight), 0, 'never below nothing');
    // kepler on a quiet machine (issue 27): leo h1 and h3 runs took 5.3 s, geo h1 12.2 s and geo h3 7.8 s;
    // scaled by the RTT alone one side gave 27 s for geo, the other 1.9 s for leo
    const link = (rtt_ms) => ({ rtt_ms, forward_mbps: 20, return_mbps: 20 });
    const kepler = (id) => scenarioWeight(sc('h1', id), link({ leo: 112, geo: 580 }[id]));
    const geoFromLeo = timeLeftMs(['geo'], new Map([['leo', [5300]]]), kepler);
    const leoFromGeo = timeLeftMs(['leo'], new Map([['geo', [12200, 7800]]]), kepler);
    assert.ok(Math.abs(geoFromLeo - 10000) < 1500, `geo from leo: ${geoFromLeo} ms, measured 10000 (h1 and h3)`);
    assert.ok(Math.abs(leoFromGeo - 5300) < 800, `leo from geo: ${leoFromGeo} ms, measured 5300`);
    // a page load weighs its round trips; a transfer its duration, or its size at the rate, and a round trip
    const geoLink = { rtt_ms: 580, forward_mbps: 20, return_mbps: 2 };
    assert.equal(scenarioWeight(sc('h1'), geoLink), 5800);
    assert.equal(scenarioWeight({ profile: 'geo', protocol: 'quic', duration_s: 15 }, geoLink), 15580);
    assert.equal(scenarioWeight({ profile: 'geo', protocol: 'quic', size_bytes: 10e6 }, geoLink), 4000 + 580);
    assert.equal(scenarioWeight({ profile: 'geo', size_bytes: 10e6, direction: 'up' }, geoLink), 40000 + 580);
    assert.equal(scenarioWeight(sc('h1'), { rtt_ms: 0, forward_mbps: null }), null);
  });

  it('time left: per scenario where it has runs, the overall mean elsewhere, null before any', () => {
    assert.equal(timeLeftMs(['a', 'b'], new Map()), null);
    const d = new Map([
      ['a', [10, 30]],
      ['b', [100]],
    ]);
    assert.equal(timeLeftMs(['a', 'a', 'b'], d), 20 + 20 + 100);
    assert.equal(timeLeftMs(['c'], d), 140 / 3);
    assert.equal(timeLeftMs([], d), 0);
    assert.equal(fmtDuration(89000), '89 s');
    assert.equal(fmtDuration(180000), '3 min');
  });

  it('--resume skips the runs already in results.jsonl, of its own kind only', async () => {
    const dir = tmp();
    const file = path.join(dir, 'results.jsonl');
    fs.writeFileSync(
      file,
      [
        { scenario: sc('h1'), run: 1, ok: true },
        { scenario: sc('h1-pep'), run: 1, ok: false }, // failed runs count as done too
        { kind: 'bulk', scenario: sc('h1'), run: 2, ok: true }, // another kind's run is not this one
      ]
        .map((r) => JSON.stringify(r))
        .join('\n') + '\n',
    );
    const fake = fakeRuns();
    const { progress, run } = campaign(dir, fake, { resume: true });
    assert.equal(await run, 2);
    assert.deepEqual(
      fake.calls.map((x) => [x.scenario.protocol, x.run]),
      [
        ['h1', 2],
        ['h1-pep', 2],
      ],
    );
    assert.match(progress[0], /^\[1\/2\] geo loss 0 % h1 kepler: run 2 of 2/);
    assert.equal(lines(file).length, 5);
  });

  it('refuses an existing results.jsonl without --resume, saying how to continue it', () => {
    const dir = tmp();
    fs.writeFileSync(path.join(dir, 'results.jsonl'), '');
    assert.throws(
      () => openResults(dir, { kind: 'pageload' }),
      (e) =>
        e instanceof UsageError &&
        e.message ===
          `${path.join(dir, 'results.jsonl')} exists: continue it with --resume ${dir}, or pick another --out`,
    );
    const fresh = path.join(tmp(), 'a', 'b');
    assert.deepEqual(openResults(fresh, { kind: 'bulk' }).done, new Set());
    assert.ok(fs.statSync(fresh).isDirectory());
  });

  it('a run that throws is a failed record and the matrix goes on; bad input ends it', async () => {
    const dir = tmp();
    const fake = fakeRuns();
    let n = 0;
    const { file, progress, run } = campaign(dir, {
      ...fake,
      runOne: async (item) => {
        if (++n === 2) throw new Error('the origin did not start\nstack line');
        return fake.runOne(item);
      },
    });
    assert.equal(await run, 4);
    const recs = lines(file);
    assert.deepEqual(
      recs.map((r) => r.ok),
      [true, false, true, true],
    );
    assert.deepEqual(recs[1], { scenario: sc('h1-pep'), run: 1, ok: false, error: 'the origin did not start' });
    assert.equal(progress[3], '[2/4] geo loss 0 % h1-pep kepler: run 1 of 2 done · failed (the origin did not start)');

    const usage = new UsageError('--pep-sat: bad');
    n = 0;
    const again = campaign(tmp(), {
      ...fake,
      runOne: async (item) => {
        if (++n === 2) throw usage;
        return fake.runOne(item);
      },
    });
    await assert.rejects(again.run, (e) => e === usage);
    assert.equal(lines(again.file).length, 1);
  });

  it('a signal ends the loop once the run in progress is recorded as interrupted', async () => {
    const dir = tmp();
    const fake = fakeRuns();
    let signal = null;
    const { file, progress, run } = campaign(
      dir,
      {
        ...fake,
        runOne: async (item) => {
          if (item.scenario.protocol === 'h1-pep') {
            signal = 'SIGTERM'; // arrives during run 2, whose load is killed
            return { scenario: item.scenario, run: item.run, ok: false, error: 'Target closed' };
          }
          return fake.runOne(item);
        },
      },
      { options: { interrupted: () => signal } },
    );
    assert.equal(await run, 2);
    const recs = lines(file);
    assert.equal(recs.length, 2);
    assert.equal(recs[0].ok, true);
    assert.deepEqual(recs[1], {
      scenario: sc('h1-pep'),
      run: 1,
      ok: false,
      error: 'interrupted by SIGTERM',
      interrupted: 'SIGTERM',
    });
    assert.equal(progress.length, 4, 'no run starts after the signal');
  });

  it('marks a failed run interrupted, keeps a finished one, and words a thrown one per kind', () => {
    const failed = { scenario: sc('h1'), run: 1, ok: false, error: 'Target closed' };
    assert.equal(markInterrupted(failed, null), failed);
    assert.deepEqual(markInterrupted(failed, 'SIGINT'), {
      ...failed,
      error: 'interrupted by SIGINT',
      interrupted: 'SIGINT',
    });
    const ok = { scenario: sc('h1'), run: 1, ok: true, metrics: {} };
    assert.equal(markInterrupted(ok, 'SIGHUP'), ok, 'a measurement that finished stays');
    const item = { scenario: { profile: 'geo', protocol: 'quic' }, run: 3 };
    assert.deepEqual(thrownRecord('bulk', item, new Error('boom\nat x')), {
      kind: 'bulk',
      scenario: item.scenario,
      run: 3,
      ok: false,
      error: 'boom',
    });
    assert.equal(thrownRecord('pageload', item, 'odd').kind, undefined);
  });

  it('words the results of both kinds of run', () => {
    assert.equal(describePageload({ ok: true, metrics: { plt_ms: 1234.4 } }), 'PLT 1234 ms');
    assert.equal(describePageload({ ok: false, error: 'timeout' }), 'failed (timeout)');
    assert.equal(describeBulk({ ok: true, metrics: { bytes: 12.34e6, duration_ms: 10000 } }), '12.3 MB in 10.0 s');
    assert.equal(describeBulk({ ok: false, error: 'stalled' }), 'failed (stalled)');
    assert.equal(
      bulkName({ profile: 'geo', loss_pct: null, protocol: 'quic', duration_s: 10 }),
      'geo loss as profile % quic 10 s',
    );
    assert.equal(
      bulkName({ profile: 'leo', loss_pct: 1, protocol: 'tcp', size_bytes: 100e6 }),
      'leo loss 1 % tcp 100 MB',
    );
  });
});
