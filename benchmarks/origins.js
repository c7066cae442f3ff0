#!/usr/bin/env node
// npm run bench:origins — does the origin server change the numbers? Loads
// the same site over the same scenario from our Rust origin and from H2O
// (HTTP/1.1 by default; both serve h1, h1s and h2) and prints each one's
// Page Load Time median with its bootstrap 95 % interval and the difference.
// Usage: node benchmarks/origins.js [--profile leo] [--protocol h1] [--site kepler] [--runs 10] [--json]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { bench } from '../harness/pageload/bench.js';
import { requireNetAdmin } from '../harness/core/sys.js';
import { round } from '../harness/core/stats.js';

const { values: o } = parseArgs({
  options: {
    profile: { type: 'string', default: 'leo' },
    protocol: { type: 'string', default: 'h1' },
    site: { type: 'string', default: 'kepler' },
    runs: { type: 'string', default: '10' },
    json: { type: 'boolean' },
  },
});
requireNetAdmin('bench:origins');
const matrix = { profiles: [o.profile], losses: [0], protocols: [o.protocol], sites: [o.site], runs: Number(o.runs) };
const result = { scenario: { profile: o.profile, protocol: o.protocol, site: o.site }, origins: {} };
for (const origin of ['rust', 'h2o']) {
  const outDir = fs.mkdtempSync(path.join(os.tmpdir(), `satbench-origin-${origin}-`));
  const summary = await bench(matrix, { outDir, origin, onProgress: (m) => process.stderr.write(`${origin}: ${m}\n`) });
  const g = summary.groups[0];
  result.origins[origin] = {
    runs: g.runs,
    failed: g.failed,
    ...Object.fromEntries(
      ['response_start_ms', 'fcp_ms', 'plt_ms'].map((m) => [
        m,
        { median: round(g.metrics[m].median, 0), ci95: g.metrics[m].ci95.map((x) => round(x, 0)) },
      ]),
    ),
  };
  fs.rmSync(outDir, { recursive: true, force: true });
}
const [a, b] = [result.origins.rust.plt_ms.median, result.origins.h2o.plt_ms.median];
result.plt_difference_pct = round(((b - a) / a) * 100, 1);
if (o.json) process.stdout.write(JSON.stringify(result, null, 2) + '\n');
else {
  console.log(`origin comparison (${o.profile}, ${o.protocol}, ${o.site}, ${o.runs} runs each)`);
  for (const [name, r] of Object.entries(result.origins)) {
    console.log(
      `  ${name.padEnd(5)} responseStart ${r.response_start_ms.median} ms, FCP ${r.fcp_ms.median} ms, PLT ${r.plt_ms.median} ms [${r.plt_ms.ci95.join(', ')}]  (${r.failed} failed)`,
    );
  }
  console.log(
    `  H2O PLT median is ${result.plt_difference_pct} % ${result.plt_difference_pct >= 0 ? 'above' : 'below'} ours`,
  );
}
