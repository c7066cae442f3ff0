// Pure: base64 as a HAR holds a body, read piece by piece so that a body of
// any size is checked and decoded without its whole text in memory.
// Buffer.from(text, 'base64') decodes "A" as nothing rather than refusing
// it, so the text is checked first. DevTools writes no whitespace; other
// tools may wrap lines, which are skipped.

const WHITESPACE = /\s+/g;
const SOME_WHITESPACE = /\s/;
const BASE64_CHARS = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * An incremental check of base64 text: `add(piece)` for each piece in
 * order, then `ok()` whether the whole was base64 (padding, when written,
 * only at the end and making a multiple of 4) and `bytes()` how many bytes
 * it decodes to.
 */
export function base64Check() {
  let chars = 0; // without whitespace
  let pad = 0;
  let bad = false;
  return {
    add(piece) {
      const t = SOME_WHITESPACE.test(piece) ? piece.replace(WHITESPACE, '') : piece;
      if (!t) return;
      // a character after padding, or more than two '='
      if (pad && !/^=*$/.test(t)) bad = true;
      const m = BASE64_CHARS.exec(t);
      if (!m) bad = true;
      else for (let i = t.length - 1; i >= 0 && t[i] === '='; i--) pad++;
      if (pad > 2) bad = true;
      chars += t.length;
    },
    ok: () => !bad && chars % 4 !== 1 && (pad === 0 || chars % 4 === 0),
    bytes: () => Math.floor(chars / 4) * 3 + Math.max(0, (chars % 4) - 1) - pad,
  };
}

/** Pure: whether `text` is whole base64 (base64Check). */
export function isBase64(text) {
  const check = base64Check();
  check.add(text);
  return check.ok();
}

/**
 * Decodes base64 pieces (checked whole by base64Check) into `out`, a
 * Buffer of the decoded size: `push(piece)` in order, then `end()` → out.
 * Each piece is decoded up to a multiple of 4 characters, the rest kept
 * for the next.
 */
export function base64Decoder(out) {
  let carry = '';
  let at = 0;
  const decode = (t) => {
    at += out.write(t, at, 'base64');
  };
  return {
    push(piece) {
      const t = carry + (SOME_WHITESPACE.test(piece) ? piece.replace(WHITESPACE, '') : piece);
      const whole = t.length - (t.length % 4);
      if (whole) decode(t.slice(0, whole));
      carry = t.slice(whole);
    },
    end() {
      if (carry) decode(carry);
      carry = '';
      return at === out.length ? out : out.subarray(0, at);
    },
  };
}
