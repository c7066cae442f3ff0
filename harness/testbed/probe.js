// `satbench testbed probe`: measure the testbed that was built (RTT, one-way
// delay per direction, loss, throughput) with satprobe, and set what was
// measured beside what the profile configured.
import { run, binPath } from '../core/sys.js';
import { ADDRESSES } from './addressing.js';
import { configuredSummary } from './profiles.js';
import { median, quantile, round } from '../core/stats.js';

// A rate probe sends this much faster than the link so the link's queue,
// not the sender, sets the pace.
const RATE_OVERDRIVE = 1.15;

async function satprobe(fromNs, args) {
  // Run inside the sender's namespace so `cleanup` finds it if we are killed.
  const r = await run('ip', ['netns', 'exec', fromNs, binPath('satprobe'), ...args], { timeoutMs: 120000 });
  return JSON.parse(r.stdout);
}

// Pure: what to run, from the configured summary and the caller's options.
export function probePlan(configured, { rttCount = 20, owdCount = 200, rateDurationMs = 3000 } = {}) {
  const worstRtt = configured.rtt_ms;
  const timeoutMs = Math.max(1000, Math.ceil(3 * worstRtt));
  const owdInterval = Math.max(10, Math.ceil(timeoutMs / 250)); // 1-byte ids wrap at 256
  return {
    rtt: { count: rttCount, intervalMs: 20, timeoutMs },
    owd: { count: owdCount, intervalMs: owdInterval, timeoutMs },
    rate: {
      durationMs: rateDurationMs,
      timeoutMs,
      forwardMbit: configured.forward_mbps,
      returnMbit: configured.return_mbps,
    },
  };
}

// Pure: the probe's JSON from satprobe's raw outputs.
export function summarizeProbe({ profile, configured, backend, raw }) {
  const lossPct = (o) => (o.sent ? round((100 * (o.sent - o.received)) / o.sent, 3) : null);
  const dist = (xs) => ({ median: round(median(xs)), p99: round(quantile(xs, 0.99)), n: xs.length });
  return {
    profile,
    link: backend,
    configured: {
      rtt_ms: round(configured.rtt_ms),
      one_way_ms: { forward: round(configured.one_way_ms.forward), return: round(configured.one_way_ms.return) },
      forward_mbps: configured.forward_mbps,
      return_mbps: configured.return_mbps,
      loss_pct: round(configured.loss_pct),
      return_loss_pct: round(configured.return_loss_pct),
    },
    measured: {
      rtt_ms: { ...dist(raw.rtt.rtt_ms), sent: raw.rtt.sent, received: raw.rtt.received },
      one_way_ms: { forward: dist(raw.owdForward.owd_ms), return: dist(raw.owdReturn.owd_ms) },
      forward_mbps: raw.rateForward ? round(raw.rateForward.mbps) : null,
      return_mbps: raw.rateReturn ? round(raw.rateReturn.mbps) : null,
      loss_pct: lossPct(raw.owdForward),
      return_loss_pct: lossPct(raw.owdReturn),
      loss_samples: { forward: raw.owdForward.sent, return: raw.owdReturn.sent },
    },
  };
}

// Measures a built testbed (see testbed.js). `onStep` reports progress.
export async function probeTestbed(tb, options = {}, onStep = () => {}) {
  const configured = configuredSummary(tb.profile);
  const plan = probePlan(configured, options);
  const { client, server } = tb.ns;
  const common = (from, to, addr, timeoutMs) => [
    '--from-netns',
    from,
    '--to-netns',
    to,
    '--to-addr',
    addr,
    '--timeout-ms',
    String(timeoutMs),
  ];
  const toServer = (t) => common(client, server, ADDRESSES.server, t);
  const toClient = (t) => common(server, client, ADDRESSES.client, t);
  const raw = {};
  onStep(`rtt: ${plan.rtt.count} echoes`);
  raw.rtt = await satprobe(client, [
    'rtt',
    ...toServer(plan.rtt.timeoutMs),
    '--count',
    String(plan.rtt.count),
    '--interval-ms',
    String(plan.rtt.intervalMs),
  ]);
  for (const [key, from, args] of [
    ['owdForward', server, toClient],
    ['owdReturn', client, toServer],
  ]) {
    onStep(
      `one-way delay ${key === 'owdForward' ? 'forward' : 'return'}: ${plan.owd.count} datagrams every ${plan.owd.intervalMs} ms`,
    );
    raw[key] = await satprobe(from, [
      'owd',
      ...args(plan.owd.timeoutMs),
      '--count',
      String(plan.owd.count),
      '--interval-ms',
      String(plan.owd.intervalMs),
    ]);
  }
  for (const [key, from, args, mbit] of [
    ['rateForward', server, toClient, plan.rate.forwardMbit],
    ['rateReturn', client, toServer, plan.rate.returnMbit],
  ]) {
    if (!mbit) continue; // no rate limit configured: nothing to check against
    onStep(
      `throughput ${key === 'rateForward' ? 'forward' : 'return'}: ${plan.rate.durationMs / 1000} s at ${round(mbit * RATE_OVERDRIVE, 1)} Mbit/s`,
    );
    raw[key] = await satprobe(from, [
      'rate',
      ...args(plan.rate.timeoutMs),
      '--mbit',
      String(mbit * RATE_OVERDRIVE),
      '--duration-ms',
      String(plan.rate.durationMs),
    ]);
  }
  return summarizeProbe({ profile: tb.profile.name, configured, backend: tb.backend, raw });
}
