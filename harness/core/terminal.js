// Text from input (a HAR, an archive, a file or folder name, a program's
// output) as it may reach a terminal: a control character could move the
// cursor, clear the screen or draw lines that satbench never wrote, and a
// bidirectional override could show text in another order than it is.

// The bidirectional marks, embeddings, overrides and isolates.
const BIDI = new Set([0x61c, 0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069]);
// C0 controls but tab, DEL, C1 controls (0x9b starts an escape sequence like ESC [), and BIDI.
const unsafe = (code) => (code < 0x20 && code !== 0x09) || (code >= 0x7f && code <= 0x9f) || BIDI.has(code);

const visible = (c) => {
  const code = c.charCodeAt(0);
  return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
};

/** Pure: `text` with each character that a terminal would act on written as a visible escape (\x1b, \u202e); a newline too, so that one line stays one line. */
export const terminalSafe = (text) =>
  Array.from(String(text), (c) => (unsafe(c.codePointAt(0)) ? visible(c) : c)).join('');

/** Pure: a message of several lines, each line made terminal-safe. */
export const terminalSafeLines = (text) => String(text).split('\n').map(terminalSafe).join('\n');
