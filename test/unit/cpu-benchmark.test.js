// The campaign's CPU benchmark (meta.cpu_benchmark) and what summary.json's
// meta says of bench's emulation: both shown in the report's Environment.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cpuBenchmark, workload, ROUNDS, ITERATIONS } from '../../harness/campaign/cpu-benchmark.js';
import { checkBench } from '../../harness/cli/bench-plan.js';
import { bench } from '../../harness/pageload/bench.js';
import { failedRunRecord } from '../../harness/pageload/run.js';
import { renderReport, describeCpuBenchmark, describeEmulation } from '../../harness/report/html.js';
import { emulationSettings } from '../../harness/browser/emulation.js';
import { profileCache } from '../../harness/campaign/scenario.js';
import { mergeSets } from '../../harness/analysis/merge.js';
import { summarize } from '../../harness/analysis/summary.js';
import { scenarios, makeRecords } from '../fixtures.js';

describe('the campaign’s CPU benchmark', function () {
  this.timeout(60000);

  it('times ROUNDS rounds of a fixed workload; the score is their median', () => {
    const steps = [10, 30, 20, 50, 40];
    // the clock read before and after each round
    const readings = steps.flatMap((ms, i) => [1000 * i, 1000 * i + ms]);
    const now = () => readings.shift();
    const b = cpuBenchmark({ iterations: 10, now });
    assert.deepEqual(b.rounds_ms, steps);
    assert.equal(b.score_ms, 30);
    assert.equal(b.iterations, 10);
    assert.match(b.runtime, /^Node\.js v\d+/);
    assert.equal(ROUNDS, 5);
  });

  it('the workload is fixed: the same result every time, and it depends on its length', () => {
    assert.equal(workload(1000), workload(1000));
    assert.notEqual(workload(1000), workload(1001));
  });

  it('takes a few hundred ms in all, for real', () => {
    const t0 = performance.now();
    const b = cpuBenchmark();
    const took = performance.now() - t0;
    assert.equal(b.iterations, ITERATIONS);
    assert.ok(b.score_ms > 1, JSON.stringify(b));
    // generous: a loaded 2-core machine; the point is seconds, not minutes
    assert.ok(took < 5000, `took ${took} ms`);
  });

  it('bench writes it and the emulation into summary.json; the Environment shows both', async () => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-cpu-benchmark-'));
    const matrix = { profiles: ['geo'], losses: [0], protocols: ['h1'], sites: ['kepler'], runs: 1 };
    const emulation = { cpuSlowdown: 4, device: 'mobile' };
    const plan = await checkBench(matrix, { emulation }, { congestionControls: ['cubic'], profiles: profileCache() });
    const seen = [];
    const run = async (resolved, runNo) => {
      seen.push(resolved.emulation);
      const { scenario, seed, link, origin } = resolved;
      return failedRunRecord({ scenario, run: runNo, seed: seed + runNo, link, origin }, 'not run: a test');
    };
    const summary = await bench(plan, { outDir: path.join(tmp, 'r'), run });
    assert.deepEqual(seen, [emulation], 'every run gets the plan’s emulation');
    const b = summary.meta.cpu_benchmark;
    assert.ok(b.score_ms > 0 && b.rounds_ms.length === ROUNDS, JSON.stringify(b));
    assert.deepEqual(summary.meta.settings.emulation, emulationSettings(emulation));
    const html = renderReport(summary);
    const row = (name, text) => `<tr><th>${name}</th><td>${text}</td></tr>`;
    assert.ok(html.includes(row('CPU benchmark', describeCpuBenchmark(b))), 'CPU benchmark row');
    assert.match(
      describeCpuBenchmark(b),
      /^[\d.]+ ms \(median of 5 rounds of a fixed JavaScript workload in Node\.js v/,
    );
    const e = describeEmulation(summary.meta.settings.emulation);
    assert.equal(
      e,
      `mobile: 412×823 CSS px, pixel ratio 1.75, touch, user agent ${summary.meta.settings.emulation.user_agent}; CPU 4× slower (DevTools throttling)`,
    );
    assert.ok(html.includes(row('emulation', e.replace(/'/g, '&#39;'))), 'emulation row');
    assert.equal(
      describeEmulation(emulationSettings({})),
      "desktop: 1280×1024 CSS px, pixel ratio 1, Chromium's own user agent; CPU not slowed",
    );
    // a summary from before says nothing of either
    assert.doesNotMatch(renderReport({ meta: {}, groups: [] }), /CPU benchmark|<th>emulation/);
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('merged shards keep each shard’s benchmark (each may have run on its own machine), not the first one’s as the whole’s', () => {
    const matrix = { profiles: ['geo'], losses: [0], protocols: ['h1'], sites: ['kepler'], runs: 2 };
    const records = makeRecords(scenarios({ profiles: ['geo'], protocols: ['h1'] }), { runs: 2 });
    const bench = (score) => ({
      score_ms: score,
      rounds_ms: [score, score, score, score, score],
      runtime: 'Node.js v24',
    });
    const sets = [1, 2].map((index) => ({
      dir: `s${index}`,
      records: records.filter((r) => r.run === index),
      meta: { seed: 7, matrix, shard: { index, count: 2 }, cpu_benchmark: bench(index * 100) },
    }));
    const { meta } = mergeSets(sets, { now: 'then' });
    assert.equal(meta.cpu_benchmark, undefined);
    assert.deepEqual(
      meta.merged_from.map((x) => x.cpu_benchmark.score_ms),
      [100, 200],
    );
    const html = renderReport({ meta, groups: summarize(records) });
    assert.match(
      html,
      /s1 \(shard 1\/2\), CPU benchmark 100 ms \(median of 5 rounds[^<]*<br>s2 \(shard 2\/2\), CPU benchmark 200 ms/,
    );
    assert.doesNotMatch(html, /<th>CPU benchmark<\/th>/);
  });
});
