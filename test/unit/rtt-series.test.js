import assert from 'node:assert/strict';
import { analyzeRttSeries, changeEvents, configuredSlots } from '../../harness/testbed/rtt-series.js';
import { loadProfile } from '../../harness/testbed/profiles.js';
import { rng } from '../../harness/core/stats.js';

// A synthetic probe series of a slot process: every `periodS` a new base
// RTT, `spikeMs` more for 300 ms after each boundary, each probe lost with
// `lossP` in the first 100 ms, normal jitter of `jitterMs`, one probe every
// 20 ms for `durationS`; the first boundary at `phaseS`.
function slotSeries({ seed, periodS = 15, phaseS = 3.2, durationS = 120, spikeMs = 30, lossP = 0.51, jitterMs = 5.6 }) {
  const r = rng(seed);
  const normal = () => Math.sqrt(-2 * Math.log(r() + 1e-12)) * Math.cos(2 * Math.PI * r());
  const bases = Array.from({ length: 100 }, () => 30 + 24 * r());
  const out = [];
  for (let i = 0; i < (durationS * 1000) / 20; i++) {
    const t = (i * 20) / 1000;
    const slot = Math.floor((t - phaseS) / periodS) + 1;
    const into = t - phaseS - (slot - 1) * periodS;
    if (into < 0.1 && r() < lossP) out.push(null);
    else out.push(bases[slot] + (into < 0.3 ? spikeMs : 0) + jitterMs * normal());
  }
  return out;
}

describe('RTT series of a slot process', () => {
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
    // 0.3 per direction over 100 of the 500 ms: 1 - 0.94^2
    assert.equal(c.boundary_loss_pct, 11.64);
    assert.equal(configuredSlots(loadProfile('leo')), null);
  });
});
