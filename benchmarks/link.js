#!/usr/bin/env node
// npm run bench:link — how faithful and how cheap the linkem emulator is.
// For each rate it builds a testbed whose satellite link has that rate and
// 25 ms one way, measures across that one link (gw to st, the forward
// direction, so only one linkem and no forwarding is in the path) and
// prints, as medians over --runs runs:
//   delay error   measured minus expected one-way delay (median, p99) of
//                 1-byte datagrams on an idle link; expected = the
//                 configured delay plus the datagram's serialization time
//   rate          what a UDP stream 15 % faster than the link received
//   loss          1 % configured, a stream at half the rate (no queue drops),
//                 measured with its binomial 99 % interval
//   CPU           of the satellite link's linkem while it carried the stream
// Usage: node benchmarks/link.js [--rates 20,50,250] [--runs 3] [--json]
import fs from 'node:fs';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { createTestbed } from '../harness/testbed/testbed.js';
import { installSignalHandlers } from '../harness/testbed/teardown.js';
import { parseProfile, withDefaultLimits } from '../harness/testbed/profiles.js';
import { run, binPath, requireNetAdmin } from '../harness/core/sys.js';
import { LINK_PLAN } from '../harness/testbed/addressing.js';
import { median, quantile, wilsonInterval, round } from '../harness/core/stats.js';

const { values: opts } = parseArgs({
  options: {
    rates: { type: 'string', default: '20,50,250' },
    runs: { type: 'string', default: '3' },
    json: { type: 'boolean' },
  },
});
const rates = opts.rates.split(',').map(Number);
const runs = Number(opts.runs);
const ONE_WAY_MS = 25;
const LOSS_PCT = 1;
const CLK_TCK = 100; // USER_HZ: /proc/PID/stat counts CPU time in these
const OWD_IP_BYTES = 29; // a 1-byte UDP datagram
const SAT = LINK_PLAN.find((l) => l.name === 'sat');

function profileFor(rate, lossPct) {
  const dir = { delay: ONE_WAY_MS, rate: `${rate}mbit`, ...(lossPct ? { loss: lossPct } : {}) };
  return withDefaultLimits(
    parseProfile(
      { satellite: { forward: dir, return: { ...dir } } },
      { file: `bench-link ${rate} Mbit/s`, name: `bench-${rate}`, readRelative: null },
    ),
  );
}

async function satprobe(tb, args) {
  const common = [
    '--from-netns',
    tb.ns[SAT.b],
    '--to-netns',
    tb.ns[SAT.a],
    '--to-addr',
    SAT.aAddr,
    '--timeout-ms',
    '1000',
  ];
  const r = await run('ip', ['netns', 'exec', tb.ns[SAT.b], binPath('satprobe'), ...args, ...common], {
    timeoutMs: 60000,
  });
  return JSON.parse(r.stdout);
}

function cpuSeconds(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / CLK_TCK; // utime + stime
}

async function once(rate) {
  const out = {};
  let tb = await createTestbed({ profile: profileFor(rate, 0), link: 'linkem', seed: 1 });
  try {
    const owd = await satprobe(tb, ['owd', '--count', '1000', '--interval-ms', '5']);
    const expected = ONE_WAY_MS + (OWD_IP_BYTES * 8) / (rate * 1000);
    const err = owd.owd_ms.map((d) => d - expected);
    out.delayErrMedian = median(err);
    out.delayErrP99 = quantile(err, 0.99);
    const pid = tb.state.processes.find((p) => p.role === 'linkem-sat').pid;
    const cpu0 = cpuSeconds(pid);
    const t0 = process.hrtime.bigint();
    const flood = await satprobe(tb, ['rate', '--mbit', String(rate * 1.15), '--duration-ms', '5000']);
    const wall = Number(process.hrtime.bigint() - t0) / 1e9;
    out.cpuCores = (cpuSeconds(pid) - cpu0) / wall;
    out.rateMbps = flood.mbps;
  } finally {
    await tb.destroy();
  }
  tb = await createTestbed({ profile: profileFor(rate, LOSS_PCT), link: 'linkem', seed: 1 });
  try {
    const r = await satprobe(tb, ['rate', '--mbit', String(rate * 0.5), '--duration-ms', '5000']);
    out.lossSent = r.sent_packets;
    out.lossLost = r.sent_packets - r.received_packets;
  } finally {
    await tb.destroy();
  }
  return out;
}

requireNetAdmin('bench:link');
// a signal tears down the testbed being used (the process ends with this script)
installSignalHandlers();
const results = [];
for (const rate of rates) {
  const samples = [];
  for (let i = 0; i < runs; i++) {
    process.stderr.write(`bench:link ${rate} Mbit/s, run ${i + 1} of ${runs}\n`);
    samples.push(await once(rate));
  }
  const med = (k) => median(samples.map((s) => s[k]));
  const sent = samples.reduce((a, s) => a + s.lossSent, 0);
  const lost = samples.reduce((a, s) => a + s.lossLost, 0);
  const [lo, hi] = wilsonInterval(lost, sent, 2.576);
  results.push({
    rate_mbit: rate,
    runs,
    delay_error_ms: { median: round(med('delayErrMedian'), 4), p99: round(med('delayErrP99'), 4) },
    rate_mbps: round(med('rateMbps'), 3),
    rate_error_pct: round((med('rateMbps') / rate - 1) * 100, 2),
    loss: {
      configured_pct: LOSS_PCT,
      measured_pct: round((100 * lost) / sent, 3),
      ci99_pct: [round(100 * lo, 3), round(100 * hi, 3)],
      packets: sent,
      configured_inside_ci: lo * 100 <= LOSS_PCT && LOSS_PCT <= hi * 100,
    },
    cpu_cores: round(med('cpuCores'), 3),
  });
}
if (opts.json) {
  process.stdout.write(
    JSON.stringify({ machine: { cpus: os.cpus().length, kernel: os.release() }, results }, null, 2) + '\n',
  );
} else {
  const rows = [
    [
      'rate',
      'delay err median',
      'delay err p99',
      'achieved',
      'rate err',
      'loss (1 % set)',
      '99 % interval',
      'CPU (cores)',
    ],
  ];
  for (const r of results) {
    rows.push([
      `${r.rate_mbit} Mbit/s`,
      `${r.delay_error_ms.median} ms`,
      `${r.delay_error_ms.p99} ms`,
      `${r.rate_mbps} Mbit/s`,
      `${r.rate_error_pct} %`,
      `${r.loss.measured_pct} % of ${r.loss.packets}`,
      `[${r.loss.ci99_pct.join(', ')}] %`,
      String(r.cpu_cores),
    ]);
  }
  const widths = rows[0].map((_, i) => Math.max(...rows.map((row) => row[i].length)));
  process.stdout.write(
    `linkem, medians over ${runs} runs per rate (${os.cpus().length} CPUs, kernel ${os.release()})\n`,
  );
  for (const row of rows) process.stdout.write(row.map((c, i) => c.padEnd(widths[i])).join('  ') + '\n');
}
