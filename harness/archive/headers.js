// Response headers in an archive: [name, value] pairs as the server sent
// them, less those that belong to one connection or that the replay server
// computes itself.

// Hop-by-hop headers, and content-length: the server frames the body it sends.
export const DROPPED_HEADERS = ['connection', 'keep-alive', 'transfer-encoding', 'content-length'];

// Pure: whether `value` holds what a field value may not (RFC 9110 5.5):
// a control character other than tab.
export const hasControlCharacter = (value) => [...value].some((c) => (c < ' ' && c !== '\t') || c === '\x7f');

// Pure: the headers an archive keeps. HTTP/2 and HTTP/3 pseudo-headers
// (":status"), which some HAR writers list, go too, and so does a value no
// server can send (a HAR file may hold one).
export const servedHeaders = (headers) =>
  headers.filter(
    ([name, value]) =>
      !name.startsWith(':') && !DROPPED_HEADERS.includes(name.toLowerCase()) && !hasControlCharacter(value),
  );

// Pure: the values of header `name` (any case) as one comma-separated value, or null.
export function headerValue(headers, name) {
  const values = headers.filter(([n]) => n.toLowerCase() === name).map(([, v]) => v);
  return values.length ? values.join(', ') : null;
}

// Pure: [name, value] pairs from a headers object whose values join a
// repeated header's lines with "\n" (as DevTools and puppeteer give them).
export const headerPairs = (obj) =>
  Object.entries(obj).flatMap(([name, value]) =>
    String(value)
      .split('\n')
      .map((v) => [name, v]),
  );
