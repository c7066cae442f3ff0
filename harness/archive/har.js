// Pure: a HAR 1.2 file, as Chrome DevTools writes it with "Save all as HAR
// with content", turned into the responses archive/build.js stores. A HAR
// may hold several page loads: the first page's entries are taken, in the
// file's order, and the page is that page's own URL (pagePick). The file
// passes the HAR 1.2 schema first (har-check.js); the checks here are what
// a replay needs beyond it.
import { UsageError } from '../core/errors.js';
import { terminalSafe } from '../core/terminal.js';
import { carriesNoBody } from './build.js';
import { TOKEN, show } from './format.js';
import { checkHar } from './har-check.js';
import { headerValue } from './headers.js';
import { archiveUrl } from './urls.js';
import { isBodyText, textIsBase64 } from './body-text.js';

// DevTools' _error is text from the network stack: kept short and terminal-safe.
const harError = (v) => terminalSafe(String(v).slice(0, 200));

// One HAR entry (its shape checked by the schema) as a response; `key` names it in errors.
function harResponse(e, key, file) {
  const fail = (k, expected) => new UsageError(`${file}: ${key}.${k}: expected ${expected}`);
  if (!TOKEN.test(e.request.method)) throw fail('request.method', `an HTTP method, got ${show(e.request.method)}`);
  const { response } = e;
  const status = response.status;
  if (status !== 0 && !(status >= 100 && status <= 599))
    throw fail('response.status', `0 (no response) or a status 100–599, got ${show(status)}`);
  // a pseudo-header (":status") is dropped later; any other name must be one a server can send
  const badName = response.headers.findIndex((h) => !h.name.startsWith(':') && !TOKEN.test(h.name));
  if (badName >= 0)
    throw fail(
      `response.headers[${badName}].name`,
      `a header name (RFC 9110 token), got ${show(response.headers[badName].name)}`,
    );
  const c = response.content;
  if (c.encoding !== undefined && c.encoding !== 'base64')
    throw fail('response.content.encoding', `"base64" or none, got ${JSON.stringify(c.encoding)}`);
  if (c.text !== undefined && (!isBodyText(c.text) || (c.encoding === 'base64' && !textIsBase64(c.text))))
    throw fail('response.content.text', c.encoding === 'base64' ? 'base64 text' : 'a string');
  const r = {
    key,
    method: e.request.method,
    url: e.request.url,
    status: response.status,
    headers: response.headers.map((h) => [h.name, h.value]),
    content: null,
    fromCache: Boolean(e._fromCache),
    resourceType: e._resourceType,
    mimeType: c.mimeType,
  };
  if (response.status === 0 || response._error)
    r.missing =
      response.status === 0
        ? `no response (${response._error ? harError(response._error) : 'status 0'})`
        : `failed: ${harError(response._error)}`;
  else if (e._fetchedViaServiceWorker) r.missing = 'served by a service worker, not the network';
  if (c.text !== undefined) r.content = { text: c.text, base64: c.encoding === 'base64' };
  else if (c.size === 0) r.content = { text: '', base64: false };
  else r.noContent = `the HAR has no content for its body${c.size > 0 ? ` (${c.size} bytes)` : ''}`;
  return r;
}

// Pure: where response `r` redirects (archive form), or null.
const redirectOf = (r) => {
  const location = r.status >= 300 && r.status < 400 ? headerValue(r.headers, 'location') : null;
  return location === null ? null : archiveUrl(URL.parse(location, r.url)?.href ?? '');
};
const MAX_HOPS = 20;
const HTML_TYPES = ['text/html', 'application/xhtml+xml'];
// Pure: the media type a response says it has (content-type, else the HAR's mimeType), or null.
const mediaType = (r) =>
  (headerValue(r.headers, 'content-type') ?? r.mimeType ?? '').split(';')[0].trim().toLowerCase() || null;
const isHtml = (r) => HTML_TYPES.includes(mediaType(r));

// Pure: the response `url` ends at (redirects followed among `responses`), or null.
function landing(url, responses) {
  const seen = new Set();
  for (let at = url; at && !seen.has(at) && seen.size <= MAX_HOPS;) {
    seen.add(at);
    const r = responses.find((x) => x.method === 'GET' && archiveUrl(x.url) === at && !x.missing);
    if (!r) return null;
    const next = redirectOf(r);
    if (next === null) return r;
    at = next;
  }
  return null;
}

/**
 * Pure: {url, from} of the page among the first page's `responses`: its own
 * URL as the HAR names it (log.pages[0].title, as DevTools, WebPageTest and
 * browsertime write it, when an entry was asked for it), from the request
 * that redirected to it if one did; else the first document (DevTools'
 * _resourceType); else the first HTML response. `from` says which. Throws a
 * UsageError when there is none, or when the page does not end at an HTML
 * response.
 */
export function pagePick(pageInfo, responses, file) {
  const at = (r) => archiveUrl(r.url);
  let pick = null;
  const title = typeof pageInfo?.title === 'string' ? archiveUrl(pageInfo.title) : null;
  if (title && responses.some((r) => at(r) === title)) {
    let url = title;
    for (let hops = 0, from; hops < MAX_HOPS && (from = responses.find((r) => redirectOf(r) === url)); hops++)
      url = at(from);
    pick = { url, from: `log.pages[0].title${url === title ? '' : `, from the request redirected to it`}` };
  } else {
    const doc = responses.find((r) => r.resourceType === 'document') ?? responses.find(isHtml);
    if (doc)
      pick = {
        url: doc.url,
        from: `${doc.resourceType === 'document' ? 'its first document' : 'its first HTML response'}, ${doc.key}`,
      };
  }
  if (!pick)
    throw new UsageError(
      `${file}: no page among the entries: expected log.pages[0].title to be the URL of an entry, or an HTML response`,
    );
  const end = landing(archiveUrl(pick.url), responses);
  if (end && !isHtml(end))
    throw new UsageError(
      `${file}: the page ${pick.url} (${pick.from}) is not HTML (${end.key}: ${show(mediaType(end) ?? 'no content-type')}): expected the HTML document the page loads`,
    );
  return pick;
}

/**
 * Pure: {page, pageFrom, responses, leftOut} of a parsed HAR file (`file`
 * names it in errors): the first page's URL and which key gave it
 * (pagePick), its entries as responses, each with its `key`, and how many
 * entries belong to other pages. A file that fails the HAR 1.2 schema
 * check, and a HAR whose entries carry no body at all (saved without
 * content), are refused.
 */
export function harResponses(har, file) {
  checkHar(har, file);
  const { log } = har;
  if (!log.entries.length) throw new UsageError(`${file}: log.entries: expected a non-empty array`);
  const first = log.pages?.[0]?.id;
  const mine = (e) => first === undefined || e.pageref === undefined || e.pageref === first;
  const kept = log.entries.map((e, i) => [e, i]).filter(([e]) => mine(e));
  if (!kept.length) throw new UsageError(`${file}: log.entries: no entry of the first page (${first})`);
  const responses = kept.map(([e, i]) => harResponse(e, `log.entries[${i}]`, file));
  // bodies of some bytes: an empty one proves nothing about the file
  const bodies = responses.filter(
    (r) => !r.missing && !carriesNoBody(r.method, r.status) && r.content?.text.length !== 0,
  );
  if (bodies.length && bodies.every((r) => !r.content))
    throw new UsageError(
      `${file}: no entry has its body (response.content.text): save the HAR with content (DevTools: "Save all as HAR with content")`,
    );
  const page = pagePick(log.pages?.[0], responses, file);
  return { page: page.url, pageFrom: page.from, responses, leftOut: log.entries.length - kept.length };
}
