// `satbench testbed probe`: measure the testbed that was built (RTT, one-way
// delay per direction, loss, throughput, TCP connect time, a burst after
// idle per direction) with satprobe, and set what was measured beside what
// the profile configured and what its satellite access model would add.
import { run, binPath } from '../core/sys.js';
import { ADDRESSES } from './addressing.js';
import { configuredSummary } from './profiles.js';
import { median, quantile, round } from '../core/stats.js';
import { analyzeRttSeries, configuredSlots } from './rtt-series.js';
import { loadSourcedFigures } from './sourced-figures.js';

// A rate probe sends this much faster than the link so the link's queue,
// not the sender, sets the pace.
const RATE_OVERDRIVE = 1.15;
// A burst after idle: 100 datagrams of 1200 bytes (IP), 120 kB. On a
// demand-assigned return link the grant has to matter: the burst must
// outlast the request-grant delay at the constant rate. geo-dvb's 1 Mbit/s
// CRA carries 540 ms × 1 Mbit/s ≈ 67 kB before its grant; 120 kB would take
// 960 ms at the CRA, so the burst's tail waits for the grant and shows it.
// The same burst on a link without an access model is the control (48 ms at
// 20 Mbit/s). Capped so it fits in half of the queue (a burst the queue
// drops measures loss, not delay).
const BURST_PACKETS = 100;
const BURST_PACKET_BYTES = 1200;
// Silence before a burst: without demand assignment any will do; with it,
// longer than the access model's idle_release, so that the terminal has
// given its capacity back and has to ask again. The link saw the step
// before's last packet before satprobe's silence began, so the margin only
// has to beat timer slop; 250 ms is ample.
const BURST_IDLE_MS = 1000;
const BURST_IDLE_MARGIN_MS = 250;
// IP sizes: a TCP SYN or SYN-ACK with options (MSS, SACK, timestamps, window
// scale), and owd's one-byte datagram.
const SYN_BYTES = 60;
const OWD_BYTES = 29;
const DIRS = ['forward', 'return'];
const GOLDEN_MS = 0.618;
// A time series (--duration): one echo every this many ms.
const SERIES_INTERVAL_MS = 20;

// `{count: 5, 'interval-ms': 20}` → satprobe's ['--count', '5', '--interval-ms', '20'].
const flags = (o) => Object.entries(o).flatMap(([k, v]) => [`--${k}`, String(v)]);

async function satprobe(fromNs, args, { runsMs = 0 } = {}) {
  // runsMs may be fractional (a frame clock adds 0.618 ms per echo); child_process takes whole ms
  // Run inside the sender's namespace so `cleanup` finds it if we are killed.
  const r = await run('ip', ['netns', 'exec', fromNs, binPath('satprobe'), ...args], {
    timeoutMs: 120000 + Math.ceil(runsMs),
  });
  return JSON.parse(r.stdout);
}

// Pure: what to run, from the configured summary, the caller's options and
// the satellite link's access model per direction (accessOf).
//
// A frame clock meets probes paced by a whole number of milliseconds at one
// phase or a few (owd every 10 ms on a 10 ms frame: always the same wait),
// which hides the spread the frame adds. With a frame clock, the rtt and
// owd intervals get 0.618 ms more (the golden ratio's fraction: the phases
// step through the frame evenly), and the handshakes are spaced by more
// than one lasts, each start offset by up to the longest frame
// (satprobe connect --spread-ms).
export function probePlan(
  configured,
  { rttCount = 20, durationS = null, owdCount = 200, rateDurationMs = 3000, connectCount = 20 } = {},
  access = { forward: null, return: null },
) {
  const worstRtt = configured.rtt_ms;
  const timeoutMs = Math.max(1000, Math.ceil(3 * worstRtt));
  const frames = DIRS.map((d) => access[d]?.frame_ms ?? 0);
  const unlock = Math.max(...frames) > 0 ? GOLDEN_MS : 0;
  const owdInterval = Math.max(10, Math.ceil(timeoutMs / 250)) + unlock; // 1-byte ids wrap at 256
  // One handshake at a time. Without a frame clock they may follow each
  // other back to back (a connect() lasts an RTT). A timeout lets a SYN
  // lost once be resent (after 1 s) and still count.
  const connect = unlock
    ? {
        intervalMs: Math.ceil(configured.rtt_ms + frames[0] + frames[1] + Math.max(...frames) + 50),
        spreadMs: Math.max(...frames),
      }
    : { intervalMs: 100, spreadMs: 0 };
  return {
    rtt: durationS
      ? {
          count: Math.round((durationS * 1000) / SERIES_INTERVAL_MS),
          intervalMs: SERIES_INTERVAL_MS + unlock,
          timeoutMs,
        }
      : { count: rttCount, intervalMs: 20 + unlock, timeoutMs },
    owd: { count: owdCount, intervalMs: owdInterval, timeoutMs },
    connect: { count: connectCount, ...connect, timeoutMs: Math.max(timeoutMs, 2000) },
    rate: {
      durationMs: rateDurationMs,
      timeoutMs,
      forwardMbit: configured.forward_mbps,
      returnMbit: configured.return_mbps,
    },
  };
}

// Pure: the satellite link's access model per direction (linkem's keys,
// see profiles.js), null where a direction has none.
export function accessOf(profile) {
  const sat = profile.links.satellite;
  return Object.fromEntries(DIRS.map((d) => [d, sat[d].access ?? null]));
}

// Pure: how many datagrams of `airBytes` fit in half of the smallest queue
// of the rate-limited links of direction `dir` (Infinity if none limits).
function halfQueuePackets(profile, dir, airBytes) {
  let n = Infinity;
  for (const link of Object.values(profile.links)) {
    const imp = link[dir];
    if (!imp.rate_mbit || !imp.limit) continue; // nothing queues
    const fit = imp.limit.bytes ? imp.limit.bytes / airBytes : imp.limit.packets;
    n = Math.min(n, Math.floor(fit / 2));
  }
  return n;
}

// Pure: a burst after idle per direction, from the profile (its access
// model and queues) and its configured summary.
export function burstPlan(profile, configured, { timeoutMs = 1000 } = {}) {
  const access = accessOf(profile);
  return Object.fromEntries(
    DIRS.map((dir) => {
      const a = access[dir];
      const packetBytes = BURST_PACKET_BYTES;
      const packets = Math.max(1, Math.min(BURST_PACKETS, halfQueuePackets(profile, dir, airBytes(a, packetBytes))));
      const idleMs = a?.dama ? Math.ceil(a.dama.idle_release_ms + BURST_IDLE_MARGIN_MS) : BURST_IDLE_MS;
      // Long enough for the whole burst to come in, even at the CRA alone.
      const ideal = idealBurstMs({ ...pathOf(configured, dir), packets, packetBytes });
      const adds = accessAddsMs(a, profile.links.satellite[dir].rate_mbit, { packets, packetBytes, afterIdle: true });
      const expectMs = ideal.completion + (adds?.max ?? 0);
      return [dir, { packets, packetBytes, idleMs, timeoutMs: Math.max(timeoutMs, Math.ceil(2 * expectMs)) }];
    }),
  );
}

// The configured one-way delay and bottleneck rate of a direction.
function pathOf(configured, dir) {
  return { oneWayMs: configured.one_way_ms[dir], rateMbit: configured[`${dir}_mbps`] };
}

// Bytes on the air for an IP packet of `bytes` (encapsulation header,
// padding to whole units), as linkem's access stage counts them.
function airBytes(access, bytes) {
  const n = bytes + (access?.header_bytes ?? 0);
  const unit = access?.pad_to_bytes;
  return unit ? Math.ceil(n / unit) * unit : n;
}

// Pure: a burst of `packets` datagrams of `packetBytes` (IP) sent at once
// over an ideal link (base one-way delay, serialization at the configured
// rate, store and forward once): when the first and the last arrive after
// the first send, the last arrival being the completion.
export function idealBurstMs({ oneWayMs, rateMbit, packets, packetBytes }) {
  const ser = rateMbit ? (packetBytes * 8) / (rateMbit * 1000) : 0; // ms per datagram
  return { first: oneWayMs + ser, last: oneWayMs + packets * ser, completion: oneWayMs + packets * ser };
}

// Pure: what linkem's access model (netem/linkem/src/access.rs) adds to
// the completion of `packets` datagrams of `packetBytes` that arrive
// together, over the ideal link at `rateMbit` (the direction's rate); null
// without an access model. {min, max}: the wait for the next frame boundary
// is anywhere in [0, frame). Transmission starts at that boundary b, with
// the encapsulated (air) size. With demand assignment and `afterIdle` (the
// terminal had released its capacity), the request goes up at b and the
// link rate is granted from b + request_grant rounded up to a frame
// boundary; datagrams starting before then go at the CRA, the rest at the
// link rate. Without `afterIdle` the grant is taken as held.
export function accessAddsMs(access, rateMbit, { packets, packetBytes, afterIdle = false }) {
  if (!access) return null;
  const frame = access.frame_ms ?? 0;
  const air = airBytes(access, packetBytes);
  const msAt = (mbit) => (mbit ? (air * 8) / (mbit * 1000) : 0); // ms per datagram
  const ideal = rateMbit ? (packets * packetBytes * 8) / (rateMbit * 1000) : 0;
  let busy = packets * msAt(rateMbit);
  const dama = access.dama;
  if (dama && afterIdle) {
    const grant = frame ? Math.ceil(dama.request_grant_ms / frame) * frame : dama.request_grant_ms;
    if (!(dama.cra_mbit > 0)) busy = grant + packets * msAt(rateMbit);
    else {
      const atCra = msAt(dama.cra_mbit);
      const beforeGrant = Math.min(packets, Math.ceil(grant / atCra));
      busy =
        beforeGrant === packets
          ? packets * atCra
          : Math.max(grant, beforeGrant * atCra) + (packets - beforeGrant) * msAt(rateMbit);
    }
  }
  const added = busy - ideal;
  return { min: round(added), max: round(added + frame) };
}

// Pure: order statistics of a sample (nulls when it is empty).
export function spread(xs) {
  const q = (p) => round(quantile(xs, p));
  return { min: q(0), p10: q(0.1), median: q(0.5), p90: q(0.9), p99: q(0.99), max: q(1), n: xs.length };
}

// Pure: satprobe burst's output as figures: the first and the last
// datagram's one-way delay, the completion (first send to last arrival),
// and what the completion took beyond the ideal link's (`ideal`, from
// idealBurstMs).
export function summarizeBurst(raw, ideal) {
  const arrivals = raw.owd_ms.flatMap((d, i) => (d === null ? [] : [raw.send_ms[i] + d]));
  const completion = arrivals.length ? Math.max(...arrivals) - raw.send_ms[0] : null;
  return {
    sent: raw.sent,
    received: raw.received,
    first_ms: round(raw.owd_ms[0] ?? null),
    last_ms: round(raw.owd_ms.at(-1) ?? null),
    completion_ms: round(completion),
    added_ms: completion === null ? null : round(completion - ideal.completion),
  };
}

// Pure: the configured side of the connect and burst figures (the ideal
// link's), and what the satellite access model adds to them and to the
// one-way delay (`access_adds_ms`, null without an access model).
function configuredExtras(profile, configured, bursts) {
  const access = accessOf(profile);
  const adds = (dir, o) => accessAddsMs(access[dir], profile.links.satellite[dir].rate_mbit, o);
  const perDir = (f) => Object.fromEntries(DIRS.map((d) => [d, f(d)]));
  const syn = { packets: 1, packetBytes: SYN_BYTES };
  // The SYN goes up the return link, the SYN-ACK down the forward link.
  const [synAck, synUp] = [adds('forward', syn), adds('return', syn)];
  const addsMs = {
    connect: {
      min: round((synAck?.min ?? 0) + (synUp?.min ?? 0)),
      max: round((synAck?.max ?? 0) + (synUp?.max ?? 0)),
    },
    one_way: perDir((d) => adds(d, { packets: 1, packetBytes: OWD_BYTES })),
    burst: perDir((d) => bursts && adds(d, { ...bursts[d], afterIdle: true })),
  };
  return {
    connect_ms: round(configured.rtt_ms),
    ...(bursts && {
      burst: perDir((d) => {
        const b = bursts[d];
        const ideal = idealBurstMs({ ...pathOf(configured, d), ...b });
        return {
          packets: b.packets,
          packet_bytes: b.packetBytes,
          idle_ms: b.idleMs,
          ideal_ms: { first: round(ideal.first), last: round(ideal.last), completion: round(ideal.completion) },
        };
      }),
    }),
    access_adds_ms: access.forward || access.return ? addsMs : null,
  };
}

// Pure: the probe's JSON from satprobe's raw outputs. `profile` (the
// loaded profile) and `bursts` (burstPlan) give the configured side of the
// connect and burst figures; without them those are left out. `sourced`:
// the published figures the profile is built from (sourced-figures.js), or
// null.
export function summarizeProbe({
  profile,
  configured,
  backend,
  raw,
  linkProfile = null,
  bursts = null,
  series = false,
  sourced = null,
}) {
  const lossPct = (o) => (o.sent ? round((100 * (o.sent - o.received)) / o.sent, 3) : null);
  const dist = (xs) => ({ median: round(median(xs)), p99: round(quantile(xs, 0.99)), n: xs.length });
  const extra = linkProfile ? configuredExtras(linkProfile, configured, bursts) : null;
  const slots = linkProfile ? configuredSlots(linkProfile) : null;
  const measured = {};
  // With --duration: the series read as a slot process would shape it.
  if (series) measured.rtt_series = analyzeRttSeries(raw.rtt.series_ms, raw.rtt.interval_ms);
  if (raw.connect)
    measured.connect_ms = {
      ...spread(raw.connect.connect_ms),
      sent: raw.connect.sent,
      connected: raw.connect.connected,
    };
  if (raw.burstForward && raw.burstReturn && extra?.burst) {
    measured.burst = Object.fromEntries(
      DIRS.map((d) => [
        d,
        summarizeBurst(raw[d === 'forward' ? 'burstForward' : 'burstReturn'], extra.burst[d].ideal_ms),
      ]),
    );
  }
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
      // what the satellite link's loss is drawn per (packet, or frame_loss)
      ...(configured.loss_unit ? { loss_unit: configured.loss_unit } : {}),
      // the directions --loss applies to (satellite.loss_on)
      ...(configured.loss_on ? { loss_on: configured.loss_on } : {}),
      ...(extra ?? {}),
      ...(slots ? { slots } : {}),
    },
    ...(sourced ? { sourced } : {}),
    measured: {
      rtt_ms: { ...dist(raw.rtt.rtt_ms), sent: raw.rtt.sent, received: raw.rtt.received },
      one_way_ms: { forward: spread(raw.owdForward.owd_ms), return: spread(raw.owdReturn.owd_ms) },
      ...measured,
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
  const plan = probePlan(configured, options, accessOf(tb.profile));
  const bursts = burstPlan(tb.profile, configured, { timeoutMs: plan.rtt.timeoutMs });
  const { client, server } = tb.ns;
  const common = (from, to, addr, timeoutMs) =>
    flags({ 'from-netns': from, 'to-netns': to, 'to-addr': addr, 'timeout-ms': timeoutMs });
  const toServer = (t) => common(client, server, ADDRESSES.server, t);
  const toClient = (t) => common(server, client, ADDRESSES.client, t);
  const raw = {};
  onStep(`rtt: ${plan.rtt.count} echoes every ${plan.rtt.intervalMs} ms`);
  const paced = ({ count, intervalMs }) => flags({ count, 'interval-ms': intervalMs });
  const spreadFlags = plan.connect.spreadMs ? flags({ 'spread-ms': plan.connect.spreadMs }) : [];
  raw.rtt = await satprobe(client, ['rtt', ...toServer(plan.rtt.timeoutMs), ...paced(plan.rtt)], {
    runsMs: plan.rtt.count * plan.rtt.intervalMs,
  });
  for (const [key, from, args] of [
    ['owdForward', server, toClient],
    ['owdReturn', client, toServer],
  ]) {
    onStep(
      `one-way delay ${key === 'owdForward' ? 'forward' : 'return'}: ${plan.owd.count} datagrams every ${plan.owd.intervalMs} ms`,
    );
    raw[key] = await satprobe(from, ['owd', ...args(plan.owd.timeoutMs), ...paced(plan.owd)]);
  }
  onStep(`TCP connect: ${plan.connect.count} handshakes, one at a time, ${plan.connect.intervalMs} ms apart or more`);
  raw.connect = await satprobe(client, [
    'connect',
    ...toServer(plan.connect.timeoutMs),
    ...paced(plan.connect),
    ...spreadFlags,
  ]);
  // The return direction first: it is where demand assignment acts.
  for (const [key, dir, from, args] of [
    ['burstReturn', 'return', client, toServer],
    ['burstForward', 'forward', server, toClient],
  ]) {
    const b = bursts[dir];
    onStep(`burst ${dir}: ${b.packets} × ${b.packetBytes} B after ${b.idleMs} ms idle`);
    raw[key] = await satprobe(from, [
      'burst',
      ...args(b.timeoutMs),
      ...flags({ packets: b.packets, 'packet-bytes': b.packetBytes, 'idle-ms': b.idleMs }),
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
      ...flags({ mbit: mbit * RATE_OVERDRIVE, 'duration-ms': plan.rate.durationMs }),
    ]);
  }
  return summarizeProbe({
    profile: tb.profile.name,
    configured,
    backend: tb.backend,
    raw,
    linkProfile: tb.profile,
    bursts,
    series: Boolean(options.durationS),
    sourced: loadSourcedFigures(tb.profile.name),
  });
}
