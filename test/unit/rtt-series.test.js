import assert from 'node:assert/strict';
import {
  analyzeRttSeries,
  changeEvents,
  configuredSlots,
  outageRuns,
  peakLossPct,
  periodLag,
  successiveJitter,
} from '../../harness/testbed/rtt-series.js';
import { loadProfile } from '../../harness/testbed/profiles.js';
import { rng } from '../../harness/core/stats.js';

// A synthetic probe series of a slot process: every `periodS` a new base
// RTT, `spikeMs` more for 300 ms after each boundary, each probe lost with
// `lossP` in the first 100 ms, normal jitter of `jitterMs`, one probe every
// 20 ms for `durationS`; the first boundary at `phaseS`; every probe lost
// in `outages` ([[fromS, lengthS], …]).
function slotSeries({
  seed,
  periodS = 15,
  phaseS = 3.2,
  durationS = 120,
  spikeMs = 30,
  lossP = 0.51,
  jitterMs = 5.6,
  outages = [],
}) {
  const r = rng(seed);
  const normal = () => Math.sqrt(-2 * Math.log(r() + 1e-12)) * Math.cos(2 * Math.PI * r());
  const bases = Array.from({ length: 100 }, () => 30 + 24 * r());
  const out = [];
  for (let i = 0; i < (durationS * 1000) / 20; i++) {
    const t = (i * 20) / 1000;
    const slot = Math.floor((t - phaseS) / periodS) + 1;
    const into = t - phaseS - (slot - 1) * periodS;
    if (into < 0.1 && r() < lossP) out.push(null);
    else if (outages.some(([from, length]) => t >= from && t < from + length)) out.push(null);
    else out.push(bases[slot] + (into < 0.3 ? spikeMs : 0) + jitterMs * normal());
  }
  return out;
}

// Echoes over the starlink profile as linkem treats them: the request
// meets the return link's slot stage as it is sent (loss burst 0.3 for
// 100 ms after a boundary, base delay 10-22 ms per slot, +15 ms for 300 ms,
// normal jitter 4 ms), the reply the forward link's after the way up and
// 5 + 5 ms of ground links; each direction delivers in order.
function twoWaySeries({ seed, phaseS, durationS = 120 }) {
  const r = rng(seed);
  const normal = () => Math.sqrt(-2 * Math.log(r() + 1e-12)) * Math.cos(2 * Math.PI * r());
  const base = {
    up: Array.from({ length: 12 }, () => 10 + 12 * r()),
    down: Array.from({ length: 12 }, () => 10 + 12 * r()),
  };
  const slotAt = (ms) => [Math.floor((ms + (15 - phaseS) * 1000) / 15000), (ms + (15 - phaseS) * 1000) % 15000];
  // the stage at `ms`: lost, or the delay it adds
  const stage = (dir, ms) => {
    const [n, into] = slotAt(ms);
    if (into < 100 && r() < 0.3) return null;
    return base[dir][n] + (into < 300 ? 15 : 0) + 4 * normal();
  };
  const last = { up: 0, down: 0 };
  const out = [];
  for (let i = 0; i < (durationS * 1000) / 20; i++) {
    const sent = i * 20;
    const up = stage('up', sent);
    if (up === null) {
      out.push(null);
      continue;
    }
    last.up = Math.max(last.up, sent + up);
    const atForward = last.up + 10;
    const down = stage('down', atForward);
    if (down === null) {
      out.push(null);
      continue;
    }
    last.down = Math.max(last.down, atForward + down);
    out.push(last.down - sent);
  }
  return out;
}

describe('RTT series of a slot process', () => {
  it("expects the boundary loss a probe of the starlink profile finds: the two directions' bursts fall on different echoes", () => {
    const c = configuredSlots(loadProfile('starlink'));
    const found = [];
    for (let seed = 1; seed <= 20; seed++) {
      const a = analyzeRttSeries(twoWaySeries({ seed, phaseS: (seed * 1.37) % 15 }), 20);
      assert.equal(a.period_s, 15, `seed ${seed}`);
      assert.equal(a.other_loss_pct, 0, `seed ${seed}: every loss is counted at its boundary`);
      found.push(a.boundary_loss_pct);
    }
    const mean = found.reduce((a, b) => a + b) / found.length;
    // 20 probes of ~200 echoes at the boundaries: the mean's standard error is about 0.4 points
    assert.ok(Math.abs(mean - c.boundary_loss_pct) < 0.8, `found ${mean} %, configured ${c.boundary_loss_pct} %`);
  });

  it('finds the period, the boundaries, the spike and the boundary loss for 10 seeds', () => {
    for (let seed = 1; seed <= 10; seed++) {
      const a = analyzeRttSeries(slotSeries({ seed }), 20);
      assert.ok(Math.abs(a.period_s - 15) <= 0.1, `seed ${seed}: period ${a.period_s}`);
      assert.ok(Math.abs(a.boundary_phase_s - 3.2) <= 0.1, `seed ${seed}: phase ${a.boundary_phase_s}`);
      assert.ok(Math.abs(a.spike_ms - 30) <= 8, `seed ${seed}: spike ${a.spike_ms}`);
      // 0.51 of the first 100 ms of a 500 ms window: about 10 %
      assert.ok(a.boundary_loss_pct > 5 && a.boundary_loss_pct < 16, `seed ${seed}: ${a.boundary_loss_pct}`);
      assert.equal(a.other_loss_pct, 0);
      assert.ok(a.p5_ms < a.median_ms && a.median_ms < a.p95_ms);
    }
  });

  it("sees an in-motion link's outages as such and still finds the 15 s period behind them", () => {
    // starlink-motion's outages: exponential gaps of 30 s on average, 0.2-2 s each
    const outagesOf = (seed) => {
      const r = rng(seed + 100);
      const list = [];
      for (let t = -30 * Math.log(1 - r()); t < 120; t += -30 * Math.log(1 - r())) list.push([t, 0.2 + 1.8 * r()]);
      return list;
    };
    let periods = 0;
    for (let seed = 1; seed <= 10; seed++) {
      const outages = outagesOf(seed);
      const series = slotSeries({ seed, outages });
      const a = analyzeRttSeries(series, 20);
      assert.equal(a.outages.count, outageRuns(series, 20).length);
      // an outage may merge with a boundary's burst or another outage: not more than were made
      assert.ok(a.outages.count <= outages.length, `seed ${seed}: ${a.outages.count} of ${outages.length}`);
      assert.equal(a.outages.count > 0, outages.length > 0, `seed ${seed}`);
      if (outages.length)
        assert.ok(a.outages.longest_ms <= 2100 && a.outages.median_ms >= 200, JSON.stringify(a.outages));
      if (Math.abs(a.period_s - 15) <= 0.1) periods += 1;
      // the outages' echoes are not the boundaries' loss
      assert.ok(a.boundary_loss_pct < 16, `seed ${seed}: ${a.boundary_loss_pct}`);
    }
    assert.equal(periods, 10);
    // each lost echo an event, as before: the outages drown the period
    const drowned = [1, 2, 3, 4, 5].filter((seed) => {
      const series = slotSeries({ seed, outages: outagesOf(seed) });
      return periodLag(changeEvents(series), 50, 5) !== 750;
    });
    assert.ok(drowned.length >= 3, `without telling outages apart the period is lost for ${drowned}`);
  });

  it('an outage is a run of at least 200 ms of lost echoes; a short burst is not', () => {
    const series = [1, null, null, 1, ...Array(10).fill(null), 1, null, null];
    assert.deepEqual(outageRuns(series, 20), [{ from: 4, to: 14 }]);
    assert.deepEqual(outageRuns(series, 20, 40), [
      { from: 1, to: 3 },
      { from: 4, to: 14 },
      { from: 15, to: 17 },
    ]);
    assert.deepEqual(analyzeRttSeries([...Array(50).fill(40), ...Array(20).fill(null)], 20).outages, {
      count: 1,
      median_ms: 400,
      longest_ms: 400,
      loss_pct: 28.571,
      per_minute: 42.857,
    });
  });

  it('finds a short period too (the integration test: 2 s)', () => {
    const a = analyzeRttSeries(slotSeries({ seed: 3, periodS: 2, phaseS: 0.7, durationS: 14 }), 20);
    assert.equal(a.period_s, 2);
    assert.ok(Math.abs(a.boundary_phase_s - 0.7) <= 0.1, `${a.boundary_phase_s}`);
    assert.ok(a.boundary_loss_pct > 3, `${a.boundary_loss_pct}`);
  });

  it('finds no period in a link without one: jitter and random loss only', () => {
    const r = rng(9);
    const flat = Array.from({ length: 6000 }, () => (r() < 0.01 ? null : 40 + 8 * (r() - 0.5)));
    const a = analyzeRttSeries(flat, 20);
    assert.equal(a.period_s, null);
    assert.equal(a.median_ms !== null, true);
    assert.ok(!('spike_ms' in a));
  });

  it("reads the jitter between successive RTTs (Huston's) and each slot's RTT with the largest step between two", () => {
    assert.equal(successiveJitter([10, 12, null, 15, 11]), 3);
    assert.equal(successiveJitter([10, null]), null);
    // slots of 40, 60 and 45 ms, a boundary every 2 s with a lost echo
    const series = Array.from({ length: 300 }, (_, i) => (i % 100 === 0 ? null : [40, 60, 45][Math.floor(i / 100)]));
    const a = analyzeRttSeries(series, 20);
    assert.equal(a.period_s, 2);
    assert.deepEqual(a.slot_medians_ms, [40, 60, 45]);
    assert.deepEqual(a.largest_slot_step_ms, { from: 40, to: 60 });
    // one lost echo per boundary: the worst 100 ms (5 echoes) holds it
    assert.equal(a.peak_loss_pct, 20);
    assert.equal(a.boundary_lost, 3);
  });

  it('pools the peak loss over the boundaries: the worst run of echoes after a window start', () => {
    assert.equal(peakLossPct([2, 2, 2, 2], [0, 2, 1, 0], 2), 75);
    assert.equal(peakLossPct([0, 0], [0, 0], 1), null);
  });

  it('marks losses and steps of the running median, not the jitter', () => {
    const s = [10, 11, 10, 11, 10, 11, 10, 11, 10, null, 50, 51, 50, 51, 50, 51, 50, 51, 50, 51];
    const e = changeEvents(s);
    assert.equal(e[9], 1);
    assert.equal(
      e.slice(0, 5).reduce((a, b) => a + b),
      0,
    );
    assert.ok(
      e.slice(10, 15).some((x) => x === 1),
      'the step shows in the running median',
    );
    assert.equal(
      e.slice(16).reduce((a, b) => a + b),
      0,
    );
  });

  it('says what the starlink profile should show', () => {
    const c = configuredSlots(loadProfile('starlink'));
    assert.equal(c.period_s, 15);
    assert.equal(c.spike_ms, 30);
    // 0.3 per direction for 100 ms: the return burst takes the echoes sent
    // in its 100 ms; the forward one those that reach it, sent from 26 ms
    // before the boundary to 59 ms after it (26 ms up and the 15 ms spike):
    // (0.3 × 100 + 0.3 × 85 - 0.09 × 59) / 500
    assert.equal(c.boundary_loss_pct, 10.04);
    // the worst 100 ms: the 59 ms both bursts take (0.51) and 41 ms of the return one's
    assert.equal(c.peak_loss_pct, 42.39);
    assert.equal(configuredSlots(loadProfile('leo')), null);
    assert.equal(c.outages, undefined);
    // starlink-motion: an outage 0.2-2 s (1.1 s on average) after a gap of 30 s on average
    assert.deepEqual(configuredSlots(loadProfile('starlink-motion')).outages, {
      median_ms: 1100,
      longest_ms: 2000,
      loss_pct: 3.537,
      per_minute: 1.929,
    });
  });
});
