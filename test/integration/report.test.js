// The report in a real browser: a generated index.html opened in headless
// Chromium from disk must make no network request and log no error, draw
// every chart, and show summary.json's numbers. Saves screenshots into
// test-output/ (screen and print).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import puppeteer from 'puppeteer-core';
import { chromePath } from '../../harness/doctor.js';
import { ROOT } from '../../harness/sys.js';
import { scenarioKey } from '../../harness/summary.js';
import { gatherEnvironment } from '../../harness/environment.js';
import { satbench, writeProfile, isRoot } from './helpers.js';
import { scenarios, makeRecords, writeResultsDir } from '../fixtures.js';

const EVIL = '<script>alert(1)</script>';
const OUT = path.join(ROOT, 'test-output');

describe('report in a browser (integration, headless Chromium)', function () {
  let tmp;
  let dir;
  let browser;

  before(async function () {
    if (!fs.existsSync(chromePath())) this.skip();
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-report-'));
    const matrix = { profiles: ['geo', 'leo'], losses: [0, 1], protocols: ['h1', 'h1-pep', 'h3', 'h3-pep'], sites: ['kepler'], runs: 12 };
    const list = [...scenarios({ profiles: matrix.profiles, losses: matrix.losses, protocols: matrix.protocols }), { profile: 'geo', loss_pct: 0, protocol: 'h3', site: EVIL }];
    const records = makeRecords(list, { runs: 12, fail: [[1, 3, 'wrong protocol: 1 of 74 resources not over h3'], [16, 2, `timeout <b>${EVIL}</b>`]] });
    const environment = await gatherEnvironment(matrix);
    dir = writeResultsDir(records, { dir: path.join(tmp, 'r'), meta: { seed: 1, link: 'linkem', preset: 'ifip2022', matrix, environment } });
    const r = await satbench(['report', dir]);
    assert.equal(r.code, 0, r.stderr);
    browser = await puppeteer.launch({
      executablePath: chromePath(),
      headless: true,
      pipe: true,
      // No calls to Google from the browser itself, so that every request seen is the page's.
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync',
        '--no-first-run', '--no-default-browser-check', '--disable-default-apps', '--mute-audio', '--window-size=1366,900'],
    });
  });

  after(async () => {
    await browser?.close();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('opens offline: no request, no console error, every chart drawn, the matrix equal to summary.json', async () => {
    const page = await browser.newPage();
    await page.setViewport({ width: 1366, height: 900 });
    const url = pathToFileURL(path.join(dir, 'index.html')).href;
    const requests = [];
    const errors = [];
    const dialogs = [];
    await page.setRequestInterception(true);
    page.on('request', (req) => {
      if (req.url() !== url) requests.push(req.url());
      if (req.url() === url) req.continue();
      else req.abort();
    });
    page.on('console', (m) => {
      if (m.type() === 'error' || m.type() === 'warn') errors.push(`${m.type()}: ${m.text()}`);
    });
    page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
    page.on('dialog', async (d) => {
      dialogs.push(d.message());
      await d.dismiss();
    });
    await page.goto(url, { waitUntil: 'load' });
    await page.waitForFunction(() => document.documentElement.dataset.charts !== undefined, { timeout: 10000 });

    const canvases = await page.evaluate(() => [...document.querySelectorAll('canvas')].map((c) => {
      const { data } = c.getContext('2d').getImageData(0, 0, c.width, c.height);
      let painted = 0;
      for (let i = 3; i < data.length; i += 4) if (data[i] > 0) painted++;
      return { label: c.getAttribute('aria-label'), w: c.width, h: c.height, painted };
    }));
    assert.equal(canvases.length, 5 * 4, 'four charts for each profile × loss × site');
    for (const c of canvases) assert.ok(c.w > 100 && c.h > 100 && c.painted > 2000, `${c.label}: ${JSON.stringify(c)}`);

    const summary = JSON.parse(fs.readFileSync(path.join(dir, 'summary.json'), 'utf8'));
    const cells = await page.evaluate(() => [...document.querySelectorAll('.matrix')].flatMap((m) => [...m.querySelectorAll('td[data-key]')].map((td) => ({
      metric: m.dataset.metric, key: td.dataset.key, median: td.dataset.median, shown: td.querySelector('.med')?.textContent ?? null,
    }))));
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
    assert.ok(text.includes('paper 7669'), 'the paper\'s medians show');
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

    fs.mkdirSync(OUT, { recursive: true });
    await page.screenshot({ path: path.join(OUT, 'report.png'), fullPage: true });
    await page.emulateMediaType('print');
    await page.evaluate(() => window.dispatchEvent(new Event('beforeprint')));
    await page.screenshot({ path: path.join(OUT, 'report-print.png'), fullPage: true });
    await page.pdf({ path: path.join(OUT, 'report.pdf'), format: 'A4', landscape: true, printBackground: true });
    assert.ok(fs.statSync(path.join(OUT, 'report.pdf')).size > 10000);

    assert.deepEqual(requests, [], 'the report made network requests');
    assert.deepEqual(errors, [], 'console errors');
    assert.deepEqual(dialogs, [], 'a script from input ran');
    await page.close();
  });
});

describe('bench --shard, --lighthouse and merge (integration, real Chromium)', function () {
  before(function () {
    if (!isRoot()) this.skip();
  });

  it('two shards with Lighthouse merge into one result whose report links every audit', async function () {
    this.timeout(600000); // six testbeds, two Lighthouse audits
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-shards-'));
    const site = path.join(tmp, 'site');
    fs.mkdirSync(site);
    fs.writeFileSync(path.join(site, 'index.html'), '<!doctype html><html lang="en"><head><title>t</title><link rel="stylesheet" href="s.css"></head><body><h1>Over the satellite</h1></body></html>');
    fs.writeFileSync(path.join(site, 's.css'), 'h1 { color: #123; }');
    const profile = writeProfile({
      satellite: { forward: { delay: '10ms', rate: '20mbit' }, return: { delay: '10ms', rate: '20mbit' } },
      internet: { forward: { delay: '5ms' }, return: { delay: '5ms' } },
    });
    const common = ['bench', '--profile', profile, '--protocol', 'h1,h3', '--site', site, '-n', '2', '--lighthouse'];
    for (const i of [1, 2]) {
      const r = await satbench([...common, '--shard', `${i}/2`, '--out', path.join(tmp, `s${i}`)], { timeoutMs: 300000 });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(fs.readFileSync(path.join(tmp, `s${i}`, 'results.jsonl'), 'utf8').trim().split('\n').length, 2, `shard ${i}/2 runs half`);
    }
    const m = await satbench(['merge', path.join(tmp, 's1'), path.join(tmp, 's2'), '--out', path.join(tmp, 'm')]);
    assert.equal(m.code, 0, m.stderr);
    const records = fs.readFileSync(path.join(tmp, 'm/results.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    assert.deepEqual(records.map((r) => `${r.scenario.protocol}#${r.run}`), ['h1#1', 'h3#1', 'h1#2', 'h3#2'], 'the matrix\'s order');
    const audits = records.filter((r) => r.lighthouse);
    assert.equal(audits.length, 2, 'one Lighthouse load per scenario');
    for (const r of audits) {
      assert.equal(r.lighthouse.error, null, r.lighthouse.error);
      assert.ok(r.lighthouse.score > 0 && r.lighthouse.metrics['first-contentful-paint'] > 0);
      for (const f of [r.lighthouse.json, r.lighthouse.html]) assert.ok(fs.existsSync(path.join(tmp, 'm', f)), f);
      assert.equal(JSON.parse(fs.readFileSync(path.join(tmp, 'm', r.lighthouse.json), 'utf8')).configSettings.throttlingMethod, 'provided');
    }
    const html = fs.readFileSync(path.join(tmp, 'm/index.html'), 'utf8');
    assert.ok(html.includes(`<a href="${audits[0].lighthouse.html}">HTML</a>`));
    const summary = JSON.parse(fs.readFileSync(path.join(tmp, 'm/summary.json'), 'utf8'));
    assert.deepEqual(summary.meta.merged_from.map((x) => x.shard), [{ index: 1, count: 2 }, { index: 2, count: 2 }]);
    assert.ok(summary.meta.environment.chromium.version, 'the environment is recorded');
    assert.equal((await satbench(['compare', path.join(tmp, 'm'), path.join(tmp, 'm')])).code, 0);
    fs.rmSync(tmp, { recursive: true, force: true });
  });
});
