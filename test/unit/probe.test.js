import assert from 'node:assert/strict';
import { probePlan, summarizeProbe } from '../../harness/testbed/probe.js';
import { configuredSummary, loadProfile } from '../../harness/testbed/profiles.js';

describe('probe summary', () => {
  const configured = configuredSummary(loadProfile('geo', { lossPct: 1 }));

  it('plans enough time for stragglers and 1-byte ids that cannot wrap', () => {
    const plan = probePlan(configured, { rttCount: 25 });
    assert.equal(plan.rtt.count, 25);
    assert.ok(plan.rtt.timeoutMs >= 3 * 580);
    assert.ok(plan.owd.intervalMs * 256 > plan.owd.timeoutMs);
    assert.equal(plan.rate.forwardMbit, 20);
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
