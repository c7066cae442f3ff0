// A small GIF89a writer: global colour table, optional transparency (graphic
// control extension), a comment extension (used to make sizes exact), one
// LZW-compressed image.

function lzw(indices, minCodeSize) {
  const out = [];
  let acc = 0,
    nbits = 0;
  const emit = (code, size) => {
    acc |= code << nbits;
    nbits += size;
    while (nbits >= 8) {
      out.push(acc & 255);
      acc >>>= 8;
      nbits -= 8;
    }
  };
  const clear = 1 << minCodeSize,
    eoi = clear + 1;
  let size = minCodeSize + 1,
    next = eoi + 1;
  let table = new Map();
  emit(clear, size);
  let prefix = indices[0];
  for (let i = 1; i < indices.length; i++) {
    const k = indices[i];
    const key = (prefix << 8) | k;
    const hit = table.get(key);
    if (hit !== undefined) {
      prefix = hit;
      continue;
    }
    emit(prefix, size);
    if (next === 4096) {
      emit(clear, size);
      table = new Map();
      size = minCodeSize + 1;
      next = eoi + 1;
    } else {
      if (next >= 1 << size) size++;
      table.set(key, next++);
    }
    prefix = k;
  }
  emit(prefix, size);
  emit(eoi, size);
  if (nbits > 0) out.push(acc & 255);
  return Buffer.from(out);
}

function subBlocks(data) {
  const parts = [];
  for (let o = 0; o < data.length; o += 255) {
    const chunk = data.subarray(o, o + 255);
    parts.push(Buffer.from([chunk.length]), chunk);
  }
  parts.push(Buffer.from([0]));
  return Buffer.concat(parts);
}

/** Bytes a comment extension with an n-byte payload takes. */
export function commentExtensionSize(n) {
  return 2 + n + Math.ceil(n / 255) + 1;
}

/** The payload length whose comment extension takes exactly `total` bytes, or null. */
export function commentPayloadFor(total) {
  for (let n = Math.max(0, total - 3); n >= 0 && n >= total - 3 - Math.ceil(total / 255) - 1; n--) {
    if (commentExtensionSize(n) === total) return n;
  }
  return null;
}

/**
 * palette: [[r,g,b], …] (padded to a power of two ≥ 2); pixels: palette
 * indices, row by row; transparent: index or null; comment: Buffer or null.
 */
export function encodeGif({ width, height, palette, pixels, transparent = null, comment = null }) {
  let bits = 1;
  while (1 << bits < palette.length) bits++;
  const gct = Buffer.alloc(3 * (1 << bits));
  palette.forEach((c, i) => {
    gct[3 * i] = c[0];
    gct[3 * i + 1] = c[1];
    gct[3 * i + 2] = c[2];
  });
  const lsd = Buffer.alloc(7);
  lsd.writeUInt16LE(width, 0);
  lsd.writeUInt16LE(height, 2);
  lsd[4] = 0x80 | ((bits - 1) << 4) | (bits - 1);
  const parts = [Buffer.from('GIF89a', 'latin1'), lsd, gct];
  if (transparent != null) parts.push(Buffer.from([0x21, 0xf9, 4, 1, 0, 0, transparent, 0]));
  if (comment) parts.push(Buffer.from([0x21, 0xfe]), subBlocks(comment));
  const desc = Buffer.alloc(10);
  desc[0] = 0x2c;
  desc.writeUInt16LE(width, 5);
  desc.writeUInt16LE(height, 7);
  const minCode = Math.max(2, bits);
  parts.push(desc, Buffer.from([minCode]), subBlocks(lzw(pixels, minCode)), Buffer.from([0x3b]));
  return Buffer.concat(parts);
}

/** Logical screen size, colour table size and first image's size. */
export function readGifInfo(buf) {
  const sig = buf.subarray(0, 6).toString('latin1');
  if (sig !== 'GIF89a' && sig !== 'GIF87a') throw new Error('not a GIF');
  if (buf[buf.length - 1] !== 0x3b) throw new Error('GIF: no trailer');
  const info = { width: buf.readUInt16LE(6), height: buf.readUInt16LE(8), version: sig };
  let o = 13 + (buf[10] & 0x80 ? 3 * (1 << ((buf[10] & 7) + 1)) : 0);
  const skipBlocks = () => {
    while (buf[o] !== 0) o += buf[o] + 1;
    o++;
  };
  while (o < buf.length) {
    const b = buf[o];
    if (b === 0x21) {
      o += 2;
      skipBlocks();
      continue;
    }
    if (b === 0x2c) {
      info.image = { width: buf.readUInt16LE(o + 5), height: buf.readUInt16LE(o + 7), lzwMinCodeSize: buf[o + 10] };
      o += 10;
      if (buf[o - 1] & 0x80) o += 3 * (1 << ((buf[o - 1] & 7) + 1));
      info.image.dataOffset = o;
      o++;
      skipBlocks();
      continue;
    }
    if (b === 0x3b) break;
    throw new Error(`GIF: unexpected byte ${b} at ${o}`);
  }
  return info;
}

/** Decode the first image's indices (for tests): LZW decoder. */
export function decodeGifIndices(buf) {
  const info = readGifInfo(buf);
  let o = info.image.dataOffset;
  const min = buf[o++];
  const data = [];
  while (buf[o] !== 0) {
    data.push(...buf.subarray(o + 1, o + 1 + buf[o]));
    o += buf[o] + 1;
  }
  const clear = 1 << min,
    eoi = clear + 1;
  let size = min + 1,
    dict = [],
    prev = null,
    bitPos = 0;
  const out = [];
  const reset = () => {
    dict = [];
    for (let i = 0; i < clear; i++) dict.push([i]);
    dict.push(null, null);
    size = min + 1;
    prev = null;
  };
  reset();
  for (;;) {
    let code = 0;
    for (let i = 0; i < size; i++, bitPos++) code |= ((data[bitPos >> 3] >> (bitPos & 7)) & 1) << i;
    if (code === clear) {
      reset();
      continue;
    }
    if (code === eoi) break;
    let entry;
    if (code < dict.length) entry = dict[code];
    else if (code === dict.length && prev) entry = [...prev, prev[0]];
    else throw new Error('GIF: bad LZW code');
    out.push(...entry);
    if (prev) {
      dict.push([...prev, entry[0]]);
      if (dict.length === 1 << size && size < 12) size++;
    }
    prev = entry;
  }
  return out;
}
