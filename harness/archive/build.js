// Pure: a page's archive from the responses a browser saw (record) or a HAR
// file holds (import-har). Each response becomes an entry whose body is
// stored as it went on the wire, or a line of `missing` that says why it
// cannot be served; none is dropped unsaid.
import { UsageError } from '../core/errors.js';
import { FORMAT, VERSION, validateArchive } from './format.js';
import { servedHeaders, headerValue } from './headers.js';
import { KNOWN_CODINGS, encodeBody, unknownCoding } from './encoding.js';
import { declaredCharset, textBytes } from './text.js';
import { archiveUrl } from './urls.js';
import { pageChain } from './match.js';
import { textBase64Bytes, textString } from './body-text.js';

// Pure: whether a response has no body to store: HEAD, 1xx, 204, 205, 304,
// and redirects (DevTools never hands over a redirect's body).
export const carriesNoBody = (method, status) =>
  method === 'HEAD' || status < 200 || status === 204 || status === 205 || (status >= 300 && status < 400);

// The body's wire bytes, or {error}. `content` is the body as DevTools
// gives it: {text, base64}, decoded from its content-encoding; `text` a
// string or a text kept on disk (body-text.js).
function wireBody(content, headers) {
  let bytes;
  if (content.base64) bytes = textBase64Bytes(content.text);
  else {
    const string = textString(content.text);
    const charset = declaredCharset(headerValue(headers, 'content-type'), string);
    const text = textBytes(string, charset);
    if (text.error) return { error: `text body: ${text.error}` };
    bytes = text.bytes;
  }
  const coding = headerValue(headers, 'content-encoding');
  const unknown = unknownCoding(coding);
  if (unknown)
    return {
      error: `content-encoding ${JSON.stringify(unknown)} cannot be applied (known: ${KNOWN_CODINGS.join(', ')})`,
    };
  return { bytes: encodeBody(bytes, coding) };
}

const keyOf = (method, url) => `${method} ${url}`;

/**
 * The archive of `page` from `responses`, each {method, url, status,
 * headers: [[name, value]], content: {text, base64} | null, noContent:
 * why there is no content, missing: why the response cannot be stored,
 * fromCache: served by the browser's cache}, in the order the page asked
 * them. Returns {archive, bodies: [[name, Buffer]], skipped: URLs that are
 * not http(s) (data:, blob:: no server sends them), cached: cache hits
 * left out because an entry from the network answers them}. Throws a
 * UsageError when no entry answers the page itself.
 */
export function buildArchive({ page, source, created, responses }) {
  const entries = [];
  const missing = [];
  const bodies = [];
  const skipped = [];
  let cached = 0;
  const fromNetwork = new Set(
    responses.filter((r) => !r.fromCache && !r.missing).map((r) => keyOf(r.method, archiveUrl(r.url))),
  );
  for (const r of responses) {
    const url = archiveUrl(r.url);
    if (url === null) {
      skipped.push(r.url);
      continue;
    }
    const lose = (reason) => missing.push({ method: r.method, url, reason });
    if (r.missing) lose(r.missing);
    else if (r.fromCache) {
      if (fromNetwork.has(keyOf(r.method, url))) cached++;
      else lose("served from Chromium's cache, not the network, and no response from the network has it");
    } else {
      const entry = { method: r.method, url, status: r.status, headers: servedHeaders(r.headers), body: null };
      if (carriesNoBody(r.method, r.status)) entries.push(entry);
      else if (!r.content) lose(r.noContent ?? 'no body');
      else {
        const body = wireBody(r.content, entry.headers);
        if (body.error) lose(body.error);
        else {
          entry.body = `bodies/${String(entries.length).padStart(4, '0')}`;
          bodies.push([entry.body, body.bytes]);
          entries.push(entry);
        }
      }
    }
  }
  const archive = { format: FORMAT, version: VERSION, page: archiveUrl(page), created, source, entries, missing };
  if (!archive.page) throw new UsageError(`${page}: expected an absolute http(s) URL`);
  const load = pageChain(archive);
  if (load.loop) throw new UsageError(`${source.from}: the page ${archive.page} redirects in a loop`);
  if (load.unanswered) {
    const lost = missing.find((m) => m.url === load.unanswered);
    const where = load.chain.length ? ` (where ${archive.page} redirects)` : '';
    throw new UsageError(
      `${source.from}: the page ${load.unanswered}${where} ${lost ? `cannot be stored: ${lost.reason}` : 'is not among the responses'}`,
    );
  }
  validateArchive(archive, 'the archive being made'); // a failure here is a bug of ours
  return { archive, bodies, skipped, cached };
}
