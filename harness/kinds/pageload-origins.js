// What a replayed site archive's page paid per origin (bench --site DIR):
// from each ok run, every origin's DNS, connect and TLS times (the
// document's and the resources' Resource Timing; an origin pays them once,
// on the connection that opened first) and the connections Chromium opened
// to it; over the runs, their medians, and the requests the archive could
// not answer. summary.json's page-load groups carry it as `origins`.
import { median } from '../core/stats.js';

const originOf = (url) => {
  try {
    return new URL(url).origin;
  } catch {
    return null;
  }
};

// Pure: an entry's phase length, null when it did not happen (zero: a
// reused connection, or times a cross-origin server did not allow).
const span = (start, end) => (typeof start === 'number' && end > start ? end - start : null);

/** Pure: one run's {origin: {dns_ms, connect_ms, tls_ms}}: the longest of each phase over its entries. */
export function runOriginTimes(record) {
  const out = {};
  const entries = [...(record.navigation ? [record.navigation] : []), ...(record.resources ?? [])];
  for (const e of entries) {
    const o = originOf(e.name);
    if (!o) continue;
    const t = (out[o] ??= { dns_ms: null, connect_ms: null, tls_ms: null });
    const phases = {
      dns_ms: span(e.domainLookupStart, e.domainLookupEnd),
      connect_ms: span(e.connectStart, e.connectEnd),
      tls_ms: e.secureConnectionStart > 0 ? span(e.secureConnectionStart, e.connectEnd) : null,
    };
    for (const [k, v] of Object.entries(phases)) if (v !== null && (t[k] === null || v > t[k])) t[k] = v;
  }
  return out;
}

const medianOrNull = (values) => (values.length ? median(values) : null);

/**
 * Pure: a group's `origins` from its records: per origin (first seen
 * first) the runs it was seen in and the medians of its DNS, connect and
 * TLS times and of its connections; `unmatched`: the requests no entry
 * answered, each once, and in how many runs any was.
 */
export function originStats(records) {
  const ok = records.filter((r) => r.ok);
  const perRun = ok.map((r) => ({ times: runOriginTimes(r), connections: r.connections ?? {} }));
  const names = [...new Set(perRun.flatMap((r) => [...Object.keys(r.times), ...Object.keys(r.connections)]))];
  const origins = names.map((origin) => {
    const seen = perRun.filter((r) => r.times[origin] || r.connections[origin] !== undefined);
    const values = (k) => seen.map((r) => r.times[origin]?.[k]).filter((v) => typeof v === 'number');
    return {
      origin,
      runs: seen.length,
      dns_ms: medianOrNull(values('dns_ms')),
      connect_ms: medianOrNull(values('connect_ms')),
      tls_ms: medianOrNull(values('tls_ms')),
      connections: medianOrNull(seen.map((r) => r.connections[origin] ?? 0)),
    };
  });
  const unmatched = ok.map((r) => r.origin_log?.unmatched ?? []);
  return {
    origins,
    unmatched: { requests: [...new Set(unmatched.flat())], runs: unmatched.filter((u) => u.length).length },
  };
}
