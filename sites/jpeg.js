// A small JPEG writer (JFIF, YCbCr 4:2:0 or 4:4:4, baseline or progressive
// with libjpeg's default progression, the standard Annex K quantisation and
// Huffman tables). It writes quantised DCT coefficients
// directly instead of transforming pixels: each block's DC term paints a
// picture (sky, a planet, its orbit) and its AC terms are seeded noise whose
// strength (`detail`) sets how many bytes the scan takes. What comes out is an
// ordinary photograph-like JPEG any decoder renders, whose size we control.
// Exact sizes come from COM segments (any bytes, in 65,533-byte pieces).
import { Rng } from './prng.js';

const ZIGZAG = [
  0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5, 12, 19, 26, 33, 40, 48, 41, 34, 27, 20, 13, 6, 7, 14, 21, 28,
  35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51, 58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47,
  55, 62, 63,
];
const Q_LUM = [
  16, 11, 10, 16, 24, 40, 51, 61, 12, 12, 14, 19, 26, 58, 60, 55, 14, 13, 16, 24, 40, 57, 69, 56, 14, 17, 22, 29, 51,
  87, 80, 62, 18, 22, 37, 56, 68, 109, 103, 77, 24, 35, 55, 64, 81, 104, 113, 92, 49, 64, 78, 87, 103, 121, 120, 101,
  72, 92, 95, 98, 112, 100, 103, 99,
];
const Q_CHR = [
  17,
  18,
  24,
  47,
  99,
  99,
  99,
  99,
  18,
  21,
  26,
  66,
  99,
  99,
  99,
  99,
  24,
  26,
  56,
  99,
  99,
  99,
  99,
  99,
  47,
  66,
  99,
  99,
  99,
  99,
  99,
  99,
  ...new Array(32).fill(99),
];
const DC_LUM = { bits: [0, 1, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0], vals: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11] };
const DC_CHR = { bits: [0, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0], vals: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11] };
const AC_LUM = {
  bits: [0, 2, 1, 3, 3, 2, 4, 3, 5, 5, 4, 4, 0, 0, 1, 0x7d],
  vals: [
    0x01, 0x02, 0x03, 0x00, 0x04, 0x11, 0x05, 0x12, 0x21, 0x31, 0x41, 0x06, 0x13, 0x51, 0x61, 0x07, 0x22, 0x71, 0x14,
    0x32, 0x81, 0x91, 0xa1, 0x08, 0x23, 0x42, 0xb1, 0xc1, 0x15, 0x52, 0xd1, 0xf0, 0x24, 0x33, 0x62, 0x72, 0x82, 0x09,
    0x0a, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x25, 0x26, 0x27, 0x28, 0x29, 0x2a, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39, 0x3a,
    0x43, 0x44, 0x45, 0x46, 0x47, 0x48, 0x49, 0x4a, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58, 0x59, 0x5a, 0x63, 0x64, 0x65,
    0x66, 0x67, 0x68, 0x69, 0x6a, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x79, 0x7a, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88,
    0x89, 0x8a, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98, 0x99, 0x9a, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7, 0xa8, 0xa9,
    0xaa, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6, 0xb7, 0xb8, 0xb9, 0xba, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7, 0xc8, 0xc9, 0xca,
    0xd2, 0xd3, 0xd4, 0xd5, 0xd6, 0xd7, 0xd8, 0xd9, 0xda, 0xe1, 0xe2, 0xe3, 0xe4, 0xe5, 0xe6, 0xe7, 0xe8, 0xe9, 0xea,
    0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8, 0xf9, 0xfa,
  ],
};
const AC_CHR = {
  bits: [0, 2, 1, 2, 4, 4, 3, 4, 7, 5, 4, 4, 0, 1, 2, 0x77],
  vals: [
    0x00, 0x01, 0x02, 0x03, 0x11, 0x04, 0x05, 0x21, 0x31, 0x06, 0x12, 0x41, 0x51, 0x07, 0x61, 0x71, 0x13, 0x22, 0x32,
    0x81, 0x08, 0x14, 0x42, 0x91, 0xa1, 0xb1, 0xc1, 0x09, 0x23, 0x33, 0x52, 0xf0, 0x15, 0x62, 0x72, 0xd1, 0x0a, 0x16,
    0x24, 0x34, 0xe1, 0x25, 0xf1, 0x17, 0x18, 0x19, 0x1a, 0x26, 0x27, 0x28, 0x29, 0x2a, 0x35, 0x36, 0x37, 0x38, 0x39,
    0x3a, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48, 0x49, 0x4a, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58, 0x59, 0x5a, 0x63, 0x64,
    0x65, 0x66, 0x67, 0x68, 0x69, 0x6a, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x79, 0x7a, 0x82, 0x83, 0x84, 0x85, 0x86,
    0x87, 0x88, 0x89, 0x8a, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98, 0x99, 0x9a, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7,
    0xa8, 0xa9, 0xaa, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6, 0xb7, 0xb8, 0xb9, 0xba, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7, 0xc8,
    0xc9, 0xca, 0xd2, 0xd3, 0xd4, 0xd5, 0xd6, 0xd7, 0xd8, 0xd9, 0xda, 0xe2, 0xe3, 0xe4, 0xe5, 0xe6, 0xe7, 0xe8, 0xe9,
    0xea, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8, 0xf9, 0xfa,
  ],
};

/** Canonical Huffman codes: symbol → [code, length]. */
function huffCodes({ bits, vals }) {
  const codes = new Int32Array(256),
    lens = new Uint8Array(256);
  let code = 0,
    k = 0;
  for (let len = 1; len <= 16; len++) {
    for (let i = 0; i < bits[len - 1]; i++, k++) {
      codes[vals[k]] = code++;
      lens[vals[k]] = len;
    }
    code <<= 1;
  }
  return { codes, lens };
}
const H = { dcL: huffCodes(DC_LUM), dcC: huffCodes(DC_CHR), acL: huffCodes(AC_LUM), acC: huffCodes(AC_CHR) };

function scaleQ(base, quality) {
  const s = quality < 50 ? 5000 / quality : 200 - 2 * quality;
  return base.map((v) => Math.min(255, Math.max(1, Math.floor((v * s + 50) / 100))));
}

class Bytes {
  constructor(n = 1 << 16) {
    this.buf = new Uint8Array(n);
    this.len = 0;
  }
  push(b) {
    if (this.len === this.buf.length) {
      const nb = new Uint8Array(this.buf.length * 2);
      nb.set(this.buf);
      this.buf = nb;
    }
    this.buf[this.len++] = b;
  }
  out() {
    return Buffer.from(this.buf.buffer, 0, this.len);
  }
}

class BitWriter {
  constructor() {
    this.bytes = new Bytes();
    this.acc = 0;
    this.n = 0;
  }
  put(code, len) {
    // acc holds fewer than 8 pending bits; add `len` (≤ 16) more
    this.acc = (this.acc << len) | (code & ((1 << len) - 1));
    this.n += len;
    while (this.n >= 8) {
      const b = (this.acc >>> (this.n - 8)) & 255;
      this.bytes.push(b);
      if (b === 0xff) this.bytes.push(0);
      this.n -= 8;
    }
    this.acc &= (1 << this.n) - 1;
  }
  finish() {
    if (this.n > 0) this.put(0x7f, 8 - this.n);
    return this.bytes.out();
  }
}

function category(v) {
  let a = v < 0 ? -v : v,
    c = 0;
  while (a) {
    c++;
    a >>= 1;
  }
  return c;
}

function putValue(w, v, cat) {
  if (cat) w.put(v > 0 ? v : v + (1 << cat) - 1, cat);
}

function encodeBlock(w, coef, prevDc, dc, ac) {
  const diff = coef[0] - prevDc;
  const dcat = category(diff);
  w.put(dc.codes[dcat], dc.lens[dcat]);
  putValue(w, diff, dcat);
  acFirst(w, coef, 1, 63, 0, ac);
}

/** The default picture: a night sky, a planet and its orbit, in YCbCr 0..255. */
export function keplerPicture(width, height, seed) {
  const r = new Rng(`${seed}|picture`);
  const cx = width * (0.3 + 0.4 * r.next()),
    cy = height * (0.3 + 0.4 * r.next());
  const rad = Math.min(width, height) * (0.12 + 0.16 * r.next());
  const orbit = rad * (1.6 + 0.6 * r.next());
  const hue = r.next();
  return (x, y) => {
    const dx = x - cx,
      dy = y - cy,
      d = Math.hypot(dx, dy);
    if (d < rad) {
      const light = 0.55 + 0.45 * Math.max(0, 1 - Math.hypot(dx + rad * 0.4, dy + rad * 0.4) / (rad * 1.6));
      return [40 + 190 * light, 128 - 40 * Math.cos(hue * 6.28), 128 + 50 * Math.sin(hue * 6.28)];
    }
    const ring = Math.abs(Math.hypot(dx, dy * 2.2) - orbit);
    if (ring < 3) return [200, 128, 128];
    const t = y / height;
    return [20 + 60 * t, 150 - 20 * t, 118 + 10 * t];
  };
}

/**
 * Encode a JPEG. detail: AC noise strength in quantised units (0 = flat
 * blocks). comments: Buffers to write as COM segments (each ≤ 65,533 bytes).
 * sampling: '2x2' (YCbCr 4:2:0) or '1x1' (4:4:4); progressive: libjpeg's
 * default progression (10 scans) instead of one baseline scan.
 */
export function encodeJpeg({ comments = [], ...opts }) {
  return assemble({ ...encodeScan(opts), comments });
}

// libjpeg's default progression for YCbCr (jpeg_simple_progression): the DC
// terms at half precision, the first AC terms of Y, the chroma, the rest of Y,
// then each refinement. [components, Ss, Se, Ah, Al]
export const PROGRESSION = [
  [[0, 1, 2], 0, 0, 0, 1],
  [[0], 1, 5, 0, 2],
  [[2], 1, 63, 0, 1],
  [[1], 1, 63, 0, 1],
  [[0], 6, 63, 0, 2],
  [[0], 1, 63, 2, 1],
  [[0, 1, 2], 0, 0, 1, 0],
  [[2], 1, 63, 1, 0],
  [[1], 1, 63, 1, 0],
  [[0], 1, 63, 1, 0],
];

/**
 * The entropy-coded scans, SOS segments included (`scan`; `entropyBytes`
 * without them), and what assemble() needs besides the comments.
 */
export function encodeScan({
  width,
  height,
  seed = 'jpeg',
  detail = 2,
  quality = 85,
  picture,
  sampling = '2x2',
  progressive = false,
}) {
  const qL = scaleQ(Q_LUM, quality),
    qC = scaleQ(Q_CHR, quality);
  const paint = picture ?? keplerPicture(width, height, seed);
  const rng = new Rng(`${seed}|coefficients`);
  const hY = sampling === '2x2' ? 2 : 1;
  const mcuPx = 8 * hY;
  const mcuX = Math.ceil(width / mcuPx),
    mcuY = Math.ceil(height / mcuPx);
  // every component's blocks, zig-zag order, on the grid the MCUs cover
  const comps = [hY, 1, 1].map((h, ci) => {
    const bw = mcuX * h,
      bh = mcuY * h;
    return {
      h,
      bw,
      bh,
      // blocks a scan of this component alone covers
      sw: Math.ceil(Math.ceil((width * h) / hY) / 8),
      sh: Math.ceil(Math.ceil((height * h) / hY) / 8),
      coef: new Int16Array(bw * bh * 64),
      dc: ci === 0 ? H.dcL : H.dcC,
      ac: ci === 0 ? H.acL : H.acC,
    };
  });
  const coef = new Int32Array(64);
  const tau = 10;
  const scaleL = new Float64Array(64),
    scaleC = new Float64Array(64);
  let kMaxL = 1,
    kMaxC = 1;
  for (let k = 1; k < 64; k++) {
    scaleL[k] = detail * Math.exp(-k / tau);
    scaleC[k] = 0.5 * detail * Math.exp(-k / tau);
    if (scaleL[k] > 0.01) kMaxL = k + 1;
    if (scaleC[k] > 0.01) kMaxC = k + 1;
  }
  const fill = (scale, kMax) => {
    coef.fill(0, 1);
    for (let k = 1; k < kMax; k++) {
      const u = rng.next();
      const mag = Math.floor(-Math.log(1 - u) * scale[k] * 1.2);
      if (mag) coef[k] = Math.min(mag, 1023) * (rng.u32() & 1 ? 1 : -1);
    }
  };
  const store = (c, bx, by) => c.coef.set(coef, (by * c.bw + bx) * 64);
  const dcOf = (v, q) => Math.max(-1023, Math.min(1023, Math.round(((v - 128) * 8) / q)));
  for (let my = 0; my < mcuY; my++) {
    for (let mx = 0; mx < mcuX; mx++) {
      for (let b = 0; b < hY * hY; b++) {
        const bx = mx * hY + (b % hY),
          by = my * hY + Math.floor(b / hY);
        fill(scaleL, kMaxL);
        coef[0] = dcOf(paint(bx * 8 + 4, by * 8 + 4)[0], qL[0]);
        store(comps[0], bx, by);
      }
      const c = paint(mx * mcuPx + mcuPx / 2, my * mcuPx + mcuPx / 2);
      for (let ci = 1; ci <= 2; ci++) {
        fill(scaleC, kMaxC);
        coef[0] = dcOf(c[ci], qC[0]);
        store(comps[ci], mx, my);
      }
    }
  }
  const scans = progressive ? PROGRESSION : [[[0, 1, 2], 0, 63, 0, 0]];
  const parts = scans.map((sc) => writeScan(comps, mcuX, mcuY, ...sc));
  const entropyBytes = parts.reduce((n, [, data]) => n + data.length, 0);
  return { width, height, qL, qC, sampling, progressive, scan: Buffer.concat(parts.flat()), entropyBytes };
}

/** One scan: its SOS segment and entropy-coded data (ITU T.81 G.1.2 for the progressive ones). */
function writeScan(comps, mcuX, mcuY, ids, ss, se, ah, al) {
  const w = new BitWriter();
  const block = (c, bx, by) => c.coef.subarray((by * c.bw + bx) * 64, (by * c.bw + bx + 1) * 64);
  const zz = new Int32Array(64);
  const load = (c, bx, by) => {
    const b = block(c, bx, by);
    for (let k = 0; k < 64; k++) zz[k] = b[k];
    return zz;
  };
  if (ss === 0) {
    // DC (with the whole block in a baseline scan), interleaved
    const pred = [0, 0, 0];
    for (let my = 0; my < mcuY; my++)
      for (let mx = 0; mx < mcuX; mx++)
        for (const ci of ids) {
          const c = comps[ci];
          for (let b = 0; b < c.h * c.h; b++) {
            const z = load(c, mx * c.h + (b % c.h), my * c.h + Math.floor(b / c.h));
            if (se > 0) {
              encodeBlock(w, z, pred[ci], c.dc, c.ac);
              pred[ci] = z[0];
            } else if (ah === 0) {
              const v = z[0] >> al;
              const diff = v - pred[ci];
              const cat = category(diff);
              w.put(c.dc.codes[cat], c.dc.lens[cat]);
              putValue(w, diff, cat);
              pred[ci] = v;
            } else w.put((z[0] >> al) & 1, 1);
          }
        }
  } else {
    // AC band of one component, its blocks in raster order; an EOB per block
    // (EOBRUN 1), so that the standard tables hold every symbol needed
    const c = comps[ids[0]];
    for (let by = 0; by < c.sh; by++)
      for (let bx = 0; bx < c.sw; bx++) {
        const z = load(c, bx, by);
        if (ah === 0) acFirst(w, z, ss, se, al, c.ac);
        else acRefine(w, z, ss, se, al, c.ac);
      }
  }
  const data = w.finish();
  const sos = [ids.length];
  for (const ci of ids) sos.push(ci + 1, ci === 0 ? 0x00 : 0x11);
  sos.push(ss, se, (ah << 4) | al);
  return [segment(0xda, sos), data];
}

/** AC terms Ss..Se of a block at precision Al (the whole AC of a baseline block: 1, 63, 0). */
function acFirst(w, z, ss, se, al, ac) {
  let run = 0;
  for (let k = ss; k <= se; k++) {
    const raw = z[k];
    const v = raw < 0 ? -(-raw >> al) : raw >> al;
    if (v === 0) {
      run++;
      continue;
    }
    while (run > 15) {
      w.put(ac.codes[0xf0], ac.lens[0xf0]);
      run -= 16;
    }
    const cat = category(v);
    const sym = (run << 4) | cat;
    w.put(ac.codes[sym], ac.lens[sym]);
    putValue(w, v, cat);
    run = 0;
  }
  if (run > 0) w.put(ac.codes[0], ac.lens[0]);
}

function acRefine(w, z, ss, se, al, ac) {
  const abs = new Int32Array(64);
  let eob = 0;
  for (let k = ss; k <= se; k++) {
    const raw = z[k];
    abs[k] = (raw < 0 ? -raw : raw) >> al;
    if (abs[k] === 1) eob = k;
  }
  let run = 0;
  let bits = [];
  const flush = () => {
    for (const b of bits) w.put(b, 1);
    bits = [];
  };
  for (let k = ss; k <= se; k++) {
    const a = abs[k];
    if (a === 0) {
      run++;
      continue;
    }
    while (run > 15 && k <= eob) {
      w.put(ac.codes[0xf0], ac.lens[0xf0]);
      flush();
      run -= 16;
    }
    if (a > 1) {
      bits.push(a & 1); // a correction bit of a coefficient already nonzero
      continue;
    }
    const sym = (run << 4) | 1;
    w.put(ac.codes[sym], ac.lens[sym]);
    w.put(z[k] < 0 ? 0 : 1, 1);
    flush();
    run = 0;
  }
  if (run > 0 || bits.length) {
    w.put(ac.codes[0], ac.lens[0]);
    flush();
  }
}

function segment(marker, payload) {
  const p = Buffer.from(payload);
  if (p.length > 65533) throw new Error('JPEG segment too long');
  const h = Buffer.from([0xff, marker, (p.length + 2) >> 8, (p.length + 2) & 255]);
  return Buffer.concat([h, p]);
}

function dht(cls, id, { bits, vals }) {
  return [(cls << 4) | id, ...bits, ...vals];
}

export function assemble({ width, height, qL, qC, comments = [], scan, sampling = '2x2', progressive = false }) {
  const parts = [Buffer.from([0xff, 0xd8])];
  parts.push(segment(0xe0, [...Buffer.from('JFIF\0', 'latin1'), 1, 1, 0, 0, 1, 0, 1, 0, 0]));
  for (const c of comments) parts.push(segment(0xfe, c));
  parts.push(segment(0xdb, [0, ...ZIGZAG.map((i) => qL[i]), 1, ...ZIGZAG.map((i) => qC[i])]));
  const y = sampling === '2x2' ? 0x22 : 0x11;
  parts.push(
    segment(progressive ? 0xc2 : 0xc0, [
      8,
      height >> 8,
      height & 255,
      width >> 8,
      width & 255,
      3,
      1,
      y,
      0,
      2,
      0x11,
      1,
      3,
      0x11,
      1,
    ]),
  );
  parts.push(segment(0xc4, [...dht(0, 0, DC_LUM), ...dht(1, 0, AC_LUM), ...dht(0, 1, DC_CHR), ...dht(1, 1, AC_CHR)]));
  parts.push(scan, Buffer.from([0xff, 0xd9]));
  return Buffer.concat(parts);
}

/** Split `total` bytes of COM segments (markers included) into payload lengths. */
export function comLayout(total) {
  if (total === 0) return [];
  if (total < 4) return null;
  const n = Math.ceil(total / 65537);
  const payload = total - 4 * n;
  const base = Math.floor(payload / n);
  return Array.from({ length: n }, (_, i) => base + (i < payload % n ? 1 : 0));
}

/** Cut `filler` into COM payloads of the given lengths. */
export function splitComments(filler, lens) {
  const out = [];
  let o = 0;
  for (const l of lens) {
    out.push(filler.subarray(o, o + l));
    o += l;
  }
  return out;
}

/**
 * A JPEG of exactly `bytes` bytes (coded with `sampling` and `progressive`
 * as encodeScan): the scan takes about (1 − reserve) of it
 * and COM segments the rest. Returns { detail, fillLen, make(filler) } where
 * make(filler) writes the image with `fillLen` bytes of COM payload.
 */
export function jpegOfSize({
  width,
  height,
  bytes,
  seed,
  reserve = 0.05,
  minReserve = 16,
  quality = 85,
  sampling = '2x2',
  progressive = false,
}) {
  const coding = { quality, sampling, progressive };
  const scanAt = (detail) => encodeScan({ width, height, seed, detail, ...coding });
  const sizeOf = (e) => assemble(e).length;
  const budget = bytes - Math.max(minReserve, Math.round(bytes * reserve));
  // blocks: 6 per 16×16 MCU (4:2:0), 3 per 8×8 (4:4:4)
  const mcu = sampling === '2x2' ? 16 : 8;
  const blocksOf = (w, h) => Math.ceil(w / mcu) * Math.ceil(h / mcu) * (mcu === 16 ? 6 : 3);
  const blocks = blocksOf(width, height);
  if (sizeOf(scanAt(0)) > budget) throw new Error(`JPEG ${width}x${height} cannot be as small as ${bytes} bytes`);
  let encoded;
  if (blocks <= 6000) {
    // bisect the noise strength on the image itself
    let lo = 0,
      hi = 1;
    while (sizeOf(scanAt(hi)) <= budget && hi < 4096) {
      lo = hi;
      hi *= 2;
    }
    for (let i = 0; i < 22 && hi - lo > lo * 1e-4; i++) {
      const mid = (lo + hi) / 2;
      if (sizeOf(scanAt(mid)) <= budget) lo = mid;
      else hi = mid;
    }
    encoded = scanAt(lo);
  } else {
    // calibrate bytes per block on a 320×240 image, then shrink until it fits
    const cw = 320,
      ch = 240,
      cblocks = blocksOf(cw, ch);
    const per = (d) => encodeScan({ width: cw, height: ch, seed, detail: d, ...coding }).entropyBytes / cblocks;
    const want = (budget - 700) / blocks;
    let lo = 0,
      hi = 1;
    while (per(hi) <= want && hi < 4096) {
      lo = hi;
      hi *= 2;
    }
    for (let i = 0; i < 18 && hi - lo > lo * 1e-4; i++) {
      const mid = (lo + hi) / 2;
      if (per(mid) <= want) lo = mid;
      else hi = mid;
    }
    let detail = lo * 0.995;
    for (encoded = scanAt(detail); sizeOf(encoded) > budget; encoded = scanAt(detail)) detail *= 0.99;
  }
  const plainLen = sizeOf(encoded);
  const lens = comLayout(bytes - plainLen);
  if (!lens) throw new Error(`JPEG ${width}x${height}: no COM layout for ${bytes - plainLen} bytes`);
  const fillLen = lens.reduce((x, y) => x + y, 0);
  const make = (filler) => {
    const buf = assemble({ ...encoded, comments: splitComments(filler, lens) });
    if (buf.length !== bytes) throw new Error(`JPEG size ${buf.length} != ${bytes}`);
    return buf;
  };
  return { fillLen, make, scanBytes: encoded.entropyBytes };
}

/** Width, height, components and coding from the SOF0 or SOF2 segment; throws on a malformed file. */
export function readJpegInfo(buf) {
  if (buf[0] !== 0xff || buf[1] !== 0xd8) throw new Error('not a JPEG (no SOI)');
  let o = 2;
  const info = { comments: 0 };
  while (o + 4 <= buf.length) {
    if (buf[o] !== 0xff) throw new Error(`JPEG: expected a marker at ${o}`);
    const m = buf[o + 1];
    const len = buf.readUInt16BE(o + 2);
    if (m === 0xfe) info.comments++;
    if (m === 0xc0 || m === 0xc2) {
      info.precision = buf[o + 4];
      info.height = buf.readUInt16BE(o + 5);
      info.width = buf.readUInt16BE(o + 7);
      info.components = buf[o + 9];
      info.baseline = m === 0xc0;
      info.progressive = m === 0xc2;
    }
    if (m === 0xda) {
      info.scanOffset = o + 2 + len;
      break;
    }
    o += 2 + len;
  }
  if (buf[buf.length - 2] !== 0xff || buf[buf.length - 1] !== 0xd9) throw new Error('JPEG: no EOI at the end');
  if (!info.width) throw new Error('JPEG: no SOF0 or SOF2');
  return info;
}
