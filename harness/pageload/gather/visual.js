// Gatherer: what the user saw. A DevTools trace with screenshots only
// (Chromium adds a JPEG whenever the screen changes, as Lighthouse records
// them) from before the navigation until the page is complete; Lighthouse's
// own speedline-core turns them into the visual progress and Speed Index;
// the page's observers (page/observers.js) give its layout shifts and long
// tasks. After the load event the run waits until the page is quiet or a
// bound passes (browsertime's page complete check), so that late paints
// are seen. The filmstrip's frames go into the results folder, made small
// (thumbnail.js).
import fs from 'node:fs';
import path from 'node:path';
import speedline from 'speedline-core';
import observe, { observed } from '../page/observers.js';
import { thumbnail } from '../thumbnail.js';
import {
  cumulativeLayoutShift,
  filmstripFrames,
  frameName,
  navigationStartTs,
  pageComplete,
  totalBlockingTime,
  visualProgress,
} from '../visual-metrics.js';

// Only the screenshots and navigationStart (the time origin): every other
// category costs the browser work during the load it measures.
export const TRACE_CATEGORIES = ['-*', 'disabled-by-default-devtools.screenshot', 'blink.user_timing'];

// The wait after the load: done after QUIET_MS without a request, a
// response or a change of the page, at most MAX_WAIT_MS after the load
// event, checked every POLL_MS. A GEO round trip is 0.6 s: a request a
// script makes after the load is in flight before the quiet period ends.
export const PAGE_COMPLETE = { quietMs: 1000, maxWaitMs: 5000 };
const POLL_MS = 100;

// The most this gatherer adds to a load after its load event: the wait,
// then ending the trace and computing the progress of its frames.
export const AFTER_LOAD_MS = PAGE_COMPLETE.maxWaitMs + 20_000;

// Where the in-page observers keep what they saw (a window property).
const OBSERVERS_KEY = '__satbenchObservers';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// The requests in flight, and when the network was last active (wall ms).
function networkActivity(cdp) {
  const inFlight = new Set();
  const state = { lastActivity: 0, inFlight: () => inFlight.size };
  const active = (f) => (e) => {
    f(e.requestId);
    state.lastActivity = Date.now();
  };
  cdp.on(
    'Network.requestWillBeSent',
    active((id) => inFlight.add(id)),
  );
  cdp.on(
    'Network.dataReceived',
    active(() => {}),
  );
  cdp.on(
    'Network.loadingFinished',
    active((id) => inFlight.delete(id)),
  );
  cdp.on(
    'Network.loadingFailed',
    active((id) => inFlight.delete(id)),
  );
  return state;
}

// Waits after the load event until pageComplete (visual-metrics.js);
// returns what the page's observers saw by then.
async function waitForPageComplete(page, network, loadEventMs) {
  for (;;) {
    const seen = await page.evaluate(observed, OBSERVERS_KEY);
    if (!seen) throw new Error('the page observers are missing');
    const state = {
      sinceLoadMs: seen.now - loadEventMs,
      quietForMs: Math.min(seen.now - seen.lastChange, Date.now() - network.lastActivity),
      inFlight: network.inFlight(),
    };
    if (pageComplete(state, PAGE_COMPLETE)) return seen;
    await sleep(POLL_MS);
  }
}

// Ends the trace and collects its events.
function endTrace(cdp) {
  return new Promise((resolve, reject) => {
    const events = [];
    const collect = ({ value }) => {
      for (const e of value) events.push(e);
    };
    cdp.on('Tracing.dataCollected', collect);
    cdp.once('Tracing.tracingComplete', () => {
      cdp.off('Tracing.dataCollected', collect);
      resolve(events);
    });
    cdp.send('Tracing.end').catch(reject);
  });
}

// Writes the filmstrip's frames into `dir` (made), small, named by their ms.
function writeFrames(dir, frames) {
  fs.mkdirSync(dir, { recursive: true });
  for (const f of frames) fs.writeFileSync(path.join(dir, frameName(f.ms)), thumbnail(f.pixels()));
}

/**
 * The visual gatherer of one load. `outDir` (the results folder, or null:
 * no file written) and `frames` (the filmstrip's folder relative to it,
 * filmstrip/KEY-runN). Its result: {frames, progress, waited_ms,
 * layout_shifts, long_tasks, metrics} (load.js moves the metrics into the
 * record's).
 */
export default function visual({ outDir = null, frames = null } = {}) {
  let network;
  return {
    key: 'visual',
    afterLoadMs: AFTER_LOAD_MS,
    async start({ page, cdp }) {
      network = networkActivity(cdp);
      await page.evaluateOnNewDocument(observe, OBSERVERS_KEY);
      await cdp.send('Tracing.start', { categories: TRACE_CATEGORIES.join(','), transferMode: 'ReportEvents' });
    },
    async stop({ page, cdp, record }) {
      const nav = record.navigation;
      const loadEventMs = nav?.loadEventEnd || nav?.loadEventStart || 0;
      const seen = await waitForPageComplete(page, network, loadEventMs);
      const events = await endTrace(cdp);
      const timeOrigin = navigationStartTs(events);
      if (timeOrigin === null) throw new Error('the trace has no navigationStart');
      const v = visualProgress(await speedline(events, { timeOrigin, fastMode: true, include: 'speedIndex' }));
      const kept = filmstripFrames(v.frames);
      if (outDir && frames) writeFrames(path.join(outDir, frames), kept);
      const fcp = record.paints.find((p) => p.name === 'first-contentful-paint')?.startTime;
      return {
        frames: outDir && frames ? frames : null,
        progress: v.progress,
        waited_ms: Math.round(seen.now - loadEventMs),
        layout_shifts: seen.layoutShifts,
        long_tasks: seen.longTasks,
        metrics: {
          ...v.metrics,
          cls: cumulativeLayoutShift(seen.layoutShifts),
          tbt_ms: totalBlockingTime(seen.longTasks, fcp, seen.now),
        },
      };
    },
  };
}
