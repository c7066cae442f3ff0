#!/usr/bin/env node
// npm run bench:round-trip-waves — how many satellite round trips a page
// load takes, and in which round trips its requests leave (issue 28's
// target: the geo waterfalls of h3 and h3-pep show the structure issue 13
// described: for h3 the handshake, the document, then the waves of
// subresources; for h3-pep the document one round trip earlier, the
// handshake being local). Runs `satbench bench` as a user would (each run's
// HAR is written by default), then reads the median run of each scenario
// (the report's, by PLT) and prints what its waterfall counts: the load
// event in round trips and the requests sent per round trip, plus the
// median over all runs of the load event's count.
// Usage: node benchmarks/round-trip-waves.js [-n 5] [--profile geo] [--protocols h1,h1-pep,h3,h3-pep]
//          [--site kepler] [--from DIR] [--json]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { readResults } from '../harness/results/store.js';
import { runFiles } from '../harness/report/run-files.js';
import { medianRun } from '../harness/report/pageload/median-run.js';
import { waterfallOf, roundTripsAt, sendWaves } from '../harness/report/pageload/waterfall.js';
import { wavesSentence } from '../harness/report/pageload/run-views.js';
import { median, round } from '../harness/core/stats.js';

const { values: o } = parseArgs({
  options: {
    n: { type: 'string', short: 'n', default: '5' },
    profile: { type: 'string', default: 'geo' },
    protocols: { type: 'string', default: 'h1,h1-pep,h3,h3-pep' },
    site: { type: 'string', default: 'kepler' },
    from: { type: 'string' },
    json: { type: 'boolean' },
  },
});

const cli = fileURLToPath(new URL('../harness/cli.js', import.meta.url));
const outDir = o.from ?? fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-round-trip-waves-'));
if (!o.from) {
  process.stderr.write(`results in ${outDir}\n`);
  const args = ['bench', '--profile', o.profile, '--protocol', o.protocols, '--site', o.site, '-n', o.n];
  const r = spawnSync(process.execPath, [cli, ...args, '--out', outDir], { stdio: ['ignore', 'ignore', 'inherit'] });
  if (r.status !== 0) {
    console.error(`satbench bench ended with ${r.status ?? r.signal}; its results stay in ${outDir}`);
    process.exit(1);
  }
}

const files = runFiles(outDir);
const records = readResults(path.join(outDir, 'results.jsonl'));
// the load event's place on the waterfall of one run, with its waves
function counted(record) {
  const wf = waterfallOf(files.har(record.har), { metrics: record.metrics });
  const load = wf.marks.find((m) => m.key === 'load')?.ms ?? null;
  return {
    run: record.run,
    rtt: wf.rtt,
    load_ms: load,
    round_trips: roundTripsAt(load, wf.rtt),
    waves: sendWaves(wf.rows, wf.rtt, load ?? Infinity),
  };
}

const scenarios = [];
for (const protocol of o.protocols.split(',')) {
  const own = records.filter((r) => r.scenario.protocol === protocol && r.scenario.profile === o.profile && r.har);
  const mid = medianRun(own);
  if (!mid) {
    scenarios.push({ protocol, error: `no successful run with a HAR (${own.length} records)` });
    continue;
  }
  const all = own.filter((r) => r.ok).map(counted);
  scenarios.push({
    protocol,
    runs: all.length,
    median_of_runs_round_trips: round(median(all.map((c) => c.round_trips).filter(Number.isFinite)), 1),
    median_run: counted(mid),
  });
}

if (o.json)
  process.stdout.write(JSON.stringify({ profile: o.profile, site: o.site, out: outDir, scenarios }, null, 2) + '\n');
else {
  console.log(`satellite round trips of a page load (site ${o.site}, profile ${o.profile}; median run by PLT)`);
  for (const s of scenarios) {
    if (s.error) {
      console.log(`  ${s.protocol}: ${s.error}`);
      continue;
    }
    const m = s.median_run;
    console.log(
      `  ${s.protocol.padEnd(7)} run ${m.run}: load event at ${round(m.load_ms, 0)} ms = ${m.round_trips} round trips of ${m.rtt} ms (median over ${s.runs} runs: ${s.median_of_runs_round_trips})`,
    );
    console.log(`          ${wavesSentence(m.waves)}`);
  }
  console.log(`  results: ${outDir}`);
}
