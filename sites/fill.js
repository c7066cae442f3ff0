// Exact sizes with a target compressibility. Content is built as
// head + filler + tail; the filler (inside a comment of the object's own
// syntax) is R seeded pseudo-random bytes followed by a repeated phrase, and R
// is searched so that gzip -9 of the whole object comes as close as it can to
// the target.
import { gzipSync } from 'node:zlib';
import { Rng } from './prng.js';

export function gzipSize(buf) {
  return gzipSync(buf, { level: 9 }).length;
}

/** A Buffer of the byte values in [lo, hi] minus those in `except`. */
export function alphabet(lo, hi, except = '') {
  const skip = new Set(Buffer.from(except, 'latin1'));
  const vals = [];
  for (let c = lo; c <= hi; c++) if (!skip.has(c)) vals.push(c);
  return Buffer.from(vals);
}

export const ALPHA = {
  html: alphabet(0x20, 0x7e, '-<>&'), // inside <!-- -->
  css: alphabet(0x20, 0x7e, '*/\\'), // inside /* */
  text: Buffer.from('abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 '),
  binary: alphabet(0, 255),
};

/**
 * Filler of exactly `len` bytes: `r` random bytes from `alpha` (a newline
 * every `lineLen` bytes when lineLen > 0), then `phrase` repeated.
 */
export function filler(len, r, { seed, alpha, phrase, lineLen = 0 }) {
  r = Math.max(0, Math.min(r, len));
  const out = Buffer.alloc(len);
  new Rng(seed).bytes(r, alpha).copy(out, 0);
  if (lineLen > 0) for (let i = lineLen; i < r; i += lineLen + 1) out[i] = 0x0a;
  const p = Buffer.from(phrase, 'latin1');
  for (let i = r; i < len; i++) out[i] = p[(i - r) % p.length];
  return out;
}

function lines(buf) {
  const out = [];
  let o = 0;
  for (let i = 0; i < buf.length; i++)
    if (buf[i] === 0x0a) {
      out.push(buf.subarray(o, i + 1));
      o = i + 1;
    }
  if (o < buf.length) out.push(buf.subarray(o));
  return out;
}

/** The lines of a and b merged evenly (each keeps its order); same bytes, other order. */
export function interleaveLines(a, b) {
  const la = lines(a),
    lb = lines(b);
  if (!la.length || !lb.length) return Buffer.concat([a, b]);
  const out = [];
  let i = 0,
    j = 0;
  while (i < la.length || j < lb.length) {
    if (j >= lb.length || (i < la.length && (i + 0.5) / la.length <= (j + 0.5) / lb.length)) out.push(la[i++]);
    else out.push(lb[j++]);
  }
  return Buffer.concat(out);
}

/**
 * Search the random share of a filler of fixed length. `make(r)` returns
 * the whole object for r random filler bytes (0 ≤ r ≤ maxR), always of the
 * same size. Returns { buf, gzip, r, dev } with dev = (gzip − target) / target.
 */
export function tuneRandomShare(make, maxR, target) {
  const cache = new Map();
  const at = (r) => {
    if (!cache.has(r)) {
      const buf = make(r);
      cache.set(r, { buf, gzip: gzipSize(buf), r });
    }
    return cache.get(r);
  };
  let best;
  const lo0 = at(0),
    hi0 = at(maxR);
  if (lo0.gzip >= target) best = lo0;
  else if (hi0.gzip <= target) best = hi0;
  else {
    // smallest r with gzip(r) ≥ target (gzip grows with r, not strictly)
    let lo = 0,
      hi = maxR;
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      if (at(mid).gzip >= target) hi = mid;
      else lo = mid;
    }
    best = [at(lo), at(hi)].sort((x, y) => Math.abs(x.gzip - target) - Math.abs(y.gzip - target) || x.r - y.r)[0];
  }
  return { ...best, dev: (best.gzip - target) / target };
}

/**
 * Try variants in order and keep the first whose gzip size is within `good`
 * (relative) of the target, else the closest. `attempt(variant)` returns a
 * result of tuneRandomShare or null when the variant does not fit the size.
 */
export function bestOf(variants, attempt, { good = 0.015 } = {}) {
  let best = null;
  for (const v of variants) {
    const res = attempt(v);
    if (!res) continue;
    if (!best || Math.abs(res.dev) < Math.abs(best.dev)) best = res;
    if (Math.abs(res.dev) <= good) break;
  }
  return best;
}

/**
 * An object of exactly `size` bytes, gzip -9 size near `gzip`: head + filler +
 * tail where head/tail come from `frame(variant)` ({head, tail} Buffers or
 * strings, or null if this variant cannot be used). fill: {alpha, phrase,
 * lineLen, interleave} for `filler`; phrase may be a function of the frame.
 * `shape(buf, frame)`, when given, turns the assembled bytes into the object's
 * (the same length: line layout, charset) before its gzip size is measured.
 * Throws when no variant gets within `tolerance`.
 */
export function sizedObject({ name, size, gzip, variants, frame, fill, shape, tolerance = 0.05, good = 0.015 }) {
  const res = bestOf(
    variants,
    (v) => {
      const f = frame(v);
      if (!f) return null;
      const head = Buffer.from(f.head, 'latin1');
      const tail = Buffer.from(f.tail, 'latin1');
      const len = size - head.length - tail.length;
      if (len < (f.minFill ?? 0)) return null;
      const seed = `${name}|filler|${v.seed ?? 0}`;
      const phrase = typeof fill.phrase === 'function' ? fill.phrase(f) : fill.phrase;
      // interleave: the random lines go between the head's lines instead of after
      // them, so the text's statistics are the same all through (gzip and zlib
      // then split it into blocks alike and agree on its size)
      const assemble = fill.interleave
        ? (r) => {
            const f = filler(len, r, { seed, ...fill, phrase });
            if (r > 0) f[r - 1] = 0x0a; // whole lines only
            return Buffer.concat([interleaveLines(head, f.subarray(0, r)), f.subarray(r), tail]);
          }
        : (r) => Buffer.concat([head, filler(len, r, { seed, ...fill, phrase }), tail]);
      const make = shape ? (r) => shape(assemble(r), f) : assemble;
      const out = gzip == null ? { buf: make(len), gzip: null, dev: 0 } : tuneRandomShare(make, len, gzip);
      return { ...out, variant: v };
    },
    { good },
  );
  if (!res) throw new Error(`${name}: no layout fits ${size} bytes`);
  if (Math.abs(res.dev) > tolerance)
    throw new Error(`${name}: gzip ${res.gzip} vs target ${gzip} (${(res.dev * 100).toFixed(1)} %)`);
  return res;
}
