// The report in a real browser: a generated index.html opened in headless
// Chromium from disk must make no network request and log no error, draw
// every chart, and show summary.json's numbers; page loads and bulk
// transfers (fixture records, no real runs). Saves screenshots into
// test-output/ (screen and print).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
/* global Chart -- the report's inlined Chart.js, in page.evaluate() */
import puppeteer from 'puppeteer-core';
import { chromePath, QUIET_CHROMIUM_FLAGS } from '../../harness/browser/chromium.js';
import { ROOT } from '../../harness/core/sys.js';
import { scenarioKey } from '../../harness/kinds/pageload.js';
import { gatherEnvironment } from '../../harness/campaign/environment.js';
import { satbench, writeProfile } from './helpers.js';
import {
  scenarios,
  makeRecords,
  writeResultsDir,
  bulkScenarios,
  makeBulkRecords,
  makeViewPairs,
  handshakeCounts,
} from '../fixtures.js';
import { makeHar, writeRunFiles, makeFrame } from '../run-files.js';
import { BENCH_PRESETS } from '../../harness/pageload/presets.js';

const EVIL = '<script>alert(1)</script>';
const OUT = path.join(ROOT, 'test-output');

function launchBrowser() {
  return puppeteer.launch({
    executablePath: chromePath(),
    headless: true,
    pipe: true,
    args: [...QUIET_CHROMIUM_FLAGS, '--window-size=1366,900'],
  });
}

// A page that lets only the report itself (and its data: URLs) load and
// records every other request, console error or warning, and dialog (a
// script from input).
async function offlinePage(browser, url) {
  const page = await browser.newPage();
  await page.setViewport({ width: 1366, height: 900 });
  const seen = { requests: [], errors: [], dialogs: [] };
  await page.setRequestInterception(true);
  // data: URLs (the filmstrips' inlined frames) are the page's own bytes, not the network
  page.on('request', (req) => {
    const own = req.url() === url || req.url().startsWith('data:');
    if (!own) seen.requests.push(req.url());
    if (own) req.continue();
    else req.abort();
  });
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warn') seen.errors.push(`${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => seen.errors.push(`pageerror: ${e.message}`));
  page.on('dialog', async (d) => {
    seen.dialogs.push(d.message());
    await d.dismiss();
  });
  await page.goto(url, { waitUntil: 'load' });
  await page.waitForFunction(() => document.documentElement.dataset.charts !== undefined, { timeout: 10000 });
  return { page, seen };
}

// Every canvas with its size and how many of its pixels are painted.
const canvasesOf = (page) =>
  page.evaluate(() =>
    [...document.querySelectorAll('canvas')].map((c) => {
      const { data } = c.getContext('2d').getImageData(0, 0, c.width, c.height);
      let painted = 0;
      for (let i = 3; i < data.length; i += 4) if (data[i] > 0) painted++;
      return {
        label: c.getAttribute('aria-label'),
        chart: c.dataset.chart,
        bulk: c.dataset.bulk ?? null,
        w: c.width,
        h: c.height,
        painted,
      };
    }),
  );

async function saveViews(page, name) {
  fs.mkdirSync(OUT, { recursive: true });
  await page.screenshot({ path: path.join(OUT, `${name}.png`), fullPage: true });
  await page.emulateMediaType('print');
  await page.evaluate(() => window.dispatchEvent(new Event('beforeprint')));
  await page.screenshot({ path: path.join(OUT, `${name}-print.png`), fullPage: true });
  await page.pdf({ path: path.join(OUT, `${name}.pdf`), format: 'A4', landscape: true, printBackground: true });
  assert.ok(fs.statSync(path.join(OUT, `${name}.pdf`)).size > 10000);
}

// `satbench report DIR`, which must succeed, then a browser to open the report in.
async function reportAndLaunch(dir) {
  const r = await satbench(['report', dir]);
  assert.equal(r.code, 0, r.stderr);
  return launchBrowser();
}

async function closeAndRemove(browser, tmp) {
  await browser?.close();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
}

describe('report in a browser (integration, headless Chromium)', function () {
  let tmp;
  let dir;
  let browser;

  before(async function () {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-report-'));
    const matrix = {
      profiles: ['geo', 'leo'],
      losses: [0, 1],
      protocols: ['h1', 'h1-pep', 'h3', 'h3-pep'],
      sites: ['kepler'],
      runs: 12,
    };
    const list = [
      ...scenarios({ profiles: matrix.profiles, losses: matrix.losses, protocols: matrix.protocols }),
      { profile: 'geo', loss_pct: 0, protocol: 'h3', site: EVIL },
    ];
    const records = makeRecords(list, {
      runs: 12,
      fail: [
        [1, 3, 'wrong protocol: 1 of 74 resources not over h3'],
        [16, 2, `timeout <b>${EVIL}</b>`],
      ],
    });
    const environment = await gatherEnvironment(matrix);
    dir = writeResultsDir(records, {
      dir: path.join(tmp, 'r'),
      meta: { seed: 1, link: 'linkem', preset: 'ifip2022', matrix, environment },
    });
    browser = await reportAndLaunch(dir);
  });

  after(() => closeAndRemove(browser, tmp));

  it('opens offline: no request, no console error, every chart drawn, the matrix equal to summary.json', async () => {
    const {
      page,
      seen: { requests, errors, dialogs },
    } = await offlinePage(browser, pathToFileURL(path.join(dir, 'index.html')).href);

    const canvases = await canvasesOf(page);
    assert.equal(canvases.length, 5 * 4, 'four charts for each profile × loss × site');
    assert.equal(await page.$('#bulk'), null, 'no bulk section without bulk results');
    for (const c of canvases) assert.ok(c.w > 100 && c.h > 100 && c.painted > 2000, `${c.label}: ${JSON.stringify(c)}`);

    const summary = JSON.parse(fs.readFileSync(path.join(dir, 'summary.json'), 'utf8'));
    const cells = await page.evaluate(() =>
      [...document.querySelectorAll('.matrix')].flatMap((m) =>
        [...m.querySelectorAll('td[data-key]')].map((td) => ({
          metric: m.dataset.metric,
          key: td.dataset.key,
          median: td.dataset.median,
          shown: td.querySelector('.med')?.textContent ?? null,
        })),
      ),
    );
    assert.equal(cells.length, summary.groups.length * 3);
    for (const g of summary.groups) {
      for (const metric of ['response_start_ms', 'fcp_ms', 'plt_ms']) {
        const cell = cells.find((c) => c.metric === metric && c.key === scenarioKey(g.scenario));
        assert.ok(cell, `${metric} ${scenarioKey(g.scenario)}`);
        assert.equal(Number(cell.median), g.metrics[metric].median);
        assert.equal(cell.shown, String(Math.round(g.metrics[metric].median)));
      }
    }

    const text = await page.evaluate(() => document.body.innerText);
    assert.ok(text.includes(EVIL), 'the site name shows as text');
    assert.ok(text.includes('paper 7669'), "the paper's medians show");
    assert.ok(text.includes('Chromium') && text.includes(summary.meta.environment.chromium.version ?? 'not recorded'));

    // drill down to a raw record
    const raw = await page.evaluate(async () => {
      const d = document.querySelector('details.raw[data-line="5"]');
      d.closest('details:not(.raw)').open = true;
      d.open = true;
      const pre = d.querySelector('pre');
      for (let i = 0; i < 100 && !pre.dataset.filled; i++) await new Promise((r) => setTimeout(r, 20));
      return pre.textContent;
    });
    const line5 = fs.readFileSync(path.join(dir, 'results.jsonl'), 'utf8').split('\n')[4];
    assert.deepEqual(JSON.parse(raw), JSON.parse(line5));

    await saveViews(page, 'report');

    assert.deepEqual(requests, [], 'the report made network requests');
    assert.deepEqual(errors, [], 'console errors');
    assert.deepEqual(dialogs, [], 'a script from input ran');
    await page.close();
  });
});

// npm run bench's matrix (the quick preset: 50 runs), each run with a HAR
// of 74 requests and a filmstrip as issue 28's gatherers write them, one
// HAR with hostile URLs, one run without its HAR.
describe('page-load run views in a browser (integration, headless Chromium, fixture run files)', function () {
  const HOSTILE = `"'><img src=x onerror=alert(document.domain)><x-inj></x-inj>`;
  let tmp;
  let dir;
  let browser;
  let records;

  before(async function () {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-report-runs-'));
    const { profiles, losses, protocols, sites, runs } = BENCH_PRESETS.quick;
    const matrix = { profiles, losses, protocols, sites, runs };
    records = makeRecords(scenarios({ profiles, losses, protocols, sites }), { runs });
    assert.equal(records.length, 50);
    dir = path.join(tmp, 'r');
    const rtt = { leo: 60, geo: 580 };
    records.forEach((r, i) => {
      const hostile = i === 0;
      writeRunFiles(dir, r, {
        har:
          i === 1
            ? null
            : makeHar({
                rttMs: rtt[r.scenario.profile],
                protocol: r.scenario.protocol.startsWith('h3') ? 'h3' : 'http/1.1',
                images: 72,
                scenario: r.scenario,
                run: r.run,
                url: (p) => `https://satbench.test${p}${hostile ? HOSTILE : ''}`,
              }),
        frames: [0, 300, 800, 1500, 2600].map((ms, k) => ({
          ms,
          jpeg: makeFrame(250 - 50 * k, { width: 160, height: 120 }),
        })),
      });
    });
    writeResultsDir(records, { dir, meta: { seed: 7, link: 'linkem', preset: 'quick', matrix } });
    browser = await reportAndLaunch(dir);
  });

  after(() => closeAndRemove(browser, tmp));

  // Opens `selector`'s <details> (and those around it) and waits for its drawing.
  const open = (page, selector) =>
    page.evaluate(async (sel) => {
      const d = document.querySelector(sel);
      for (let e = d; e; e = e.parentElement) if (e.tagName === 'DETAILS') e.open = true;
      const holder = d.querySelector('.view-draw');
      for (let i = 0; i < 200 && !holder.dataset.drawn; i++) await new Promise((r) => setTimeout(r, 20));
      const imgs = [...holder.querySelectorAll('.filmstrip img')];
      await Promise.all(imgs.map((img) => img.decode().catch(() => null)));
      return {
        drawn: holder.dataset.drawn ?? null,
        text: holder.textContent.slice(0, 200),
        waterfalls: [...holder.querySelectorAll('svg.waterfall')].map((s) => ({
          bands: Number(s.dataset.bands),
          bars: s.querySelectorAll('rect.ph').length,
          rtts: s.querySelectorAll('line.mk-rtt').length,
          marks: [...s.querySelectorAll('line.mk')].map((l) => l.getAttribute('class')),
          width: s.getBoundingClientRect().width,
          titles: [...s.querySelectorAll('title')].map((t) => t.textContent),
        })),
        lanes: [...holder.querySelectorAll('svg.connections')].map((s) => Number(s.dataset.bands)),
        films: [...holder.querySelectorAll('.filmstrip')].map((f) => ({
          cells: f.querySelectorAll('figure').length,
          shown: [...f.querySelectorAll('img')].filter((img) => img.complete && img.naturalWidth === 160).length,
          changed: f.querySelectorAll('figure.changed').length,
        })),
        progress: holder.querySelectorAll('svg.progress polyline').length,
      };
    }, selector);

  it("a run's waterfall, connections, filmstrip and progress, and two median runs side by side: drawn offline, no request, no console error, hostile URLs inert", async () => {
    const { page, seen } = await offlinePage(browser, pathToFileURL(path.join(dir, 'index.html')).href);
    const size = fs.statSync(path.join(dir, 'index.html')).size;

    // leo h1 run 1: its URLs are hostile
    const run = await open(page, 'details.run-view[data-view="g0-1"]');
    assert.equal(run.drawn, '1', run.text);
    assert.equal(run.waterfalls.length, 1);
    const wf = run.waterfalls[0];
    assert.equal(wf.bands, 74, 'a row per request');
    assert.ok(wf.bars >= 74 * 3, `${wf.bars} phase bars`);
    assert.ok(wf.rtts > 10, `${wf.rtts} leo round trips marked`);
    assert.deepEqual(wf.marks.sort(), ['mk mk-dcl', 'mk mk-fcp', 'mk mk-lcp', 'mk mk-load']);
    assert.ok(wf.width > 600, `drawn ${wf.width} px wide`);
    assert.ok(
      wf.titles.some((t) => t.includes(`/images/3.jpg${HOSTILE}`)),
      'the hostile URL shows as text',
    );
    assert.deepEqual(run.lanes, [7], "h1: the document's connection and six for the images");
    assert.equal(run.films.length, 1);
    assert.ok(run.films[0].cells > 5, JSON.stringify(run.films));
    assert.equal(run.films[0].shown, run.films[0].cells, 'every cell shows its frame');
    assert.equal(run.films[0].changed, 5);
    assert.equal(run.progress, 1);

    // a run without its HAR: its filmstrip, and why there is no waterfall
    const bare = await open(page, 'details.run-view[data-view="g1-1"]');
    assert.equal(bare.waterfalls.length, 0);
    assert.equal(bare.films.length, 1);
    const note = await page.$eval('details.run-view[data-view="g1-1"] .view-notes', (e) => e.textContent);
    assert.match(note, /HAR not captured: Network\.enable: the test said no/);

    // h3-pep against h3 over geo: both median runs on one axis
    const compares = await page.$$eval('details.compare-view summary', (ss) => ss.map((s) => s.textContent));
    const i = compares.findIndex((t) => t.startsWith('h3-pep / h3 · geo'));
    assert.ok(i >= 0, compares.join('; '));
    const both = await open(page, `details.compare-view[data-compare="${i}"]`);
    assert.equal(both.waterfalls.length, 2);
    assert.equal(both.waterfalls[0].width, both.waterfalls[1].width);
    assert.equal(both.films.length, 2);
    assert.equal(both.films[0].cells, both.films[1].cells, 'one time axis');
    assert.equal(both.progress, 2);

    const injected = await page.evaluate(() => document.querySelectorAll('x-inj, img[src="x"], [onerror]').length);
    assert.equal(injected, 0, 'elements from input');
    await page.evaluate(() => document.querySelector('details.run-view[data-view="g0-1"]').scrollIntoView());
    fs.mkdirSync(OUT, { recursive: true });
    await page.screenshot({ path: path.join(OUT, 'report-run-view.png'), fullPage: false });
    assert.deepEqual(seen.requests, [], 'the report made network requests');
    assert.deepEqual(seen.errors, [], 'console errors');
    assert.deepEqual(seen.dialogs, [], 'a script from input ran');
    await page.close();
    console.log(`      (report of 50 runs with fixture run files: ${(size / 1e6).toFixed(2)} MB)`);
  });
});

// Issue 29: page loads over a slot process (starlink), split by whether a
// handover fell inside the load; a leo block beside them stays as it was.
describe('slot boundaries in a browser (integration, headless Chromium, fixture records)', function () {
  let tmp;
  let dir;
  let browser;
  let records;

  before(async function () {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-report-slots-'));
    const matrix = { profiles: ['starlink', 'leo'], losses: [0], protocols: ['h1', 'h3'], sites: ['kepler'], runs: 30 };
    records = makeRecords(scenarios(matrix), { runs: 30 });
    // every fourth starlink load had a boundary in it and took half as long again
    for (const r of records.filter((x) => x.scenario.profile === 'starlink')) {
      const boundary = r.run % 4 === 0;
      r.slot = { period_s: 15, phase_s: boundary ? 14.5 : 4, boundary_in_load: boundary };
      if (boundary) r.metrics.plt_ms = Math.round(r.metrics.plt_ms * 1.5);
    }
    dir = writeResultsDir(records, { dir: path.join(tmp, 'r'), meta: { seed: 1, link: 'linkem', matrix } });
    browser = await reportAndLaunch(dir);
  });

  after(() => closeAndRemove(browser, tmp));

  it('draws both groups side by side on one scale, with the table of medians, offline and without errors', async () => {
    const { page, seen } = await offlinePage(browser, pathToFileURL(path.join(dir, 'index.html')).href);
    const canvases = await canvasesOf(page);
    // per block 3 CDFs and the runs chart; the starlink block 3 pairs more
    assert.equal(canvases.length, 2 * 4 + 6);
    for (const c of canvases) assert.ok(c.w > 100 && c.h > 100 && c.painted > 2000, `${c.label}: ${JSON.stringify(c)}`);
    const split = await page.evaluate(() =>
      [...document.querySelectorAll('canvas[data-split]')].map((c) => {
        const chart = Chart.getChart(c);
        const box = c.getBoundingClientRect();
        return {
          metric: c.dataset.metric,
          split: c.dataset.split,
          labels: chart.data.datasets.map((d) => d.label),
          counts: chart.data.datasets.map((d) => d.data.length),
          x: [chart.scales.x.min, chart.scales.x.max],
          top: Math.round(box.top),
          left: Math.round(box.left),
        };
      }),
    );
    assert.equal(split.length, 6);
    for (let i = 0; i < split.length; i += 2) {
      const [w, wo] = [split[i], split[i + 1]];
      assert.equal(w.metric, wo.metric);
      assert.deepEqual([w.split, wo.split], ['with', 'without']);
      // 7 of the 30 runs (4, 8, …, 28) had a boundary
      assert.deepEqual(w.counts, [7, 7]);
      assert.deepEqual(wo.counts, [23, 23]);
      assert.deepEqual(w.labels, ['h1 (n 7)', 'h3 (n 7)']);
      assert.deepEqual(w.x, wo.x, 'one scale for both');
      assert.equal(w.top, wo.top, 'side by side');
      assert.ok(wo.left > w.left);
    }
    // the table: both starlink scenarios, PLT significantly slower with a boundary
    const rows = await page.$$eval('#slot-boundaries tbody tr', (trs) =>
      trs.map((tr) => ({ scenario: tr.querySelector('th').textContent, sig: tr.querySelectorAll('td.sig').length })),
    );
    assert.deepEqual(
      rows.map((r) => r.scenario),
      ['starlink loss 0 % h1 kepler', 'starlink loss 0 % h3 kepler'],
    );
    assert.ok(rows.every((r) => r.sig >= 1));
    await page.evaluate(() => document.querySelector('#slot-boundaries').scrollIntoView());
    fs.mkdirSync(OUT, { recursive: true });
    await page.screenshot({ path: path.join(OUT, 'report-slot-boundaries.png'), fullPage: false });
    await page.evaluate(() => document.querySelector('canvas[data-split]').scrollIntoView());
    await page.screenshot({ path: path.join(OUT, 'report-slot-distributions.png'), fullPage: false });
    assert.deepEqual(seen.requests, [], 'the report made network requests');
    assert.deepEqual(seen.errors, [], 'console errors');
    await page.close();
  });
});

// bench --view repeat and revisit (issue 30): each second view under its
// pair's first view, with the comparison and each load's cache and
// handshake counts, as summary.json has them.
describe('first and repeat views in a browser (integration, headless Chromium, fixture records)', function () {
  let tmp;
  let dir;
  let browser;

  before(async function () {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-report-views-'));
    const base = { profile: 'geo', loss_pct: 0, site: 'kepler' };
    const matrix = {
      profiles: ['geo'],
      losses: [0],
      protocols: ['h1', 'h3-pep'],
      sites: ['kepler'],
      views: ['repeat', 'revisit'],
      runs: 12,
    };
    const records = [
      ...makeViewPairs(12, { scenario: { ...base, protocol: 'h1' }, view: 'repeat', second: 1500 }),
      ...makeViewPairs(12, {
        scenario: { ...base, protocol: 'h3-pep' },
        extra: (run) => ({
          handshakes: { origin: handshakeCounts(1, 0), proxy_st: handshakeCounts(1, 1, run % 2, run % 2) },
        }),
      }),
    ];
    dir = writeResultsDir(records, { dir: path.join(tmp, 'r'), meta: { seed: 1, link: 'linkem', matrix } });
    browser = await reportAndLaunch(dir);
  });

  after(() => closeAndRemove(browser, tmp));

  it("sets each pair's loads side by side with summary.json's medians and counts, offline and without errors", async () => {
    const { page, seen } = await offlinePage(browser, pathToFileURL(path.join(dir, 'index.html')).href);
    const summary = JSON.parse(fs.readFileSync(path.join(dir, 'summary.json'), 'utf8'));
    assert.ok(await page.$('nav a[href="#first-and-repeat"]'), 'the section is in the navigation');
    const pairs = await page.$$eval('#first-and-repeat tbody.view-pair', (bodies) =>
      bodies.map((b) => ({
        view: b.dataset.view,
        rows: [...b.querySelectorAll('tr')].map((tr) => ({
          group: tr.querySelector('a')?.getAttribute('href') ?? null,
          cells: [...tr.querySelectorAll('td')].map((td) => td.innerText.replace(/\s+/g, ' ').trim()),
          sig: tr.querySelectorAll('small.sig').length,
        })),
      })),
    );
    assert.deepEqual(
      pairs.map((p) => p.view),
      ['repeat', 'revisit'],
    );
    const round = (v) => String(Math.round(v * 10) / 10);
    for (const p of pairs) {
      const [first, second, ratio] = p.rows;
      for (const row of [first, second]) {
        const g = summary.groups[Number(row.group.slice(2))];
        // load, n, RS, FCP, PLT, then the cache counts and each server's handshakes
        const medians = ['response_start_ms', 'fcp_ms', 'plt_ms'].map((k) => String(Math.round(g.metrics[k].median)));
        assert.deepEqual(row.cells.slice(2, 5), medians, row.group);
        // a server's handshake counts as shown (full: the connections not resumed); –: none recorded
        const shown = (hs) =>
          ['connections', 'resumed', 'early_offered', 'early_accepted', 'early_requests'].map((k) =>
            hs ? round(hs[k]) : '–',
          );
        const counts = [
          ...['from_cache', 'revalidated', 'fetched'].map((k) => round(g.cache_use[k])),
          ...shown(g.handshakes.origin),
          // Proxy-ST's: the h3-pep loads' counts, – for h1's (no QUIC PEP)
          ...shown(g.handshakes.proxy_st),
        ];
        assert.deepEqual(row.cells.slice(5), counts, row.group);
      }
      // the second load is the faster, significantly in every metric
      assert.equal(ratio.sig, 3, JSON.stringify(ratio));
      assert.match(ratio.cells[2], /^×0\.\d\d p <0\.001 δ -1\.00 large$/);
    }
    await page.evaluate(() => document.querySelector('#first-and-repeat').scrollIntoView());
    fs.mkdirSync(OUT, { recursive: true });
    await page.screenshot({ path: path.join(OUT, 'report-first-and-repeat.png'), fullPage: false });
    assert.deepEqual(seen.requests, [], 'the report made network requests');
    assert.deepEqual(seen.errors, [], 'console errors');
    await page.close();
  });
});

describe('a report from a hostile summary.json alone, in a browser', function () {
  let tmp;
  let browser;
  before(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-report-hostile-'));
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('runs no element from runs, failed, n or any string of it', async () => {
    // what an injected element does when it runs: a dialog
    const HOSTILE = `"'><img src=x onerror=alert(document.domain)><x-inj></x-inj>`;
    const dir = writeResultsDir(makeRecords(scenarios({ protocols: ['h1', 'h3-pep'] }), { runs: 3 }), {
      dir: path.join(tmp, 'r'),
      meta: { seed: 1, generated: HOSTILE, argv: [HOSTILE], warnings: [HOSTILE] },
    });
    fs.rmSync(path.join(dir, 'results.jsonl'));
    const file = path.join(dir, 'summary.json');
    const summary = JSON.parse(fs.readFileSync(file, 'utf8'));
    for (const g of summary.groups) {
      Object.assign(g, { runs: HOSTILE, failed: HOSTILE });
      g.failures = [{ run: HOSTILE, error: HOSTILE }];
      for (const m of Object.values(g.metrics)) m.n = HOSTILE;
    }
    fs.writeFileSync(file, JSON.stringify(summary));
    const r = await satbench(['report', dir]);
    assert.equal(r.code, 0, r.stderr);
    const {
      page,
      seen: { requests, dialogs },
    } = await offlinePage(browser, pathToFileURL(path.join(dir, 'index.html')).href);
    const injected = await page.evaluate(() => document.querySelectorAll('x-inj, img[src="x"], [onerror]').length);
    const text = await page.evaluate(() => document.body.innerText);
    await page.close();
    assert.equal(injected, 0, 'elements from input');
    assert.deepEqual(dialogs, [], 'a script from input ran');
    assert.deepEqual(requests, [], 'an image from input was requested');
    assert.ok(text.includes('<x-inj></x-inj>'), 'the hostile string shows as text');
  });
});

describe('bulk report in a browser (integration, headless Chromium, fixture records)', function () {
  let tmp;
  let dir;
  let browser;

  before(async function () {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-report-bulk-'));
    const matrix = {
      profiles: ['geo', 'quic4sat-medium', 'quic4sat-large', EVIL],
      losses: [0, 1, null],
      protocols: ['quic', 'quic-pep', 'tcp', 'tcp-pep'],
      runs: 3,
    };
    const list = [
      ...bulkScenarios({ losses: [0, 1], duration_s: 10 }),
      ...bulkScenarios({ profiles: ['quic4sat-medium', 'quic4sat-large'], losses: [null], size_bytes: 100e6 }),
      { profile: EVIL, loss_pct: 0, protocol: 'quic', duration_s: 3 },
    ];
    const records = makeBulkRecords(list, { runs: 3, fail: [[9, 2, `stalled <b>${EVIL}</b>`]] });
    dir = writeResultsDir(records, {
      dir: path.join(tmp, 'r'),
      meta: { kind: 'bulk', seed: 1, link: 'linkem', preset: null, matrix, argv: ['--preset', 'quic4sat'] },
    });
    browser = await reportAndLaunch(dir);
  });

  after(() => closeAndRemove(browser, tmp));

  it('opens offline: no request, no console error, the bulk charts drawn, the tables equal to summary.json, no page-load sections', async () => {
    const { page, seen } = await offlinePage(browser, pathToFileURL(path.join(dir, 'index.html')).href);
    const summary = JSON.parse(fs.readFileSync(path.join(dir, 'summary.json'), 'utf8'));

    const canvases = await canvasesOf(page);
    // per profile × loss × download a goodput chart, and a PEP ratio chart where there are pairs (not for the lone quic)
    assert.deepEqual(
      canvases.map((c) => c.chart),
      ['goodput', 'ratio', 'goodput', 'ratio', 'goodput', 'ratio', 'goodput', 'ratio', 'goodput'],
    );
    for (const c of canvases)
      assert.ok(c.bulk && c.w > 100 && c.h > 100 && c.painted > 2000, `${c.label}: ${JSON.stringify(c)}`);
    // Chart.js drew the lines from the data: one per protocol (and the link rate), one per PEP pair
    const lines = await page.evaluate(() =>
      [...document.querySelectorAll('canvas[data-bulk]')].map((c) =>
        Chart.getChart(c).data.datasets.map((d) => `${d.label}:${d.data.length}`),
      ),
    );
    const geo = summary.groups.find(
      (g) => g.scenario.profile === 'geo' && g.scenario.loss_pct === 0 && g.scenario.protocol === 'quic',
    );
    assert.deepEqual(lines[0], [
      ...['quic', 'quic-pep', 'tcp', 'tcp-pep'].map((p) => `${p}:${geo.curve.t_ms.length + 1}`),
      'link 20 Mbit/s:2',
    ]);
    assert.deepEqual(lines[1], [
      `quic-pep / quic:${geo.curve.t_ms.length}`,
      `tcp-pep / tcp:${geo.curve.t_ms.length}`,
      ':2',
    ]);

    for (const id of ['medians', 'comparisons', 'distributions'])
      assert.equal(await page.$(`#${id}`), null, `no ${id} section`);
    assert.ok(await page.$('#bulk'));

    // the objectives table is summary.json's, met and missed styled apart
    const shown = await page.evaluate(() =>
      [...document.querySelectorAll('table.objectives tbody tr')].map((tr) => ({
        profile: tr.dataset.profile,
        protocol: tr.dataset.protocol,
        verdicts: [...tr.querySelectorAll('td.verdict')].map((td) => ({
          bytes: Number(td.dataset.bytes),
          limit_s: Number(td.dataset.limitS),
          median_s: td.dataset.medianS === '' ? null : Number(td.dataset.medianS),
          met: td.dataset.met === 'true',
          runs_met: Number(td.dataset.runsMet),
          runs: Number(td.dataset.runs),
          ...(td.dataset.overS !== undefined ? { over_s: Number(td.dataset.overS) } : {}),
          text: td.firstChild.textContent,
          color: getComputedStyle(td).color,
          background: getComputedStyle(td).backgroundColor,
        })),
      })),
    );
    const judged = summary.groups.filter((g) => g.objectives);
    assert.equal(shown.length, judged.length);
    const styles = { met: new Set(), missed: new Set() };
    for (const g of judged) {
      const row = shown.find((x) => x.profile === g.scenario.profile && x.protocol === g.scenario.protocol);
      assert.ok(row, `${g.scenario.profile} ${g.scenario.protocol}`);
      assert.deepEqual(
        row.verdicts.map(({ text, color, background, ...v }) => v),
        // what the median run received is in the median's cell, not the verdict's
        g.objectives.results.map(({ median_received_bytes: _, ...r }) => r),
      );
      for (const v of row.verdicts) {
        assert.equal(v.text, v.met ? '✓ met' : '✗ missed');
        styles[v.met ? 'met' : 'missed'].add(`${v.color}/${v.background}`);
      }
    }
    assert.equal(styles.met.size, 1);
    assert.equal(styles.missed.size, 1);
    assert.notDeepEqual([...styles.met], [...styles.missed], 'met and missed look different');

    // the medians table is summary.json's
    const cells = await page.evaluate(() =>
      [...document.querySelectorAll('table.bulk-medians td[data-median]')].map((td) => ({
        anchor: td.parentElement.querySelector('a').getAttribute('href').slice(1),
        metric: td.dataset.metric,
        median: Number(td.dataset.median),
      })),
    );
    assert.ok(cells.length > summary.groups.length * 5);
    for (const c of cells) {
      const row = await page.$eval(`#${c.anchor} summary`, (el) => el.textContent);
      const g = summary.groups.find(
        (x) =>
          row.startsWith(`bulk ${x.scenario.protocol} · ${x.scenario.profile} `) &&
          row.includes(x.scenario.size_bytes ? 'MB download' : `${x.scenario.duration_s} s download`) &&
          (x.scenario.loss_pct === null
            ? row.includes("the profile's loss")
            : row.includes(`loss ${x.scenario.loss_pct} %`)),
      );
      assert.equal(c.median, g.metrics[c.metric].median, `${row} ${c.metric}`);
    }

    const text = await page.evaluate(() => document.body.innerText);
    assert.ok(text.includes(EVIL), 'the profile name shows as text');
    assert.ok(text.includes('satbench bulk --preset quic4sat'));

    // drill down to a bulk run's raw record: its bins are there
    const raw = await page.evaluate(async () => {
      const d = document.querySelector('details.raw[data-line="3"]');
      d.closest('details:not(.raw)').open = true;
      d.open = true;
      const pre = d.querySelector('pre');
      for (let i = 0; i < 100 && !pre.dataset.filled; i++) await new Promise((r) => setTimeout(r, 20));
      return pre.textContent;
    });
    const line3 = JSON.parse(fs.readFileSync(path.join(dir, 'results.jsonl'), 'utf8').split('\n')[2]);
    assert.deepEqual(JSON.parse(raw), line3);
    assert.ok(line3.goodput.bins.length > 0);

    await saveViews(page, 'report-bulk');
    assert.deepEqual(seen.requests, [], 'the report made network requests');
    assert.deepEqual(seen.errors, [], 'console errors');
    assert.deepEqual(seen.dialogs, [], 'a script from input ran');
    await page.close();
  });
});

describe('bench --shard, --lighthouse and merge (integration, real Chromium)', function () {
  it('two shards with Lighthouse merge into one result whose report links every audit', async function () {
    this.timeout(600000); // six testbeds, two Lighthouse audits
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-shards-'));
    const site = path.join(tmp, 'site');
    fs.mkdirSync(site);
    fs.writeFileSync(
      path.join(site, 'index.html'),
      '<!doctype html><html lang="en"><head><title>t</title><link rel="stylesheet" href="s.css"></head><body><h1>Over the satellite</h1></body></html>',
    );
    fs.writeFileSync(path.join(site, 's.css'), 'h1 { color: #123; }');
    const profile = writeProfile({
      satellite: { forward: { delay: '10ms', rate: '20mbit' }, return: { delay: '10ms', rate: '20mbit' } },
      internet: { forward: { delay: '5ms' }, return: { delay: '5ms' } },
    });
    const common = ['bench', '--profile', profile, '--protocol', 'h1,h3', '--site', site, '-n', '2', '--lighthouse'];
    for (const i of [1, 2]) {
      const r = await satbench([...common, '--shard', `${i}/2`, '--out', path.join(tmp, `s${i}`)], {
        timeoutMs: 300000,
      });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(
        fs
          .readFileSync(path.join(tmp, `s${i}`, 'results.jsonl'), 'utf8')
          .trim()
          .split('\n').length,
        2,
        `shard ${i}/2 runs half`,
      );
    }
    const m = await satbench(['merge', path.join(tmp, 's1'), path.join(tmp, 's2'), '--out', path.join(tmp, 'm')]);
    assert.equal(m.code, 0, m.stderr);
    const records = fs
      .readFileSync(path.join(tmp, 'm/results.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.deepEqual(
      records.map((r) => `${r.scenario.protocol}#${r.run}`),
      ['h1#1', 'h3#1', 'h1#2', 'h3#2'],
      "the matrix's order",
    );
    const audits = records.filter((r) => r.lighthouse);
    assert.equal(audits.length, 2, 'one Lighthouse load per scenario');
    for (const r of audits) {
      assert.equal(r.lighthouse.error, null, r.lighthouse.error);
      assert.ok(r.lighthouse.score > 0 && r.lighthouse.metrics['first-contentful-paint'] > 0);
      for (const f of [r.lighthouse.json, r.lighthouse.html]) assert.ok(fs.existsSync(path.join(tmp, 'm', f)), f);
      // the runs' emulation (none: desktop, CPU not slowed), no network throttling: the link is the throttle
      const settings = JSON.parse(fs.readFileSync(path.join(tmp, 'm', r.lighthouse.json), 'utf8')).configSettings;
      assert.equal(settings.throttlingMethod, 'devtools');
      assert.equal(settings.throttling.cpuSlowdownMultiplier, 1);
      assert.equal(settings.throttling.downloadThroughputKbps, 0);
      assert.equal(settings.throttling.requestLatencyMs, 0);
      assert.equal(settings.screenEmulation.width, 1280);
    }
    const html = fs.readFileSync(path.join(tmp, 'm/index.html'), 'utf8');
    assert.ok(html.includes(`<a href="${audits[0].lighthouse.html}">HTML</a>`));
    const summary = JSON.parse(fs.readFileSync(path.join(tmp, 'm/summary.json'), 'utf8'));
    assert.deepEqual(
      summary.meta.merged_from.map((x) => x.shard),
      [
        { index: 1, count: 2 },
        { index: 2, count: 2 },
      ],
    );
    assert.ok(summary.meta.environment.chromium.version, 'the environment is recorded');
    assert.equal((await satbench(['compare', path.join(tmp, 'm'), path.join(tmp, 'm')])).code, 0);
    fs.rmSync(tmp, { recursive: true, force: true });
  });
});
