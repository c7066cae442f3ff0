#!/usr/bin/env node
// npm run bench:origins — does the origin server change the numbers? Loads
// the same site over the same scenarios from our Rust origin, from H2O
// (the one the set-up built with HTTP/3, as Kosek et al. served the page)
// and from H2O with its OpenSSL-3 handshake fix (h2o-patched), and prints, per profile and protocol, each origin's Response Start, FCP
// and PLT medians with their bootstrap 95 % intervals, beside the paper's
// Table II medians where the scenario is one of the paper's.
// Usage: node benchmarks/origins.js [--profile leo,geo] [--protocol h1,h3] [--site kepler]
//          [--origins rust,h2o,h2o-patched] [--runs 10] [--json]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { bench } from '../harness/pageload/bench.js';
import { checkBench } from '../harness/cli/bench-plan.js';
import { requireNetAdmin } from '../harness/core/sys.js';
import { round } from '../harness/core/stats.js';
import { loadReference, paperMedian } from '../harness/report/paper.js';

const { values: o } = parseArgs({
  options: {
    profile: { type: 'string', default: 'leo,geo' },
    protocol: { type: 'string', default: 'h1,h3' },
    site: { type: 'string', default: 'kepler' },
    origins: { type: 'string', default: 'rust,h2o,h2o-patched' },
    runs: { type: 'string', default: '10' },
    json: { type: 'boolean' },
  },
});
requireNetAdmin('bench:origins');
const METRICS = [
  ['response_start_ms', 'response_start', 'Response Start'],
  ['fcp_ms', 'fcp', 'FCP'],
  ['plt_ms', 'plt', 'PLT'],
];
const matrix = {
  profiles: o.profile.split(','),
  losses: [0],
  protocols: o.protocol.split(','),
  sites: [o.site],
  runs: Number(o.runs),
};
const key = (s) => `${s.profile} ${s.protocol}`;
const scenarios = {};
for (const origin of o.origins.split(',')) {
  const outDir = fs.mkdtempSync(path.join(os.tmpdir(), `satbench-origin-${origin}-`));
  const plan = await checkBench(matrix, { origin });
  const summary = await bench(plan, { outDir, onProgress: (m) => process.stderr.write(`${origin}: ${m}\n`) });
  for (const g of summary.groups) {
    const s = (scenarios[key(g.scenario)] ??= { scenario: g.scenario, origins: {}, paper: {} });
    s.origins[origin] = {
      version: summary.meta.environment?.origin?.version ?? null,
      runs: g.runs,
      failed: g.failed,
      ...Object.fromEntries(
        METRICS.map(([m]) => [
          m,
          g.metrics[m]
            ? { median: round(g.metrics[m].median, 0), ci95: g.metrics[m].ci95.map((x) => round(x, 0)) }
            : null,
        ]),
      ),
    };
  }
  fs.rmSync(outDir, { recursive: true, force: true });
}
const reference = loadReference();
for (const s of Object.values(scenarios))
  for (const [m, paperKey] of METRICS) s.paper[m] = paperMedian(reference, s.scenario, paperKey);

const result = { site: o.site, runs: matrix.runs, scenarios: Object.values(scenarios) };
if (o.json) process.stdout.write(JSON.stringify(result, null, 2) + '\n');
else {
  console.log(`origin comparison (${o.site}, loss 0, ${o.runs} runs each; median [95 % interval], ms)`);
  for (const s of result.scenarios) {
    console.log(`${s.scenario.profile} ${s.scenario.protocol}`);
    for (const [name, r] of Object.entries(s.origins)) {
      const cells = METRICS.map(([m, , label]) =>
        r[m] ? `${label} ${r[m].median} [${r[m].ci95.join(', ')}]` : `${label} –`,
      ).join(', ');
      console.log(`  ${name.padEnd(11)} ${cells}  (${r.failed} failed; ${r.version ?? 'version not recorded'})`);
    }
    if (METRICS.some(([m]) => s.paper[m] !== null))
      console.log(
        `  ${'paper'.padEnd(11)} ${METRICS.map(([m, , label]) => `${label} ${s.paper[m] ?? '–'}`).join(', ')}  (Kosek et al., Table II)`,
      );
  }
}
