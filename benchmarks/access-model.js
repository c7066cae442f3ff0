#!/usr/bin/env node
// npm run bench:access-model — does the satellite access model bring our
// numbers to the paper's (Kosek et al., IFIP Networking 2022)? Two parts:
//
// - handshake: kepler at loss 0 over each ideal profile and its access-model
//   twin (geo and geo-dvb, leo and leo-dvb), h1 and h3: the document's
//   connect time (TCP over h1, QUIC over h3), Response Start, FCP and PLT
//   medians beside the paper's handshakes and Table II.
// - loss: kepler at --loss 1 over the access-model profiles, h1, h1-pep, h3
//   and h3-pep, with the loss drawn per packet and per link-layer frame
//   (the profile with its access.frame_loss removed, or set from
//   --frame-loss): PLT medians beside Table II, each one's distance to the
//   paper's and whether the paper's ordering (h3-pep < h1-pep < h1 < h3)
//   holds. --loss-on says where --loss applies (the profile's
//   satellite.loss_on): return, as in the paper's testbed, whose netem
//   dropped only what entered the gateway, or both directions.
//
// Both use the ifip2022 preset's Alt-Svc (tcp) and our origin unless
// --origin says otherwise (the paper's testbed served both h1 and h3 from
// H2O: --origin h2o); the PEPs
// run the paper's settings: the split-TCP PEP's default (satellite hop
// NewReno, initial window 100) and the QUIC PEP per connection
// (--pep-tunnel per-connection, NewReno, initial window 100).
// Usage: node benchmarks/access-model.js [--part handshake,loss] [--runs 10]
//          [--orbits geo,leo] [--loss-per packet,frame] [--loss-on return,both]
//          [--origin rust|h2o|h2o-patched] [--frame-loss forward=BYTESxDATAGRAMS|BYTES/DATAGRAM_BYTES[hHOLD],return=…] [--json]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import YAML from 'yaml';
import { bench } from '../harness/pageload/bench.js';
import { requireNetAdmin } from '../harness/core/sys.js';
import { round } from '../harness/core/stats.js';
import { LOSS_ON, resolveProfilePath } from '../harness/testbed/profiles.js';
import { BENCH_PRESETS } from '../harness/pageload/presets.js';
import { pepOptions } from '../harness/cli/pep-options.js';
import { checkBench } from '../harness/cli/bench-plan.js';
import { loadReference, paperMedian } from '../harness/report/paper.js';

const { values: o } = parseArgs({
  options: {
    part: { type: 'string', default: 'handshake,loss' },
    runs: { type: 'string', default: '10' },
    orbits: { type: 'string', default: 'geo,leo' },
    'loss-per': { type: 'string', default: 'packet,frame' },
    'loss-on': { type: 'string' },
    origin: { type: 'string', default: 'rust' },
    'frame-loss': { type: 'string' },
    json: { type: 'boolean' },
  },
});
requireNetAdmin('bench:access-model');
const runs = Number(o.runs);
const orbits = o.orbits.split(',');
const reference = loadReference();
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-access-model-'));
const progress = (m) => process.stderr.write(`${m}\n`);
const altSvc = BENCH_PRESETS.ifip2022.altSvc;
const PAPER_ORDER = ['h3-pep', 'h1-pep', 'h1', 'h3'];

// `forward=6041/1472h5,return=100x1` → { forward: {bytes, datagram, hold},
// return: {bytes, datagrams} }: BYTESxN a padded frame in N datagrams,
// BYTES/D an unpadded one in a datagram per D bytes of its fill; hH after
// either: in-order delivery, frames behind a lost one held until more than
// H wait.
function parseFrameLoss(text) {
  const out = {};
  for (const part of text.split(',')) {
    const m = /^(forward|return)=(\d+)([x/])(\d+)(?:h(\d+))?$/.exec(part.trim());
    if (!m)
      throw new Error(
        `--frame-loss: expected forward=BYTESxDATAGRAMS or forward=BYTES/DATAGRAM_BYTES, optionally followed by hHOLD (and return=…), got ${part}`,
      );
    out[m[1]] = { bytes: Number(m[2]), [m[3] === 'x' ? 'datagrams' : 'datagram']: Number(m[4]) };
    if (m[5]) out[m[1]].hold = Number(m[5]);
  }
  return out;
}

// A variant of a built-in profile, written under `work`: its satellite
// access model's frame_loss set (per frame) or removed (per packet), and
// --loss applied where `lossOn` says (the profile's own loss_on if null).
// Returns the file and the directions --loss applies to there.
function variant(base, lossPer, frameLoss, lossOn) {
  const doc = YAML.parse(fs.readFileSync(resolveProfilePath(base), 'utf8'));
  if (lossOn) doc.satellite.loss_on = lossOn;
  const on = doc.satellite.loss_on ?? 'both';
  for (const dir of ['forward', 'return']) {
    const access = doc.satellite?.[dir]?.access;
    if (!access || !LOSS_ON[on]?.includes(dir)) continue;
    if (lossPer === 'packet') delete access.frame_loss;
    else if (frameLoss?.[dir]) access.frame_loss = frameLoss[dir];
    else if (!access.frame_loss)
      throw new Error(`${base}: no frame_loss in satellite.${dir}.access; give --frame-loss`);
  }
  doc.description = `${doc.description ?? ''} [benchmarks/access-model.js: --loss on ${on}, drawn per ${lossPer}]`;
  const file = path.join(work, `${base}-on-${on}-per-${lossPer}.yaml`);
  fs.writeFileSync(file, YAML.stringify(doc));
  return { file, on };
}

// Runs one bench and returns its groups by `profile protocol`.
async function runBench(label, profiles, protocols, loss) {
  const outDir = path.join(work, label);
  const plan = await checkBench(
    { profiles, losses: [loss], protocols, sites: ['kepler'], runs },
    { altSvc, origin: o.origin, pep: pepOptions({ 'pep-tunnel': 'per-connection' }) },
  );
  const summary = await bench(plan, { outDir, onProgress: (m) => progress(`${label}: ${m}`) });
  const out = {};
  for (const g of summary.groups) {
    const med = (k) => (g.metrics[k] ? round(g.metrics[k].median, 0) : null);
    out[`${g.scenario.profile} ${g.scenario.protocol}`] = {
      runs: g.runs,
      failed: g.failed,
      connect_ms: med('connect_ms'),
      response_start_ms: med('response_start_ms'),
      fcp_ms: med('fcp_ms'),
      plt_ms: med('plt_ms'),
    };
  }
  return out;
}

const paper = (orbit, protocol, loss, key) =>
  paperMedian(reference, { site: 'kepler', profile: orbit, protocol, loss_pct: loss }, key);
const pct = (ours, theirs) => (ours !== null && theirs ? round((100 * (ours - theirs)) / theirs, 1) : null);
const result = { runs, alt_svc: altSvc, origin: o.origin, work };

if (o.part.includes('handshake')) {
  const protocols = ['h1', 'h3'];
  const profiles = orbits.flatMap((orbit) => [orbit, `${orbit}-dvb`]);
  const groups = await runBench('handshake', profiles, protocols, 0);
  result.handshake = orbits.flatMap((orbit) =>
    protocols.map((protocol) => {
      const hs = reference.handshakes[orbit][protocol === 'h1' ? 'tcp' : 'quic'];
      const row = (p) => groups[`${p} ${protocol}`];
      return {
        orbit,
        protocol,
        ideal: row(orbit),
        dvb: row(`${orbit}-dvb`),
        paper: {
          connect_ms: hs,
          response_start_ms: paper(orbit, protocol, 0, 'response_start'),
          fcp_ms: paper(orbit, protocol, 0, 'fcp'),
          plt_ms: paper(orbit, protocol, 0, 'plt'),
        },
      };
    }),
  );
}

if (o.part.includes('loss')) {
  const frameLoss = o['frame-loss'] ? parseFrameLoss(o['frame-loss']) : null;
  result.frame_loss = frameLoss;
  result.loss = [];
  const models = (o['loss-on']?.split(',') ?? [null]).flatMap((lossOn) =>
    o['loss-per'].split(',').map((lossPer) => ({ lossOn, lossPer })),
  );
  for (const { lossOn, lossPer } of models) {
    const variants = orbits.map((orbit) => variant(`${orbit}-dvb`, lossPer, frameLoss, lossOn));
    const files = variants.map((v) => v.file);
    const groups = await runBench(`loss-on-${variants[0].on}-per-${lossPer}`, files, PAPER_ORDER, 1);
    for (const [i, orbit] of orbits.entries()) {
      const cells = PAPER_ORDER.map((protocol) => {
        const g = groups[`${files[i]} ${protocol}`]; // a profile given by path is named by it
        const theirs = paper(orbit, protocol, 1, 'plt');
        return {
          protocol,
          plt_ms: g?.plt_ms ?? null,
          failed: g?.failed ?? null,
          paper_ms: theirs,
          off_pct: pct(g?.plt_ms ?? null, theirs),
        };
      });
      const plts = cells.map((c) => c.plt_ms);
      result.loss.push({
        loss_on: variants[i].on,
        loss_per: lossPer,
        orbit,
        cells,
        paper_order_holds: plts.every((x, k) => x !== null && (k === 0 || plts[k - 1] < x)),
        all_within_15_pct: cells.every((c) => c.off_pct !== null && Math.abs(c.off_pct) <= 15),
      });
    }
  }
}

if (o.json) process.stdout.write(JSON.stringify(result, null, 2) + '\n');
else {
  console.log(
    `access model vs Kosek et al. (kepler, ${runs} runs each, --alt-svc ${altSvc}, origin ${o.origin}, medians in ms)`,
  );
  const fmt = (r, k) => (r?.[k] ?? '–').toString();
  for (const h of result.handshake ?? []) {
    console.log(`${h.orbit} ${h.protocol}, loss 0: connect / Response Start / FCP / PLT`);
    for (const [name, r] of [
      [h.orbit, h.ideal],
      [`${h.orbit}-dvb`, h.dvb],
      ['paper', h.paper],
    ]) {
      const cols = ['connect_ms', 'response_start_ms', 'fcp_ms', 'plt_ms'].map((k) => fmt(r, k).padStart(6)).join(' ');
      const off =
        name === 'paper'
          ? '  (handshake: raw data; others: Table II)'
          : `  off paper: connect ${pct(r?.connect_ms ?? null, h.paper.connect_ms)} %, RS ${pct(r?.response_start_ms ?? null, h.paper.response_start_ms)} %, PLT ${pct(r?.plt_ms ?? null, h.paper.plt_ms)} %${r?.failed ? `, ${r.failed} failed` : ''}`;
      console.log(`  ${name.padEnd(8)} ${cols}${off}`);
    }
  }
  for (const l of result.loss ?? []) {
    console.log(`${l.orbit}-dvb, loss 1 % on ${l.loss_on}, drawn per ${l.loss_per}: PLT ours / paper (off %)`);
    console.log(
      `  ${l.cells.map((c) => `${c.protocol} ${c.plt_ms ?? '–'} / ${c.paper_ms} (${c.off_pct ?? '–'} %)${c.failed ? ` ${c.failed} failed` : ''}`).join(', ')}`,
    );
    console.log(
      `  paper's ordering h3-pep < h1-pep < h1 < h3: ${l.paper_order_holds ? 'holds' : 'does not hold'}; every cell within 15 %: ${l.all_within_15_pct ? 'yes' : 'no'}`,
    );
  }
  console.log(`records: ${work}`);
}
