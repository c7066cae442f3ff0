#!/usr/bin/env node
// npm run bench:pep-tunnel — what the QUIC PEP's standing ST↔GW tunnel
// (issue 11) buys: page loads of --site over geo and leo (loss 0), --runs
// each, of
// - h3 end to end, h3-pep over the warm tunnel and h3-pep with a
//   connection per client connection (Kosek et al.);
// - h1 end to end, h1-qpep (TCP carried over the warm tunnel), h1-pep
//   (split TCP) and h1-vpn (OpenVPN over the satellite hop);
// then a 10 s bulk download over geo with quic-pep and tcp-qpep (warm) and
// its first byte. Prints the medians of Response Start and PLT and their
// ratios to the plain protocol's, against the targets: geo h3-pep
// ≤ 0.6 × h3 (Response Start and PLT); geo h1-qpep PLT ≤ 0.85 × h1 and
// below h1-pep's and h1-vpn's; leo no -pep or -qpep more than 5 % above its
// plain protocol; bulk geo first byte ≤ 700 ms.
// --alt-svc tcp measures as Kosek et al.'s testbed did (Chromium holds
// images back over h3; see sites/origin/README.md), all is bench's default.
// Usage: node benchmarks/pep-tunnel.js [--runs 10] [--site kepler] [--profiles geo,leo]
//          [--families h3,h1] [--alt-svc all|tcp] [--no-bulk] [--json]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { bench } from '../harness/pageload/bench.js';
import { bulk } from '../harness/bulk/bulk.js';
import { checkBench } from '../harness/cli/bench-plan.js';
import { checkBulk } from '../harness/cli/bulk-plan.js';
import { pepOptions } from '../harness/cli/pep-options.js';
import { requireNetAdmin } from '../harness/core/sys.js';
import { round } from '../harness/core/stats.js';

const { values: o } = parseArgs({
  options: {
    runs: { type: 'string', default: '10' },
    site: { type: 'string', default: 'kepler' },
    profiles: { type: 'string', default: 'geo,leo' },
    families: { type: 'string', default: 'h3,h1' },
    'alt-svc': { type: 'string', default: 'all' },
    'no-bulk': { type: 'boolean' },
    json: { type: 'boolean' },
  },
});
requireNetAdmin('bench:pep-tunnel');
const runs = Number(o.runs);
const profiles = o.profiles.split(',');
const families = o.families.split(',');
for (const f of families)
  if (!['h3', 'h1'].includes(f)) throw new Error(`--families: expected h3 and/or h1, got ${JSON.stringify(f)}`);

const median = (g, m) => (g?.metrics?.[m]?.median == null ? null : round(g.metrics[m].median, 0));
const ratio = (a, b) => (a == null || b == null ? null : round(a / b, 2));

async function pageLoads(profile, protocols, tunnel) {
  const outDir = fs.mkdtempSync(path.join(os.tmpdir(), `satbench-pep-tunnel-${profile}-${tunnel}-`));
  try {
    const matrix = { profiles: [profile], losses: [0], protocols, sites: [o.site], runs };
    const plan = await checkBench(matrix, { pep: pepOptions({ 'pep-tunnel': tunnel }), altSvc: o['alt-svc'] ?? null });
    const summary = await bench(plan, {
      outDir,
      onProgress: (m) => process.stderr.write(`${profile} ${tunnel}: ${m}\n`),
    });
    const out = {};
    for (const g of summary.groups) {
      out[g.scenario.protocol] = {
        runs: g.runs,
        failed: g.failed,
        response_start_ms: median(g, 'response_start_ms'),
        plt_ms: median(g, 'plt_ms'),
      };
    }
    return out;
  } finally {
    fs.rmSync(outDir, { recursive: true, force: true });
  }
}

async function bulkFirstByte() {
  const outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-pep-tunnel-bulk-'));
  try {
    const protocols = [...(families.includes('h3') ? ['quic', 'quic-pep'] : []), 'tcp', 'tcp-qpep'];
    const matrix = { profiles: ['geo'], losses: [0], protocols, duration_s: 10, runs };
    const summary = await bulk(checkBulk(matrix, { pep: pepOptions({ 'pep-tunnel': 'warm' }) }), {
      outDir,
      onProgress: (m) => process.stderr.write(`bulk: ${m}\n`),
    });
    return Object.fromEntries(
      summary.groups.map((g) => [
        g.scenario.protocol,
        { runs: g.runs, failed: g.failed, ttfb_ms: median(g, 'ttfb_ms') },
      ]),
    );
  } finally {
    fs.rmSync(outDir, { recursive: true, force: true });
  }
}

const result = { site: o.site, runs, alt_svc: o['alt-svc'], profiles: {} };
// Each variant beside the plain protocol it is measured against.
function withRatios(r, plain, names) {
  for (const name of names) {
    r[name].response_start_ratio = ratio(r[name].response_start_ms, r[plain].response_start_ms);
    r[name].plt_ratio = ratio(r[name].plt_ms, r[plain].plt_ms);
  }
}

for (const profile of profiles) {
  const r = {};
  if (families.includes('h3')) {
    const warm = await pageLoads(profile, ['h3', 'h3-pep'], 'warm');
    const per = await pageLoads(profile, ['h3-pep'], 'per-connection');
    Object.assign(r, { h3: warm.h3, 'h3-pep warm': warm['h3-pep'], 'h3-pep per-connection': per['h3-pep'] });
    withRatios(r, 'h3', ['h3-pep warm', 'h3-pep per-connection']);
  }
  if (families.includes('h1')) {
    const h1 = await pageLoads(profile, ['h1', 'h1-qpep', 'h1-pep', 'h1-vpn'], 'warm');
    Object.assign(r, { h1: h1.h1, 'h1-qpep warm': h1['h1-qpep'], 'h1-pep': h1['h1-pep'], 'h1-vpn': h1['h1-vpn'] });
    withRatios(r, 'h1', ['h1-qpep warm', 'h1-pep', 'h1-vpn']);
    r['h1-qpep warm'].plt_vs_h1_vpn = ratio(r['h1-qpep warm'].plt_ms, r['h1-vpn'].plt_ms);
    r['h1-qpep warm'].plt_vs_h1_pep = ratio(r['h1-qpep warm'].plt_ms, r['h1-pep'].plt_ms);
  }
  result.profiles[profile] = r;
}
if (!o['no-bulk']) result.bulk_geo_10s = await bulkFirstByte();

if (o.json) process.stdout.write(JSON.stringify(result, null, 2) + '\n');
else {
  console.log(`standing tunnel (site ${o.site}, ${runs} runs each, loss 0, --alt-svc ${o['alt-svc']}; medians)`);
  for (const [profile, r] of Object.entries(result.profiles)) {
    for (const [name, v] of Object.entries(r)) {
      const plain = name.startsWith('h1') ? 'h1' : 'h3';
      let ratios =
        v.plt_ratio == null ? '' : `  (× ${plain}: Response Start ${v.response_start_ratio}, PLT ${v.plt_ratio})`;
      if (v.plt_vs_h1_vpn != null) ratios += ` (PLT × h1-vpn ${v.plt_vs_h1_vpn}, × h1-pep ${v.plt_vs_h1_pep})`;
      console.log(
        `  ${profile} ${name.padEnd(22)} Response Start ${v.response_start_ms} ms, PLT ${v.plt_ms} ms${ratios}  [${v.failed} failed]`,
      );
    }
  }
  for (const [p, v] of Object.entries(result.bulk_geo_10s ?? {}))
    console.log(`  bulk geo 10 s ${p.padEnd(9)} first byte ${v.ttfb_ms} ms after t0  [${v.failed} failed]`);
}
