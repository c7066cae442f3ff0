#!/usr/bin/env node
// npm run bench:overhead — what satbench costs per page load besides the
// load itself: the run's wall time (build the testbed, start the origin,
// launch Chromium, load, read the timeline, close, tear down) minus its
// Page Load Time, as the median over --runs runs, and where it goes.
// Usage: node benchmarks/overhead.js [--profile leo] [--protocol h1] [--site kepler] [--runs 10] [--json]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { bench } from '../harness/pageload/bench.js';
import { checkBench } from '../harness/cli/bench-plan.js';
import { readResults } from '../harness/results/store.js';
import { requireNetAdmin } from '../harness/core/sys.js';
import { median, round } from '../harness/core/stats.js';

const { values: o } = parseArgs({
  options: {
    profile: { type: 'string', default: 'leo' },
    protocol: { type: 'string', default: 'h1' },
    site: { type: 'string', default: 'kepler' },
    runs: { type: 'string', default: '10' },
    json: { type: 'boolean' },
  },
});
requireNetAdmin('bench:overhead');
const outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-overhead-'));
const plan = await checkBench({
  profiles: [o.profile],
  losses: [0],
  protocols: o.protocol.split(','),
  sites: [o.site],
  runs: Number(o.runs),
});
await bench(plan, { outDir, onProgress: (m) => process.stderr.write(`${m}\n`) });
const ok = readResults(path.join(outDir, 'results.jsonl')).filter((r) => r.ok);
const med = (f) => round(median(ok.map(f)), 0);
const result = {
  scenario: { profile: o.profile, protocol: o.protocol, site: o.site },
  runs_ok: ok.length,
  overhead_ms: med((r) => r.run_wall_ms - r.metrics.plt_ms),
  run_wall_ms: med((r) => r.run_wall_ms),
  plt_ms: med((r) => r.metrics.plt_ms),
  phases_ms: Object.fromEntries(Object.keys(ok[0]?.phases ?? {}).map((k) => [k, med((r) => r.phases[k])])),
  browser_besides_load_ms: med((r) => r.phases.browser_ms - r.metrics.plt_ms),
};
fs.rmSync(outDir, { recursive: true, force: true });
if (o.json) process.stdout.write(JSON.stringify(result, null, 2) + '\n');
else {
  console.log(`harness overhead per run (${o.profile}, ${o.protocol}, ${o.site}; medians of ${ok.length} runs)`);
  console.log(`  overhead (wall time - PLT)  ${result.overhead_ms} ms   (target < 1500 ms)`);
  console.log(`  wall time ${result.run_wall_ms} ms, PLT ${result.plt_ms} ms`);
  for (const [k, v] of Object.entries(result.phases_ms)) console.log(`  ${k.padEnd(13)} ${v} ms`);
  console.log(`  Chromium besides the load: ${result.browser_besides_load_ms} ms (launch, timeline, close)`);
}
