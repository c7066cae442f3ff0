import assert from 'node:assert/strict';
import { quantile, median, wilsonInterval } from '../../harness/stats.js';

describe('stats', () => {
  it('quantiles interpolate between order statistics (type 7)', () => {
    assert.equal(median([3, 1, 2]), 2);
    assert.equal(median([4, 1, 2, 3]), 2.5);
    assert.equal(quantile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 0.9), 9.1);
    assert.equal(quantile([5], 0.99), 5);
    assert.equal(quantile([], 0.5), null);
  });

  it('the Wilson interval matches a textbook value', () => {
    // 10 of 100 at 95 %: [0.0552, 0.1744].
    const [lo, hi] = wilsonInterval(10, 100, 1.96);
    assert.ok(Math.abs(lo - 0.0552) < 1e-4, lo);
    assert.ok(Math.abs(hi - 0.1744) < 1e-4, hi);
    const [lo0] = wilsonInterval(0, 50);
    assert.equal(lo0, 0);
  });
});
