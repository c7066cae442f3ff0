import assert from 'node:assert/strict';
import { splitByBoundary, boundarySummary, failedByBoundary } from '../../harness/analysis/boundary-split.js';
import { slotAtLoad } from '../../harness/pageload/slot-phase.js';
import { summarize } from '../../harness/analysis/summary.js';

// A page load over a slot process: its PLT and FCP, whether a boundary fell
// inside it (null: a record without `slot`).
const load = (run, plt, boundary, extra = {}) => ({
  scenario: { profile: 'starlink', loss_pct: 0, protocol: 'h3', site: 'kepler' },
  run,
  ok: true,
  error: null,
  metrics: { plt_ms: plt, fcp_ms: plt / 2 },
  ...(boundary === null ? {} : { slot: { period_s: 15, phase_s: 14, boundary_in_load: boundary } }),
  ...extra,
});

describe('page loads split by a slot boundary inside the load', () => {
  it('gives each group its n, median and values, and the Mann–Whitney p of the two', () => {
    const records = [
      load(1, 110, false),
      load(2, 500, true),
      load(3, 100, false),
      load(4, 300, true),
      load(5, 130, false),
      load(6, 400, true),
      load(7, 120, false),
    ];
    const s = splitByBoundary(records, 'plt_ms');
    assert.deepEqual(s.with, { n: 3, median: 400, values: [500, 300, 400] });
    assert.deepEqual(s.without, { n: 4, median: 115, values: [110, 100, 130, 120] });
    // every loaded-with-boundary run slower than every other: the exact
    // two-sided p is 2 of the C(7, 3) = 35 ways to pick the three
    assert.equal(s.p, 2 / 35);
    assert.equal(splitByBoundary(records, 'fcp_ms').with.median, 200);
  });

  it('leaves out failed runs, runs without a slot and values that are not numbers', () => {
    const records = [
      load(1, 100, false),
      load(2, 200, true),
      load(3, 900, true, { ok: false, error: 'timeout', metrics: null }),
      load(4, 900, null),
      load(5, NaN, false),
      load(6, 150, false, { metrics: { fcp_ms: 10 } }),
    ];
    const s = splitByBoundary(records, 'plt_ms');
    assert.deepEqual(s.with.values, [200]);
    assert.deepEqual(s.without.values, [100]);
  });

  it('counts the failed runs on each side: a handover that made a load fail shows in no metric', () => {
    const records = [
      load(1, 100, false),
      load(2, 900, true, { ok: false, error: 'timeout', metrics: null }),
      load(3, 900, true, { ok: false, error: 'net::ERR_QUIC_PROTOCOL_ERROR', metrics: null }),
      load(4, 900, false, { ok: false, error: 'timeout', metrics: null }),
      load(5, 900, null, { ok: false, error: 'no slot', metrics: null }),
    ];
    assert.deepEqual(failedByBoundary(records), { with: 2, without: 1 });
    assert.deepEqual(boundarySummary(records, ['plt_ms']).failed, { with: 2, without: 1 });
  });

  it('places a failed load by the time it failed, a finished one by its length', () => {
    const sat = { slot_phase_s: 10, slot_t0_unix_ms: 1_000_000 };
    // navigation 2 s after time 0: 12 s into the slot; a boundary 3 s later
    assert.equal(slotAtLoad(sat, 15, 1_002_000, 2_500).boundary_in_load, false);
    assert.equal(slotAtLoad(sat, 15, 1_002_000, 3_500).boundary_in_load, true);
    assert.equal(slotAtLoad(sat, 15, 1_002_000, undefined), null);
  });

  it('has no p and no median for an empty group, and is null without a slot process', () => {
    const s = splitByBoundary([load(1, 100, false), load(2, 120, false)], 'plt_ms');
    assert.deepEqual(s.with, { n: 0, median: null, values: [] });
    assert.equal(s.without.median, 110);
    assert.equal(s.p, null);
    assert.equal(splitByBoundary([load(1, 100, null), load(2, 120, null)], 'plt_ms'), null);
    assert.equal(splitByBoundary([], 'plt_ms'), null);
  });

  it("summary.json keeps each metric's n, median and p per group, not the values", () => {
    const records = [load(1, 100, false), load(2, 300, true), load(3, 120, false)];
    assert.deepEqual(boundarySummary(records, ['plt_ms', 'lcp_ms', 'fcp_ms']), {
      period_s: 15,
      failed: { with: 0, without: 0 },
      metrics: {
        plt_ms: { with: { n: 1, median: 300 }, without: { n: 2, median: 110 }, p: 2 / 3 },
        fcp_ms: { with: { n: 1, median: 150 }, without: { n: 2, median: 55 }, p: 2 / 3 },
      },
    });
    assert.equal(boundarySummary([load(1, 100, null)], ['plt_ms']), null);
    const [slotted, plain] = summarize([
      ...records,
      ...[1, 2].map((run) => load(run, 100, null, { scenario: { ...records[0].scenario, profile: 'leo' } })),
    ]);
    assert.deepEqual(slotted.boundary_split.metrics.plt_ms.with, { n: 1, median: 300 });
    assert.equal(slotted.boundary_split.metrics.plt_ms.without.n, 2);
    assert.equal('boundary_split' in plain, false, 'a link without slots: the group as before');
  });
});
