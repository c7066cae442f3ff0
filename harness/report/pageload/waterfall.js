// Pure: a run's HAR 1.2 (issue 28's contract: entries in start order with
// `_connectionId`, `_protocol` and `_priority`, page timings, and
// `log.pages[0]._satbench.rtt_ms`) as what the report draws: a row per
// request with its phases, the page's events, the satellite round trips
// along the time axis, and the connections as lanes. Drawn by the page's
// own SVG (client-runs.js), not PerfCascade: that would be a second HAR
// reader and ~100 kB of inlined script, knows no round trip, draws no
// connection lanes, and could not share one time axis between two runs of
// the compare view; every field it shows would also have to be audited for
// markup. Times are ms from the page's start (HAR pages[0].startedDateTime:
// navigation start in the HARs bench writes, so that the record's FCP and
// LCP share the axis; in chrome-har's own, the first request, a few ms
// later).

// The phases of a request in the order they happen. `queued`: Chromium held
// the request before it reached the network stack (chrome-har's
// timings._queued, before startedDateTime); `blocked`: waiting for a
// connection (stalled); `ssl`: the TLS or QUIC handshake, which HAR counts
// inside `connect` and which is drawn apart from it here.
export const PHASES = ['queued', 'blocked', 'dns', 'connect', 'ssl', 'send', 'wait', 'receive'];

const positive = (v) => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : 0);
const tenth = (v) => Math.round(v * 10) / 10;
const finite = (v) => typeof v === 'number' && Number.isFinite(v);

// A connection id as chrome-har gives it (number or string); 0 and '' mean
// none (a cached response, a data: URL).
function connectionOf(e) {
  const id = e._connectionId ?? e.connection;
  if (id === undefined || id === null || id === '' || String(id) === '0') return null;
  return String(id);
}

/** Pure: one HAR entry as a row, its start `t0` ms since the epoch; null when it has no start time. */
export function rowOf(e, t0) {
  const started = Date.parse(e?.startedDateTime);
  if (!Number.isFinite(started)) return null;
  const t = e.timings ?? {};
  const ssl = positive(t.ssl);
  const phases = {
    queued: positive(t._queued),
    blocked: positive(t.blocked),
    dns: positive(t.dns),
    connect: Math.max(0, positive(t.connect) - ssl),
    ssl,
    send: positive(t.send),
    wait: positive(t.wait),
    receive: positive(t.receive),
  };
  const res = e.response ?? {};
  const bytes = [res._transferSize, res.bodySize].find((v) => finite(v) && v >= 0) ?? null;
  return {
    url: String(e.request?.url ?? ''),
    method: String(e.request?.method ?? ''),
    status: finite(res.status) ? res.status : null,
    // a failed request's (status 0): DevTools' error, e.g. net::ERR_UNSAFE_PORT
    error: typeof res._error === 'string' && res._error ? res._error : null,
    protocol: e._protocol ?? res.httpVersion ?? null,
    connection: connectionOf(e),
    priority: e._priority ?? null,
    type: e._resourceType ?? res.content?.mimeType ?? null,
    bytes,
    decoded: finite(res.content?.size) && res.content.size > 0 ? res.content.size : null,
    start: tenth(started - t0 - phases.queued),
    phases: PHASES.map((p) => tenth(phases[p])),
  };
}

export const rowEnd = (row) => row.start + row.phases.reduce((a, b) => a + b, 0);

// The page's events drawn as vertical lines: DOMContentLoaded and load from
// the HAR's page timings (the requests' clock), else from the record; FCP
// and LCP from the record (the HAR has no paint).
function eventMarks(page, metrics) {
  const pt = page?.pageTimings ?? {};
  const pick = (...vs) => vs.find((v) => finite(v) && v >= 0) ?? null;
  return [
    { key: 'fcp', label: 'FCP', ms: pick(metrics?.fcp_ms) },
    { key: 'lcp', label: 'LCP', ms: pick(metrics?.lcp_ms) },
    { key: 'dcl', label: 'DOMContentLoaded', ms: pick(pt.onContentLoad, metrics?.dom_content_loaded_ms) },
    { key: 'load', label: 'load', ms: pick(pt.onLoad, metrics?.plt_ms) },
  ]
    .filter((m) => m.ms !== null)
    .map((m) => ({ ...m, ms: tenth(m.ms) }));
}

// Beyond this many round trips on the axis (a short RTT over a long load)
// the marks would merge into a grey band: none are drawn, the count is said.
export const MAX_ROUND_TRIP_MARKS = 200;

/** Pure: a mark at every whole round trip of `rttMs` up to `endMs`, [{ms, n}]; none without a positive RTT. */
export function roundTripMarks(rttMs, endMs) {
  if (!(finite(rttMs) && rttMs > 0 && finite(endMs))) return [];
  const n = Math.floor(endMs / rttMs);
  if (n > MAX_ROUND_TRIP_MARKS) return [];
  return Array.from({ length: n }, (_, i) => ({ ms: tenth((i + 1) * rttMs), n: i + 1 }));
}

/**
 * Pure: the connections of a waterfall's rows as lanes, in the order each
 * was first used: {connection, protocol, rows (indices), start, end}.
 * Requests with no connection id share one lane, last.
 */
export function connectionLanes(rows) {
  const lanes = new Map();
  rows.forEach((r, i) => {
    const key = r.connection ?? '';
    if (!lanes.has(key))
      lanes.set(key, { connection: r.connection, protocol: r.protocol, rows: [], start: r.start, end: 0 });
    const lane = lanes.get(key);
    lane.rows.push(i);
    lane.start = Math.min(lane.start, r.start);
    lane.end = Math.max(lane.end, tenth(rowEnd(r)));
  });
  const all = [...lanes.values()];
  return [...all.filter((l) => l.connection !== null), ...all.filter((l) => l.connection === null)];
}

/** Pure: the RTT a HAR says its run's profile had (`_satbench.rtt_ms`), or null. */
export function harRtt(har) {
  const rtt = har?.log?.pages?.[0]?._satbench?.rtt_ms;
  return finite(rtt) && rtt > 0 ? rtt : null;
}

/**
 * Pure: the waterfall of a HAR, with the record's `metrics` for FCP and LCP
 * (and DOMContentLoaded and load when the HAR has no page timings) and the
 * satellite round trip `rttMs` (the HAR's, else the profile's). Entries
 * without a start time are counted in `skipped`. Throws when `har` has no
 * list of entries.
 */
export function waterfallOf(har, { metrics = null, rttMs = null } = {}) {
  const log = har?.log;
  if (!log || !Array.isArray(log.entries)) throw new Error('not a HAR: no log.entries');
  const page = Array.isArray(log.pages) ? log.pages[0] : null;
  const starts = log.entries.map((e) => Date.parse(e?.startedDateTime)).filter(Number.isFinite);
  const pageStart = Date.parse(page?.startedDateTime);
  const t0 = Number.isFinite(pageStart) ? pageStart : Math.min(...starts);
  const rows = log.entries.map((e) => rowOf(e, t0)).filter(Boolean);
  const marks = eventMarks(page, metrics);
  const end = tenth(Math.max(0, ...rows.map(rowEnd), ...marks.map((m) => m.ms)));
  const rtt = harRtt(har) ?? (finite(rttMs) && rttMs > 0 ? rttMs : null);
  return {
    rows,
    skipped: log.entries.length - rows.length,
    marks,
    end,
    rtt,
    roundTrips: roundTripMarks(rtt, end),
    lanes: connectionLanes(rows),
  };
}

/** Pure: how many round trips of `rttMs` fit before `ms`, to one decimal; null without both. */
export const roundTripsAt = (ms, rttMs) =>
  finite(ms) && finite(rttMs) && rttMs > 0 ? Math.round((ms / rttMs) * 10) / 10 : null;

// The phases before a request's first byte leaves: it is sent when they end.
const BEFORE_SEND = ['queued', 'blocked', 'dns', 'connect', 'ssl'].map((p) => PHASES.indexOf(p));

/**
 * Pure: the waves of requests over the satellite: requests grouped by how
 * many round trips of `rttMs` had passed, to the nearest whole one, when
 * each was sent (after its queueing, connection and handshake: Chromium
 * may open the document's connection a little before navigation start, so
 * a request sent after one handshake counts as after one round trip, not
 * as in the first). Each wave: {n (round trips before it), requests, how
 * many of them opened a connection (a connect or TLS phase), the first
 * one's URL}. Requests sent after `untilMs` (the load event, when given)
 * are left out. [] without a positive RTT.
 */
export function sendWaves(rows, rttMs, untilMs = Infinity) {
  if (!(finite(rttMs) && rttMs > 0)) return [];
  const waves = new Map();
  for (const r of rows) {
    const sent = r.start + BEFORE_SEND.reduce((a, i) => a + r.phases[i], 0);
    if (sent > untilMs) continue;
    const n = Math.round(sent / rttMs);
    if (!waves.has(n)) waves.set(n, { n, requests: 0, connecting: 0, first: r.url });
    const w = waves.get(n);
    w.requests += 1;
    if (r.phases[PHASES.indexOf('connect')] + r.phases[PHASES.indexOf('ssl')] > 0) w.connecting += 1;
  }
  return [...waves.values()].sort((a, b) => a.n - b.n);
}
