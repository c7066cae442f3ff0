#!/usr/bin/env node
// npm run bench:starlink-boundary — issue 29's target for page loads over
// the Starlink-like profile: loads --site (kepler) over `starlink` with
// --protocols (h3 and h1), --runs times each (30), run-major so that the
// navigations fall at every phase of the 15 s slots, and prints per
// scenario the PLT medians of the runs with a slot boundary (a handover,
// with its delay spike and loss burst) inside the load and of those
// without, the n of each and the two-sided Mann–Whitney U p-value
// (harness/analysis/boundary-split.js); beside them how many runs met a
// boundary against what chance gives (the median load over the period),
// and Kassem et al.'s page-load figures (IMC 2022) from
// reference/starlink-measurements.json's `page_loads`, with where they are
// comparable and where not.
// Usage: node benchmarks/starlink-boundary.js [--runs 30] [--protocols h3,h1] [--site kepler]
//          [--keep] [--from DIR] [--json]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { bench } from '../harness/pageload/bench.js';
import { checkBench } from '../harness/cli/bench-plan.js';
import { readResults } from '../harness/results/store.js';
import { requireNetAdmin, ROOT } from '../harness/core/sys.js';
import { fmtP, median, round } from '../harness/core/stats.js';
import { splitByBoundary } from '../harness/analysis/boundary-split.js';

const { values: o } = parseArgs({
  options: {
    runs: { type: 'string', default: '30' },
    protocols: { type: 'string', default: 'h3,h1' },
    site: { type: 'string', default: 'kepler' },
    keep: { type: 'boolean' },
    from: { type: 'string' },
    json: { type: 'boolean' },
  },
});
if (!o.from) requireNetAdmin('bench:starlink-boundary');
const runs = Number(o.runs);
const PROFILE = 'starlink';
const reference = JSON.parse(fs.readFileSync(path.join(ROOT, 'reference/starlink-measurements.json'), 'utf8'));

// --from DIR: the figures of a folder this script kept (--keep), or of one
// it was stopped in, without running anything
const outDir = o.from ?? fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-starlink-boundary-'));
if (!o.from) process.stderr.write(`results in ${outDir}\n`);
const matrix = { profiles: [PROFILE], losses: [0], protocols: o.protocols.split(','), sites: [o.site], runs };
// the slot process is linkem's (kernel netem has none)
const plan = await checkBench(matrix, { link: 'linkem' });
// when the runs started and ended, and the machine's load average then
// (2 cores shared: a busy machine slows both groups); not known of a
// folder read with --from
const moment = () => (o.from ? null : { at: new Date().toISOString(), loadavg: os.loadavg().map((x) => round(x, 2)) });
const started = moment();
if (!o.from) await bench(plan, { outDir, onProgress: (m) => process.stderr.write(`${m}\n`) });
const ended = moment();

const med = (xs) => (xs.length ? round(median(xs), 0) : null);
const records = readResults(path.join(outDir, 'results.jsonl'));
const scenarios = matrix.protocols.map((protocol) => {
  const own = records.filter((r) => r.scenario.profile === PROFILE && r.scenario.protocol === protocol);
  const ok = own.filter((r) => r.ok);
  const split = splitByBoundary(own, 'plt_ms');
  const period = ok.find((r) => r.slot)?.slot.period_s ?? null;
  // a load of L s starting at a uniform phase meets a boundary with chance L / period
  const loadMs = med(ok.map((r) => r.load_wall_ms).filter((v) => typeof v === 'number'));
  return {
    protocol,
    runs: own.length,
    failed: own.filter((r) => !r.ok).length,
    without_slot: ok.filter((r) => !r.slot).length,
    // loads during which other processes used the CPU (pageload/gather/machine.js)
    busy: ok.filter((r) => r.machine?.busy).length,
    plt_ms: med(ok.map((r) => r.metrics.plt_ms)),
    period_s: period,
    expected_share: period && loadMs !== null ? round(Math.min(1, loadMs / 1000 / period), 3) : null,
    plt_split: split && {
      with: { n: split.with.n, median: round(split.with.median, 0) },
      without: { n: split.without.n, median: round(split.without.median, 0) },
      ratio: split.with.median && split.without.median ? round(split.with.median / split.without.median, 3) : null,
      p: split.p,
    },
  };
});
const kassem = reference.page_loads?.kassem2022 ?? null;
const result = { site: o.site, profile: PROFILE, runs_each: runs, started, ended, scenarios, kassem2022: kassem };
if (o.keep || o.from) result.out = outDir;
else fs.rmSync(outDir, { recursive: true, force: true });

if (o.json) process.stdout.write(JSON.stringify(result, null, 2) + '\n');
else {
  console.log(`${o.site} over ${PROFILE}, ${runs} runs each: PLT with and without a slot boundary inside the load`);
  console.log(
    o.from
      ? `  read from ${o.from}`
      : `  load average (1, 5, 15 min): ${started.loadavg.join(', ')} at start, ${ended.loadavg.join(', ')} at end`,
  );
  for (const s of scenarios) {
    const sp = s.plt_split;
    const head = `  ${s.protocol.padEnd(3)} `;
    if (!sp) {
      console.log(`${head}no run has a slot phase (${s.runs} runs, ${s.failed} failed): nothing to split`);
      continue;
    }
    const share = sp.with.n + sp.without.n ? sp.with.n / (sp.with.n + sp.without.n) : 0;
    console.log(
      `${head}with a boundary ${sp.with.median ?? '–'} ms (n ${sp.with.n}), without ${sp.without.median ?? '–'} ms (n ${sp.without.n})` +
        `${sp.ratio === null ? '' : `: ×${sp.ratio.toFixed(2)}`}  p ${fmtP(sp.p)}`,
    );
    console.log(
      `${head}all runs: PLT median ${s.plt_ms} ms; ${sp.with.n} of ${sp.with.n + sp.without.n} loads met a boundary (${round(share * 100, 0)} %; chance: the median load over the ${s.period_s} s slot, ${s.expected_share === null ? '–' : round(s.expected_share * 100, 0)} %)` +
        `${s.failed ? `  [${s.failed} failed]` : ''}${s.without_slot ? `  [${s.without_slot} without a slot phase]` : ''}${s.busy ? `  [${s.busy} on a busy machine]` : ''}`,
    );
  }
  if (!kassem) console.log('Kassem et al. (IMC 2022): no page_loads entry in reference/starlink-measurements.json');
  else {
    console.log(`Kassem et al.: ${reference.sources?.kassem2022?.cite ?? 'IMC 2022'}`);
    console.log(`  read: ${kassem.read_via}`);
    for (const f of kassem.figures) {
      const value = f.value === null ? 'no figure' : `${f.value} ${f.unit ?? ''}`.trim();
      const how = f.comparable === false ? `not comparable: ${f.why_not}` : `comparable ${f.comparable}`;
      console.log(`  ${f.what}: ${value} ("${f.quote_gist}"); ${how}`);
    }
    console.log('  where their page loads and these differ:');
    for (const d of kassem.not_comparable) console.log(`  - ${d}`);
  }
}
