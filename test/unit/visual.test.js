// Visual metrics (pageload/visual-metrics.js) and the visual gatherer
// (pageload/gather/visual.js) on hand-made traces: screenshots made here
// as JPEGs, speedline-core computing their progress as in a real run.
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import jpeg from 'jpeg-js';
import speedline from 'speedline-core';
import {
  cumulativeLayoutShift,
  filmstripFrames,
  frameName,
  navigationStartTs,
  pageComplete,
  totalBlockingTime,
  visualProgress,
} from '../../harness/pageload/visual-metrics.js';
import visual, { TRACE_CATEGORIES } from '../../harness/pageload/gather/visual.js';
import { shrink, thumbnail } from '../../harness/pageload/thumbnail.js';

// A 64 × 32 screenshot whose left `painted` share is black, the rest white.
function screenshot(painted) {
  const width = 64;
  const height = 32;
  const data = Buffer.alloc(width * height * 4, 0xff);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < Math.round(width * painted); x++) data.fill(0, (y * width + x) * 4, (y * width + x) * 4 + 3);
  return jpeg.encode({ data, width, height }, 100).data;
}

const NAV_TS = 5_000_000; // µs, the trace's clock
// A trace as Chromium gives it: the tab's blank page, the page's navigation
// start, then a screenshot at each change (ms after navigation start).
function trace(shots) {
  return [
    {
      name: 'navigationStart',
      cat: 'blink.user_timing',
      ts: NAV_TS - 300_000,
      args: { data: { isLoadingMainFrame: true, documentLoaderURL: '' } },
    },
    {
      name: 'navigationStart',
      cat: 'blink.user_timing',
      ts: NAV_TS,
      args: { data: { isLoadingMainFrame: true, documentLoaderURL: 'https://satbench.test/' } },
    },
    ...shots.map(([ms, painted]) => ({
      name: 'Screenshot',
      cat: 'disabled-by-default-devtools.screenshot',
      ts: NAV_TS + ms * 1000,
      args: { snapshot: screenshot(painted).toString('base64') },
    })),
  ];
}

// Blank at 400 ms, half the screen at 1000 ms, all of it at 2000 ms.
const SHOTS = [
  [400, 0],
  [1000, 0.5],
  [2000, 1],
];

const near = (actual, expected, tolerance, what) =>
  assert.ok(Math.abs(actual - expected) <= tolerance, `${what}: ${actual}, expected ${expected} ± ${tolerance}`);

describe('visual metrics', () => {
  it("takes the time origin from the page's navigationStart, not the blank tab's", () => {
    assert.equal(navigationStartTs(trace([])), NAV_TS);
    assert.equal(navigationStartTs([]), null);
  });

  it('Speed Index, first and last visual change and Visual Complete from speedline-core, ordered', async () => {
    const events = trace(SHOTS);
    const v = visualProgress(await speedline(events, { timeOrigin: NAV_TS, fastMode: true, include: 'speedIndex' }));
    // speedline adds the blank screen at navigation start
    assert.deepEqual(
      v.progress.map(([ms]) => ms),
      [0, 400, 1000, 2000],
    );
    assert.equal(v.progress[1][1], 0);
    near(v.progress[2][1], 50, 2, 'progress at 1000 ms');
    assert.equal(v.progress[3][1], 100);
    const m = v.metrics;
    assert.equal(m.first_visual_change_ms, 1000);
    // first paint, then half the screen still to come for a second
    near(m.speed_index_ms, 1500, 20, 'Speed Index');
    assert.equal(m.visual_complete_85_ms, 2000);
    assert.equal(m.visual_complete_99_ms, 2000);
    assert.equal(m.last_visual_change_ms, 2000);
    assert.deepEqual(
      v.frames.map((f) => f.ms),
      [400, 1000, 2000],
      'the screenshots, without the blank one speedline adds',
    );
    assert.deepEqual(
      [v.frames[1].pixels().width, v.frames[1].pixels().height],
      [64, 32],
      'each frame decodes to its pixels',
    );
  });

  it('refuses screenshots that never change (Speed Index 0), as Lighthouse does', async () => {
    const blank = await speedline(trace([[300, 0]]), { timeOrigin: NAV_TS, fastMode: true, include: 'speedIndex' });
    assert.throws(() => visualProgress(blank), /no visual change/);
  });

  it('the filmstrip: each visual change, at most one per 100 ms step (the last of it)', () => {
    const frames = [0, 40, 90, 150, 420, 499, 500].map((ms) => ({ ms }));
    assert.deepEqual(
      filmstripFrames(frames).map((f) => f.ms),
      [90, 150, 499, 500],
    );
    assert.equal(frameName(1300), '001300.jpg');
    assert.equal(frameName(0), '000000.jpg');
  });

  it("CLS is the largest session window's sum (gaps under 1 s, windows up to 5 s), input left out", () => {
    const s = (startTime, value, hadRecentInput = false) => ({ startTime, value, hadRecentInput });
    assert.equal(cumulativeLayoutShift([]), 0);
    // one window of two, then a gap of 1.5 s and a window of one larger shift
    near(cumulativeLayoutShift([s(100, 0.1), s(600, 0.05), s(2100, 0.12)]), 0.15, 1e-9, 'two windows');
    near(cumulativeLayoutShift([s(2100, 0.12), s(100, 0.1), s(600, 0.05)]), 0.15, 1e-9, 'in any order');
    // shifts 0.9 s apart for 6 s: the window closes at 5 s
    const steady = Array.from({ length: 8 }, (_, i) => s(i * 900, 0.01));
    near(cumulativeLayoutShift(steady), 0.06, 1e-9, 'a window lasts 5 s at most');
    near(cumulativeLayoutShift([s(100, 0.3, true), s(200, 0.01)]), 0.01, 1e-9, 'after input');
  });

  it('TBT: what each long task after FCP took beyond 50 ms, clipped at FCP and the end', () => {
    const t = (startTime, duration) => ({ startTime, duration });
    assert.equal(totalBlockingTime([t(100, 300), t(1200, 120), t(1500, 40)], 1000), 70);
    // straddling FCP: 80 ms of it after FCP
    assert.equal(totalBlockingTime([t(900, 180)], 1000), 30);
    assert.equal(totalBlockingTime([t(1000, 200)], 1000, 1100), 50);
    assert.equal(totalBlockingTime([], 1000), 0);
    assert.equal(totalBlockingTime([t(1000, 200)], undefined), null, 'no FCP, no TBT');
  });

  it('the page is complete when quiet with nothing in flight, or at the bound', () => {
    const limits = { quietMs: 1000, maxWaitMs: 5000 };
    assert.equal(pageComplete({ sinceLoadMs: 1200, quietForMs: 1000, inFlight: 0 }, limits), true);
    assert.equal(pageComplete({ sinceLoadMs: 1200, quietForMs: 999, inFlight: 0 }, limits), false);
    assert.equal(pageComplete({ sinceLoadMs: 1200, quietForMs: 3000, inFlight: 1 }, limits), false);
    assert.equal(pageComplete({ sinceLoadMs: 5000, quietForMs: 0, inFlight: 3 }, limits), true);
  });
});

describe('filmstrip thumbnails', () => {
  it('a frame wider than the limit is reduced by a whole factor, each pixel the mean of its block', () => {
    const pixels = jpeg.decode(screenshot(0.5));
    const small = jpeg.decode(thumbnail(pixels, { maxWidth: 30, quality: 90 }));
    assert.deepEqual([small.width, small.height], [21, 10], '64 × 32 by 3, partial blocks dropped');
    assert.ok(small.data[0] < 20, 'painted left');
    assert.ok(small.data[(small.width - 1) * 4] > 235, 'white right');
    const s = shrink(
      { width: 2, height: 2, data: Buffer.from([0, 0, 0, 255, 100, 100, 100, 255, 0, 0, 0, 255, 100, 100, 100, 255]) },
      2,
    );
    assert.deepEqual([...s.data], [50, 50, 50, 255]);
    assert.equal(jpeg.decode(thumbnail(pixels)).width, 64, 'under the limit: as it is');
  });
});

// A DevTools session as the gatherer uses it: Tracing answers with `events`.
function fakeCdp(events) {
  const cdp = new EventEmitter();
  cdp.sent = [];
  cdp.send = async (method, params) => {
    cdp.sent.push([method, params]);
    if (method === 'Tracing.end')
      setImmediate(() => {
        cdp.emit('Tracing.dataCollected', { value: events.slice(0, 2) });
        cdp.emit('Tracing.dataCollected', { value: events.slice(2) });
        cdp.emit('Tracing.tracingComplete', {});
      });
  };
  return cdp;
}

describe('visual gatherer', () => {
  const observers = {
    layoutShifts: [{ startTime: 1100, value: 0.02, hadRecentInput: false }],
    longTasks: [{ startTime: 1050, duration: 150, name: 'self' }],
    lastChange: 1100,
    now: 3400,
  };
  const page = {
    installed: [],
    evaluateOnNewDocument: async (fn, key) => page.installed.push([fn.name, key]),
    evaluate: async () => observers,
  };
  const record = () => ({
    navigation: { loadEventStart: 2090, loadEventEnd: 2100 },
    paints: [{ name: 'first-contentful-paint', startTime: 1000 }],
  });

  it('traces screenshots only, with the observers in place before the document', async () => {
    const cdp = fakeCdp([]);
    await visual().start({ page, cdp });
    assert.deepEqual(page.installed.at(-1), ['observe', '__satbenchObservers']);
    assert.deepEqual(cdp.sent, [
      ['Tracing.start', { categories: TRACE_CATEGORIES.join(','), transferMode: 'ReportEvents' }],
    ]);
  });

  it('writes the filmstrip into the results folder and gives the record its metrics, curve and raw entries', async () => {
    const outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-visual-'));
    const cdp = fakeCdp(trace(SHOTS));
    const g = visual({ outDir, frames: 'filmstrip/leo_0_h3_kepler-run2' });
    await g.start({ page, cdp });
    const v = await g.stop({ page, cdp, record: record() });
    assert.equal(v.frames, 'filmstrip/leo_0_h3_kepler-run2');
    const dir = path.join(outDir, v.frames);
    assert.deepEqual(fs.readdirSync(dir).sort(), ['000400.jpg', '001000.jpg', '002000.jpg']);
    const last = jpeg.decode(fs.readFileSync(path.join(dir, '002000.jpg')));
    assert.deepEqual([last.width, last.height], [64, 32], 'already small: kept at its size');
    assert.ok(last.data[0] < 10, 'the screen at 2000 ms: all painted');
    assert.equal(v.waited_ms, 1300, 'from the load event to the end of the wait');
    assert.equal(v.progress.length, 4);
    assert.deepEqual(v.layout_shifts, observers.layoutShifts);
    assert.deepEqual(v.long_tasks, observers.longTasks);
    assert.equal(v.metrics.cls, 0.02);
    assert.equal(v.metrics.tbt_ms, 100);
    assert.equal(v.metrics.last_visual_change_ms, 2000);
    near(v.metrics.speed_index_ms, 1500, 20, 'Speed Index');
  });

  it('without a results folder writes nothing and names no frames', async () => {
    const cdp = fakeCdp(trace(SHOTS));
    const g = visual();
    await g.start({ page, cdp });
    const v = await g.stop({ page, cdp, record: record() });
    assert.equal(v.frames, null);
    assert.equal(v.metrics.first_visual_change_ms, 1000);
  });

  it('a trace without the navigation start fails the gatherer, not the run', async () => {
    const cdp = fakeCdp(trace(SHOTS).slice(2));
    const g = visual();
    await g.start({ page, cdp });
    await assert.rejects(g.stop({ page, cdp, record: record() }), /no navigationStart/);
  });
});
