// Gatherer: a HAR 1.2 of the load, built from the DevTools events Chromium
// sends (Network.*, Page.*) by chrome-har, sitespeed.io's builder. Our own
// code does only what chrome-har does not (each place says why): the page
// starting at navigation start, so the HAR's times and the record's share a
// zero; each request's phases one after the other from when the page asked
// for it, as DevTools' own HARs and Resource Timing count; each entry's
// protocol and connection id under the names the report reads; entries in
// start order; failed requests kept, as DevTools keeps them; satbench's own
// facts; and response bodies, fetched after the load.
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

// What a request that failed before its response has in its place, as
// DevTools' HARs write it: status 0, no headers, no connection, no address.
const noResponse = (url) => ({
  url,
  status: 0,
  statusText: '',
  headers: {},
  mimeType: 'x-unknown',
  protocol: '',
  connectionId: 0,
  remoteIPAddress: '',
  encodedDataLength: 0,
});

/**
 * Pure: a failed request's error (Network.loadingFailed's params) in words:
 * its network error, else why Chromium blocked it, as DevTools' Network
 * panel says it ("blocked:mixed-content"), and a CORS error's kind.
 */
export function failureText({ errorText, blockedReason, corsErrorStatus }) {
  const error = errorText || (blockedReason ? `blocked:${blockedReason}` : 'failed');
  return corsErrorStatus?.corsError ? `${error} (CORS ${corsErrorStatus.corsError})` : error;
}

/**
 * Pure: `events` with each failed request (Network.loadingFailed) in a
 * form chrome-har keeps. chrome-har drops a request that failed (but for
 * net::ERR_ABORTED after its response) and one without a response, where
 * DevTools' own HARs keep it with status 0 and the error in
 * response._error: a load's failed requests are part of why it was slow.
 * A failure after the response is handed to chrome-har as the request's
 * end (as chrome-har itself takes ERR_ABORTED), one before it as a
 * response of status 0 with nothing in it (noResponse). Returns {events,
 * failed: Map of request id → its failureText}.
 */
export function keepFailed(events) {
  const asked = new Map();
  const responded = new Set();
  for (const { method, params } of events) {
    if (method === 'Network.requestWillBeSent') asked.set(params.requestId, params.request.url);
    else if (method === 'Network.responseReceived') responded.add(params.requestId);
  }
  const failed = new Map();
  const kept = events.map((e) => {
    if (e.method !== 'Network.loadingFailed' || !asked.has(e.params.requestId)) return e;
    const { requestId, timestamp, type } = e.params;
    failed.set(requestId, failureText(e.params));
    return responded.has(requestId)
      ? { method: 'Network.loadingFinished', params: { requestId, timestamp, encodedDataLength: -1 } }
      : {
          method: 'Network.responseReceived',
          params: { requestId, timestamp, type, response: noResponse(asked.get(requestId)) },
        };
  });
  return { events: kept, failed };
}

// A request still waiting for its response when the HAR was built, in the
// words DevTools' Network panel has for it.
export const PENDING = 'pending: no response when the HAR was built';

/**
 * Pure: `events` with a Network.loadingFailed (errorText PENDING) at the
 * last event's time for each http(s) request asked for that had neither
 * its response nor its end: chrome-har drops such a request, where DevTools
 * keeps it, and one that never came back is part of why a load was slow.
 */
export function closePending(events) {
  const open = new Map();
  let last = -Infinity;
  for (const { method, params } of events) {
    if (typeof params?.timestamp === 'number') last = Math.max(last, params.timestamp);
    if (method === 'Network.requestWillBeSent' && isHttp({ params })) open.set(params.requestId, params.type);
    else if (
      ['Network.responseReceived', 'Network.loadingFinished', 'Network.loadingFailed'].includes(method) &&
      params.requestId !== undefined
    )
      open.delete(params.requestId);
  }
  const ends = [...open].map(([requestId, type]) => ({
    method: 'Network.loadingFailed',
    params: { requestId, timestamp: last, type, errorText: PENDING, canceled: false },
  }));
  return ends.length ? [...events, ...ends] : events;
}

/**
 * Pure: the HAR timings of a request that failed before its response,
 * `ms` after the page asked for it: all of it blocked, as DevTools counts
 * a request of which it knows nothing after that.
 */
export const noResponseTimings = (ms) => ({
  blocked: ms,
  dns: -1,
  connect: -1,
  ssl: -1,
  send: 0,
  wait: 0,
  receive: 0,
  _blocked_queueing: -1,
});

/**
 * Pure: the HAR of a load from its DevTools `events` ([{method, params}],
 * in the order they came), with `navigation` (the page's Navigation Timing
 * entry) and `satbench` (log.pages[0]._satbench: scenario, run, seed,
 * rtt_ms). The page's startedDateTime is navigation start, its
 * pageTimings are the navigation entry's, and the entries' chunk times
 * count from it; entries are in
 * the order the page asked for them, each with harTimings, `_protocol`,
 * `_connectionId` and `_priority`; a failed request's (keepFailed) with
 * DevTools' error in response._error, one still pending (closePending)
 * likewise, with PENDING.
 */
export function buildHar(allEvents, { navigation = null, satbench = null } = {}) {
  const events = closePending(allEvents);
  const { events: forChromeHar, failed } = keepFailed(events);
  // a repeat view's objects come from the disk cache: chrome-har leaves
  // them out unless asked (and a page of only those, out with them)
  const har = harFromMessages(forChromeHar, { includeResourcesFromDiskCache: true });
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
    const error = failed.get(e._requestId);
    if (error !== undefined) e.response._error = error;
    if (error !== undefined && !t?.timing && t?.asked !== undefined) {
      // failed before its response: no connection, all of its time blocked
      delete e.connection;
      const timings = noResponseTimings(ms(Math.max(0, (t.done ?? t.asked) - t.asked) * 1000));
      Object.assign(e, { startedDateTime: new Date(wall(t.asked)).toISOString(), time: timings.blocked, timings });
      continue;
    }
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

// How long fetching the bodies after the load (--har-content) may take, the
// HAR gatherer's part of the browser's bound (gather/index.js afterLoadMs):
// DevTools hands a kepler run's 485 kB over in well under a second. A body
// not had by then is left out, so that a slow or hung fetch cannot hold
// the run until Chromium is killed and its HAR lost.
export const CONTENT_MS = 15_000;

const LATE = Symbol('late');

// Pure: the page comment saying which bodies a HAR lacks, after `comment`.
export const contentComment = (comment, { lost, late }, withinMs) =>
  [
    comment,
    lost ? `${lost} response bodies no longer held by DevTools` : null,
    late ? `${late} response bodies not fetched within ${withinMs} ms after the load` : null,
  ]
    .filter(Boolean)
    .join('; ');

/**
 * Puts each response's body into `har` (content.text, base64 where
 * DevTools gives it so), as DevTools' "Save all as HAR with content" does,
 * through `cdp` after the load: chrome-har takes a body only before it
 * builds, and then counts its length into content.size twice. A body
 * DevTools no longer holds, and every body not had within `withinMs`, is
 * left out with the reason in its content.comment (import-har lists it as
 * missing). Returns how many bodies were left out: {lost, late}.
 */
export async function addContent(har, cdp, { withinMs = CONTENT_MS } = {}) {
  const left = { lost: 0, late: 0 };
  let timer;
  const deadline = new Promise((resolve) => (timer = setTimeout(resolve, withinMs, LATE)));
  try {
    for (const e of har.log.entries) {
      // chrome-har marks a redirect's entry with an `r`: its request id is the next hop's
      if (!e._requestId || e._requestId.endsWith('r') || !(e.response.content.size > 0)) continue;
      const content = e.response.content;
      const got = left.late
        ? LATE
        : await Promise.race([
            cdp.send('Network.getResponseBody', { requestId: e._requestId }).catch((err) => ({ err })),
            deadline,
          ]);
      if (got === LATE) {
        left.late++;
        content.comment = `body not fetched within ${withinMs} ms after the load`;
      } else if (got.err) {
        left.lost++;
        content.comment = `body no longer held by DevTools (${got.err.message.split('\n')[0]})`;
      } else {
        content.text = got.body;
        if (got.base64Encoded) content.encoding = 'base64';
      }
    }
  } finally {
    clearTimeout(timer);
  }
  return left;
}

/**
 * The gatherer: records HAR_EVENTS from before the navigation; after the
 * load, builds the HAR (buildHar) with `satbench` facts, and with `content`
 * the response bodies, fetched only then, so the load and the record's
 * metrics (read before) are not moved by them, and for `contentMs` at most
 * (its afterLoadMs). Its result is the HAR object; pageload/run.js writes
 * it to the results folder.
 */
export default function har({ satbench = null, content = false, contentMs = CONTENT_MS } = {}) {
  const events = [];
  return {
    key: 'har',
    afterLoadMs: content ? contentMs : 0,
    events, // what was recorded, for test fixtures (test/integration/capture-har-events.js)
    async start({ cdp }) {
      for (const method of HAR_EVENTS) cdp.on(method, (params) => events.push({ method, params }));
      await cdp.send('Page.enable');
    },
    async stop({ cdp, record }) {
      const built = buildHar(events, { navigation: record.navigation, satbench });
      if (content) {
        const page = built.log.pages[0];
        const comment = contentComment(page.comment, await addContent(built, cdp, { withinMs: contentMs }), contentMs);
        if (comment) page.comment = comment;
      }
      return built;
    },
  };
}
