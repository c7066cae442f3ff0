#!/usr/bin/env node
// npm run bench:pep-satellite — the PEP chains at high bandwidth-delay
// products and under loss (issue 13). Parts, each chosen with --parts:
// - objectives: `bulk --preset quic4sat` through quic-pep and tcp-pep with
//   the preset's satellite hops (QUIC PEP cc=sat,ack-eliciting-threshold=20,
//   split-TCP PEP cc=bbr), its downloads and uploads (small's), --runs
//   each: failed runs, each objective's median time against its
//   limit, and the busiest process's CPU share (near 100 %: CPU-bound);
// - soak: 100 MB on quic4sat-medium through quic-pep, --soak-runs in a row:
//   how many complete;
// - loss: geo at 1 % loss, 10 s downloads through quic-pep with cc=sat and
//   with cc=newreno, --runs each: median bytes received and their ratio
//   (target: sat ≥ 5 × newreno);
// - pageload: geo, --site, --page-runs loads of h3 and h3-pep (the warm
//   tunnel, cc=sat): median PLT and its ratio (target ≤ 0.4 × h3).
// The output folders are kept (their paths are printed) for the reports.
// Usage: node benchmarks/pep-satellite.js [--parts objectives,soak,loss,pageload]
//          [--runs 3] [--soak-runs 10] [--page-runs 10] [--site kepler]
//          [--profiles LIST] [--protocols quic-pep,tcp-pep] [--json]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { bench } from '../harness/pageload/bench.js';
import { bulk } from '../harness/bulk/bulk.js';
import { BULK_PRESETS } from '../harness/bulk/presets.js';
import { parsePepOptions } from '../harness/cli/pep-options.js';
import { checkBench } from '../harness/cli/bench-plan.js';
import { checkBulk } from '../harness/cli/bulk-plan.js';
import { requireNetAdmin } from '../harness/core/sys.js';
import { round } from '../harness/core/stats.js';

const PARTS = ['objectives', 'soak', 'loss', 'pageload'];
const { values: o } = parseArgs({
  options: {
    parts: { type: 'string', default: PARTS.join(',') },
    runs: { type: 'string', default: '3' },
    'soak-runs': { type: 'string', default: '10' },
    'page-runs': { type: 'string', default: '10' },
    site: { type: 'string', default: 'kepler' },
    profiles: { type: 'string', default: BULK_PRESETS.quic4sat.profiles.join(',') },
    protocols: { type: 'string', default: 'quic-pep,tcp-pep' },
    json: { type: 'boolean' },
  },
});
const parts = o.parts.split(',');
for (const p of parts)
  if (!PARTS.includes(p)) throw new Error(`--parts: expected some of ${PARTS.join(', ')}, got ${p}`);
requireNetAdmin('bench:pep-satellite');

const median = (g, m) => g?.metrics?.[m]?.median ?? null;
const progress = (what) => (m) => process.stderr.write(`${what}: ${m}\n`);
const outDirFor = (what) => fs.mkdtempSync(path.join(os.tmpdir(), `satbench-pep-satellite-${what}-`));

async function objectives() {
  const outDir = outDirFor('objectives');
  const preset = BULK_PRESETS.quic4sat;
  const matrix = {
    profiles: o.profiles.split(','),
    losses: preset.losses,
    protocols: o.protocols.split(','),
    directions: preset.directions,
    uploads_where_objectives: preset.uploads_where_objectives,
    duration_s: null,
    size_bytes: preset.size_bytes,
    runs: Number(o.runs),
  };
  const pep = parsePepOptions({}, { satByChain: preset.pep_sat });
  const summary = await bulk(checkBulk(matrix, { pep }), { outDir, onProgress: progress('objectives') });
  return {
    out_dir: outDir,
    groups: summary.groups.map((g) => ({
      profile: g.scenario.profile,
      protocol: g.scenario.protocol,
      direction: g.scenario.direction ?? 'down',
      sat_hop: g.sat_hop,
      runs: g.runs,
      failed: g.failed,
      time_to_100mb_s: median(g, 'time_to_100mb_ms') === null ? null : round(median(g, 'time_to_100mb_ms') / 1000, 2),
      objectives: (g.objectives?.results ?? []).map((r) => ({
        mb: r.bytes / 1e6,
        limit_s: r.limit_s,
        median_s: r.median_s === null ? null : round(r.median_s, 2),
        met: r.met,
        ...(r.over_s !== undefined ? { over_s: round(r.over_s, 2) } : {}),
        ...(r.median_received_bytes !== undefined
          ? { median_received_mb: round(r.median_received_bytes / 1e6, 1) }
          : {}),
      })),
      busiest: g.cpu?.[0] ? { role: g.cpu[0].role, share: round(g.cpu[0].median_share, 2) } : null,
    })),
  };
}

async function soak() {
  const outDir = outDirFor('soak');
  const matrix = {
    profiles: ['quic4sat-medium'],
    losses: [null],
    protocols: ['quic-pep'],
    duration_s: null,
    size_bytes: 100e6,
    runs: Number(o['soak-runs']),
  };
  const summary = await bulk(checkBulk(matrix), { outDir, onProgress: progress('soak') });
  const g = summary.groups[0];
  return {
    out_dir: outDir,
    runs: g.runs,
    failed: g.failed,
    median_s: median(g, 'duration_ms') === null ? null : round(median(g, 'duration_ms') / 1000, 2),
  };
}

async function loss() {
  const out = { runs: Number(o.runs) };
  for (const cc of ['sat', 'newreno']) {
    const outDir = outDirFor(`loss-${cc}`);
    const matrix = {
      profiles: ['geo'],
      losses: [1],
      protocols: ['quic-pep'],
      duration_s: 10,
      size_bytes: null,
      runs: out.runs,
    };
    const pep = parsePepOptions({ sat: `cc=${cc}` });
    const summary = await bulk(checkBulk(matrix, { pep }), { outDir, onProgress: progress(`loss ${cc}`) });
    const g = summary.groups[0];
    out[cc] = { out_dir: outDir, failed: g.failed, median_mb: round((median(g, 'bytes') ?? 0) / 1e6, 2) };
  }
  out.ratio = out.newreno.median_mb ? round(out.sat.median_mb / out.newreno.median_mb, 1) : null;
  return out;
}

async function pageload() {
  const outDir = outDirFor('pageload');
  const matrix = {
    profiles: ['geo'],
    losses: [0],
    protocols: ['h3', 'h3-pep'],
    sites: [o.site],
    runs: Number(o['page-runs']),
  };
  const summary = await bench(await checkBench(matrix), { outDir, onProgress: progress('pageload') });
  const by = Object.fromEntries(summary.groups.map((g) => [g.scenario.protocol, g]));
  const plt = (p) => median(by[p], 'plt_ms');
  return {
    out_dir: outDir,
    h3_plt_ms: round(plt('h3'), 0),
    h3_pep_plt_ms: round(plt('h3-pep'), 0),
    ratio: round(plt('h3-pep') / plt('h3'), 2),
    failed: summary.groups.reduce((n, g) => n + g.failed, 0),
  };
}

const result = {};
for (const part of parts) result[part] = await { objectives, soak, loss, pageload }[part]();

if (o.json) process.stdout.write(JSON.stringify(result, null, 2) + '\n');
else {
  if (result.objectives) {
    console.log(`quic4sat objectives (${o.runs} runs each; median run; output ${result.objectives.out_dir})`);
    for (const g of result.objectives.groups) {
      const objs = g.objectives
        .map(
          (r) =>
            `${r.mb} MB ${r.median_s ?? 'not reached'}${r.median_s === null ? '' : ' s'} ≤ ${r.limit_s} ${r.met ? 'met' : `MISSED${r.over_s !== undefined ? ` by ${r.over_s} s` : ` (got ${r.median_received_mb} MB)`}`}`,
        )
        .join('; ');
      const cpu = g.busiest ? `busiest ${g.busiest.role} ${Math.round(g.busiest.share * 100)} %` : '';
      console.log(
        `  ${g.profile.padEnd(26)} ${g.protocol.padEnd(8)} ${g.direction.padEnd(4)} [${g.sat_hop}] ${g.runs - g.failed}/${g.runs} ok, 100 MB in ${g.time_to_100mb_s ?? '–'} s; ${objs || 'no objectives'}; ${cpu}`,
      );
    }
  }
  if (result.soak)
    console.log(
      `100 MB on quic4sat-medium through quic-pep: ${result.soak.runs - result.soak.failed} of ${result.soak.runs} complete, median ${result.soak.median_s} s (output ${result.soak.out_dir})`,
    );
  if (result.loss)
    console.log(
      `geo 1 % loss, 10 s through quic-pep (${result.loss.runs} runs): cc=sat ${result.loss.sat.median_mb} MB, cc=newreno ${result.loss.newreno.median_mb} MB, ratio ${result.loss.ratio} (target ≥ 5)`,
    );
  if (result.pageload)
    console.log(
      `geo ${o.site} PLT (${o['page-runs']} runs): h3 ${result.pageload.h3_plt_ms} ms, h3-pep ${result.pageload.h3_pep_plt_ms} ms, ratio ${result.pageload.ratio} (target ≤ 0.4), ${result.pageload.failed} failed`,
    );
}
