// What a load's screenshots and the page's own observers say of what the
// user saw (the gatherer gather/visual.js records them): plain functions of
// the trace's events, speedline-core's result (Lighthouse's Speed Index),
// layout shifts and long tasks. Times are ms from navigation start.

// Visual Complete thresholds (percent of the final screen), as
// browsertime's VisualComplete85/95/99.
export const VISUAL_COMPLETE_PCTS = [85, 95, 99];

// The filmstrip keeps at most one frame per step (WebPageTest's 100 ms
// filmstrip): the last one of each step, what the screen showed at its end.
export const FILMSTRIP_STEP_MS = 100;

/**
 * Pure: the trace timestamp (µs, the trace's clock) of the page's
 * navigation start: the first navigationStart of the main frame to an
 * http(s) document (the tab's about:blank comes before the trace starts).
 * Null when the trace has none.
 */
export function navigationStartTs(events) {
  const nav = events.find(
    (e) =>
      e.name === 'navigationStart' &&
      e.args?.data?.isLoadingMainFrame &&
      /^https?:/.test(e.args.data.documentLoaderURL ?? ''),
  );
  return nav ? nav.ts : null;
}

// Pure: a frame's file name in the filmstrip folder: its ms, six digits.
export const frameName = (ms) => `${String(ms).padStart(6, '0')}.jpg`;

/**
 * Pure: the frames the filmstrip keeps of `frames` ([{ms, …}] in time
 * order): each visual change, at most one per `stepMs` (the last in its
 * step).
 */
export function filmstripFrames(frames, stepMs = FILMSTRIP_STEP_MS) {
  const kept = [];
  for (const f of frames) {
    const prev = kept.at(-1);
    if (prev && Math.floor(prev.ms / stepMs) === Math.floor(f.ms / stepMs)) kept[kept.length - 1] = f;
    else kept.push(f);
  }
  return kept;
}

/**
 * Pure: the visual progress and metrics of speedline-core's result (its
 * frames in time order, the first the blank screen it adds at navigation
 * start, each with its visual progress in percent). Returns {progress:
 * [[ms, percent]], frames: [{ms, pixels()}] (the screenshots, without the
 * added blank one; pixels() decodes one), metrics}. A page whose screenshots never change
 * (Speed Index 0, as Lighthouse refuses it) throws.
 */
export function visualProgress(speedline) {
  if (!(speedline.speedIndex > 0)) throw new Error('the screenshots show no visual change');
  const all = speedline.frames.map((f) => ({
    ms: Math.round(f.getTimeStamp() - speedline.beginning),
    pct: f.getProgress(),
    // its RGBA pixels, decoded once (speedline keeps what it decoded)
    pixels: () => f.getParsedImage(),
  }));
  const firstAt = (pct) => all.find((f) => f.pct >= pct)?.ms ?? null;
  const metrics = {
    first_visual_change_ms: all.find((f) => f.pct > 0)?.ms ?? null,
    speed_index_ms: Math.round(speedline.speedIndex),
    ...Object.fromEntries(VISUAL_COMPLETE_PCTS.map((p) => [`visual_complete_${p}_ms`, firstAt(p)])),
    last_visual_change_ms: all.at(-1).ms,
  };
  return {
    progress: all.map((f) => [f.ms, f.pct]),
    frames: all.slice(1).map(({ ms, pixels }) => ({ ms, pixels })),
    metrics,
  };
}

/**
 * Pure: Cumulative Layout Shift from the page's layout-shift entries: the
 * largest session window's sum (shifts less than 1 s apart, a window at
 * most 5 s long), shifts right after input left out (web.dev's
 * definition, as Chromium reports it).
 */
export function cumulativeLayoutShift(shifts) {
  let largest = 0;
  let sum = 0;
  let first = null;
  let last = null;
  for (const s of shifts.filter((x) => !x.hadRecentInput).sort((a, b) => a.startTime - b.startTime)) {
    if (first === null || s.startTime - last > 1000 || s.startTime - first > 5000) {
      first = s.startTime;
      sum = 0;
    }
    sum += s.value;
    last = s.startTime;
    largest = Math.max(largest, sum);
  }
  return largest;
}

// A task longer than this blocks input (Lighthouse's, the RAIL model's 50 ms).
const BLOCKING_MS = 50;

/**
 * Pure: Total Blocking Time: over the long tasks after first contentful
 * paint (a task that straddles it counts from it on) until `endMs` (the
 * end of the observation: satbench has no Time to Interactive), the time
 * each took beyond 50 ms, summed. Null without FCP.
 */
export function totalBlockingTime(longTasks, fcpMs, endMs = Infinity) {
  if (typeof fcpMs !== 'number') return null;
  let total = 0;
  for (const t of longTasks) {
    const length = Math.min(t.startTime + t.duration, endMs) - Math.max(t.startTime, fcpMs);
    if (length > BLOCKING_MS) total += length - BLOCKING_MS;
  }
  return total;
}

/**
 * Pure: whether the wait after the load is over (browsertime's page
 * complete check, by inactivity): nothing in flight and nothing new (a
 * request, a response, a layout shift, a new largest paint) for `quietMs`,
 * or `maxWaitMs` since the load event in any case.
 */
export function pageComplete({ sinceLoadMs, quietForMs, inFlight }, { quietMs, maxWaitMs }) {
  return sinceLoadMs >= maxWaitMs || (inFlight === 0 && quietForMs >= quietMs);
}
