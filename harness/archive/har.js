// Pure: a HAR 1.2 file, as Chrome DevTools writes it with "Save all as HAR
// with content", turned into the responses archive/build.js stores. A HAR
// may hold several page loads: the first page's entries are taken, in the
// file's order, and its first document is the page.
import { UsageError } from '../core/errors.js';
import { carriesNoBody } from './build.js';

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const BASE64 = /^[A-Za-z0-9+/\s]*={0,2}\s*$/;

// One HAR entry as a response; `key` names it in errors.
function harResponse(e, key, file) {
  const fail = (k, expected) => new UsageError(`${file}: ${key}.${k}: expected ${expected}`);
  if (!isObject(e.request) || typeof e.request.method !== 'string' || typeof e.request.url !== 'string')
    throw fail('request', 'an object with method and url (strings)');
  if (!isObject(e.response) || typeof e.response.status !== 'number') throw fail('response', 'an object with a status');
  const { response } = e;
  if (!Array.isArray(response.headers) || !response.headers.every((h) => isObject(h) && typeof h.name === 'string'))
    throw fail('response.headers', 'an array of {name, value}');
  const c = response.content ?? {};
  if (c.encoding !== undefined && c.encoding !== 'base64')
    throw fail('response.content.encoding', `"base64" or none, got ${JSON.stringify(c.encoding)}`);
  if (c.text !== undefined && (typeof c.text !== 'string' || (c.encoding === 'base64' && !BASE64.test(c.text))))
    throw fail('response.content.text', c.encoding === 'base64' ? 'base64 text' : 'a string');
  const r = {
    method: e.request.method,
    url: e.request.url,
    status: response.status,
    headers: response.headers.map((h) => [h.name, String(h.value ?? '')]),
    content: null,
    fromCache: Boolean(e._fromCache),
  };
  if (response.status === 0 || response._error)
    r.missing = response.status === 0 ? `no response (${response._error ?? 'status 0'})` : `failed: ${response._error}`;
  else if (e._fetchedViaServiceWorker) r.missing = 'served by a service worker, not the network';
  if (typeof c.text === 'string') r.content = { text: c.text, base64: c.encoding === 'base64' };
  else if (c.size === 0) r.content = { text: '', base64: false };
  else r.noContent = `the HAR has no content for its body${c.size > 0 ? ` (${c.size} bytes)` : ''}`;
  return r;
}

/**
 * Pure: {page, responses, leftOut} of a parsed HAR file (`file` names it in
 * errors): the first page's URL, its entries as responses, and how many
 * entries belong to other pages. A HAR whose entries carry no body at all
 * (saved without content) is refused.
 */
export function harResponses(har, file) {
  const log = isObject(har) ? har.log : undefined;
  if (!isObject(log)) throw new UsageError(`${file}: log: expected an object (a HAR file)`);
  if (!Array.isArray(log.entries) || !log.entries.length)
    throw new UsageError(`${file}: log.entries: expected a non-empty array`);
  const first = Array.isArray(log.pages) && isObject(log.pages[0]) ? log.pages[0].id : undefined;
  const mine = (e) => first === undefined || e.pageref === undefined || e.pageref === first;
  const kept = log.entries.map((e, i) => [e, i]).filter(([e]) => isObject(e) && mine(e));
  if (!kept.length) throw new UsageError(`${file}: log.entries: no entry of the first page (${first})`);
  const responses = kept.map(([e, i]) => harResponse(e, `log.entries[${i}]`, file));
  // bodies of some bytes: an empty one proves nothing about the file
  const bodies = responses.filter((r) => !r.missing && !carriesNoBody(r.method, r.status) && r.content?.text !== '');
  if (bodies.length && bodies.every((r) => !r.content))
    throw new UsageError(
      `${file}: no entry has its body (response.content.text): save the HAR with content (DevTools: "Save all as HAR with content")`,
    );
  const doc = kept.findIndex(([e]) => e._resourceType === 'document');
  return { page: responses[Math.max(doc, 0)].url, responses, leftOut: log.entries.length - kept.length };
}
