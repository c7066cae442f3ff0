#!/usr/bin/env node
// npm run bench:fec — what the FEC codec of the QUIC PEP's tunnel
// (proxy/quic-pep/src/fec/, issue 31 item 3; not yet wired to the tunnel)
// repairs and costs over a lossy hop. For each fec=K/N and loss model, the
// `fec_rate` example (proxy/quic-pep/examples/fec_rate.rs) sends --packets
// datagrams of a download (85 % full-size, 15 % ACK-sized) through the
// encoder, the loss and the decoder, once per seed; this prints the medians
// over --runs seeds of:
//   lost       the share of source datagrams the hop lost
//   repaired   the share of those the decoder rebuilt
//   left       the share of all sources never delivered (losses left)
//   overhead   repair packets' and source headers' bytes per source byte
//   encode, decode  Mbit/s of source datagrams per second of one thread's
//              time in the encoder or decoder
// Loss models: random (each packet alone), burst (Gilbert–Elliott, every
// packet of a bad state lost, mean burst LEN packets), gemodel (netem's
// parameters: the geo-gilbert profile's, Kuhn et al.'s measured GEO access).
// Usage: node benchmarks/fec.js [--runs 5] [--packets 100000] [--fec 4/6,8/10,16/20]
//                              [--loss random:1,burst:1:4,...] [--bin PATH] [--json]
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { ROOT } from '../harness/core/sys.js';
import { median, round } from '../harness/core/stats.js';

export const FECS = ['4/6', '8/10', '16/20'];
export const LOSSES = [
  ...[1, 2, 5, 10].map((p) => `random:${p}`),
  ...[1, 2, 5, 10].map((p) => `burst:${p}:4`),
  'gemodel:1.7:93.5',
  'burst:1:20',
];

/** Builds the `fec_rate` example of this tree; its path. */
export function buildFecRate() {
  execFileSync('cargo', ['build', '--release', '-q', '-p', 'satbench-quic-pep', '--example', 'fec_rate'], {
    cwd: ROOT,
    stdio: 'inherit',
  });
  return path.join(ROOT, 'target/release/examples/fec_rate');
}

/** Pure: a loss model as the table says it. */
export function lossLabel(loss) {
  const [kind, a, b] = loss.split(':');
  if (kind === 'random') return `random ${a} %`;
  if (kind === 'burst') return `bursts ${a} %, mean ${b} pkts`;
  return `gemodel p ${a} % r ${b} %`;
}

const METRICS = ['hop_lost_share', 'repaired_share', 'left_share', 'overhead', 'encode_mbps', 'decode_mbps'];

/** Pure: one row per (fec, loss), each metric the median of its runs. */
export function summarise(runs) {
  const groups = new Map();
  for (const r of runs) {
    const key = `${r.fec} ${r.loss}`;
    if (!groups.has(key)) groups.set(key, { fec: r.fec, loss: r.loss, runs: [] });
    groups.get(key).runs.push({ ...r, hop_lost_share: r.sources_lost / r.sources });
  }
  return [...groups.values()].map((g) => ({
    fec: g.fec,
    loss: g.loss,
    runs: g.runs.length,
    ...Object.fromEntries(METRICS.map((m) => [m, median(g.runs.map((r) => r[m]))])),
  }));
}

/** Pure: the table's lines. */
export function tableLines(rows) {
  const pct = (x, d = 2) => `${round(100 * x, d).toFixed(d)} %`;
  const cols = [
    ['fec', 5, (r) => r.fec],
    ['loss', 28, (r) => lossLabel(r.loss)],
    ['lost', 8, (r) => pct(r.hop_lost_share)],
    ['repaired', 9, (r) => pct(r.repaired_share, 1)],
    ['left', 8, (r) => pct(r.left_share, 3)],
    ['overhead', 8, (r) => pct(r.overhead, 1)],
    ['encode Mbit/s', 13, (r) => String(Math.round(r.encode_mbps))],
    ['decode Mbit/s', 13, (r) => String(Math.round(r.decode_mbps))],
  ];
  const line = (cells) => cells.map((c, i) => (i < 2 ? c.padEnd(cols[i][1]) : c.padStart(cols[i][1]))).join('  ');
  return [line(cols.map((c) => c[0])), ...rows.map((r) => line(cols.map((c) => c[2](r))))];
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values: o } = parseArgs({
    options: {
      runs: { type: 'string', default: '5' },
      packets: { type: 'string', default: '100000' },
      fec: { type: 'string', default: FECS.join(',') },
      loss: { type: 'string', default: LOSSES.join(',') },
      bin: { type: 'string' },
      json: { type: 'boolean' },
    },
  });
  const bin = o.bin ?? buildFecRate();
  const runs = [];
  for (const fec of o.fec.split(',')) {
    for (const loss of o.loss.split(',')) {
      for (let seed = 1; seed <= Number(o.runs); seed++) {
        const args = ['--fec', fec, '--loss', loss, '--packets', o.packets, '--seed', String(seed)];
        runs.push(JSON.parse(execFileSync(bin, args, { encoding: 'utf8' })));
      }
    }
  }
  const rows = summarise(runs);
  if (o.json) process.stdout.write(JSON.stringify(rows, null, 2) + '\n');
  else {
    console.log(
      `FEC codec over a simulated hop: ${o.packets} datagrams per run, MTU 1200, ` +
        `medians of ${o.runs} runs (seeds 1–${o.runs})`,
    );
    for (const l of tableLines(rows)) console.log(l);
  }
}
