// Raw bytes as the original Kepler frame holds them (noncompressible/bin.html):
// seeded random bytes of every value that then went through a text-mode LF →
// CRLF conversion, with exactly the counts reference/kepler-content-facts.json
// gives (the bytes, the rarest and the most frequent value, NUL, LF, CR, &, <, >).
import { Rng } from './prng.js';

const NAMED = { count_nul: 0x00, count_lf: 0x0a, count_cr: 0x0d, count_amp: 0x26, count_lt: 0x3c, count_gt: 0x3e };

const sum = (xs) => xs.reduce((a, b) => a + b, 0);

/**
 * How many times each byte value (256 counts) occurs in the converted bytes:
 * the named ones as the facts say, one value at the least frequency, the
 * most frequent one named or one more at it, the others around their mean.
 */
export function rawHistogram(f, seed) {
  if (f.distinct_byte_values !== 256) throw new Error('the raw bytes hold every byte value, as the original’s');
  const { byte_frequency_min: min, byte_frequency_max: max } = f;
  const counts = new Array(256).fill(null);
  for (const [k, b] of Object.entries(NAMED)) {
    if (!(f[k] >= min && f[k] <= max)) throw new Error(`${k} ${f[k]} is outside ${min}..${max}`);
    counts[b] = f[k];
  }
  const r = new Rng(`${seed}|histogram`);
  const free = counts.flatMap((c, b) => (c == null ? [b] : []));
  const take = () => free.splice(r.int(free.length), 1)[0];
  counts[take()] = min;
  if (!counts.includes(max)) counts[take()] = max;
  const left = f.bytes - sum(counts.filter((c) => c != null));
  const mean = left / free.length;
  // strictly between the rarest and the most frequent, so neither moves
  const lo = min + 1,
    hi = max - 1;
  if (mean < lo || mean > hi) throw new Error(`${left} bytes do not fit ${free.length} values within ${lo}..${hi}`);
  const spread = Math.min(mean - lo, hi - mean, 2 * Math.sqrt(mean));
  for (const b of free) counts[b] = Math.round(mean + (r.next() * 2 - 1) * spread);
  let diff = left - sum(free.map((b) => counts[b]));
  for (let i = 0; diff !== 0; i = (i + 1) % free.length) {
    const step = Math.sign(diff);
    const c = counts[free[i]] + step;
    if (c >= lo && c <= hi) {
      counts[free[i]] = c;
      diff -= step;
    }
  }
  return counts;
}

/** The random part: `f.bytes` bytes with rawHistogram's counts, every LF after a CR. */
export function rawBytes(f, seed) {
  if (f.line_ending !== 'CRLF') throw new Error('the raw bytes are written with CRLF line endings only');
  const counts = rawHistogram(f, seed);
  // before the conversion the LFs had no CR of their own
  const before = counts.slice();
  before[0x0d] -= before[0x0a];
  if (before[0x0d] < 0) throw new Error(`${counts[0x0a]} LFs but only ${counts[0x0d]} CRs`);
  const pool = Buffer.alloc(sum(before));
  let o = 0;
  before.forEach((c, b) => {
    pool.fill(b, o, o + c);
    o += c;
  });
  const r = new Rng(`${seed}|shuffle`);
  for (let i = pool.length - 1; i > 0; i--) {
    const j = r.int(i + 1);
    [pool[i], pool[j]] = [pool[j], pool[i]];
  }
  const out = Buffer.alloc(f.bytes);
  o = 0;
  for (const b of pool) {
    if (b === 0x0a) out[o++] = 0x0d;
    out[o++] = b;
  }
  return out;
}
