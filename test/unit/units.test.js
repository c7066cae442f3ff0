import assert from 'node:assert/strict';
import { durationMs, rateMbit, percent, sizeBytes } from '../../harness/core/units.js';

describe('units', () => {
  it("parses netem's units and plain numbers in the default unit", () => {
    assert.equal(durationMs('250ms', 'x'), 250);
    assert.equal(durationMs('1.5s', 'x'), 1500);
    assert.equal(durationMs('500us', 'x'), 0.5);
    assert.equal(durationMs(40, 'x'), 40);
    assert.equal(rateMbit('20mbit', 'x'), 20);
    assert.equal(rateMbit('1gbit', 'x'), 1000);
    assert.equal(rateMbit('500kbit', 'x'), 0.5);
    assert.equal(rateMbit('1mbps', 'x'), 8);
    assert.equal(percent('0.01%', 'x'), 0.01);
    assert.equal(percent(1, 'x'), 1);
    assert.equal(sizeBytes('1.5MB', 'x'), 1.5e6);
    assert.equal(sizeBytes('64KiB', 'x'), 65536);
  });

  it('names where a bad value came from', () => {
    assert.throws(
      () => durationMs('soon', 'geo.yaml: satellite.forward.delay'),
      /^UsageError: geo\.yaml: satellite\.forward\.delay: expected a duration/,
    );
    assert.throws(() => rateMbit(true, 'f: k'), /f: k: expected a rate/);
    assert.throws(() => percent('5 apples', 'f: k'), /expected a percentage/);
  });
});
