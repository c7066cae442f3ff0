// Order statistics, intervals and two-sample tests used to summarise and
// compare measurements. Plain functions of arrays of numbers, no I/O.

// Quantile with linear interpolation between order statistics (R's type 7,
// numpy's default), q in [0, 1].
export function quantile(values, q) {
  if (!values.length) return null;
  return quantileSorted(
    [...values].sort((a, b) => a - b),
    q,
  );
}

// The same, of values already sorted ascending.
function quantileSorted(s, q) {
  const pos = (s.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return s[lo] + (s[hi] - s[lo]) * (pos - lo);
}

export const median = (values) => quantile(values, 0.5);

export const mean = (values) => (values.length ? values.reduce((a, b) => a + b, 0) / values.length : null);

// Wilson score interval of a binomial proportion (k successes of n) at the
// normal quantile z (2.576 for 99 %). Returns [lo, hi] as fractions.
export function wilsonInterval(k, n, z = 2.576) {
  if (n === 0) return [0, 1];
  const p = k / n;
  const z2 = z * z;
  const centre = (p + z2 / (2 * n)) / (1 + z2 / n);
  const half = (z / (1 + z2 / n)) * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  return [Math.max(0, centre - half), Math.min(1, centre + half)];
}

export const round = (x, digits = 3) =>
  x === null || x === undefined ? x : Math.round(x * 10 ** digits) / 10 ** digits;

// Small seeded PRNG (mulberry32): the same data and seed give the same
// bootstrap interval, so reports and CI runs are reproducible.
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Percentile bootstrap 95 % interval of the median.
export function bootstrapMedianCi(values, { resamples = 2000, seed = 1 } = {}) {
  if (values.length < 2) return [values[0] ?? null, values[0] ?? null];
  const next = rng(seed);
  const n = values.length;
  // Typed arrays sort numerically and fast: a 3200-run matrix has ~200
  // metric columns × 2000 resamples.
  const sample = new Float64Array(n);
  const medians = new Float64Array(resamples);
  for (let i = 0; i < resamples; i++) {
    for (let j = 0; j < n; j++) sample[j] = values[Math.floor(next() * n)];
    medians[i] = quantileSorted(sample.sort(), 0.5);
  }
  medians.sort();
  return [quantileSorted(medians, 0.025), quantileSorted(medians, 0.975)];
}

// n, median, mean, p10, p90, min, max and the bootstrap interval of the
// median (summary.json's per-metric object); null for no values.
export function describe(values, seed = 1) {
  if (!values.length) return null;
  return {
    n: values.length,
    median: median(values),
    mean: mean(values),
    p10: quantile(values, 0.1),
    p90: quantile(values, 0.9),
    min: Math.min(...values),
    max: Math.max(...values),
    ci95: bootstrapMedianCi(values, { seed }),
  };
}

// Complementary error function (Numerical Recipes' erfcc, Chebyshev fit,
// fractional error below 1.2e-7 everywhere): enough for p-values.
export function erfc(x) {
  const z = Math.abs(x);
  const t = 1 / (1 + 0.5 * z);
  const r =
    t *
    Math.exp(
      -z * z -
        1.26551223 +
        t *
          (1.00002368 +
            t *
              (0.37409196 +
                t *
                  (0.09678418 +
                    t *
                      (-0.18628806 +
                        t *
                          (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))),
    );
  return x >= 0 ? r : 2 - r;
}

// P(Z > z) for a standard normal Z.
export const normalSf = (z) => 0.5 * erfc(z / Math.SQRT2);

// Midranks (1-based; tied values share the mean of their ranks) of the
// pooled samples, and the sizes of the tie groups.
function midranks(pooled) {
  const order = pooled.map((v, i) => [v, i]).sort((a, b) => a[0] - b[0]);
  const ranks = new Array(pooled.length);
  const ties = [];
  for (let i = 0; i < order.length;) {
    let j = i;
    while (j + 1 < order.length && order[j + 1][0] === order[i][0]) j++;
    const r = (i + j + 2) / 2;
    for (let k = i; k <= j; k++) ranks[order[k][1]] = r;
    if (j > i) ties.push(j - i + 1);
    i = j + 1;
  }
  return { ranks, ties };
}

// Counts of each value of U for samples of sizes m and n without ties:
// f(m, n, u) = f(m-1, n, u-n) + f(m, n-1, u) (Mann and Whitney 1947).
function exactUCounts(m, n) {
  // rows[j] holds the distribution for (i, j) while i goes up.
  let rows = Array.from({ length: n + 1 }, () => [1]);
  for (let i = 1; i <= m; i++) {
    const next = [[1]];
    for (let j = 1; j <= n; j++) {
      const a = rows[j]; // (i-1, j), shifted by j
      const b = next[j - 1]; // (i, j-1)
      const out = new Array(i * j + 1).fill(0);
      for (let u = 0; u < a.length; u++) out[u + j] += a[u];
      for (let u = 0; u < b.length; u++) out[u] += b[u];
      next.push(out);
    }
    rows = next;
  }
  return rows[n];
}

// Exact distribution only while it is small and there are no ties; the
// normal approximation is good beyond that.
export const EXACT_MAX_TOTAL = 30;

/**
 * Mann–Whitney U test, two-sided. u is x's statistic (the number of pairs
 * with x > y, ties counting half), so u / (nx·ny) is P(X > Y). Exact p when
 * nx + ny <= EXACT_MAX_TOTAL and nothing is tied, else the normal
 * approximation with tie and continuity correction (as R's wilcox.test and
 * scipy's mannwhitneyu).
 */
export function mannWhitneyU(x, y) {
  const nx = x.length;
  const ny = y.length;
  if (!nx || !ny) return { u: null, p: null, z: null, method: null, nx, ny };
  const { ranks, ties } = midranks([...x, ...y]);
  const rx = ranks.slice(0, nx).reduce((a, b) => a + b, 0);
  const u = rx - (nx * (nx + 1)) / 2;
  const big = Math.max(u, nx * ny - u);
  const n = nx + ny;
  if (!ties.length && n <= EXACT_MAX_TOTAL) {
    const counts = exactUCounts(nx, ny);
    const total = counts.reduce((a, b) => a + b, 0);
    let tail = 0;
    for (let k = Math.ceil(big); k < counts.length; k++) tail += counts[k];
    return { u, p: Math.min(1, (2 * tail) / total), z: null, method: 'exact', nx, ny };
  }
  const tieTerm = ties.reduce((a, t) => a + t ** 3 - t, 0) / (n * (n - 1));
  const sigma = Math.sqrt(((nx * ny) / 12) * (n + 1 - tieTerm));
  if (sigma === 0) return { u, p: 1, z: 0, method: 'normal', nx, ny };
  const z = (big - (nx * ny) / 2 - 0.5) / sigma;
  return { u, p: Math.min(1, Math.max(0, 2 * normalSf(z))), z, method: 'normal', nx, ny };
}

/**
 * Cliff's delta of x against y: P(X > Y) - P(X < Y), in [-1, 1]; positive
 * when x tends to be larger. Computed from the ranks, O(n log n).
 */
export function cliffsDelta(x, y) {
  if (!x.length || !y.length) return null;
  const { u } = mannWhitneyU(x, y);
  return (2 * u) / (x.length * y.length) - 1;
}

// Romano et al. (2006) thresholds, as sitespeed.io's compare uses them.
export function cliffsMagnitude(d) {
  if (d === null || d === undefined) return null;
  const a = Math.abs(d);
  return a < 0.147 ? 'negligible' : a < 0.33 ? 'small' : a < 0.474 ? 'medium' : 'large';
}

// Below this many runs a side a comparison has little power; say so.
export const MIN_RUNS_FOR_COMPARISON = 10;

/**
 * Everything a comparison of `current` against `baseline` reports: the
 * ratio of medians, the two-sided Mann–Whitney p, Cliff's delta of current
 * against baseline (positive = current larger) and a warning when a side
 * has fewer than MIN_RUNS_FOR_COMPARISON values.
 */
export function compareSamples(baseline, current) {
  const mb = median(baseline);
  const mc = median(current);
  const mw = mannWhitneyU(current, baseline);
  const delta = cliffsDelta(current, baseline);
  const few = Math.min(baseline.length, current.length) < MIN_RUNS_FOR_COMPARISON;
  return {
    n_baseline: baseline.length,
    n_current: current.length,
    median_baseline: mb,
    median_current: mc,
    ratio: mb && mc !== null ? mc / mb : null,
    p: mw.p,
    test: mw.method,
    cliffs_delta: delta,
    magnitude: cliffsMagnitude(delta),
    warning: few
      ? `fewer than ${MIN_RUNS_FOR_COMPARISON} runs on a side (${baseline.length} vs ${current.length}): the test has little power`
      : null,
  };
}

// A p-value as the report and compare print it.
export const fmtP = (p) => (p === null || p === undefined ? '–' : p < 0.001 ? '<0.001' : p.toFixed(3));
