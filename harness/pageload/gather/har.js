// Gatherer: a HAR 1.2 of the load, built from the DevTools events Chromium
// sends (Network.*, Page.*) by chrome-har, sitespeed.io's builder. Our own
// code does only what chrome-har does not (each place says so): the page
// starting at navigation start, so the HAR's times and the record's share a
// zero; each entry's protocol and connection id under the names the
// report reads; entries in start order; satbench's own facts; and response
// bodies, fetched after the load.
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

/**
 * Pure: when navigation start was, {wallMs (ms since the epoch), leadMs
 * (how long before the first request's event)}, from the document's
 * response among `events` and the page's own Navigation Timing entry
 * `navigation`: both count the request's send start, DevTools on its
 * monotonic clock (seconds), the page from navigation start. Null when the
 * document's response is not among the events.
 */
export function navigationStart(events, navigation) {
  // chrome-har's page starts at the first http(s) request it takes
  const first = events.find((e) => e.method === 'Network.requestWillBeSent' && /^https?:/.test(e.params.request.url));
  const doc = events.find(
    (e) =>
      e.method === 'Network.responseReceived' &&
      e.params.type === 'Document' &&
      e.params.response.url === navigation?.name &&
      e.params.response.timing,
  );
  if (!first || !doc || !(navigation.requestStart > 0)) return null;
  const { requestTime, sendStart } = doc.params.response.timing;
  const leadMs = (first.params.timestamp - requestTime) * 1000 - sendStart + navigation.requestStart;
  return { wallMs: first.params.wallTime * 1000 - leadMs, leadMs };
}

/**
 * Pure: the HAR of a load from its DevTools `events` ([{method, params}],
 * in the order they came), with `navigation` (the page's Navigation Timing
 * entry) and `satbench` (log.pages[0]._satbench: scenario, run, seed,
 * rtt_ms). Entries are in start order, each with `_protocol`,
 * `_connectionId` and `_priority`; pageTimings and entries' chunk times are
 * ms from navigation start, which is the page's startedDateTime.
 */
export function buildHar(events, { navigation = null, satbench = null } = {}) {
  const har = harFromMessages(events, {});
  const page = har.log.pages[0];
  if (!page) throw new Error('no page among the DevTools events');
  // chrome-har starts the page at its first request, a few ms after
  // navigation start, which the record's times count from
  const start = navigationStart(events, navigation);
  if (!start) page.comment = 'times from the first request: navigation start unknown';
  else {
    const lead = start.leadMs;
    page.startedDateTime = new Date(start.wallMs).toISOString();
    for (const k of ['onContentLoad', 'onLoad'])
      if (page.pageTimings[k] >= 0) page.pageTimings[k] = ms(page.pageTimings[k] + lead);
    for (const e of har.log.entries) for (const c of e._chunks ?? []) c.ts = ms(c.ts + lead);
  }
  if (satbench) page._satbench = satbench;
  // chrome-har keeps the order requests were announced in, and the
  // protocol and connection under the HAR's own names (httpVersion,
  // connection); the report reads them as the contract of issue 28 names them
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
