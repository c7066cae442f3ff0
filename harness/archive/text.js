// Text bodies back to bytes. DevTools, and so a HAR file, hands a text body
// over as a string decoded in the body's charset; the archive keeps the
// bytes the server sent, so the string is written back in that charset:
// UTF-8 and UTF-16LE by node, a single-byte charset (windows-1252, which
// "iso-8859-1" means to a browser, ISO-8859-*, KOI8-R, …) by the inverse of
// its decoder. Multi-byte legacy charsets (Shift_JIS, GBK, …) cannot be
// written back.

const MULTI_BYTE = new Set(['gbk', 'gb18030', 'big5', 'euc-jp', 'iso-2022-jp', 'shift_jis', 'euc-kr', 'utf-16be']);

// Pure: the charset named by a content-type value, or, for HTML, a <meta>
// in the first 1024 characters of the text (where browsers look), or null.
export function declaredCharset(contentType, text) {
  const header = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(contentType ?? '');
  if (header) return header[1];
  if (!/html/i.test(contentType ?? '')) return null;
  const meta = /<meta[^>]*?charset\s*=\s*["']?([\w.:-]+)/i.exec(text.slice(0, 1024));
  return meta ? meta[1] : null;
}

const inverses = new Map();
// The bytes of each character of a single-byte charset, from its decoder.
function inverseOf(encoding) {
  if (!inverses.has(encoding)) {
    const decoder = new TextDecoder(encoding);
    const map = new Map();
    for (let b = 255; b >= 0; b--) map.set(decoder.decode(Uint8Array.of(b)), b);
    inverses.set(encoding, map);
  }
  return inverses.get(encoding);
}

/**
 * The bytes of `text` in `charset` (null: UTF-8), or {error} saying why it
 * cannot be written back.
 */
export function textBytes(text, charset) {
  let encoding = 'utf-8';
  if (charset) {
    try {
      encoding = new TextDecoder(charset).encoding;
    } catch {
      return { error: `charset ${JSON.stringify(charset)} is unknown` };
    }
  }
  if (encoding === 'utf-8') return { bytes: Buffer.from(text, 'utf8') };
  if (encoding === 'utf-16le') return { bytes: Buffer.from(text, 'utf16le') };
  if (MULTI_BYTE.has(encoding)) return { error: `charset ${encoding} cannot be written back (multi-byte)` };
  const inverse = inverseOf(encoding);
  const bytes = Buffer.alloc(text.length);
  for (let i = 0; i < text.length; i++) {
    const b = inverse.get(text[i]);
    if (b === undefined) return { error: `charset ${encoding} has no byte for U+${text.codePointAt(i).toString(16)}` };
    bytes[i] = b;
  }
  return { bytes };
}
