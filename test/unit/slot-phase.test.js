import assert from 'node:assert/strict';
import { slotAtLoad } from '../../harness/pageload/slot-phase.js';

describe('a page load in the slot process', () => {
  const sat = { slot_phase_s: 3, slot_t0_unix_ms: 1_000_000 };
  it('gives the phase at navigation start and whether a boundary fell inside the load', () => {
    // 10 s after time 0: 13 s into a 15 s slot, the boundary 2 s away
    assert.deepEqual(slotAtLoad(sat, 15, 1_010_000, 2500), { period_s: 15, phase_s: 13, boundary_in_load: true });
    assert.equal(slotAtLoad(sat, 15, 1_010_000, 2000).boundary_in_load, true);
    assert.equal(slotAtLoad(sat, 15, 1_010_000, 1999).boundary_in_load, false);
    // 20 s after: the next slot, 8 s in
    assert.deepEqual(slotAtLoad(sat, 15, 1_020_000, 1000), { period_s: 15, phase_s: 8, boundary_in_load: false });
  });
  it('is null without a slot process or without the times', () => {
    assert.equal(slotAtLoad({}, 15, 1_010_000, 1000), null);
    assert.equal(slotAtLoad(sat, undefined, 1_010_000, 1000), null);
    assert.equal(slotAtLoad(sat, 15, undefined, 1000), null);
    assert.equal(slotAtLoad(sat, 15, 1_010_000, null), null);
  });
});
