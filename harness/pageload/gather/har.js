// Gatherer: a HAR 1.2 of the load, built from the DevTools events Chromium
// sends (Network.*, Page.*) by chrome-har, sitespeed.io's builder. Our own
// code does only what chrome-har does not (each place says why): the page
// starting at navigation start, so the HAR's times and the record's share a
// zero; each request's phases one after the other from when the page asked
// for it, as DevTools' own HARs and Resource Timing count; each entry's
// protocol and connection id under the names the report reads; entries in
// start order; satbench's own facts; and response bodies, fetched after the
// load.
import { harFromMessages } from 'chrome-har';

// The events chrome-har reads (its index.js); the others it ignores.
export const HAR_EVENTS = [
  'Page.frameStartedLoading',
  'Page.frameRequestedNavigation',
  'Page.navigatedWithinDocument',
  'Page.frameAttached',
  'Page.domContentEventFired',
  'Page.loadEventFired',
  'Network.requestWillBeSent',
  'Network.requestWillBeSentExtraInfo',
  'Network.requestServedFromCache',
  'Network.responseReceived',
  'Network.responseReceivedExtraInfo',
  'Network.dataReceived',
  'Network.loadingFinished',
  'Network.loadingFailed',
  'Network.resourceChangedPriority',
];

const ms = (x) => Math.round(x * 1000) / 1000;
const isHttp = (e) => /^https?:/.test(e.params.request.url);

/**
 * Pure: navigation start on DevTools' monotonic clock (seconds), from the
 * document's response among `events` and the page's own Navigation Timing
 * entry `navigation`: both count the request's send start, DevTools on its
 * clock, the page from navigation start. Null when the document's response
 * is not among the events.
 */
export function navigationStart(events, navigation) {
  const doc = events.find(
    (e) =>
      e.method === 'Network.responseReceived' &&
      e.params.type === 'Document' &&
      e.params.response.url === navigation?.name &&
      e.params.response.timing,
  );
  if (!doc || !(navigation.requestStart > 0)) return null;
  const { requestTime, sendStart } = doc.params.response.timing;
  return requestTime + sendStart / 1000 - navigation.requestStart / 1000;
}

/**
 * Pure: a request's HAR timings (ms) from DevTools' `timing` (ms from its
 * requestTime), `queuedMs` (from when the page asked for it to
 * requestTime) and `endMs` (its last byte, from requestTime): each phase
 * begins where the one before it ended, so they add up to the request's
 * time (HAR 1.2). chrome-har measures each phase on its own, which loses
 * the gaps between them (a wait for a socket after DNS, a request waiting
 * for its connection), and starts a request at requestTime, after the
 * queueing, so a waterfall drawn from it puts responses early and requests
 * late; as DevTools does, blocked holds the queueing (also in
 * _blocked_queueing) and any wait before the first phase, a gap goes into
 * the next phase, and ssl is within connect. Wait ends at the first byte of
 * the response (Resource Timing's responseStart).
 */
export function harTimings(timing, { queuedMs, endMs }) {
  const starts = [timing.dnsStart, timing.connectStart, timing.sendStart].filter((x) => x >= 0);
  let at = starts.length ? Math.min(...starts) : 0;
  const blocked = queuedMs + at;
  const until = (end) => {
    const d = Math.max(0, end - at);
    at = Math.max(at, end);
    return ms(d);
  };
  const dns = timing.dnsStart >= 0 ? until(timing.dnsEnd) : -1;
  const connect = timing.connectStart >= 0 ? until(timing.connectEnd) : -1;
  const ssl = timing.sslStart >= 0 ? ms(timing.sslEnd - timing.sslStart) : -1;
  const send = until(timing.sendEnd);
  const wait = until(timing.receiveHeadersStart >= 0 ? timing.receiveHeadersStart : timing.receiveHeadersEnd);
  const receive = until(endMs);
  return { blocked: ms(blocked), dns, connect, ssl, send, wait, receive, _blocked_queueing: ms(queuedMs) };
}

// Pure: per request id, when the page asked for it (its last hop's
// requestWillBeSent), its response's timing and when its last byte came (s).
function requestTimes(events) {
  const times = new Map();
  const of = (id) => times.get(id) ?? times.set(id, {}).get(id);
  for (const { method, params } of events) {
    if (method === 'Network.requestWillBeSent') of(params.requestId).asked = params.timestamp;
    else if (method === 'Network.responseReceived') of(params.requestId).timing = params.response.timing;
    else if (method === 'Network.loadingFinished' || method === 'Network.loadingFailed')
      of(params.requestId).done = params.timestamp;
  }
  return times;
}

/**
 * Pure: the HAR of a load from its DevTools `events` ([{method, params}],
 * in the order they came), with `navigation` (the page's Navigation Timing
 * entry) and `satbench` (log.pages[0]._satbench: scenario, run, seed,
 * rtt_ms). The page's startedDateTime is navigation start, its
 * pageTimings are the navigation entry's, and the entries' chunk times
 * count from it; entries are in
 * the order the page asked for them, each with harTimings, `_protocol`,
 * `_connectionId` and `_priority`.
 */
export function buildHar(events, { navigation = null, satbench = null } = {}) {
  // a repeat view's objects come from the disk cache: chrome-har leaves
  // them out unless asked (and a page of only those, out with them)
  const har = harFromMessages(events, { includeResourcesFromDiskCache: true });
  const page = har.log.pages[0];
  if (!page) throw new Error('no page among the DevTools events');
  // DevTools' clock (s) as wall-clock ms, from the first request chrome-har took
  const first = events.find((e) => e.method === 'Network.requestWillBeSent' && isHttp(e)).params;
  const wall = (t) => first.wallTime * 1000 + (t - first.timestamp) * 1000;
  // chrome-har starts the page at its first request, a few ms after
  // navigation start, which the record's times count from
  const start = navigationStart(events, navigation);
  if (start === null) page.comment = 'times from the first request: navigation start unknown';
  else {
    const lead = (first.timestamp - start) * 1000;
    page.startedDateTime = new Date(wall(start)).toISOString();
    for (const e of har.log.entries) for (const c of e._chunks ?? []) c.ts = ms(c.ts + lead);
    // the page's own DOMContentLoaded and load (the record's metrics, as
    // WebPageTest counts them), not DevTools' events, which come when the
    // events' handlers are done, a millisecond or two later
    page.pageTimings = {
      onContentLoad: ms(navigation.domContentLoadedEventStart || -1),
      onLoad: ms(navigation.loadEventStart || -1),
    };
  }
  const times = requestTimes(events);
  for (const e of har.log.entries) {
    // a redirect's earlier hops (chrome-har adds an `r` to their id) keep chrome-har's timings
    const t = times.get(e._requestId);
    if (!t?.timing || t.asked === undefined) continue;
    const { requestTime } = t.timing;
    const timings = harTimings(t.timing, {
      queuedMs: Math.max(0, (requestTime - t.asked) * 1000),
      endMs: t.done === undefined ? 0 : (t.done - requestTime) * 1000,
    });
    const { ssl: _ssl, _blocked_queueing: _q, ...phases } = timings;
    Object.assign(e, {
      startedDateTime: new Date(wall(Math.min(t.asked, requestTime))).toISOString(),
      time: ms(Object.values(phases).reduce((sum, x) => sum + Math.max(0, x), 0)),
      timings,
    });
  }
  if (satbench) page._satbench = satbench;
  // chrome-har names the protocol and connection as HAR does (httpVersion,
  // connection); the report reads them as issue 28's contract names them
  har.log.entries = har.log.entries
    .map((e, i) => [e, i])
    .sort(([a, i], [b, j]) => Date.parse(a.startedDateTime) - Date.parse(b.startedDateTime) || i - j)
    .map(([e]) => Object.assign(e, { _protocol: e.response.httpVersion, _connectionId: e.connection }));
  return har;
}

/**
 * Puts each response's body into `har` (content.text, base64 where
 * DevTools gives it so), as DevTools' "Save all as HAR with content" does,
 * through `cdp` after the load: chrome-har takes a body only before it
 * builds, and then counts its length into content.size twice. A body
 * DevTools no longer holds is left out (import-har lists it as missing).
 * Returns how many bodies could not be had.
 */
export async function addContent(har, cdp) {
  let lost = 0;
  for (const e of har.log.entries) {
    // chrome-har marks a redirect's entry with an `r`: its request id is the next hop's
    if (!e._requestId || e._requestId.endsWith('r') || !(e.response.content.size > 0)) continue;
    try {
      const { body, base64Encoded } = await cdp.send('Network.getResponseBody', { requestId: e._requestId });
      e.response.content.text = body;
      if (base64Encoded) e.response.content.encoding = 'base64';
    } catch {
      lost++;
    }
  }
  return lost;
}

/**
 * The gatherer: records HAR_EVENTS from before the navigation; after the
 * load, builds the HAR (buildHar) with `satbench` facts, and with `content`
 * the response bodies, fetched only then, so the load and the record's
 * metrics (read before) are not moved by them. Its result is the HAR
 * object; pageload/run.js writes it to the results folder.
 */
export default function har({ satbench = null, content = false } = {}) {
  const events = [];
  return {
    key: 'har',
    events, // what was recorded, for test fixtures (test/integration/capture-har-events.js)
    async start({ cdp }) {
      for (const method of HAR_EVENTS) cdp.on(method, (params) => events.push({ method, params }));
      await cdp.send('Page.enable');
    },
    async stop({ cdp, record }) {
      const built = buildHar(events, { navigation: record.navigation, satbench });
      if (content) {
        const lost = await addContent(built, cdp);
        const page = built.log.pages[0];
        if (lost)
          page.comment = [page.comment, `${lost} response bodies no longer held by DevTools`]
            .filter(Boolean)
            .join('; ');
      }
      return built;
    },
  };
}
