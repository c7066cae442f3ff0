#!/usr/bin/env node
// npm run bench:careful-resume — what Careful Resume (RFC 9959) at our
// origin does for a returning visitor: kepler over h3, `bench --view
// revisit`, with and without `--quic careful-resume=on`, on one profile
// (geo: 20 Mbit/s, about 580 ms). Prints per arm the revisit's PLT and
// Response Start medians (the pair's first view beside them), the ratio of
// the revisit PLT medians (the target: at most 0.85), and how the
// revisits' connections resumed (jumped, retreated, the median jump).
// `--cache none` (the default here) makes the revisit fetch every object
// again: with kepler's own policy (revalidate) it is 304s only, and there
// is little for a jump to carry. The bulk target (time to 2, 10, 100 MB on
// a revisit) needs satbulk to make a second connection that resumes the
// first (issue 30 item 5), which is not built: the script says so.
// Usage: node benchmarks/careful-resume.js [--profile geo] [--runs 10] [--cache none] [--json]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { bench } from '../harness/pageload/bench.js';
import { checkBench } from '../harness/cli/bench-plan.js';
import { requireNetAdmin } from '../harness/core/sys.js';
import { median, round } from '../harness/core/stats.js';
import { readResults, RESULTS } from '../harness/results/store.js';

const { values: o } = parseArgs({
  options: {
    profile: { type: 'string', default: 'geo' },
    runs: { type: 'string', default: '10' },
    cache: { type: 'string', default: 'none' },
    json: { type: 'boolean' },
  },
});
requireNetAdmin('bench:careful-resume');

const matrix = {
  profiles: [o.profile],
  losses: [0],
  protocols: ['h3'],
  sites: ['kepler'],
  views: ['revisit'],
  runs: Number(o.runs),
};
const ms = (xs) => (xs.length ? round(median(xs), 0) : null);

/** One arm: the revisit pairs' medians and what Careful Resume did. */
async function arm(careful) {
  const outDir = fs.mkdtempSync(path.join(os.tmpdir(), `satbench-cr-${careful}-`));
  const plan = await checkBench(matrix, { quic: { 'careful-resume': careful }, cache: o.cache });
  await bench(plan, { outDir, onProgress: (m) => process.stderr.write(`careful-resume=${careful}: ${m}\n`) });
  const recs = readResults(path.join(outDir, RESULTS)).filter((r) => r.ok);
  fs.rmSync(outDir, { recursive: true, force: true });
  const first = recs.filter((r) => r.scenario.first_view);
  const revisit = recs.filter((r) => !r.scenario.first_view);
  const conns = revisit.flatMap((r) => r.careful_resume ?? []);
  const jumps = conns.filter((c) => c.jump_bytes > 0);
  return {
    runs: revisit.length,
    plt_ms: { first: ms(first.map((r) => r.plt_ms)), revisit: ms(revisit.map((r) => r.plt_ms)) },
    response_start_ms: {
      first: ms(first.map((r) => r.response_start_ms)),
      revisit: ms(revisit.map((r) => r.response_start_ms)),
    },
    connections: conns.length,
    jumped: jumps.length,
    retreated: conns.filter((c) => c.retreated).length,
    median_jump_bytes: jumps.length ? median(jumps.map((c) => c.jump_bytes)) : null,
  };
}

const load = os.loadavg().map((x) => round(x, 2));
const off = await arm('off');
const on = await arm('on');
const ratio = off.plt_ms.revisit && on.plt_ms.revisit ? round(on.plt_ms.revisit / off.plt_ms.revisit, 3) : null;
const result = {
  profile: o.profile,
  cache: o.cache,
  runs: matrix.runs,
  load_before: load,
  load_after: os.loadavg().map((x) => round(x, 2)),
  kepler_h3_revisit: { off, on, plt_ratio: ratio, target: 0.85 },
  bulk_revisit: 'not built: satbulk makes one connection per run (issue 30 item 5)',
};
if (o.json) process.stdout.write(JSON.stringify(result, null, 2) + '\n');
else {
  console.log(
    `Careful Resume, kepler over h3, ${o.profile}, --view revisit --cache ${o.cache}, ${o.runs} runs each (medians, ms)`,
  );
  console.log(`load average before ${load.join(' ')}, after ${result.load_after.join(' ')}`);
  for (const [name, a] of [
    ['off', off],
    ['on', on],
  ])
    console.log(
      `  careful-resume=${name.padEnd(3)} first view PLT ${a.plt_ms.first}, revisit PLT ${a.plt_ms.revisit}, ` +
        `revisit Response Start ${a.response_start_ms.revisit} (${a.runs} runs; ${a.connections} connections ` +
        `with a saved path, ${a.jumped} jumped, ${a.retreated} retreated, median jump ${a.median_jump_bytes ?? '–'} B)`,
    );
  console.log(`  revisit PLT on/off: ${ratio ?? '–'} (target: at most 0.85)`);
  console.log(`bulk --view revisit: ${result.bulk_revisit}`);
}
