// bench --lighthouse: a Lighthouse audit (performance category only) of a
// scenario's page in a separate load, after the scenario's first measured
// run and in its testbed. Lighthouse gathers and judges; we keep its JSON
// and HTML next to the results and its key numbers in the run's record
// (`lighthouse`), which the report shows. It loads with the runs' CPU
// slowdown and device; the network is not throttled: the emulated
// satellite link is the throttle.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { withChromium } from '../browser/chromium.js';
import { deviceNamed, emulate } from '../browser/emulation.js';
import { DEFAULTS } from '../core/defaults.js';
import { LIGHTHOUSE_DIR } from '../results/store.js';

// The audits the report shows (ms, except CLS).
export const LIGHTHOUSE_METRICS = [
  'first-contentful-paint',
  'largest-contentful-paint',
  'speed-index',
  'total-blocking-time',
  'interactive',
  'cumulative-layout-shift',
];

// Pure: Lighthouse's settings for the runs' `emulation` ({cpuSlowdown,
// device}, browser/emulation.js): its screen, user agent and CPU
// throttling are the runs' (Lighthouse's defaults, a throttled mobile,
// would measure another load), its network throttling none ('devtools'
// throttling of 0 latency and throughput is none: the emulated link is
// the throttle), and what it reports is what it observed.
export function lighthouseFlags(timeoutMs, { cpuSlowdown = DEFAULTS.cpuSlowdown, device = DEFAULTS.device } = {}) {
  const d = deviceNamed(device);
  return {
    output: ['json', 'html'],
    onlyCategories: ['performance'],
    formFactor: d.mobile ? 'mobile' : 'desktop',
    // Lighthouse turns touch on exactly for mobile screens, as devices.js has it
    screenEmulation: {
      mobile: d.mobile,
      width: d.width,
      height: d.height,
      deviceScaleFactor: d.deviceScaleFactor,
      disabled: false,
    },
    // Lighthouse sets the running Chromium's version into it, as emulation.js does
    emulatedUserAgent: d.userAgent ?? false,
    throttlingMethod: 'devtools',
    throttling: {
      rttMs: 0,
      throughputKbps: 0,
      requestLatencyMs: 0,
      downloadThroughputKbps: 0,
      uploadThroughputKbps: 0,
      cpuSlowdownMultiplier: cpuSlowdown,
    },
    maxWaitForLoad: timeoutMs,
    logLevel: 'error',
  };
}

// Pure: a file name for a scenario's reports; the hash keeps names apart
// when sites or profiles are paths that sanitise alike. A run other than the
// first (bench audits the first; a benchmark may audit more) adds its number.
export function reportSlug(s, runNo = 1) {
  const name = `${s.profile}-loss${s.loss_pct}-${s.protocol}-${s.site}`.replace(/[^A-Za-z0-9._-]+/g, '_').slice(-80);
  const hash = crypto
    .createHash('sha1')
    .update(JSON.stringify([s.profile, s.loss_pct, s.protocol, s.site]))
    .digest('hex')
    .slice(0, 8);
  return runNo === 1 ? `${name}-${hash}` : `${name}-${hash}-run${runNo}`;
}

// Pure: what the report shows of a Lighthouse result.
export function keyMetrics(lhr) {
  const metrics = {};
  for (const id of LIGHTHOUSE_METRICS) {
    const v = lhr.audits?.[id]?.numericValue;
    if (typeof v === 'number') metrics[id] = v;
  }
  return {
    score: lhr.categories?.performance?.score ?? null,
    metrics,
    version: lhr.lighthouseVersion ?? null,
    runtime_error: lhr.runtimeError?.message ?? null,
  };
}

/**
 * Audits `url` on an open puppeteer page; writes NAME.report.json and
 * NAME.report.html into `dir`. Returns {json, html} (file names) and the
 * key metrics.
 */
export async function auditPage(page, url, { dir, name, timeoutMs, emulation }) {
  const { default: lighthouse } = await import('lighthouse');
  const result = await lighthouse(url, lighthouseFlags(timeoutMs, emulation), undefined, page);
  if (!result) throw new Error('Lighthouse returned no result');
  const [json, html] = result.report;
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, `${name}.report.json`), json);
  fs.writeFileSync(path.join(dir, `${name}.report.html`), html);
  return { json: `${name}.report.json`, html: `${name}.report.html`, ...keyMetrics(result.lhr) };
}

// Pure: when Lighthouse's browser is killed, for loads of `timeoutMs`:
// Lighthouse waits for load, then for quiet network and CPU: allow it
// more than one load.
export const lighthouseKillAfterMs = (timeoutMs) => 3 * timeoutMs;

/**
 * A separate load of `target` (chromium.js siteTarget) in a fresh Chromium in the client
 * namespace, with the runs' `emulation`, audited by Lighthouse. Never throws: a failure is the entry's
 * `error`. Paths in the entry are relative to `outDir`.
 */
export async function runLighthouse({
  clientNs,
  protocol,
  spki,
  target,
  timeoutMs,
  emulation,
  outDir,
  scenario,
  runNo = 1,
}) {
  const started = Date.now();
  try {
    const browserTimeout = { timeoutMs: 3 * timeoutMs, killAfterMs: lighthouseKillAfterMs(timeoutMs) };
    const r = await withChromium({ clientNs, protocol, spki, target, ...browserTimeout }, async (browser) => {
      const page = await browser.newPage();
      // the page's own DevTools session says what Lighthouse's will (puppeteer's is 800×600 otherwise)
      await emulate(page, emulation);
      const dir = path.join(outDir, LIGHTHOUSE_DIR);
      return auditPage(page, target.url, { dir, name: reportSlug(scenario, runNo), timeoutMs, emulation });
    });
    return {
      ...r,
      json: `${LIGHTHOUSE_DIR}/${r.json}`,
      html: `${LIGHTHOUSE_DIR}/${r.html}`,
      error: r.runtime_error,
      wall_ms: Date.now() - started,
    };
  } catch (e) {
    return { error: `lighthouse: ${e.message.split('\n')[0]}`, wall_ms: Date.now() - started };
  }
}
