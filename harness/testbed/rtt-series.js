// An RTT time series read as a LEO slot process would shape it: the
// spread of the RTT, the period of its handovers found from the series
// itself, where in that period the boundaries fall, the delay spike and the
// loss at a boundary, and the outages (an in-motion link's obstructions).
// The series is satprobe rtt's `series_ms`: one entry per probe,
// `intervalMs` apart, null where the probe was lost.
import { median, quantile, round } from '../core/stats.js';

// Probes either side of a probe in the running median that estimates the
// jitter, and on each side of a probe whose medians are compared for a step.
const SMOOTH_HALF = 4;
const STEP_SIDE = 5;
// A step counts when the medians either side differ by this many times the
// jitter's (robust) standard deviation, and at least MIN_STEP_MS: jitter
// alone crosses it about once in 10^4 probes.
const STEP_FACTOR = 3;
const MIN_STEP_MS = 2;
// Events are spread over this much either side before they are correlated,
// so that a boundary's loss and its steps a few probes later line up.
const SPREAD_MS = 100;
// Among the lags whose correlation is within this fraction of the best,
// the shortest is the period (its multiples correlate as well).
const PEAK_FRACTION = 0.8;
// Below this correlation (as a fraction of the events' variance) nothing
// repeats: random losses and jitter stay far under it.
const MIN_CORRELATION = 0.2;
// Echoes whose median makes one reading of the spike.
const SPIKE_RUN = 5;
// The stretch after a boundary whose loss is its peak: as long as the
// handover's burst (Kassem et al.'s "up to 50 %" is a burst's loss).
const PEAK_MS = 100;

// A run of lost echoes at least this long is an outage, not a handover's
// burst (which the slot process keeps within its first 100 ms, PEAK_MS):
// starlink-motion's outages last 0.2 s and more.
const OUTAGE_MS = 200;

const present = (x) => x !== null && x !== undefined;

/**
 * Pure: the runs of `series` lost for at least `outageMs`, as [{from, to}]
 * (probe indexes, `to` past the last lost one).
 */
export function outageRuns(series, intervalMs, outageMs = OUTAGE_MS) {
  const need = Math.ceil(outageMs / intervalMs);
  const runs = [];
  let from = null;
  series.forEach((x, i) => {
    if (!present(x)) from ??= i;
    else if (from !== null) {
      if (i - from >= need) runs.push({ from, to: i });
      from = null;
    }
  });
  if (from !== null && series.length - from >= need) runs.push({ from, to: series.length });
  return runs;
}

// Pure: a running median of the received RTTs, null where a window holds none.
function runningMedian(series) {
  return series.map((_, i) => {
    const w = series.slice(Math.max(0, i - SMOOTH_HALF), i + SMOOTH_HALF + 1).filter(present);
    return w.length ? median(w) : null;
  });
}

// Pure: 1 where something changed at probe i (it was lost, or the median
// of the probes before it and of those from it on differ by a step), else 0;
// an outage (`outages`, outageRuns) is one change where it starts: its
// hundreds of lost echoes, at random times, would drown the boundaries.
export function changeEvents(series, outages = []) {
  const inside = new Set(
    outages.flatMap(({ from, to }) => Array.from({ length: to - from - 1 }, (_, k) => from + 1 + k)),
  );
  const run = runningMedian(series);
  const dev = series.flatMap((x, i) => (present(x) && present(run[i]) ? [Math.abs(x - run[i])] : []));
  // 1.4826 × MAD: the standard deviation of normal jitter
  const jitterSd = 1.4826 * (median(dev) ?? 0);
  const threshold = Math.max(MIN_STEP_MS, STEP_FACTOR * jitterSd);
  const side = (from, to) => median(series.slice(Math.max(0, from), to).filter(present));
  return series.map((x, i) => {
    if (inside.has(i)) return 0;
    if (!present(x)) return 1;
    const [before, after] = [side(i - STEP_SIDE, i), side(i, i + STEP_SIDE)];
    return present(before) && present(after) && Math.abs(after - before) > threshold ? 1 : 0;
  });
}

// Pure: the lag (in probes) at which the events repeat, from the
// autocorrelation of the spread events over lags from `minLag` to half the
// series; null when nothing repeats.
export function periodLag(events, minLag, spread) {
  const n = events.length;
  const s = events.map((_, i) => {
    let k = 0;
    for (let j = Math.max(0, i - spread); j <= Math.min(n - 1, i + spread); j++) k += events[j];
    return k;
  });
  const mean = s.reduce((a, b) => a + b, 0) / n;
  const d = s.map((x) => x - mean);
  const ac = [];
  for (let lag = minLag; lag <= Math.floor(n / 2); lag++) {
    let sum = 0;
    for (let i = 0; i + lag < n; i++) sum += d[i] * d[i + lag];
    ac.push({ lag, r: sum / (n - lag) });
  }
  const variance = d.reduce((a, x) => a + x * x, 0) / n;
  const best = Math.max(...ac.map((a) => a.r));
  if (!(variance > 0) || !(best >= MIN_CORRELATION * variance)) return null;
  // The first peak near the best: its multiples correlate about as well.
  const near = ac.filter((a) => a.r >= PEAK_FRACTION * best);
  let first = near[0];
  for (const a of near) {
    if (a.lag > first.lag + spread * 2) break;
    if (a.r > first.r) first = a;
  }
  return first.lag;
}

// Pure: the outages of a series of `n` probes (outageRuns) in figures:
// how many, their median and longest length, their share of the probes and
// how often one began.
function outageSummary(runs, n, intervalMs) {
  const ms = runs.map(({ from, to }) => (to - from) * intervalMs);
  const lost = runs.reduce((a, { from, to }) => a + to - from, 0);
  return {
    count: runs.length,
    median_ms: runs.length ? round(median(ms)) : null,
    longest_ms: runs.length ? Math.max(...ms) : null,
    loss_pct: n ? round((100 * lost) / n, 3) : null,
    per_minute: n ? round((runs.length * 60000) / (n * intervalMs), 3) : null,
  };
}

// Pure: the mean difference between successive RTTs (Huston's jitter),
// over the pairs of echoes both received; null without one.
export function successiveJitter(series) {
  const d = series.slice(1).flatMap((x, i) => (present(x) && present(series[i]) ? [Math.abs(x - series[i])] : []));
  return d.length ? d.reduce((a, b) => a + b, 0) / d.length : null;
}

// Pure: the loss of the worst `run` successive echoes of the window, all
// boundaries pooled (`seen[j]`, `lost[j]`: the echoes j after a boundary's
// window start); null when none was seen.
export function peakLossPct(seen, lost, run) {
  let best = null;
  for (let j = 0; j + run <= seen.length; j++) {
    const n = seen.slice(j, j + run).reduce((a, b) => a + b, 0);
    const k = lost.slice(j, j + run).reduce((a, b) => a + b, 0);
    if (n && (best === null || k / n > best)) best = k / n;
  }
  return best === null ? null : round(100 * best, 3);
}

// Pure: the series' summary. `windowMs`: how long after a boundary counts
// as "at the boundary" for the loss and the spike; the spike is the highest
// median of SPIKE_RUN successive echoes in that window over the median of
// the rest of the slot; each slot's RTT is the median of that rest, and the
// largest step between successive slots is the one Huston's worst case
// (30 -> 80 ms) is compared with; the peak loss is that of the worst
// PEAK_MS of the window, the boundaries pooled.
export function analyzeRttSeries(series, intervalMs, { minPeriodMs = 1000, windowMs = 500 } = {}) {
  const rtts = series.filter(present);
  const outages = outageRuns(series, intervalMs);
  const inOutage = new Array(series.length).fill(false);
  for (const { from, to } of outages) inOutage.fill(true, from, to);
  const outageLost = inOutage.filter(Boolean).length;
  // the loss at and away from boundaries leaves the outages' echoes out
  const lost = series.length - rtts.length - outageLost;
  const out = {
    n: series.length,
    received: rtts.length,
    median_ms: round(median(rtts)),
    p5_ms: round(quantile(rtts, 0.05)),
    p95_ms: round(quantile(rtts, 0.95)),
    loss_pct: series.length ? round((100 * (series.length - rtts.length)) / series.length, 3) : null,
    successive_jitter_ms: round(successiveJitter(series)),
    outages: outageSummary(outages, series.length, intervalMs),
    period_s: null,
  };
  const events = changeEvents(series, outages);
  const lag = periodLag(events, Math.ceil(minPeriodMs / intervalMs), Math.round(SPREAD_MS / intervalMs));
  if (lag === null) return out;
  // Where in the period the boundaries are: fold the events over every
  // period; the window of `windowMs` holding the most of them, started at
  // its first event (a handover's loss and spike come at its start).
  const bins = new Array(lag).fill(0);
  events.forEach((e, i) => (bins[i % lag] += e));
  const win = Math.min(Math.round(windowMs / intervalMs), Math.floor(lag / 2));
  let phase = 0;
  let most = [-1, false];
  for (let b = 0; b < lag; b++) {
    let k = 0;
    for (let j = 0; j < win; j++) k += bins[(b + j) % lag];
    const here = [k, bins[b] > 0];
    if (here[0] > most[0] || (here[0] === most[0] && here[1] && !most[1])) [most, phase] = [here, b];
  }
  let [atN, atLost] = [0, 0];
  // per echo of the window, over the boundaries: echoes seen and lost
  const [seenAt, lostAt] = [new Array(win).fill(0), new Array(win).fill(0)];
  const spikes = [];
  const slotMedians = [];
  // From the period before the first whole one: a boundary's window may
  // reach into the series' start.
  const clip = (i) => Math.max(0, i);
  for (let start = phase - lag; start < series.length; start += lag) {
    const at = series.slice(clip(start), clip(start + win));
    const rest = series.slice(clip(start + win), clip(start + lag));
    const counted = at.filter((_, j) => !inOutage[clip(start) + j]);
    atN += counted.length;
    atLost += counted.filter((x) => !present(x)).length;
    for (let j = 0; j < win; j++)
      if (start + j >= 0 && start + j < series.length && !inOutage[start + j]) {
        seenAt[j] += 1;
        lostAt[j] += present(series[start + j]) ? 0 : 1;
      }
    // The spike: the highest median of SPIKE_RUN echoes in the window, so
    // that a boundary placed a few echoes off still sees it whole.
    const head = at.filter(present);
    const settled = rest.filter(present);
    const runs = head
      .slice(0, Math.max(0, head.length - SPIKE_RUN + 1))
      .map((_, j) => median(head.slice(j, j + SPIKE_RUN)));
    if (start >= 0 && runs.length && settled.length && rest.length === lag - win)
      spikes.push(Math.max(...runs) - median(settled));
    // a slot's RTT, from as long a stretch as the window at least (the
    // series' first and last slots may be cut)
    if (settled.length >= win) slotMedians.push(median(settled));
  }
  const [otherN, otherLost] = [series.length - outageLost - atN, lost - atLost];
  const steps = slotMedians.slice(1).map((to, i) => ({ from: round(slotMedians[i]), to: round(to) }));
  const largest = steps.reduce((a, x) => (a && Math.abs(a.to - a.from) >= Math.abs(x.to - x.from) ? a : x), null);
  return {
    ...out,
    period_s: round((lag * intervalMs) / 1000, 3),
    boundary_phase_s: round((phase * intervalMs) / 1000, 3),
    boundaries: Math.ceil((series.length - phase) / lag),
    window_ms: win * intervalMs,
    spike_ms: spikes.length ? round(median(spikes)) : null,
    boundary_loss_pct: atN ? round((100 * atLost) / atN, 3) : null,
    boundary_lost: atLost,
    boundary_echoes: atN,
    peak_loss_pct: peakLossPct(seenAt, lostAt, Math.max(1, Math.round(PEAK_MS / intervalMs))),
    other_loss_pct: otherN ? round((100 * otherLost) / otherN, 3) : null,
    slot_medians_ms: slotMedians.map((x) => round(x)),
    largest_slot_step_ms: largest,
  };
}

// Pure: the RTT spike and the loss of the echoes sent around a boundary,
// in the probe's terms: the echo crosses the return link's slot stage as
// it is sent, and its reply the forward link's after the way up, the
// ground links and the way back to the satellite link (the return link's
// spike included when the echo was sent inside it). The two bursts
// therefore do not cover the same echoes: the forward one takes echoes
// sent before the boundary and fewer after it, and where they overlap a
// request lost on the way up leaves no reply to lose. Returns the expected
// number of lost echoes per boundary times the echo interval (ms of
// echoes) in the `windowMs` from the first (`windowMs`) and in the worst
// PEAK_MS (`peakMs`), from the mean delays; jitter moves the edges both
// ways.
export function boundaryLossMs(profile, { windowMs = 500, stepMs = 0.1 } = {}) {
  const links = Object.entries(profile.links);
  const sat = profile.links.satellite;
  const [f, r] = [sat.forward.slots, sat.return.slots];
  const mean = (s) => (s ? (s.delay_min_ms + s.delay_max_ms) / 2 : 0);
  // from the send to the forward slot stage, spike aside
  const toForwardMs =
    links.reduce((a, [, l]) => a + l.return.delay_ms, 0) +
    mean(r) +
    links.filter(([name]) => name !== 'satellite').reduce((a, [, l]) => a + l.forward.delay_ms, 0);
  const inBurst = (s, t) => (s && t >= 0 && t < s.loss_s * 1000 ? s.loss_p : 0);
  const spikeAt = (s, t) => (s && t >= 0 && t < s.spike_s * 1000 ? s.spike_ms : 0);
  // the forward burst takes echoes sent from toForwardMs before the boundary
  const start = -toForwardMs - 1;
  const span = Math.max(f?.loss_s ?? 0, r?.loss_s ?? 0) * 1000 - start + 1;
  const lossAt = Array.from({ length: Math.ceil(span / stepMs) }, (_, k) => {
    const t = start + k * stepMs;
    const up = inBurst(r, t);
    const down = inBurst(f, t + toForwardMs + spikeAt(r, t));
    return 1 - (1 - up) * (1 - down);
  });
  // the probe's window starts at the first loss (or step) it sees
  const first = Math.max(
    0,
    lossAt.findIndex((p) => p > 0),
  );
  const sum = (from, ms) => lossAt.slice(from, from + Math.round(ms / stepMs)).reduce((a, p) => a + p * stepMs, 0);
  const peakRun = Math.round(PEAK_MS / stepMs);
  let peak = 0;
  for (let k = 0; k + peakRun <= lossAt.length; k++) peak = Math.max(peak, sum(k, PEAK_MS));
  return { windowMs: sum(first, windowMs), peakMs: peak };
}

// Pure: what a profile's slot process should show in the same terms (null
// without one): the period (and the boundary's offset in the minute when
// the wall clock sets the phase), the range of a slot's RTT, the RTT spike
// (both directions' spikes), the share of the echoes lost in the first
// `windowMs` after a boundary and in its worst PEAK_MS (boundaryLossMs).
export function configuredSlots(profile, { windowMs = 500 } = {}) {
  const f = profile.links.satellite.forward.slots;
  const r = profile.links.satellite.return.slots;
  const s = f ?? r;
  if (!s) return null;
  // the RTT between handovers: the fixed delays and each direction's slot draw
  const fixed = Object.values(profile.links).reduce((a, l) => a + l.forward.delay_ms + l.return.delay_ms, 0);
  const draw = (k) => (f?.[k] ?? 0) + (r?.[k] ?? 0);
  const lossMs = boundaryLossMs(profile, { windowMs });
  return {
    period_s: s.period_s,
    ...(s.boundary_at_s !== undefined && { boundary_at_s: s.boundary_at_s }),
    slot_rtt_ms: [round(fixed + draw('delay_min_ms')), round(fixed + draw('delay_max_ms'))],
    spike_ms: round((f?.spike_ms ?? 0) + (r?.spike_ms ?? 0)),
    boundary_loss_pct: round((100 * lossMs.windowMs) / windowMs, 2),
    peak_loss_pct: round((100 * lossMs.peakMs) / PEAK_MS, 2),
    window_ms: windowMs,
    ...(s.outages && { outages: configuredOutages(s.outages) }),
  };
}

// Pure: a slot process's outages (profiles.js's {mean_gap_s, min_s,
// max_s}) in the probe's terms (outageSummary): how often one begins, its
// median length and longest, and the share of the time out.
function configuredOutages({ mean_gap_s: gap, min_s: min, max_s: max }) {
  const mean = (min + max) / 2;
  return {
    median_ms: round(1000 * mean),
    longest_ms: round(1000 * max),
    loss_pct: round((100 * mean) / (gap + mean), 3),
    per_minute: round(60 / (gap + mean), 3),
  };
}
