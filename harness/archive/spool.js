// Long texts of a file being read (a HAR's bodies) kept on disk instead of
// in memory: each text is appended, UTF-8, to one temporary file, which is
// unlinked at once and so goes with the process whatever happens; the text
// is read back when its body is made.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { base64Check, base64Decoder } from './base64.js';

const READ_BYTES = 128 << 10; // a text is read back a piece of this size at a time
const BATCH_CHARS = 128 << 10;

// A text kept in a spool: its length in characters, whether it is base64,
// and the text or its decoded bytes read back.
class SpooledText {
  constructor(spool, start, bytes, length, check) {
    Object.assign(this, { spool, start, bytes, length });
    this.base64Ok = check.ok();
    this.decodedBytes = check.bytes();
  }

  // each piece as a string; UTF-8 pieces are cut at a character boundary
  *pieces() {
    const buf = Buffer.alloc(Math.min(READ_BYTES, this.bytes));
    let rest = Buffer.alloc(0);
    for (let at = 0; at < this.bytes;) {
      const n = fs.readSync(this.spool.fd, buf, 0, Math.min(buf.length, this.bytes - at), this.start + at);
      if (n === 0) throw new Error('the spool file ended early');
      at += n;
      const all = rest.length ? Buffer.concat([rest, buf.subarray(0, n)]) : buf.subarray(0, n);
      let cut = all.length;
      if (at < this.bytes) while (cut > 0 && (all[cut - 1] & 0xc0) === 0x80) cut--; // continuation bytes
      if (at < this.bytes && cut > 0 && all[cut - 1] >= 0xc0) cut--; // a lead byte whose sequence is cut
      yield all.subarray(0, cut).toString('utf8');
      rest = Buffer.from(all.subarray(cut));
    }
  }

  string() {
    return [...this.pieces()].join('');
  }

  base64Bytes() {
    const decoder = base64Decoder(Buffer.alloc(this.decodedBytes));
    for (const piece of this.pieces()) decoder.push(piece);
    return decoder.end();
  }
}

/** A spool in the system's temporary folder; `close()` when done. */
export function openSpool() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-spool-'));
  const file = path.join(dir, 'texts');
  const fd = fs.openSync(file, 'w+');
  fs.rmSync(dir, { recursive: true, force: true }); // the open file stays readable until closed
  let end = 0;
  const spool = {
    fd,
    /** A writer for one text: `add(piece)` in order, `done()` → its SpooledText. */
    text() {
      const start = end;
      const check = base64Check();
      let length = 0;
      // the JSON reader hands over pieces of at most a few hundred characters:
      // they are checked and written a batch at a time
      let batch = [];
      let batched = 0;
      let high = ''; // a surrogate pair's first half, held until its second comes
      const flush = (last) => {
        let s = high + batch.join('');
        [batch, batched, high] = [[], 0, ''];
        const code = s.charCodeAt(s.length - 1);
        if (!last && code >= 0xd800 && code <= 0xdbff) [s, high] = [s.slice(0, -1), s.slice(-1)];
        check.add(s);
        const b = Buffer.from(s, 'utf8');
        fs.writeSync(fd, b, 0, b.length, end);
        end += b.length;
      };
      return {
        add(piece) {
          length += piece.length;
          batch.push(piece);
          batched += piece.length;
          if (batched >= BATCH_CHARS) flush(false);
        },
        done() {
          flush(true);
          return new SpooledText(spool, start, end - start, length, check);
        },
      };
    },
    close: () => fs.closeSync(fd),
  };
  return spool;
}

/** Pure: whether `t` is a text kept in a spool rather than a string. */
export const isSpooled = (t) => t instanceof SpooledText;
