// Seeded pseudo-random numbers for the site generator (never Math.random):
// sfc32, seeded from a SHA-256 of a string, so every object of every site
// has its own reproducible stream.
import { createHash } from 'node:crypto';

export class Rng {
  constructor(seed) {
    const h = createHash('sha256').update(String(seed)).digest();
    this.a = h.readUInt32LE(0);
    this.b = h.readUInt32LE(4);
    this.c = h.readUInt32LE(8);
    this.d = h.readUInt32LE(12) | 1;
    for (let i = 0; i < 12; i++) this.u32();
  }

  /** Next unsigned 32-bit integer. */
  u32() {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** Uniform in [0, 1). */
  next() {
    return this.u32() / 4294967296;
  }

  /** Integer in [0, n). */
  int(n) {
    return Math.floor(this.next() * n);
  }

  pick(list) {
    return list[this.int(list.length)];
  }

  /** Buffer of n bytes, each drawn from `alphabet` (a Buffer of allowed byte values). */
  bytes(n, alphabet = null) {
    const out = Buffer.allocUnsafe(n);
    if (!alphabet) {
      let i = 0;
      for (; i + 4 <= n; i += 4) out.writeUInt32LE(this.u32(), i);
      for (; i < n; i++) out[i] = this.u32() & 255;
    } else {
      const m = alphabet.length;
      for (let i = 0; i < n; i++) out[i] = alphabet[Math.floor(this.next() * m)];
    }
    return out;
  }
}
