// URLs as an archive holds and compares them: absolute http(s) URLs in the
// form the WHATWG URL parser writes (what Chromium sends): lower-case scheme
// and host, no default port, no fragment.

const DEFAULT_PORTS = { 'http:': '80', 'https:': '443' };

// Pure: `url` in that form, or null for a URL that does not parse or is not http(s).
export function archiveUrl(url) {
  let u;
  try {
    u = new URL(url);
  } catch {
    return null;
  }
  if (!Object.hasOwn(DEFAULT_PORTS, u.protocol)) return null;
  u.hash = '';
  return u.href;
}

// Pure: the origin of an archive URL with its port always written: "https://cdn.example:443".
export function originOf(url) {
  const u = new URL(url);
  return `${u.protocol}//${u.hostname}:${u.port || DEFAULT_PORTS[u.protocol]}`;
}

// Pure: an archive URL without its query string (the fallback match).
export const withoutQuery = (url) => url.split('?')[0];
