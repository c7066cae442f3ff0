// The origin's request log, read back after a load: what the server itself
// saw, beside what Chromium reports. Ours writes
// `TIME PROTOCOL METHOD PATH STATUS BYTES [PRIORITY] [unmatched]` (replaying
// an archive: PATH is the whole URL, and `unmatched` marks a request the
// archive had no response for); H2O is configured
// (h2oConfig) to write the same first six fields, with its own names for the
// protocol (HTTP/1.1, HTTP/2, HTTP/3).

// H2O's %H → the names Chromium's nextHopProtocol and our origin use.
const PROTOCOL_NAMES = { 'HTTP/1.0': 'http/1.0', 'HTTP/1.1': 'http/1.1', 'HTTP/2': 'h2', 'HTTP/3': 'h3' };

// H2O's access-log format giving our origin's first six fields.
export const H2O_LOG_FORMAT = '%{%Y-%m-%dT%H:%M:%S}t.%{msec_frac}tZ %H %m %U %s %b';

/** Pure: one log line → {protocol, method, path, status, bytes, unmatched}, or null for a line that is none. */
export function parseOriginLogLine(line) {
  const f = line.trim().split(' ');
  if (f.length < 6) return null;
  const status = Number(f[4]);
  if (!Number.isInteger(status)) return null;
  return {
    protocol: PROTOCOL_NAMES[f[1]] ?? f[1],
    method: f[2],
    path: f[3],
    status,
    bytes: Number(f[5]) || 0, // H2O writes "-" for no body
    unmatched: f.slice(6).includes('unmatched'),
  };
}

/** Pure: the log's text → {requests, protocols: {h3: n, …}, statuses: {200: n, …}, unmatched: [URL, …]}. */
export function summarizeOriginLog(text) {
  const out = { requests: 0, protocols: {}, statuses: {}, unmatched: [] };
  for (const line of text.split('\n')) {
    const r = parseOriginLogLine(line);
    if (!r) continue;
    out.requests += 1;
    out.protocols[r.protocol] = (out.protocols[r.protocol] ?? 0) + 1;
    out.statuses[r.status] = (out.statuses[r.status] ?? 0) + 1;
    if (r.unmatched) out.unmatched.push(r.path);
  }
  return out;
}
