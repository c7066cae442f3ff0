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
  };
}
