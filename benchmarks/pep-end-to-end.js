#!/usr/bin/env node
// npm run bench:pep-end-to-end — issue 31's targets: what keeping HTTP/3
// end to end costs or gains over the satellite, beside the decrypting QUIC
// PEP. kepler over each --profiles (geo, leo) at each --losses (0, 1 %),
// --runs loads each (10), for each variant:
//   h3             Chromium to the origin, no proxy
//   h3-pep         the decrypting QUIC PEP (Proxy-ST holds the keys)
//   h3-pep+fec     the same, the satellite hop coded (--pep-sat fec=K/N)
//   h3-masque      the end-to-end tunnel (CONNECT-UDP to Proxy-GW), the
//                  packets as HTTP Datagrams (the inner QUIC sees the losses)
//   h3-masque+fec  the tunnel with the hop coded
//   h3-masque-stream (+fec)  the packets as capsules on the request streams
//                  (--pep-sat masque=stream: the tunnel recovers the losses)
// Prints per profile the PLT median with its 95 % interval (bootstrap) per
// variant and loss, each variant's growth from loss 0 to the highest loss,
// h3-masque's PLT over h3's at loss 0 (target: at most 1.05) and, where the
// hop was coded, the FEC's bytes per byte it protected (the records'
// pep.fec), the tunnel's mode as Proxy-ST reported it (pep.masque.mode),
// and the machine's load before and after (it is shared).
// A variant is one bench campaign (--pep-sat is a campaign setting).
// Usage: node benchmarks/pep-end-to-end.js [--runs 10] [--profiles geo,leo]
//          [--losses 0,1] [--fec 8/10] [--variants LIST] [--json]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { bench } from '../harness/pageload/bench.js';
import { checkBench } from '../harness/cli/bench-plan.js';
import { pepOptions } from '../harness/cli/pep-options.js';
import { requireNetAdmin } from '../harness/core/sys.js';
import { bootstrapMedianCi, median, round } from '../harness/core/stats.js';
import { readResults, RESULTS } from '../harness/results/store.js';

const { values: o } = parseArgs({
  options: {
    runs: { type: 'string', default: '10' },
    profiles: { type: 'string', default: 'geo,leo' },
    losses: { type: 'string', default: '0,1' },
    fec: { type: 'string', default: '8/10' },
    variants: { type: 'string' },
    json: { type: 'boolean' },
  },
});
requireNetAdmin('bench:pep-end-to-end');

const profiles = o.profiles.split(',');
const losses = o.losses.split(',').map(Number);
const runs = Number(o.runs);

const ALL = [
  { name: 'h3', protocol: 'h3', sat: null },
  { name: 'h3-pep', protocol: 'h3-pep', sat: null },
  { name: 'h3-pep+fec', protocol: 'h3-pep', sat: `fec=${o.fec}` },
  { name: 'h3-masque', protocol: 'h3-masque', sat: null },
  { name: 'h3-masque+fec', protocol: 'h3-masque', sat: `fec=${o.fec}` },
  { name: 'h3-masque-stream', protocol: 'h3-masque', sat: 'masque=stream' },
  { name: 'h3-masque-stream+fec', protocol: 'h3-masque', sat: `masque=stream,fec=${o.fec}` },
];
const wanted = o.variants ? o.variants.split(',') : ALL.map((v) => v.name);
const unknown = wanted.filter((w) => !ALL.some((v) => v.name === w));
if (unknown.length) {
  console.error(`--variants: unknown ${unknown.join(', ')}; here: ${ALL.map((v) => v.name).join(', ')}`);
  process.exit(2);
}
const variants = ALL.filter((v) => wanted.includes(v.name));
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-pep-end-to-end-'));

/** One variant's campaign: its successful records. */
async function campaign(v) {
  const outDir = path.join(work, v.name.replace('+', '-'));
  const plan = await checkBench(
    { profiles, losses, protocols: [v.protocol], sites: ['kepler'], runs },
    { pep: pepOptions(v.sat ? { 'pep-sat': v.sat } : {}) },
  );
  await bench(plan, { outDir, onProgress: (m) => process.stderr.write(`${v.name}: ${m}\n`) });
  return readResults(path.join(outDir, RESULTS)).filter((r) => r.ok);
}

/** PLT median, its interval and n of `recs`; the FEC's overhead where coded. */
function cell(recs) {
  const plt = recs.map((r) => r.metrics?.plt_ms).filter(Number.isFinite);
  const overheads = recs.map((r) => r.pep?.fec?.down?.overhead).filter(Number.isFinite);
  return {
    n: plt.length,
    plt_ms: plt.length ? round(median(plt), 0) : null,
    ci95: plt.length ? bootstrapMedianCi(plt).map((x) => round(x, 0)) : null,
    fec_overhead: overheads.length ? round(median(overheads), 3) : null,
    // both ways: a profile may lose only on the return link (geo-dvb)
    fec_repaired: Object.fromEntries(
      ['down', 'up'].map((way) => [way, recs.reduce((a, r) => a + (r.pep?.fec?.[way]?.repaired ?? 0), 0)]),
    ),
    masque_modes: [...new Set(recs.map((r) => r.pep?.masque?.mode).filter(Boolean))],
  };
}

const result = { runs, profiles, losses, fec: o.fec, load_before: os.loadavg().map((x) => round(x, 2)), rows: [] };
for (const v of variants) {
  const recs = await campaign(v);
  for (const profile of profiles)
    for (const loss of losses)
      result.rows.push({
        variant: v.name,
        profile,
        loss_pct: loss,
        ...cell(recs.filter((r) => r.scenario.profile === profile && r.scenario.loss_pct === loss)),
      });
}
result.load_after = os.loadavg().map((x) => round(x, 2));
const at = (variant, profile, loss) =>
  result.rows.find((r) => r.variant === variant && r.profile === profile && r.loss_pct === loss);
const [low, high] = [Math.min(...losses), Math.max(...losses)];
result.growth = variants.flatMap((v) =>
  profiles.map((profile) => {
    const a = at(v.name, profile, low)?.plt_ms;
    const b = at(v.name, profile, high)?.plt_ms;
    return { variant: v.name, profile, growth_pct: a && b && high !== low ? round((100 * (b - a)) / a, 1) : null };
  }),
);
result.masque_over_h3 = profiles.map((profile) => {
  const m = at('h3-masque', profile, low)?.plt_ms;
  const h = at('h3', profile, low)?.plt_ms;
  return { profile, ratio: m && h ? round(m / h, 3) : null, target: 1.05 };
});

if (o.json) process.stdout.write(JSON.stringify(result, null, 2) + '\n');
else {
  console.log(
    `kepler, ${runs} runs per cell, PLT medians [95 % interval] (ms); load average before ${result.load_before.join(' ')}, after ${result.load_after.join(' ')}`,
  );
  for (const profile of profiles) {
    console.log(`${profile}:`);
    for (const v of variants) {
      const cells = losses.map((loss) => {
        const c = at(v.name, profile, loss);
        const fec =
          c.fec_overhead == null
            ? ''
            : `, fec +${round(100 * c.fec_overhead, 1)} % bytes down, rebuilt ${c.fec_repaired.down} down ${c.fec_repaired.up} up`;
        const mode = c.masque_modes.length ? `, ${c.masque_modes.join('+')}` : '';
        return `loss ${loss} %: ${c.plt_ms ?? '–'} [${c.ci95?.join('–') ?? '–'}] n${c.n}${mode}${fec}`;
      });
      const g = result.growth.find((x) => x.variant === v.name && x.profile === profile).growth_pct;
      console.log(`  ${v.name.padEnd(20)} ${cells.join('; ')}${g == null ? '' : `; growth ${g} %`}`);
    }
    const m = result.masque_over_h3.find((x) => x.profile === profile);
    if (m.ratio != null) console.log(`  h3-masque / h3 at loss ${low} %: ${m.ratio} (target: at most 1.05)`);
  }
  console.log(`records: ${work}`);
}
