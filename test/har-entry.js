// Hand-made HAR 1.2 files as Chrome DevTools writes them (devtools-frontend's
// models/har/Log.ts): the one builder of an entry, a page and a log that the
// tests (import-har's, the report's run files) and
// benchmarks/import-har-memory.js share; and the archive import-har makes
// of one.
import { harResponses } from '../harness/archive/har.js';
import { buildArchive } from '../harness/archive/build.js';

// When every hand-made page and entry starts, unless told otherwise.
export const HAR_T0 = '2026-01-02T03:04:05.000Z';

// The phases HAR adds up to an entry's time (ssl is counted within connect).
const PHASES = ['blocked', 'dns', 'connect', 'send', 'wait', 'receive'];

/**
 * Pure: one entry for a GET of `url`: status 200 over `protocol` on
 * `connection` from `ip`. Status 0 is a request that got no response, as
 * DevTools writes a failed one: no connection, serverIPAddress "" and the
 * response's httpVersion "" (`ip` may be an IPv6 address in brackets, as
 * older versions write it). `headers` are [[name, value]]; `content`,
 * `timings` and `response` are laid over DevTools' defaults (`time` is the
 * timings' sum); any other field (`_resourceType`, `_fromCache`, …) is the
 * entry's own.
 */
export function harEntry(
  url,
  {
    status = 200,
    protocol = 'http/2.0',
    connection = '443',
    ip = '198.51.100.7',
    headers = [],
    content = {},
    timings = {},
    response = {},
    pageref = 'page_1',
    startedDateTime = HAR_T0,
    ...extra
  } = {},
) {
  const t = { blocked: 0.5, dns: -1, ssl: -1, connect: -1, send: 0.1, wait: 10, receive: 1.9, _blocked_queueing: 0.3 };
  Object.assign(t, timings);
  return {
    _priority: 'High',
    cache: {},
    ...(status ? { connection } : {}),
    pageref,
    request: {
      method: 'GET',
      url,
      httpVersion: protocol,
      headers: [],
      queryString: [],
      cookies: [],
      headersSize: -1,
      bodySize: 0,
    },
    response: {
      status,
      statusText: '',
      httpVersion: status ? protocol : '',
      headers: headers.map(([name, value]) => ({ name, value })),
      cookies: [],
      content: { size: 0, mimeType: 'x/y', ...content },
      redirectURL: '',
      headersSize: -1,
      bodySize: -1,
      _transferSize: 0,
      _error: null,
      ...response,
    },
    serverIPAddress: status ? ip : '',
    startedDateTime,
    time: PHASES.reduce((sum, k) => sum + Math.max(0, t[k]), 0),
    timings: t,
    ...extra,
  };
}

/** Pure: a page of a HAR's log.pages; `extra` lays its own fields (pageTimings, _satbench, …) over these. */
export const harPage = (id, title, extra = {}) => ({
  startedDateTime: HAR_T0,
  id,
  title,
  pageTimings: { onContentLoad: 120.5, onLoad: 250.25 },
  ...extra,
});

/** Pure: a HAR of `entries` (and `pages`, when given) as DevTools writes it. */
export const harLog = (entries, pages) => ({
  log: { version: '1.2', creator: { name: 'WebInspector', version: '537.36' }, ...(pages ? { pages } : {}), entries },
});

/** Pure: what import-har makes of `har` (read as the file `file`): buildArchive's {archive, bodies, …}. */
export function importedArchive(har, file) {
  const { page, responses } = harResponses(har, file);
  return buildArchive({ page, source: { tool: 'import-har', from: file }, created: HAR_T0, responses });
}
