// Gatherer: how the load's responses came, by the browser cache: from the
// cache without a request, revalidated (a conditional request answered
// 304), or fetched whole. From DevTools' Network events: responseReceived's
// fromDiskCache / fromPrefetchCache, requestServedFromCache (the memory
// cache), and the status the network gave (the raw one of
// responseReceivedExtraInfo, or responseReceived's).

/**
 * Pure: the counts of one load's responses ({url, fromCache, status}:
 * `fromCache` true when no request went out, `status` the network's),
 * http(s) ones only: {from_cache, revalidated, fetched}. A response of
 * status 0 (failed, or none) is in none of them.
 */
export function cacheUse(responses) {
  const counts = { from_cache: 0, revalidated: 0, fetched: 0 };
  for (const { url, fromCache, status } of responses) {
    if (!/^https?:/.test(url)) continue;
    if (fromCache) counts.from_cache += 1;
    else if (status === 304) counts.revalidated += 1;
    else if (status > 0) counts.fetched += 1;
  }
  return counts;
}

/**
 * Pure: the responses cacheUse counts, from the Network events of a load
 * ({method, params}, in order), one per request id.
 */
export function responsesOf(events) {
  const byId = new Map();
  const of = (id) => byId.get(id) ?? byId.set(id, { url: '', fromCache: false, status: 0, rawStatus: null }).get(id);
  for (const { method, params } of events) {
    if (method === 'Network.requestServedFromCache') of(params.requestId).fromCache = true;
    else if (method === 'Network.responseReceivedExtraInfo') of(params.requestId).rawStatus = params.statusCode;
    else if (method === 'Network.responseReceived') {
      const r = of(params.requestId);
      const { url, status, fromDiskCache, fromPrefetchCache } = params.response;
      Object.assign(r, { url, status, fromCache: r.fromCache || Boolean(fromDiskCache || fromPrefetchCache) });
    }
  }
  // the network's status: a revalidated response is the cached one to the page (200) but 304 on the wire
  return [...byId.values()]
    .filter((r) => r.url)
    .map(({ rawStatus, ...r }) => ({ ...r, status: rawStatus ?? r.status }));
}

const EVENTS = ['Network.requestServedFromCache', 'Network.responseReceived', 'Network.responseReceivedExtraInfo'];

export default function cacheUseGatherer() {
  const events = [];
  return {
    key: 'cache_use',
    start({ cdp }) {
      for (const method of EVENTS) cdp.on(method, (params) => events.push({ method, params }));
    },
    stop: () => cacheUse(responsesOf(events)),
  };
}
