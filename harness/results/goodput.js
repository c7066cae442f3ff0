// Goodput arithmetic for bulk transfers, as plain functions of the bytes a
// download received per time bin (bin i covers [i·binMs, (i+1)·binMs) from
// t0, the moment just before connecting). No I/O: `satbench bulk` gathers,
// these judge.
//
// Within a bin, bytes are taken to arrive evenly: "bytes by t" and "time to
// N bytes" interpolate linearly inside the bin that holds t or the N-th byte.
// When the first and last arrival are known (ttfb, the end of a sized
// download), the first and last bins are taken to hold bytes only from and
// until then, so a 2 MB download that ended at 1142 ms did not take 1200.
import { median, mean } from '../core/stats.js';

// The draft's objectives are for the first 2, 10 and 100 MB (10^6 bytes).
export const MB = 1e6;
export const OBJECTIVE_SIZES = [2 * MB, 10 * MB, 100 * MB];
// When `satbench bulk` reports the bytes received so far (Kosek et al. Fig. 2).
export const MARKS_S = [1, 3, 5, 10];
// Share of the link rate that counts as "up to speed", and how long the
// goodput must hold it (one bin alone is too noisy to say so).
export const RATE_FRACTION = 0.9;
export const RATE_WINDOW_MS = 500;

const sizeName = (bytes) => `${Math.round(bytes / MB)}mb`;
export const markMetric = (s) => `bytes_at_${s}s`;
export const sizeMetric = (bytes) => `time_to_${sizeName(bytes)}_ms`;

/**
 * Pure: arrivals ({t_ms, bytes}, ms from t0) into bins of `binMs`; with
 * `untilMs`, arrivals from then on are left out and the bins cover exactly
 * [0, untilMs). Returns {bins, bytes}.
 */
export function binEvents(arrivals, binMs, untilMs = null) {
  const bins = [];
  let bytes = 0;
  for (const a of arrivals) {
    if (untilMs !== null && a.t_ms >= untilMs) continue;
    const i = Math.max(0, Math.floor(a.t_ms / binMs));
    while (bins.length <= i) bins.push(0);
    bins[i] += a.bytes;
    bytes += a.bytes;
  }
  if (untilMs !== null) while (bins.length < Math.ceil(untilMs / binMs)) bins.push(0);
  return { bins, bytes };
}

/** Pure: cumulative bytes at the end of each bin. */
export function cumulative(bins) {
  let sum = 0;
  return bins.map((b) => (sum += b));
}

/**
 * Pure: bytes received by `tMs`. Past the bins, the total when the
 * download `complete`d (nothing more was coming), else null (not known).
 */
export function bytesAt(bins, binMs, tMs, { complete = false, firstMs = null, lastMs = null } = {}) {
  if (tMs < 0) return 0;
  const i = Math.floor(tMs / binMs);
  const total = bins.reduce((a, b) => a + b, 0);
  if (i >= bins.length) {
    if (tMs === bins.length * binMs || complete) return total;
    return null;
  }
  let before = 0;
  for (let k = 0; k < i; k++) before += bins[k];
  const [lo, hi] = arrivalSpan(i, binMs, firstMs, lastMs);
  return before + bins[i] * Math.min(1, Math.max(0, (tMs - lo) / (hi - lo)));
}

// The part of bin i in which its bytes arrived: the bin, cut to
// [firstMs, lastMs] where those are known and fall inside it.
function arrivalSpan(i, binMs, firstMs, lastMs) {
  let lo = i * binMs;
  let hi = (i + 1) * binMs;
  if (firstMs !== null && firstMs > lo && firstMs < hi) lo = firstMs;
  if (lastMs !== null && lastMs > lo && lastMs < hi) hi = lastMs;
  return [lo, hi];
}

/**
 * Pure: when the `bytes`-th byte arrived (ms from t0), or null if it never
 * did. `firstMs`/`lastMs`: when the first and last byte arrived, if known.
 */
export function timeToBytes(bins, binMs, bytes, { firstMs = null, lastMs = null } = {}) {
  if (bytes <= 0) return 0;
  let sum = 0;
  for (let i = 0; i < bins.length; i++) {
    if (bins[i] > 0 && sum + bins[i] >= bytes) {
      const [lo, hi] = arrivalSpan(i, binMs, firstMs, lastMs);
      return lo + ((bytes - sum) / bins[i]) * (hi - lo);
    }
    sum += bins[i];
  }
  return null;
}

/** Pure: goodput of each bin in Mbit/s. */
export const binMbps = (bins, binMs) => bins.map((b) => (b * 8) / (binMs * 1000));

/**
 * Pure: when the download got up to speed: the start (ms from t0) of the
 * first window of `windowMs` (whole bins) whose mean goodput is at least
 * `fraction` of `linkMbps`; null if none was, or the link rate is unknown.
 */
export function timeToRate(bins, binMs, linkMbps, { fraction = RATE_FRACTION, windowMs = RATE_WINDOW_MS } = {}) {
  if (!(linkMbps > 0)) return null;
  const w = Math.max(1, Math.round(windowMs / binMs));
  const need = ((fraction * linkMbps * 1e6) / 8) * ((w * binMs) / 1000);
  let sum = 0;
  for (let i = 0; i < bins.length; i++) {
    sum += bins[i];
    if (i >= w) sum -= bins[i - w];
    if (i >= w - 1 && sum >= need) return (i - w + 1) * binMs;
  }
  return null;
}

/**
 * Pure: the scalar metrics of one download (what summary.json takes
 * medians of): set-up, bytes by each mark, time to each size, time to
 * 90 % of the link rate, mean goodput. A mark past the end of an unfinished
 * download, or a size never reached, is left out rather than guessed.
 * `dl`: {bins, bin_ms, bytes, duration_ms, complete, connect_ms, ttfb_ms}.
 */
export function downloadMetrics(dl, { linkMbps = null, marksS = MARKS_S, sizes = OBJECTIVE_SIZES } = {}) {
  const m = {};
  const sized = dl.requested_bytes != null;
  // a sized download's duration ends at its last byte; a timed one's does not
  const span = { firstMs: dl.ttfb_ms ?? null, lastMs: sized && dl.complete ? dl.duration_ms : null };
  for (const k of ['connect_ms', 'ttfb_ms', 'duration_ms']) if (typeof dl[k] === 'number') m[k] = dl[k];
  m.bytes = dl.bytes;
  if (dl.duration_ms > 0) m.mean_goodput_mbps = (dl.bytes * 8) / (dl.duration_ms * 1000);
  for (const s of marksS) {
    const v = bytesAt(dl.bins, dl.bin_ms, s * 1000, { complete: dl.complete && sized, ...span });
    if (v !== null) m[markMetric(s)] = v;
  }
  for (const size of sizes) {
    const t = timeToBytes(dl.bins, dl.bin_ms, size, span);
    if (t !== null) m[sizeMetric(size)] = t;
  }
  const r = timeToRate(dl.bins, dl.bin_ms, linkMbps);
  if (r !== null) m.time_to_90pct_rate_ms = r;
  return m;
}

/**
 * Pure: objectives (`{sizes: [bytes…], limits_s: [s…]}`) against the times
 * one run took (its metrics): per size, the time, the limit and whether it
 * was met (a size never reached is missed).
 */
export function judgeRun(metrics, objectives) {
  return objectives.sizes.map((bytes, i) => {
    const t = metrics[sizeMetric(bytes)];
    const time_s = typeof t === 'number' ? t / 1000 : null;
    return { bytes, limit_s: objectives.limits_s[i], time_s, met: time_s !== null && time_s <= objectives.limits_s[i] };
  });
}

/**
 * Pure: objectives judged for a scenario from its runs' metrics: the
 * median time to each size (a run that never got there counts as slower
 * than every run that did), met when the median is within the limit, and
 * how many runs met it on their own. Failed runs count as missing it.
 * A missed one says by how much: `over_s` (the median's time past the
 * limit) or, when the median run never got there, `median_received_bytes`.
 */
export function judgeGroup(runMetrics, objectives, failedRuns = 0) {
  return objectives.sizes.map((bytes, i) => {
    const limit = objectives.limits_s[i];
    const times = runMetrics.map((m) =>
      typeof m[sizeMetric(bytes)] === 'number' ? m[sizeMetric(bytes)] / 1000 : Infinity,
    );
    for (let k = 0; k < failedRuns; k++) times.push(Infinity);
    const med = times.length ? median(times) : null;
    const reached = med !== null && Number.isFinite(med);
    const out = {
      bytes,
      limit_s: limit,
      median_s: reached ? med : null,
      met: med !== null && med <= limit,
      runs_met: times.filter((t) => t <= limit).length,
      runs: times.length,
    };
    // how far off a missed one was: seconds late, or what the median run got
    if (reached && med > limit) out.over_s = med - limit;
    if (med !== null && !reached)
      out.median_received_bytes = median([
        ...runMetrics.map((m) => (typeof m.bytes === 'number' ? m.bytes : 0)),
        ...new Array(failedRuns).fill(0),
      ]);
    return out;
  });
}

/**
 * Pure: the goodput curve of a scenario over its runs, bin by bin from t0
 * (every run shares t0 = just before connecting): mean Mbit/s, mean and
 * median bytes received so far. Runs of different lengths are extended:
 * goodput 0 and bytes unchanged after a run's end. Runs with another bin
 * length than the first are left out.
 */
export function meanCurve(runs) {
  const use = runs.filter((r) => r.bin_ms === runs[0]?.bin_ms && Array.isArray(r.bins));
  if (!use.length) return null;
  const binMs = use[0].bin_ms;
  const len = Math.max(...use.map((r) => r.bins.length));
  const padded = use.map((r) => [...r.bins, ...new Array(len - r.bins.length).fill(0)]);
  const cum = padded.map(cumulative);
  const at = (rows, i) => rows.map((row) => row[i]);
  return {
    bin_ms: binMs,
    runs: use.length,
    t_ms: Array.from({ length: len }, (_, i) => (i + 1) * binMs),
    mean_mbps: Array.from({ length: len }, (_, i) => (mean(at(padded, i)) * 8) / (binMs * 1000)),
    mean_bytes: Array.from({ length: len }, (_, i) => mean(at(cum, i))),
    median_bytes: Array.from({ length: len }, (_, i) => median(at(cum, i))),
  };
}

/**
 * Pure: bytes received with a PEP over bytes without, bin by bin (the
 * ratio of two `meanCurve`s' mean_bytes, as Kosek et al.'s Fig. 2); null
 * where the one without had nothing yet. As long as the shorter curve.
 */
export function pepRatio(pepCurve, plainCurve) {
  if (!pepCurve || !plainCurve || pepCurve.bin_ms !== plainCurve.bin_ms) return null;
  const len = Math.min(pepCurve.mean_bytes.length, plainCurve.mean_bytes.length);
  return {
    bin_ms: pepCurve.bin_ms,
    t_ms: pepCurve.t_ms.slice(0, len),
    ratio: Array.from({ length: len }, (_, i) =>
      plainCurve.mean_bytes[i] > 0 ? pepCurve.mean_bytes[i] / plainCurve.mean_bytes[i] : null,
    ),
  };
}

/**
 * Pure: the sender's trace (satbulk serve --trace lines) condensed for a
 * run record: the busiest connection's samples as columns, times moved to
 * the client's t0 when `t0UnixMs` is known, when slow start ended (QUIC:
 * the first congestion event; TCP: the first finite ssthresh) and the
 * largest window.
 */
export function condenseTrace(lines, t0UnixMs = null) {
  if (!lines.length) return null;
  const byConn = new Map();
  for (const l of lines) {
    if (!byConn.has(l.conn)) byConn.set(l.conn, []);
    byConn.get(l.conn).push(l);
  }
  const busiest = [...byConn.values()].sort((a, b) => b.at(-1).app_bytes - a.at(-1).app_bytes)[0];
  const t = (l) => (t0UnixMs === null ? l.t_ms : l.unix_ms - t0UnixMs);
  const exit = busiest.find((l) =>
    l.proto === 'quic' ? l.congestion_events > 0 : l.ssthresh !== null && l.ssthresh !== undefined,
  );
  const last = busiest.at(-1);
  return {
    proto: busiest[0].proto,
    connections: byConn.size,
    time_base: t0UnixMs === null ? 'accept' : 'client_t0',
    t_ms: busiest.map(t),
    cwnd: busiest.map((l) => l.cwnd),
    bytes_sent: busiest.map((l) => l.bytes_sent),
    rtt_ms: busiest.map((l) => l.rtt_ms),
    max_cwnd: Math.max(...busiest.map((l) => l.cwnd)),
    slow_start_exit_ms: exit ? t(exit) : null,
    lost_packets: last.lost_packets,
    congestion_events: last.congestion_events ?? null,
  };
}

/**
 * The earliest a resumed connection can have received `sizeBytes` under
 * Careful Resume's limits (RFC 9959): no more than the initial window in the
 * first round trip of data (it arrives at `ttfbMs`), a jump of at most half
 * the saved window paced over the next round trip, and the link's rate
 * after that. `rateBps` is the link's rate in bits per second, `savedBytes`
 * the saved window (null: no limit on the jump, the path's BDP). What the
 * sender could gain beyond this is not Careful Resume's to give.
 */
export function resumeFloorMs({ ttfbMs, rttMs, rateBps, iwBytes, savedBytes = null, sizeBytes }) {
  const perMs = rateBps / 8 / 1000;
  const bdp = perMs * rttMs;
  const jump = Math.min(savedBytes == null ? bdp : savedBytes / 2, bdp);
  if (sizeBytes <= iwBytes) return ttfbMs;
  if (sizeBytes <= iwBytes + jump) return ttfbMs + rttMs + ((sizeBytes - iwBytes) / jump) * rttMs;
  return ttfbMs + 2 * rttMs + (sizeBytes - iwBytes - jump) / perMs;
}
