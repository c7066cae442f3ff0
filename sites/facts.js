// Does a built site follow the content facts measured from the original
// (reference/kepler-content-facts.json)? Pure functions of the files' bytes:
//   JPEG: SOF marker (C0 baseline, C2 progressive), each component's sampling
//         factors ("HxV") and the number of SOS markers (scans);
//   text: split on LF — `lines` the LF-terminated lines (a last piece without LF
//         counts too), `longest_line_bytes` the longest piece, its CR included,
//         `line_ending` CRLF when every LF follows a CR (LF when none does),
//         `non_ascii_bytes` the bytes ≥ 0x80, `charset` US-ASCII without them,
//         ISO-8859-1 with them when the file is not valid UTF-8;
//   CSS:  `rule_blocks` the '{' in the file, as issue 16 counted the replica
//         (163 in css/f3_xxl.css); `rule_blocks_outside_comments` the top-level
//         blocks a browser sees, which a file whose comments hold no '{' has as many of;
//   HTML: the noncompressible frame, a text prefix and then raw bytes. The
//         `text_prefix` is the leading LF-terminated lines of printable ASCII
//         (a blank one included): its `lines` the non-blank ones, `line_bytes`
//         their distinct lengths without the line ending, `characters` whether
//         they are lower-case words and spaces only (that they are English is
//         not checked); the `random_part` is every byte after it, measured as a
//         byte histogram (`share_of_bytes_at_or_above_0x80` to two decimals) and
//         with the text files' `line_ending`.
// A fact whose value is an object is checked key by key ("text_prefix.lines");
// PROSE keys describe a file and are not measured.
import { readFileSync } from 'node:fs';
import path from 'node:path';

/** Markers and scans of a JPEG: {coding, sampling: ['HxV', …], scans}. */
export function jpegFacts(buf) {
  if (buf[0] !== 0xff || buf[1] !== 0xd8) throw new Error('not a JPEG (no SOI)');
  const out = { coding: null, sampling: null, scans: 0 };
  let o = 2;
  while (o + 1 < buf.length) {
    if (buf[o] !== 0xff) throw new Error(`JPEG: expected a marker at ${o}`);
    const m = buf[o + 1];
    if (m === 0xff) {
      o++; // fill byte
      continue;
    }
    if (m === 0xd9) break; // EOI
    if (m === 0xd8 || m === 0x01 || (m >= 0xd0 && m <= 0xd7)) {
      o += 2;
      continue;
    }
    const len = buf.readUInt16BE(o + 2);
    if (m >= 0xc0 && m <= 0xcf && m !== 0xc4 && m !== 0xc8 && m !== 0xcc) {
      out.coding = m === 0xc0 ? 'baseline' : m === 0xc2 ? 'progressive' : `SOF${(m - 0xc0).toString(16)}`;
      const n = buf[o + 9];
      out.sampling = Array.from({ length: n }, (_, i) => {
        const hv = buf[o + 11 + i * 3];
        return `${hv >> 4}x${hv & 15}`;
      });
    }
    o += 2 + len;
    if (m === 0xda) {
      out.scans++;
      // entropy-coded data runs to the next marker that is neither a stuffed 0xFF00 nor RSTn
      while (
        o + 1 < buf.length &&
        !(buf[o] === 0xff && buf[o + 1] !== 0 && !(buf[o + 1] >= 0xd0 && buf[o + 1] <= 0xd7))
      )
        o++;
    }
  }
  return out;
}

function isUtf8(buf) {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(buf);
    return true;
  } catch {
    return false;
  }
}

/** Line layout and charset of a text file, measured as the facts file says. */
export function textFacts(buf) {
  let lines = 0,
    longest = 0,
    crlf = 0,
    start = 0,
    nonAscii = 0;
  for (let i = 0; i < buf.length; i++) {
    if (buf[i] >= 0x80) nonAscii++;
    if (buf[i] === 0x0a) {
      lines++;
      longest = Math.max(longest, i - start);
      if (i > 0 && buf[i - 1] === 0x0d) crlf++;
      start = i + 1;
    }
  }
  if (start < buf.length) {
    lines++;
    longest = Math.max(longest, buf.length - start);
  }
  const lfs = buf.length && buf[buf.length - 1] === 0x0a ? lines : lines - 1;
  const lineEnding = lfs === 0 ? 'none' : crlf === lfs ? 'CRLF' : crlf === 0 ? 'LF' : 'mixed';
  const charset = nonAscii === 0 ? 'US-ASCII' : isUtf8(buf) ? 'UTF-8' : 'ISO-8859-1';
  return { lines, longest_line_bytes: longest, line_ending: lineEnding, non_ascii_bytes: nonAscii, charset };
}

/** Rule blocks of a style sheet: every '{', and the top-level blocks outside comments. */
export function cssFacts(buf) {
  const raw = buf.toString('latin1');
  let depth = 0,
    blocks = 0;
  for (const c of raw.replace(/\/\*[\s\S]*?\*\//g, '')) {
    if (c === '{' && depth++ === 0) blocks++;
    else if (c === '}') depth = Math.max(0, depth - 1);
  }
  return { rule_blocks: raw.split('{').length - 1, rule_blocks_outside_comments: blocks };
}

export const WORDS_ONLY = 'lower-case English words and spaces, no markup';

/** The length of the leading LF-terminated lines whose bytes before CR LF (or LF) are printable ASCII. */
function textPrefixLength(buf) {
  let start = 0;
  for (let i = 0; i < buf.length; i++) {
    if (buf[i] === 0x0a) start = i + 1;
    else if ((buf[i] < 0x20 || buf[i] > 0x7e) && !(buf[i] === 0x0d && buf[i + 1] === 0x0a)) break;
  }
  return start;
}

/** Layout of a text prefix followed by raw bytes: {bytes, text_prefix: {…}, random_part: {…}}. */
export function rawFacts(buf) {
  const cut = textPrefixLength(buf);
  const prefix = buf.subarray(0, cut);
  const rest = buf.subarray(cut);
  const lines = prefix
    .toString('latin1')
    .split('\n')
    .slice(0, -1)
    .map((l) => l.replace(/\r$/, ''))
    .filter((l) => l !== '');
  const counts = new Array(256).fill(0);
  for (const b of rest) counts[b]++;
  const text = textFacts(rest);
  return {
    bytes: buf.length,
    text_prefix: {
      bytes: cut,
      lines: lines.length,
      line_bytes: [...new Set(lines.map((l) => l.length))].sort((a, b) => a - b),
      line_ending: textFacts(prefix).line_ending,
      lines_identical: lines.length > 0 && lines.every((l) => l === lines[0]),
      characters:
        lines.length > 0 && lines.every((l) => /^[a-z]+( [a-z]+)*$/.test(l))
          ? WORDS_ONLY
          : 'not only lower-case words and spaces',
    },
    random_part: {
      bytes: rest.length,
      distinct_byte_values: counts.filter((c) => c > 0).length,
      byte_frequency_min: Math.min(...counts),
      byte_frequency_max: Math.max(...counts),
      share_of_bytes_at_or_above_0x80: rest.length ? Math.round((100 * text.non_ascii_bytes) / rest.length) / 100 : 0,
      count_lt: counts[0x3c],
      count_gt: counts[0x3e],
      count_amp: counts[0x26],
      count_nul: counts[0x00],
      count_lf: counts[0x0a],
      count_cr: counts[0x0d],
      line_ending: text.line_ending,
    },
  };
}

/** The kind of a file by its name: 'jpeg', 'text', 'css', 'html' or null. */
export function factKind(file) {
  if (/\.jpe?g$/i.test(file)) return 'jpeg';
  if (/\.txt$/i.test(file)) return 'text';
  if (/\.css$/i.test(file)) return 'css';
  if (/\.html?$/i.test(file)) return 'html';
  return null;
}

const MEASURE = { jpeg: jpegFacts, text: textFacts, css: cssFacts, html: rawFacts };

// what a file is and what its facts did, in words: not measured
const PROSE = new Set(['layout', 'description', 'measured_effect']);

/** The measurable facts of `want` as [name, value], objects opened into "key.key". */
function factList(want, prefix = '') {
  return Object.entries(want).flatMap(([k, v]) => {
    if (PROSE.has(k)) return [];
    if (v && typeof v === 'object' && !Array.isArray(v)) return factList(v, `${prefix}${k}.`);
    return [[prefix + k, v]];
  });
}

const lookUp = (got, name) => name.split('.').reduce((o, k) => o?.[k], got);

/**
 * One file against its facts: [{fact, want, got, holds}]. `buf` is the
 * file's bytes, or null when it is missing (then no fact holds).
 */
export function checkFile(file, buf, want) {
  const kind = factKind(file);
  let got = {};
  if (buf != null && kind) {
    try {
      got = MEASURE[kind](buf);
    } catch (e) {
      got = { error: e.message };
    }
  }
  return factList(want).map(([fact, w]) => {
    const g = lookUp(got, fact) ?? null;
    return { fact, want: w, got: g, holds: JSON.stringify(g) === JSON.stringify(w) };
  });
}

/**
 * A site folder against the facts: {files: [{path, kind, facts: [...]}],
 * kinds: {KIND: {files, facts: {FACT: {holds, of}}}}, failures: ['path: fact want W got G']}.
 * `read(path)` returns a file's bytes or null (default: read from `dir`).
 */
export function checkSite(dir, facts, read = (p) => readOrNull(path.join(dir, p))) {
  const files = [];
  const kinds = {};
  const failures = [];
  for (const [p, want] of Object.entries(facts.files)) {
    const kind = factKind(p) ?? 'other';
    const checked = checkFile(p, read(p), want);
    files.push({ path: p, kind, facts: checked });
    const k = (kinds[kind] ??= { files: 0, facts: {} });
    k.files++;
    for (const c of checked) {
      const f = (k.facts[c.fact] ??= { holds: 0, of: 0 });
      f.of++;
      if (c.holds) f.holds++;
      else failures.push(`${p}: ${c.fact} want ${JSON.stringify(c.want)} got ${JSON.stringify(c.got)}`);
    }
  }
  return { files, kinds, failures };
}

function readOrNull(file) {
  try {
    return readFileSync(file);
  } catch (e) {
    if (e.code === 'ENOENT') return null;
    throw e;
  }
}
