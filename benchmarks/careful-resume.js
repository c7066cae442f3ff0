#!/usr/bin/env node
// npm run bench:careful-resume — what Careful Resume (RFC 9959) does for a
// returning client, with and without `--quic careful-resume=on`, on one
// profile (geo: 20 Mbit/s, about 580 ms):
// - bulk: `bulk --view revisit --protocol quic --size 100MB` (satbulk's
//   second connection resumes the first): the revisit's time to 2, 10 and
//   100 MB (medians), the first connection's beside them, and the ratio of
//   the revisits' time to 10 MB (the issue's target: at most 0.6);
// - kepler over h3, `bench --view revisit`: the revisit's PLT and Response
//   Start medians (the pair's first view beside them) and the ratio of the
//   revisit PLT medians (target: at most 0.85). `--cache none` (the
//   default here) makes the revisit fetch every object again: with
//   kepler's own policy (revalidate) it is 304s only, and there is little
//   for a jump to carry.
// - safety (`--only safety`, not run by default): `bulk --view revisit
//   --size 20MB --revisit-capacity F` for each F of --capacities (the path
//   lost capacity between the two connections), with and without: the
//   revisits completed, their time to 10 MB, and what Careful Resume did
//   (jumped, retreated, the phases), with the satellite link's queue drops.
// Each arm also says how its revisits' connections resumed (jumped,
// retreated, the median jump), and the machine's load average before and
// after (it is shared).
// Usage: node benchmarks/careful-resume.js [--profile geo] [--runs 10] [--bulk-runs 5]
//          [--cache none] [--only bulk|kepler|safety] [--safety-runs 3]
//          [--capacities 0.5,0.25] [--json]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { bench } from '../harness/pageload/bench.js';
import { bulk } from '../harness/bulk/bulk.js';
import { checkBench } from '../harness/cli/bench-plan.js';
import { checkBulk } from '../harness/cli/bulk-plan.js';
import { OBJECTIVE_SIZES, resumeFloorMs, sizeMetric } from '../harness/results/goodput.js';
import { requireNetAdmin } from '../harness/core/sys.js';
import { median, round } from '../harness/core/stats.js';
import { readResults, RESULTS } from '../harness/results/store.js';

const { values: o } = parseArgs({
  options: {
    profile: { type: 'string', default: 'geo' },
    runs: { type: 'string', default: '10' },
    'bulk-runs': { type: 'string', default: '5' },
    cache: { type: 'string', default: 'none' },
    only: { type: 'string' },
    'safety-runs': { type: 'string', default: '3' },
    capacities: { type: 'string', default: '0.5,0.25' },
    json: { type: 'boolean' },
  },
});
if (o.only && !['bulk', 'kepler', 'safety'].includes(o.only))
  throw new Error(`--only: expected bulk, kepler or safety, got ${JSON.stringify(o.only)}`);
requireNetAdmin('bench:careful-resume');

const kepler = {
  profiles: [o.profile],
  losses: [0],
  protocols: ['h3'],
  sites: ['kepler'],
  views: ['revisit'],
  runs: Number(o.runs),
};
// the median of the numbers among `xs`, in whole ms (null: none)
function medianMs(xs) {
  const v = xs.filter((x) => typeof x === 'number');
  return v.length ? round(median(v), 0) : null;
}

// the arm's --quic: off is the default, not a setting (H2O and older binaries know no such key)
const quicOf = (careful) => (careful === 'on' ? { 'careful-resume': 'on' } : {});

/** What Careful Resume did on the revisits' connections. */
function resumed(revisits) {
  const conns = revisits.flatMap((r) => r.careful_resume ?? []);
  const jumps = conns.filter((c) => c.jump_bytes > 0);
  return {
    connections: conns.length,
    jumped: jumps.length,
    retreated: conns.filter((c) => c.retreated).length,
    median_jump_bytes: jumps.length ? median(jumps.map((c) => c.jump_bytes)) : null,
  };
}

/**
 * Every record of `runs` bulk revisits over quic (`label` in the progress
 * lines) of `sizeBytes`, with careful-resume `careful`, the revisit's path
 * at `capacity` × the profile's rate (null: the same path).
 */
async function bulkRevisits(label, careful, { sizeBytes, runs, capacity = null }) {
  const outDir = fs.mkdtempSync(path.join(os.tmpdir(), `satbench-cr-${label}-${careful}-`));
  const matrix = {
    profiles: [o.profile],
    losses: [0],
    protocols: ['quic'],
    views: ['revisit'],
    ...(capacity != null ? { revisit_capacity: capacity } : {}),
    size_bytes: sizeBytes,
    duration_s: null,
    runs,
  };
  const plan = checkBulk(matrix, { quic: quicOf(careful) });
  await bulk(plan, { outDir, onProgress: (m) => process.stderr.write(`${label} careful-resume=${careful}: ${m}\n`) });
  const all = readResults(path.join(outDir, RESULTS));
  fs.rmSync(outDir, { recursive: true, force: true });
  return all;
}

/** One bulk arm: the revisits' and their first connections' times to each size. */
async function bulkArm(careful) {
  const all = await bulkRevisits('bulk', careful, {
    sizeBytes: Math.max(...OBJECTIVE_SIZES),
    runs: Number(o['bulk-runs']),
  });
  const recs = all.filter((r) => r.ok);
  // the median time to each size of the metrics `of` each record
  const times = (of) =>
    Object.fromEntries(OBJECTIVE_SIZES.map((b) => [sizeMetric(b), medianMs(recs.map((r) => of(r)?.[sizeMetric(b)]))]));
  return {
    runs: recs.length,
    revisit: times((r) => r.metrics),
    first_connection: times((r) => r.first_connection?.metrics),
    ...resumed(recs),
    floor: floorOf(recs),
  };
}

/** One safety arm: revisits over a path at `capacity` × its rate. */
async function safetyArm(careful, capacity) {
  const all = await bulkRevisits('safety', careful, { sizeBytes: 20e6, runs: Number(o['safety-runs']), capacity });
  const recs = all.filter((r) => r.ok);
  const k = sizeMetric(10e6);
  return {
    runs: all.length,
    completed: recs.filter((r) => r.metrics?.bytes === 20e6).length,
    revisit_time_to_10mb_ms: medianMs(recs.map((r) => r.metrics?.[k])),
    first_time_to_10mb_ms: medianMs(recs.map((r) => r.first_connection?.metrics?.[k])),
    queue_drops: median(recs.map((r) => r.link_stats?.sat?.forward?.drops?.queue ?? 0)),
    phases: [...new Set(recs.flatMap((r) => (r.careful_resume ?? []).flatMap((c) => c.phases)))],
    ...resumed(recs),
  };
}

// The default initial window: 10 packets of 1200 B (transport/quic-options.json).
const IW_BYTES = 12_000;

/**
 * RFC 9959's floor for the revisits' time to 10 MB (goodput.js: the
 * initial window in the first round trip of data, half the saved window in
 * the next, the link's rate after), from their median ttfb, the link's
 * rate and RTT, and the median saved window; and the same with a jump as
 * large as the path (no halving): what no sender that keeps the first
 * round trip to the initial window can beat.
 */
function floorOf(recs) {
  const crs = recs.flatMap((r) => r.careful_resume ?? []).filter((c) => c.saved_rtt_ms);
  const ttfbMs = median(recs.map((r) => r.metrics?.ttfb_ms).filter(Number.isFinite));
  const rateBps = (recs[0]?.link_rate_mbps ?? 0) * 1e6;
  const rttMs = crs.length ? median(crs.map((c) => c.saved_rtt_ms)) : null;
  if (!Number.isFinite(ttfbMs) || !rateBps || !rttMs) return null;
  const savedBytes = median(crs.map((c) => (c.saved_capacity_bps / 8) * (c.saved_rtt_ms / 1000)));
  const at = (saved) =>
    round(resumeFloorMs({ ttfbMs, rttMs, rateBps, iwBytes: IW_BYTES, savedBytes: saved, sizeBytes: 10e6 }), 0);
  return { time_to_10mb_ms: at(savedBytes), unhalved_ms: at(null), saved_bytes: round(savedBytes, 0) };
}

/** One arm: the revisit pairs' medians and what Careful Resume did. */
async function arm(careful) {
  const outDir = fs.mkdtempSync(path.join(os.tmpdir(), `satbench-cr-${careful}-`));
  const plan = await checkBench(kepler, { quic: quicOf(careful), cache: o.cache });
  await bench(plan, { outDir, onProgress: (m) => process.stderr.write(`careful-resume=${careful}: ${m}\n`) });
  const recs = readResults(path.join(outDir, RESULTS)).filter((r) => r.ok);
  fs.rmSync(outDir, { recursive: true, force: true });
  const first = recs.filter((r) => r.scenario.first_view);
  const revisit = recs.filter((r) => !r.scenario.first_view);
  return {
    runs: revisit.length,
    plt_ms: {
      first: medianMs(first.map((r) => r.metrics?.plt_ms)),
      revisit: medianMs(revisit.map((r) => r.metrics?.plt_ms)),
    },
    response_start_ms: {
      first: medianMs(first.map((r) => r.metrics?.response_start_ms)),
      revisit: medianMs(revisit.map((r) => r.metrics?.response_start_ms)),
    },
    ...resumed(revisit),
  };
}

const load = os.loadavg().map((x) => round(x, 2));
const ratio = (a, b) => (a && b ? round(a / b, 3) : null);
const result = { profile: o.profile, load_before: load };
if (o.only === 'safety') {
  result.safety = [];
  for (const capacity of o.capacities.split(',').map(Number))
    result.safety.push({ capacity, off: await safetyArm('off', capacity), on: await safetyArm('on', capacity) });
}
if (!o.only || o.only === 'bulk') {
  const off = await bulkArm('off');
  const on = await bulkArm('on');
  const k = sizeMetric(10e6);
  result.bulk_revisit = {
    runs: Number(o['bulk-runs']),
    off,
    on,
    time_to_10mb_ratio: ratio(on.revisit[k], off.revisit[k]),
    target: 0.6,
  };
}
if (!o.only || o.only === 'kepler') {
  const off = await arm('off');
  const on = await arm('on');
  result.kepler_h3_revisit = {
    cache: o.cache,
    runs: kepler.runs,
    off,
    on,
    plt_ratio: ratio(on.plt_ms.revisit, off.plt_ms.revisit),
    target: 0.85,
  };
}
result.load_after = os.loadavg().map((x) => round(x, 2));
const resumedText = (a) =>
  `${a.connections} connections with a saved path, ${a.jumped} jumped, ${a.retreated} retreated, ` +
  `median jump ${a.median_jump_bytes ?? '–'} B`;
const s_ = (v) => (v == null ? '–' : (v / 1000).toFixed(2));
if (o.json) process.stdout.write(JSON.stringify(result, null, 2) + '\n');
else {
  console.log(
    `Careful Resume, ${o.profile} (medians); load average before ${load.join(' ')}, after ${result.load_after.join(' ')}`,
  );
  const b = result.bulk_revisit;
  if (b) {
    console.log(`bulk --view revisit --protocol quic --size 100MB, ${b.runs} runs each: time to 2 / 10 / 100 MB, s`);
    for (const [name, a] of Object.entries({ off: b.off, on: b.on }))
      console.log(
        `  careful-resume=${name.padEnd(3)} revisit ${OBJECTIVE_SIZES.map((x) => s_(a.revisit[sizeMetric(x)])).join(' / ')}` +
          `, its first connection ${OBJECTIVE_SIZES.map((x) => s_(a.first_connection[sizeMetric(x)])).join(' / ')}` +
          ` (${a.runs} runs; ${resumedText(a)})`,
      );
    console.log(`  revisit time to 10 MB on/off: ${b.time_to_10mb_ratio ?? '–'} (target: at most 0.6)`);
    const f = b.on.floor;
    if (f)
      console.log(
        `  RFC 9959's floor for it (the initial window in the first round trip of data, half the saved ` +
          `${f.saved_bytes} B in the next, the link's rate after): ${s_(f.time_to_10mb_ms)} s, on/off ` +
          `${ratio(f.time_to_10mb_ms, b.off.revisit[sizeMetric(10e6)]) ?? '–'}; with a jump of the whole path: ` +
          `${s_(f.unhalved_ms)} s, on/off ${ratio(f.unhalved_ms, b.off.revisit[sizeMetric(10e6)]) ?? '–'}`,
      );
  }
  for (const { capacity, off, on } of result.safety ?? []) {
    console.log(
      `bulk --view revisit --size 20MB --revisit-capacity ${capacity}: the satellite link at ${capacity} × its rate for the revisit`,
    );
    for (const [name, a] of Object.entries({ off, on }))
      console.log(
        `  careful-resume=${name.padEnd(3)} ${a.completed} of ${a.runs} revisits completed; time to 10 MB ` +
          `${s_(a.revisit_time_to_10mb_ms)} s (its first connection ${s_(a.first_time_to_10mb_ms)} s); ` +
          `queue drops ${a.queue_drops} (median); ${resumedText(a)}${a.phases.length ? `; phases ${a.phases.join(', ')}` : ''}`,
      );
  }
  const p = result.kepler_h3_revisit;
  if (p) {
    console.log(`kepler over h3, --view revisit --cache ${p.cache}, ${p.runs} runs each (ms)`);
    for (const [name, a] of Object.entries({ off: p.off, on: p.on }))
      console.log(
        `  careful-resume=${name.padEnd(3)} first view PLT ${a.plt_ms.first}, revisit PLT ${a.plt_ms.revisit}, ` +
          `revisit Response Start ${a.response_start_ms.revisit} (${a.runs} runs; ${resumedText(a)})`,
      );
    console.log(`  revisit PLT on/off: ${p.plt_ratio ?? '–'} (target: at most 0.85)`);
  }
}
