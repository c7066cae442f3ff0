// A browser download (browser-h1, -h2, -h3): Chromium fetches one large
// file from our origin (a page of ours starts the fetch and drains it); the
// bytes come from the DevTools protocol's Network.dataReceived events (as
// Border et al. measured a browser download), timed from the page's
// request and binned.
import fs from 'node:fs';
import path from 'node:path';
import { NEXT_HOP } from '../core/protocols.js';
import { siteUrl, withChromium } from '../browser/chromium.js';
import { startOrigin } from '../servers/origin.js';
import { binEvents } from '../results/goodput.js';
import { browserProtocol, transferTimeoutS } from './matrix.js';

const BULK_PAGE = 'bulk.html';
const wait = (ms) => new Promise((r) => setTimeout(r, ms));

// The page that starts the download: fetches the file named after '#',
// reads it to the end (nothing kept) and says how far it got.
const BULK_HTML = `<!doctype html>
<html><head><meta charset="utf-8"><title>satbench bulk</title><link rel="icon" href="data:,"></head>
<body><script>
window.__bulk = { bytes: 0, done: false, error: null };
(async () => {
  try {
    const r = await fetch(location.hash.slice(1), { cache: 'no-store' });
    if (!r.ok) throw new Error('HTTP ' + r.status);
    const reader = r.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      window.__bulk.bytes += value.length;
    }
    window.__bulk.done = true;
  } catch (e) {
    window.__bulk.error = String(e);
  }
})();
</script></body></html>
`;

// A file that is never read off a disk: sparse, all zeros (the origin
// sends no compression, so zeros cost the link what any byte costs).
const TIMED_FILE_BYTES = 64 * 2 ** 30;

/** Pure: the file a browser scenario downloads. */
export function browserFile(scenario) {
  return scenario.size_bytes
    ? { name: `size-${scenario.size_bytes}.bin`, bytes: scenario.size_bytes }
    : { name: 'timed.bin', bytes: TIMED_FILE_BYTES };
}

function writeBulkSite(dir, file) {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, BULK_PAGE), BULK_HTML);
  const fd = fs.openSync(path.join(dir, file.name), 'w');
  try {
    fs.ftruncateSync(fd, file.bytes);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Pure: a browser download from the DevTools events the run collected:
 * t0 is when satbench asked Chromium to navigate (`events.navStart`, on
 * the same monotonic clock as DevTools' timestamps), or the page's request
 * where that is earlier: Chromium's loading predictor may open the
 * connection to the page's origin as the navigation starts, before the
 * request it is later given to, and the request's own timing then shows
 * a connect shorter than the round trip it took;
 * bins, connect and first-byte times, and the protocol seen. `events`:
 * {navStart, requests: [{id, url, ts}], responses: {id: response}, data: [[id, ts,
 * bytes]], finished: {id: ts}, failed: {id: {error, ts}}} (ts in seconds).
 * A load that fails once every byte wanted is in does not count: Chromium
 * reports a fetch read through a stream as aborted when it ends, and a
 * timed download is cut on purpose.
 */
export function browserDownload(events, { pageUrl, fileUrl, binMs, durationMs = null, sizeBytes = null }) {
  const page = events.requests.find((r) => r.url === pageUrl);
  const file = events.requests.find((r) => r.url === fileUrl);
  if (!page) return { error: 'the download page was not requested' };
  const pageResp = events.responses[page.id];
  const timing = pageResp?.timing;
  const t0 = Math.min(events.navStart ?? Infinity, page.ts, timing?.requestTime ?? Infinity);
  const until = durationMs ?? Infinity;
  const arrivals = file
    ? events.data.filter(([id]) => id === file.id).map(([, ts, bytes]) => ({ t_ms: (ts - t0) * 1000, bytes }))
    : [];
  const counted = arrivals.filter((a) => a.t_ms < until);
  const { bins, bytes } = binEvents(counted, binMs, durationMs);
  const resp = file ? events.responses[file.id] : null;
  const finishedAt = file && events.finished[file.id] !== undefined ? (events.finished[file.id] - t0) * 1000 : null;
  const f = file ? events.failed[file.id] : null;
  const failedAt = f ? (f.ts - t0) * 1000 : null;
  const failed = f && (sizeBytes ? bytes < sizeBytes : failedAt < until) ? f.error : null;
  const complete = sizeBytes
    ? bytes >= sizeBytes
    : durationMs !== null && !failed && (finishedAt === null || finishedAt >= durationMs);
  const end = sizeBytes ? (counted.length ? counted.at(-1).t_ms : null) : durationMs;
  return {
    bins: sizeBytes && end !== null ? bins.slice(0, Math.ceil(end / binMs) || 1) : bins,
    bytes,
    connect_ms: timing && timing.connectEnd >= 0 ? (timing.requestTime - t0) * 1000 + timing.connectEnd : null,
    ttfb_ms: counted.length ? counted[0].t_ms : null,
    file_request_ms: file ? (file.ts - t0) * 1000 : null,
    duration_ms: end,
    complete,
    protocol: resp?.protocol ?? null,
    page_protocol: pageResp?.protocol ?? null,
    status: resp?.status ?? null,
    error: failed ? `the download failed: ${failed}` : !file ? 'the file was never requested' : null,
  };
}

// `signal` ends the download at once (Chromium is killed).
export async function browserRun(tb, plan, { signal } = {}) {
  const { scenario } = plan;
  const file = browserFile(scenario);
  const siteDir = path.join(tb.dir, 'bulk-site');
  writeBulkSite(siteDir, file);
  const p = browserProtocol(scenario.protocol);
  const { spki } = await startOrigin(tb, { origin: 'rust', siteDir, quic: plan.quic, bdpBytes: plan.bdpBytes });
  const pageUrl = `${siteUrl(p)}${BULK_PAGE}`;
  const fileUrl = `${siteUrl(p)}${file.name}`;
  const timeoutMs = transferTimeoutS(scenario, plan.linkMbps) * 1000;
  const events = { requests: [], responses: {}, data: [], finished: {}, failed: {} };
  let js;
  const browserTimeout = { timeoutMs: timeoutMs + 10000, killAfterMs: timeoutMs + 30000 };
  await withChromium({ clientNs: tb.ns.client, protocol: p, spki, ...browserTimeout, signal }, async (browser) => {
    const page = await browser.newPage();
    const cdp = await page.createCDPSession();
    cdp.on('Network.requestWillBeSent', (e) =>
      events.requests.push({ id: e.requestId, url: e.request.url, ts: e.timestamp }),
    );
    cdp.on('Network.responseReceived', (e) => {
      events.responses[e.requestId] = {
        protocol: e.response.protocol,
        status: e.response.status,
        timing: e.response.timing,
      };
    });
    cdp.on('Network.dataReceived', (e) => events.data.push([e.requestId, e.timestamp, e.dataLength]));
    cdp.on('Network.loadingFinished', (e) => {
      events.finished[e.requestId] = e.timestamp;
    });
    cdp.on('Network.loadingFailed', (e) => {
      events.failed[e.requestId] = { error: e.errorText, ts: e.timestamp };
    });
    await cdp.send('Network.enable');
    const started = Date.now();
    // CLOCK_MONOTONIC, the clock of DevTools' timestamps on Linux
    events.navStart = Number(process.hrtime.bigint()) / 1e9;
    await page.goto(`${pageUrl}#${file.name}`, { waitUntil: 'domcontentloaded', timeout: timeoutMs });
    const stopAt = started + (scenario.duration_s ? scenario.duration_s * 1000 + 500 : timeoutMs);
    while (Date.now() < stopAt) {
      js = await page.evaluate(() => window.__bulk);
      if (js?.done || js?.error) break;
      await wait(Math.min(200, Math.max(0, stopAt - Date.now())));
    }
    js = await page.evaluate(() => window.__bulk);
    // the page has read the last byte; DevTools' word that the load ended may trail it
    const fileId = () => events.requests.find((r) => r.url === fileUrl)?.id;
    const end = Date.now() + 2000;
    while (js?.done && Date.now() < end && !(fileId() in events.finished || fileId() in events.failed)) await wait(20);
  });
  const got = browserDownload(events, {
    pageUrl,
    fileUrl,
    binMs: plan.binMs,
    durationMs: scenario.duration_s ? scenario.duration_s * 1000 : null,
    sizeBytes: scenario.size_bytes ?? null,
  });
  const problems = [];
  if (got.error) problems.push(got.error);
  if (js?.error) problems.push(`the page: ${js.error}`);
  if (got.protocol && got.protocol !== NEXT_HOP[p])
    problems.push(`wrong protocol: the file came over ${got.protocol}, not ${NEXT_HOP[p]}`);
  if (scenario.size_bytes && got.bytes < scenario.size_bytes && !problems.length)
    problems.push(`received ${got.bytes} of ${scenario.size_bytes} bytes`);
  const dl = {
    ok: !problems.length && got.complete,
    error: problems.length ? problems.join('; ') : got.complete ? null : 'the download stopped before the duration',
    protocol: scenario.protocol,
    requested_bytes: scenario.size_bytes ?? null,
    requested_duration_ms: scenario.duration_s ? scenario.duration_s * 1000 : null,
    connect_ms: got.connect_ms,
    ttfb_ms: got.ttfb_ms,
    bytes: got.bytes,
    complete: got.complete,
    duration_ms: got.duration_ms,
    bin_ms: plan.binMs,
    bins: got.bins,
    transport: {
      page_protocol: got.page_protocol,
      file_request_ms: got.file_request_ms,
      status: got.status,
      js_bytes: js?.bytes ?? null,
    },
  };
  return { dl, sender: null, protocol_seen: got.protocol, pep: null };
}
