import assert from 'node:assert/strict';
import {
  quantile,
  median,
  mean,
  wilsonInterval,
  bootstrapMedianCi,
  describe as describeValues,
  erfc,
  normalSf,
  mannWhitneyU,
  cliffsDelta,
  cliffsMagnitude,
  compareSamples,
} from '../../harness/core/stats.js';

const close = (a, b, tol, what) => assert.ok(Math.abs(a - b) <= tol, `${what ?? ''} ${a} is not ${b} ± ${tol}`);

describe('stats', () => {
  it('quantiles interpolate between order statistics (type 7)', () => {
    assert.equal(median([3, 1, 2]), 2);
    assert.equal(median([4, 1, 2, 3]), 2.5);
    assert.equal(quantile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 0.9), 9.1);
    assert.equal(quantile([5], 0.99), 5);
    assert.equal(quantile([], 0.5), null);
    assert.equal(mean([1, 2, 6]), 3);
    assert.equal(mean([]), null);
  });

  it('the Wilson interval matches a textbook value', () => {
    // 10 of 100 at 95 %: [0.0552, 0.1744].
    const [lo, hi] = wilsonInterval(10, 100, 1.96);
    assert.ok(Math.abs(lo - 0.0552) < 1e-4, lo);
    assert.ok(Math.abs(hi - 0.1744) < 1e-4, hi);
    const [lo0] = wilsonInterval(0, 50);
    assert.equal(lo0, 0);
  });

  it('the normal tail matches tables', () => {
    close(normalSf(1.959964), 0.025, 1e-7, 'P(Z > 1.96)');
    close(normalSf(0), 0.5, 1e-7);
    close(normalSf(-1.644854), 0.95, 1e-7);
    close(erfc(1), 0.157299207, 1e-7);
  });

  it('Mann–Whitney U: exact p for small samples without ties (hand-computed)', () => {
    // x above y in 1 (3.5 > 3.0) + 2 (4.2 > 3.0, 4.0) + 2 (5.9 > 3.0, 4.0) pairs: U = 5 of 30.
    // Two-sided exact p = 2 · P(U <= 5) for sizes 5 and 6: the ways of U = 0…5 are the
    // partitions of u into at most 5 parts no larger than 6: 1 + 1 + 2 + 3 + 5 + 7 = 19
    // of C(11, 5) = 462 arrangements, so p = 38 / 462.
    const r = mannWhitneyU([1.1, 2.3, 3.5, 4.2, 5.9], [3.0, 4.0, 6.1, 7.4, 8.8, 9.9]);
    assert.equal(r.u, 5);
    assert.equal(r.method, 'exact');
    close(r.p, 38 / 462, 1e-12, 'p');
    // Complete separation of 5 and 5: p = 2 / C(10, 5) = 2 / 252.
    close(mannWhitneyU([1, 2, 3, 4, 5], [6, 7, 8, 9, 10]).p, 2 / 252, 1e-12);
    // Symmetric: swapping the samples gives U' = nx·ny − U and the same p.
    const s = mannWhitneyU([3.0, 4.0, 6.1, 7.4, 8.8, 9.9], [1.1, 2.3, 3.5, 4.2, 5.9]);
    assert.equal(s.u, 25);
    close(s.p, r.p, 1e-12);
  });

  it('Mann–Whitney U: normal approximation with tie and continuity correction (hand-computed)', () => {
    const x = [1, 2, 2, 3, 4, 4, 4, 5, 6, 7, 8, 9];
    const y = [3, 4, 5, 5, 6, 7, 8, 8, 9, 10, 11, 12, 12];
    // Midranks of the pooled 25 values: 1→1, 2 2→2.5, 3 3→4.5, 4×4→7.5, 5×3→11, 6 6→13.5,
    // 7 7→15.5, 8×3→18, 9 9→20.5, 10→22, 11→23, 12 12→24.5.
    // x's ranks: 1 + 2·2.5 + 4.5 + 3·7.5 + 11 + 13.5 + 15.5 + 18 + 20.5 = 111.5, U = 111.5 − 12·13/2 = 33.5.
    // Tie groups: six of 2 values (2, 3, 6, 7, 9, 12), two of 3 (5, 8), one of 4 (4):
    // Σ(t³ − t) = 6·6 + 2·24 + 60 = 144.
    // σ² = (12·13/12)·(26 − 144/(25·24)) = 13 · 25.76 = 334.88, σ = 18.2998;
    // z = (max(U, 156 − U) − 156/2 − 0.5) / σ = 44 / 18.2998 = 2.40441; p = 2·P(Z > z) = 0.016199.
    const ties = [2, 2, 2, 2, 2, 2, 3, 3, 4];
    const sum = ties.reduce((a, t) => a + t ** 3 - t, 0);
    assert.equal(sum, 144);
    const sigma = Math.sqrt(13 * (26 - sum / 600));
    const z = 44 / sigma;
    const r = mannWhitneyU(x, y);
    assert.equal(r.u, 33.5);
    assert.equal(r.method, 'normal');
    close(r.z, z, 1e-12, 'z');
    close(r.z, 2.404407, 1e-6, 'z');
    close(r.p, 0.0161987, 1e-6, 'p'); // 2 · P(Z > 2.4044)
  });

  it('Mann–Whitney U: equal samples give p = 1; empty ones give nulls', () => {
    assert.equal(mannWhitneyU([5, 5, 5], [5, 5, 5]).p, 1);
    const a = Array.from({ length: 20 }, (_, i) => 1000 + i * 7);
    assert.ok(mannWhitneyU(a, a).p > 0.99);
    assert.equal(mannWhitneyU([], [1]).p, null);
  });

  it("Cliff's delta counts dominance pairs (hand-computed)", () => {
    // x = [1, 2, 3], y = [2, 4]: x > y in 1 pair (3 > 2), x < y in 4 (1<2, 1<4, 2<4, 3<4),
    // one tie (2 = 2): δ = (1 − 4) / 6 = −0.5.
    assert.equal(cliffsDelta([1, 2, 3], [2, 4]), -0.5);
    assert.equal(cliffsDelta([10, 11], [1, 2]), 1);
    assert.equal(cliffsDelta([1, 2], [1, 2]), 0);
    close(
      cliffsDelta([1, 2, 2, 3, 4, 4, 4, 5, 6, 7, 8, 9], [3, 4, 5, 5, 6, 7, 8, 8, 9, 10, 11, 12, 12]),
      -0.5705128205,
      1e-9,
    );
    assert.equal(cliffsMagnitude(0.1), 'negligible');
    assert.equal(cliffsMagnitude(-0.2), 'small');
    assert.equal(cliffsMagnitude(0.4), 'medium');
    assert.equal(cliffsMagnitude(-0.9), 'large');
  });

  it('the bootstrap interval of the median is fixed by its seed', () => {
    const plt = [7669, 7702, 7590, 7811, 7643, 7720, 7555, 7688, 9120, 7630];
    assert.deepEqual(bootstrapMedianCi(plt, { seed: 42 }), [7616.5, 7740]);
    // the seed alone decides the resamples: the same seed on a copy gives the
    // same interval, another seed another one; each holds the median
    assert.deepEqual(bootstrapMedianCi([...plt], { seed: 42 }), [7616.5, 7740]);
    assert.deepEqual(bootstrapMedianCi(plt, { seed: 1 }), [7629.9875, 7765.5]);
    for (const seed of [1, 2, 3, 42]) {
      const [lo, hi] = bootstrapMedianCi(plt, { seed });
      assert.ok(lo <= 7678.5 && 7678.5 <= hi, `seed ${seed}: [${lo}, ${hi}]`);
    }
    assert.deepEqual(bootstrapMedianCi([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11], { seed: 1 }), [3, 9]);
    assert.deepEqual(bootstrapMedianCi([4]), [4, 4]);
    const d = describeValues(plt, 42);
    assert.deepEqual(
      { ...d, ci95: null },
      { n: 10, median: 7678.5, mean: 7812.8, p10: 7586.5, p90: 7941.9, min: 7555, max: 9120, ci95: null },
    );
  });

  it('a comparison reports ratio, p, delta and warns below 10 runs a side', () => {
    const base = Array.from({ length: 12 }, (_, i) => 1000 + i);
    const cur = base.map((v) => v * 1.3);
    const c = compareSamples(base, cur);
    close(c.ratio, 1.3, 1e-12);
    assert.equal(c.cliffs_delta, 1);
    assert.equal(c.magnitude, 'large');
    assert.ok(c.p < 0.001);
    assert.equal(c.warning, null);
    assert.match(compareSamples(base.slice(0, 9), cur).warning, /fewer than 10 runs on a side \(9 vs 12\)/);
  });
});
