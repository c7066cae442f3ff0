import assert from 'node:assert/strict';
import {
  probePlan,
  summarizeProbe,
  spread,
  idealBurstMs,
  accessAddsMs,
  accessOf,
  burstPlan,
  summarizeBurst,
} from '../../harness/testbed/probe.js';
import { configuredSummary, loadProfile, parseProfile, withDefaultLimits } from '../../harness/testbed/profiles.js';
import { formatProbe } from '../../harness/cli/testbed.js';
import { loadSourcedFigures } from '../../harness/testbed/sourced-figures.js';

describe('probe summary', () => {
  const configured = configuredSummary(loadProfile('geo', { lossPct: 1 }));

  it('plans enough time for stragglers and 1-byte ids that cannot wrap', () => {
    const plan = probePlan(configured, { rttCount: 25 });
    assert.equal(plan.rtt.count, 25);
    assert.ok(plan.rtt.timeoutMs >= 3 * 580);
    assert.ok(plan.owd.intervalMs * 256 > plan.owd.timeoutMs);
    assert.equal(plan.rate.forwardMbit, 20);
    assert.deepEqual([plan.rtt.intervalMs, plan.owd.intervalMs], [20, 10]);
    assert.deepEqual(plan.connect, { count: 20, intervalMs: 100, spreadMs: 0, timeoutMs: 2000 });
  });

  it('with a frame clock, paces probes so that they meet it at every phase', () => {
    const dvb = loadProfile('geo-dvb');
    const plan = probePlan(configuredSummary(dvb), {}, accessOf(dvb));
    // Whole milliseconds would meet a 10 ms frame at one phase, a 40 ms
    // superframe at four; 0.618 ms more steps through them.
    assert.deepEqual([plan.rtt.intervalMs, plan.owd.intervalMs], [20.618, 10.618]);
    assert.ok(plan.owd.intervalMs * 256 > plan.owd.timeoutMs);
    // Handshakes further apart than one lasts (580 ms + 10 + 40 ms of
    // frame waits), each start offset by up to the 40 ms superframe.
    assert.deepEqual(plan.connect, { count: 20, intervalMs: 720, spreadMs: 40, timeoutMs: 2000 });
  });

  it('puts medians, p99 and loss beside the configured values', () => {
    const rtt = Array.from({ length: 100 }, (_, i) => 580 + i / 100);
    const r = summarizeProbe({
      profile: 'geo',
      configured,
      backend: 'linkem',
      raw: {
        rtt: { sent: 100, received: 100, rtt_ms: rtt },
        owdForward: { sent: 200, received: 198, owd_ms: [290, 290.2, 290.4] },
        owdReturn: { sent: 200, received: 200, owd_ms: [290.1] },
        rateForward: { mbps: 19.93 },
      },
    });
    assert.equal(r.profile, 'geo');
    assert.deepEqual(Object.keys(r.configured).slice(0, 1), ['rtt_ms']);
    assert.equal(r.configured.rtt_ms, 580);
    assert.equal(r.configured.loss_pct, 1);
    assert.equal(r.measured.rtt_ms.median, 580.495);
    assert.equal(r.measured.rtt_ms.p99, 580.98); // position 0.99 × 99 = 98.01
    assert.equal(r.measured.one_way_ms.forward.median, 290.2);
    assert.equal(r.measured.one_way_ms.return.median, 290.1);
    assert.equal(r.measured.forward_mbps, 19.93);
    assert.equal(r.measured.return_mbps, null);
    assert.equal(r.measured.loss_pct, 1);
    assert.equal(r.measured.return_loss_pct, 0);
  });
});

describe('probe: access model figures', () => {
  const geoDvb = loadProfile('geo-dvb');
  const dvbConfigured = configuredSummary(geoDvb);
  // 10 ms one way, 10 Mbit/s, a 5 ms return superframe with demand
  // assignment: 1 Mbit/s CRA, grant 60 ms after the request.
  const small = withDefaultLimits(
    parseProfile(
      {
        satellite: {
          forward: { delay: '10ms', rate: '10mbit' },
          return: {
            delay: '10ms',
            rate: '10mbit',
            access: { frame: '5ms', dama: { cra: '1mbit', request_grant: '60ms', idle_release: '50ms' } },
          },
        },
        internet: { forward: { delay: '5ms' }, return: { delay: '5ms' } },
      },
      { file: 'small.json', name: 'small', readRelative: () => assert.fail('no schedule') },
    ),
  );

  it('gives the spread of a sample, and nulls for none', () => {
    const xs = Array.from({ length: 101 }, (_, i) => 300 - i); // 200 … 300, unsorted
    assert.deepEqual(spread(xs), { min: 200, p10: 210, median: 250, p90: 290, p99: 299, max: 300, n: 101 });
    assert.deepEqual(spread([]), { min: null, p10: null, median: null, p90: null, p99: null, max: null, n: 0 });
  });

  it('an ideal link delivers a burst after its one-way delay plus its bytes at the rate', () => {
    // 100 × 1200 B at 20 Mbit/s: 0.48 ms each, 48 ms in all.
    assert.deepEqual(idealBurstMs({ oneWayMs: 290, rateMbit: 20, packets: 100, packetBytes: 1200 }), {
      first: 290.48,
      last: 338,
      completion: 338,
    });
    assert.deepEqual(idealBurstMs({ oneWayMs: 5, rateMbit: null, packets: 3, packetBytes: 1200 }), {
      first: 5,
      last: 5,
      completion: 5,
    });
  });

  it('the access model adds the frame wait and, after idle, the grant less what the CRA carried', () => {
    const { forward, return: ret } = accessOf(geoDvb);
    const burst = { packets: 100, packetBytes: 1200 };
    // Forward: a 10 ms frame clock and 10 B per packet (1000 B at 20 Mbit/s = 0.4 ms).
    assert.deepEqual(accessAddsMs(forward, 20, { ...burst, afterIdle: true }), { min: 0.4, max: 10.4 });
    // Return after idle: the grant comes 560 ms (540 rounded up to 40 ms
    // frames) after the request; 59 datagrams of 1204 B started at the
    // 1 Mbit/s CRA by then (9.632 ms each, the last ends at 568.3 ms), the
    // other 41 follow at 20 Mbit/s (19.7 ms): 588 ms where an ideal link
    // takes 48, so 540 ms more, plus up to a 40 ms superframe's wait.
    assert.deepEqual(accessAddsMs(ret, 20, { ...burst, afterIdle: true }), { min: 540.034, max: 580.034 });
    // With the capacity held, only the frame wait and the headers.
    assert.deepEqual(accessAddsMs(ret, 20, burst), { min: 0.16, max: 40.16 });
    // A burst the CRA carries before the grant: all of it at the CRA.
    assert.deepEqual(accessAddsMs(ret, 20, { packets: 10, packetBytes: 1200, afterIdle: true }), {
      min: 91.52,
      max: 131.52,
    });
    // No CRA: everything waits for the grant.
    const noCra = { ...ret, dama: { ...ret.dama, cra_mbit: 0 } };
    assert.deepEqual(accessAddsMs(noCra, 20, { ...burst, afterIdle: true }), { min: 560.16, max: 600.16 });
    // Padding to whole units: 1204 B in 500 B units is 1500 B on the air.
    assert.deepEqual(accessAddsMs({ header_bytes: 4, pad_to_bytes: 500 }, 8, { packets: 1, packetBytes: 1200 }), {
      min: 0.3,
      max: 0.3,
    });
    assert.equal(accessAddsMs(null, 20, burst), null);
  });

  it('plans a burst per direction that outlasts the grant at the CRA and fits the queue', () => {
    const b = burstPlan(geoDvb, dvbConfigured, { timeoutMs: 1740 });
    assert.deepEqual(
      { ...b.return, timeoutMs: undefined },
      { packets: 100, packetBytes: 1200, idleMs: 890, timeoutMs: undefined },
      'idle: 640 ms idle_release and a margin',
    );
    assert.ok(b.return.packets * b.return.packetBytes > (0.54 * 1e6) / 8, 'longer than the grant at the CRA');
    assert.ok(b.return.timeoutMs >= 2 * (338 + 580), `${b.return.timeoutMs}`);
    assert.deepEqual(b.forward, { packets: 100, packetBytes: 1200, idleMs: 1000, timeoutMs: 1740 });
    assert.equal(burstPlan(loadProfile('geo'), configuredSummary(loadProfile('geo'))).return.idleMs, 1000);
    // The small profile's return queue holds 37.5 kB (a 30 ms RTT at
    // 10 Mbit/s): half of it is 15 datagrams, still 144 ms at the CRA.
    const s = burstPlan(small, configuredSummary(small));
    assert.deepEqual([s.return.packets, s.return.idleMs, s.forward.packets], [15, 300, 15]);
  });

  it('turns a burst into first, last, completion and the delay added to the ideal link', () => {
    const raw = {
      sent: 4,
      received: 3,
      lost: 1,
      send_ms: [0, 0.01, 0.02, 0.03],
      owd_ms: [16, 17.5, null, 19.97],
    };
    assert.deepEqual(summarizeBurst(raw, { completion: 18 }), {
      sent: 4,
      received: 3,
      first_ms: 16,
      last_ms: 19.97,
      completion_ms: 20,
      added_ms: 2,
    });
    const tailLost = summarizeBurst({ ...raw, owd_ms: [16, 30, 17, null] }, { completion: 18 });
    assert.deepEqual([tailLost.last_ms, tailLost.completion_ms, tailLost.added_ms], [null, 30.01, 12.01]);
    const none = summarizeBurst({ ...raw, received: 0, owd_ms: [null, null, null, null] }, { completion: 18 });
    assert.deepEqual([none.first_ms, none.completion_ms, none.added_ms], [null, null, null]);
  });

  it('sets connect time, one-way spread and bursts beside the configured values and the access model', () => {
    const bursts = burstPlan(geoDvb, dvbConfigured);
    const burst = (owd) => ({
      sent: 100,
      received: 100,
      send_ms: Array.from({ length: 100 }, (_, i) => i * 0.01),
      owd_ms: Array.from({ length: 100 }, (_, i) => owd + i * 0.5),
    });
    const r = summarizeProbe({
      profile: 'geo-dvb',
      configured: dvbConfigured,
      backend: 'linkem',
      raw: {
        rtt: { sent: 20, received: 20, rtt_ms: [619] },
        owdForward: { sent: 200, received: 200, owd_ms: [290, 295, 300] },
        owdReturn: { sent: 200, received: 200, owd_ms: [290, 310, 330] },
        connect: { sent: 3, connected: 3, connect_ms: [600, 612, 630] },
        burstReturn: burst(300),
        burstForward: burst(291),
      },
      linkProfile: geoDvb,
      bursts,
    });
    assert.equal(r.configured.connect_ms, 580);
    assert.deepEqual(r.configured.access_adds_ms.connect, { min: 0.006, max: 50.006 });
    assert.deepEqual(r.configured.access_adds_ms.one_way.return, { min: 0.002, max: 40.002 });
    assert.deepEqual(r.configured.access_adds_ms.burst.return, { min: 540.034, max: 580.034 });
    assert.deepEqual(r.configured.burst.return, {
      packets: 100,
      packet_bytes: 1200,
      idle_ms: 890,
      ideal_ms: { first: 290.48, last: 338, completion: 338 },
    });
    assert.deepEqual(r.measured.connect_ms, {
      min: 600,
      p10: 602.4,
      median: 612,
      p90: 626.4,
      p99: 629.64,
      max: 630,
      n: 3,
      sent: 3,
      connected: 3,
    });
    // The old keys stay: median, p99, n.
    assert.deepEqual(r.measured.one_way_ms.return, {
      min: 290,
      p10: 294,
      median: 310,
      p90: 326,
      p99: 329.6,
      max: 330,
      n: 3,
    });
    assert.deepEqual(r.measured.burst.return, {
      sent: 100,
      received: 100,
      first_ms: 300,
      last_ms: 349.5,
      completion_ms: 350.49,
      added_ms: 12.49,
    });
    const text = formatProbe({ ...r, link_stats: {} });
    assert.match(text, /TCP connect ms +580 \+0–50 +min 600 {2}p10 602.4 {2}median 612 .*\(3 of 3 connected\)/);
    assert.match(text, /one-way return ms +290 \+0–40 +min 290 {2}p10 294 .* max 330 {2}\(n 3\)/);
    assert.match(
      text,
      /burst return ms +338 \+540–580 +first 300 {2}last 349.5 {2}completion 350.49 {2}\(100 of 100\)/,
    );
    assert.match(text, /burst return added ms +540–580 +12.49/);
    assert.match(text, /burst return: 100 × 1200 B after 890 ms idle/);
  });

  it('without an access model the configured side adds nothing', () => {
    const geo = loadProfile('geo');
    const configured = configuredSummary(geo);
    const r = summarizeProbe({
      profile: 'geo',
      configured,
      backend: 'linkem',
      raw: {
        rtt: { sent: 1, received: 1, rtt_ms: [580] },
        owdForward: { sent: 1, received: 1, owd_ms: [290] },
        owdReturn: { sent: 1, received: 1, owd_ms: [290] },
      },
      linkProfile: geo,
      bursts: burstPlan(geo, configured),
    });
    assert.equal(r.configured.access_adds_ms, null);
    assert.equal(r.measured.connect_ms, undefined, 'not measured, not shown');
    assert.equal(r.measured.burst, undefined);
    const text = formatProbe(r);
    assert.match(text, /one-way forward ms +290 +min 290 /);
    assert.doesNotMatch(text, /burst|connect/);
  });

  it('with --duration the RTT series is summarised beside the slot process configured', () => {
    const sl = loadProfile('starlink');
    const configured = configuredSummary(sl);
    assert.equal(probePlan(configured, { durationS: 120 }).rtt.count, 6000);
    // a boundary every 2 s (100 echoes): 3 echoes lost and 30 ms more for 10
    const series = Array.from({ length: 1000 }, (_, i) => (i % 100 < 3 ? null : i % 100 < 13 ? 70 : 40 + (i % 3)));
    const raw = {
      rtt: { sent: 1000, received: 970, rtt_ms: series.filter((x) => x !== null), series_ms: series, interval_ms: 20 },
      owdForward: { sent: 1, received: 1, owd_ms: [21] },
      owdReturn: { sent: 1, received: 1, owd_ms: [21] },
    };
    const r = summarizeProbe({
      profile: 'starlink',
      configured,
      backend: 'linkem',
      raw,
      linkProfile: sl,
      series: true,
    });
    assert.equal(r.configured.slots.period_s, 15);
    assert.equal(r.measured.rtt_series.period_s, 2);
    // a step shows an echo or two before it (the medians either side)
    const phase = r.measured.rtt_series.boundary_phase_s;
    assert.ok(Math.min(phase, 2 - phase) <= 0.06, `${phase}`);
    const text = formatProbe(r);
    assert.match(text, /handover period s +15 +2\n/);
    assert.doesNotMatch(text, /outages/, 'starlink has none configured, and none were seen');
    assert.match(text, /boundary spike ms +30 +\d/);
    assert.match(text, /loss % 500 ms after +10\.04 +1[12](\.\d+)? +\(\d+ of \d+; elsewhere 0\)/);
    // the slot's RTT and the successive jitter beside what the profile configures
    assert.match(text, /slot RTT ms +30–54 +41–41, largest step 41 → 41\n/);
    assert.match(text, /successive jitter ms +\d/);
    // without --duration no series summary
    assert.equal(
      summarizeProbe({ profile: 'starlink', configured, backend: 'linkem', raw }).measured.rtt_series,
      undefined,
    );
  });

  it("an in-motion profile's outages beside those the series shows", () => {
    const motion = loadProfile('starlink-motion');
    // a boundary every 15 s (750 echoes) losing 3 echoes, and an outage of 0.5 s at 40 s
    const series = Array.from({ length: 6000 }, (_, i) =>
      i % 750 < 3 || (i >= 2000 && i < 2025) ? null : i % 750 < 13 ? 70 : 40 + (i % 3),
    );
    const raw = {
      rtt: { sent: 6000, received: 5944, rtt_ms: series.filter((x) => x !== null), series_ms: series, interval_ms: 20 },
      owdForward: { sent: 1, received: 1, owd_ms: [21] },
      owdReturn: { sent: 1, received: 1, owd_ms: [21] },
    };
    const args = { profile: 'starlink-motion', configured: configuredSummary(motion), backend: 'linkem', raw };
    const r = summarizeProbe({ ...args, linkProfile: motion, series: true });
    assert.equal(r.measured.rtt_series.period_s, 15);
    const text = formatProbe(r);
    assert.match(text, /outages per min +1\.929 +0\.5  \(1 seen\)\n/);
    assert.match(text, /outage ms median \/ max +1100 \/ 2000 +500 \/ 500\n/);
    assert.match(text, /outage loss % +3\.537 +0\.417\n/);
  });

  it('sets the published figures of a profile built from them between configured and measured, with their citations', () => {
    const sl = loadProfile('starlink');
    const series = Array.from({ length: 3000 }, (_, i) => (i % 750 < 3 ? null : i % 750 < 13 ? 70 : 40 + (i % 3)));
    const raw = {
      rtt: { sent: 3000, received: 2988, rtt_ms: series.filter((x) => x !== null), series_ms: series, interval_ms: 20 },
      owdForward: { sent: 1, received: 1, owd_ms: [21] },
      owdReturn: { sent: 1, received: 1, owd_ms: [21] },
      rateForward: { mbps: 99.8 },
    };
    const args = { profile: 'starlink', configured: configuredSummary(sl), backend: 'linkem', raw, linkProfile: sl };
    const r = summarizeProbe({ ...args, series: true, sourced: loadSourcedFigures('starlink') });
    assert.equal(r.sourced.file, 'reference/starlink-measurements.json');
    const text = formatProbe(r);
    assert.match(text, /configured +sourced +measured\n/);
    assert.match(text, /handover period s +15 +15 \[huston2024\] +15\n/);
    assert.match(text, /boundary spike ms +30 +≥ 30 \[huston2024\] +\d/);
    assert.match(text, /loss % 500 ms after +10\.04 +\d+(\.\d+)?  \(\d+ of \d+; elsewhere 0\)\n/);
    assert.match(text, /peak loss % in 100 ms +42\.39 +≤ 50 \[kassem2022\] +\d/);
    assert.match(text, /forward Mbit\/s +100 +10–370 \[huston2024\] +99\.8\n/);
    assert.match(text, /successive jitter ms +6\.7 \[huston2024\] +\d/);
    assert.match(text, /boundary at s +12 past min +12, 27, 42, 57 past min \[tanveer2023\] \*/);
    // each source cited once, after the table; the unconfirmed figure says so
    assert.match(text, /\n {4}\[huston2024\] G\. Huston, "A transport protocol's view of Starlink", APNIC Blog/);
    assert.match(text, /\n {4}\[kassem2022\] M\. M\. Kassem/);
    assert.match(text, /\* boundary_offsets_in_minute_s: not confirmed/);
    // a profile without published figures: no such column
    assert.doesNotMatch(formatProbe(summarizeProbe({ ...args, series: true })), /sourced/);
  });
});
