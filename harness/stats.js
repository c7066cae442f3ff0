// Order statistics and intervals used to summarise measurements.

// Quantile with linear interpolation between order statistics (R's type 7,
// numpy's default), q in [0, 1].
export function quantile(values, q) {
  if (!values.length) return null;
  const s = [...values].sort((a, b) => a - b);
  const pos = (s.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return s[lo] + (s[hi] - s[lo]) * (pos - lo);
}

export const median = (values) => quantile(values, 0.5);

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

export const round = (x, digits = 3) => (x === null || x === undefined ? x : Math.round(x * 10 ** digits) / 10 ** digits);
