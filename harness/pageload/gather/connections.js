// Gatherer: how many connections Chromium opened to each origin, from the
// connection id DevTools gives each response (Network.responseReceived).

/**
 * Pure: how many connections Chromium opened to each origin
 * (scheme://host[:port]), from the responses' connection ids; id 0 (none:
 * a cache or a data URL) is not one.
 */
export function connectionsByOrigin(responses) {
  const ids = {};
  for (const { url, connectionId } of responses) {
    if (!connectionId || !/^https?:/.test(url)) continue;
    (ids[new URL(url).origin] ??= new Set()).add(connectionId);
  }
  return Object.fromEntries(Object.entries(ids).map(([o, s]) => [o, s.size]));
}

/**
 * Pure: of the connections the responses of a load came over (their ids,
 * as connectionsByOrigin counts them), how many an earlier load of the same
 * Chromium (`earlierIds`) had used already. A revisit's second load
 * reuses none: its browser's connections were closed.
 */
export function connectionReuse(earlierIds, responses) {
  const ids = connectionIdsOf(responses);
  return { connections: ids.size, reused: [...ids].filter((id) => earlierIds.has(id)).length };
}

// Pure: the ids of the connections the responses came over (0: none).
const connectionIdsOf = (responses) => new Set(responses.map((r) => r.connectionId).filter(Boolean));

// The gatherer; `ids()` (not in the record): the connection ids its load used.
export default function connections() {
  const responses = [];
  return {
    key: 'connections',
    start({ cdp }) {
      cdp.on('Network.responseReceived', (e) =>
        responses.push({ url: e.response.url, connectionId: e.response.connectionId }),
      );
    },
    stop: () => connectionsByOrigin(responses),
    ids: () => connectionIdsOf(responses),
    reuse: (earlierIds) => connectionReuse(earlierIds, responses),
  };
}
