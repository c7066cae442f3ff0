// One page load: a fresh Chromium in the client namespace
// (harness/browser/chromium.js), a first-time visit with a new profile (or
// a repeat or revisit view's two loads), and the facts the page's
// performance timeline records. Judging
// (is this run valid? what are its metrics?) is in the plain functions
// below; `loadPage` and `loadPair` (a repeat or revisit view) are the I/O.
import { NEXT_HOP, baseProtocol } from '../core/protocols.js';
import {
  CLOSE_MS,
  KILL_GRACE_MS,
  closeConnections,
  siteTarget,
  withChromium,
  withProfile,
} from '../browser/chromium.js';
import { emulate } from '../browser/emulation.js';
import navigation from './page/navigation.js';
import paint from './page/paint.js';
import resources from './page/resources.js';
import { afterLoadMs, gatherersFor, runGatherers } from './gather/index.js';

// Pure: whether the document and every resource came over the protocol
// asked for (and over cleartext when h1 was asked); the counts seen. A
// replay (`failedOk`) may answer a request its archive lacks with a 404
// that a cross-origin fetch then fails (CORS), which Resource Timing lists
// without a protocol: such network errors are not held against it (they
// are in the record's errors and unmatched requests).
// A second view (`cached`) over h1: Chromium keeps no protocol with an
// HTTP/1.1 response it cached, so one served from its cache or revalidated
// (304) has none; over an http: URL it can only have been HTTP/1.1 (no
// h2 or QUIC without TLS, and an upgrade to https would name its protocol),
// so there it counts as http/1.1, while `seen` still says none.
export function checkProtocol(protocol, nav, allResources, { failedOk = false, cached = false } = {}) {
  const resourceList = failedOk ? allResources.filter((r) => r.nextHopProtocol) : allResources;
  const p = baseProtocol(protocol);
  const want = NEXT_HOP[p];
  const scheme = p === 'h1' ? 'http:' : 'https:';
  const hopOf = (entry) =>
    cached && p === 'h1' && !entry.nextHopProtocol && new URL(entry.name).protocol === scheme
      ? want
      : entry.nextHopProtocol;
  const seen = { document: nav?.nextHopProtocol ?? null, resources: {} };
  for (const r of resourceList)
    seen.resources[r.nextHopProtocol || '(none)'] = (seen.resources[r.nextHopProtocol || '(none)'] ?? 0) + 1;
  const problems = [];
  if (!nav) problems.push('no navigation entry');
  else {
    if (hopOf(nav) !== want)
      problems.push(`document over ${nav.nextHopProtocol || 'an unknown protocol'}, not ${want}`);
    if (new URL(nav.name).protocol !== scheme)
      problems.push(`document loaded from ${nav.name}, not over ${scheme.slice(0, -1)}`);
  }
  const wrong = resourceList.filter((r) => hopOf(r) !== want || new URL(r.name).protocol !== scheme);
  if (wrong.length) {
    const ex = wrong[0];
    problems.push(
      `${wrong.length} of ${resourceList.length} resources not over ${want} (e.g. ${ex.name} over ${ex.nextHopProtocol || 'an unknown protocol'})`,
    );
  }
  return { ok: problems.length === 0, error: problems.length ? `wrong protocol: ${problems.join('; ')}` : null, seen };
}

// Pure: whether the server answered the document and every resource
// (Chromium's own favicon request aside) with success; an error page loads
// fast and would pass for a quick run. Status 0 means the browser does not
// say, and is not held against the run.
// A replayed archive answers its resources as they were recorded, errors
// included (`resources` false): only its document counts here, and the
// requests it could not answer are counted as unmatched instead.
export function checkStatus(nav, allResources, { resources = true } = {}) {
  const bad = (s) => typeof s === 'number' && s >= 400;
  const problems = [];
  if (bad(nav?.responseStatus)) problems.push(`document ${nav.responseStatus}`);
  const failed = resources ? allResources.filter((r) => !isFavicon(r) && bad(r.responseStatus)) : [];
  if (failed.length)
    problems.push(`${failed.length} resources (e.g. ${new URL(failed[0].name).pathname} ${failed[0].responseStatus})`);
  return { ok: problems.length === 0, error: problems.length ? `HTTP error status: ${problems.join('; ')}` : null };
}

// Pure: the run's metrics (docs/architecture.md names them) from the raw entries, relative to navigation
// start (startTime 0 of the navigation entry).
// Chromium fetches /favicon.ico on its own; it shows in the timeline only
// when it finishes before we read it, so it is left out of the page's count.
export const isFavicon = (r) => r.initiatorType === 'other' && new URL(r.name).pathname === '/favicon.ico';

export function deriveMetrics(nav, paints, lcp, allResources) {
  const resourceList = allResources.filter((r) => !isFavicon(r));
  const fcp = paints.find((p) => p.name === 'first-contentful-paint');
  const fp = paints.find((p) => p.name === 'first-paint');
  const sum = (k) => resourceList.reduce((a, r) => a + (r[k] || 0), 0);
  return {
    response_start_ms: nav?.responseStart ?? null,
    // The document's connection set-up: the TCP handshake over h1, TCP and
    // TLS over h1s and h2, the QUIC handshake over h3.
    connect_ms: nav && nav.connectEnd > 0 ? nav.connectEnd - nav.connectStart : null,
    fcp_ms: fcp ? fcp.startTime : null,
    first_paint_ms: fp ? fp.startTime : null,
    lcp_ms: lcp ? lcp.startTime : null,
    dom_content_loaded_ms: nav?.domContentLoadedEventStart ?? null,
    plt_ms: nav?.loadEventStart || null,
    resource_count: resourceList.length, // without the favicon
    favicon_seen: allResources.length !== resourceList.length,
    transfer_bytes: (nav?.transferSize ?? 0) + sum('transferSize'),
    body_bytes: (nav?.encodedBodySize ?? 0) + sum('encodedBodySize'),
  };
}

// Pure: a record with no page load in it yet (ok:false, `error`): what a
// load fills in, and what a run that never loaded keeps (pageload/run.js).
export function noLoad(error) {
  return {
    ok: false,
    error,
    protocol_seen: null,
    metrics: null,
    navigation: null,
    paints: [],
    lcp: null,
    resources: [],
    connections: {},
    // with a results folder, the run's HAR file (relative path; pageload/run.js)
    har: null,
    errors: [],
  };
}

/**
 * Loads `target.url` once in a fresh Chromium inside `clientNs` (a
 * reference site by default: its name resolves to `serverAddr`, the origin
 * or Proxy-ST; a replayed archive: chromium.js siteTarget).
 * `signal` ends the load at once (Chromium is killed); `emulation`
 * ({cpuSlowdown, device}, browser/emulation.js) is applied before anything
 * else, so that the gatherers (gather/index.js) record the emulated page;
 * it is part of the load's set-up, not a gatherer, because a load it
 * failed for is no measurement of its scenario and fails (a gatherer's
 * failure only leaves its field empty). Never throws for a failed load:
 * the record says ok:false and why.
 */
export async function loadPage({
  clientNs,
  protocol,
  spki,
  serverAddr,
  target = siteTarget(protocol, serverAddr),
  timeoutMs,
  signal,
  emulation = {},
  gatherers = gatherersFor(),
}) {
  const record = noLoad(null);
  const load = { protocol, target, timeoutMs, emulation, gatherers };
  // the gatherers' work after the load counts towards the browser's bound
  const killAfterMs = loadBoundMs(timeoutMs, gatherers);
  await attempt(record, () =>
    withChromium({ clientNs, protocol, spki, target, timeoutMs, killAfterMs, signal }, (browser) =>
      measureLoad(browser, load, record),
    ),
  );
  return record;
}

/**
 * A repeat or revisit view (core/views.js): two loads of `target.url`, the
 * pair's first view and then the `view` itself, each with its own
 * gatherers (`gatherers`: [first's, second's]); the options are
 * loadPage's. repeat: Chromium is closed after the first load and started
 * again on the same profile folder (what it keeps on disk stays: HTTP
 * cache, Alt-Svc, HSTS). revisit: the same Chromium, its connections
 * closed between the loads (closeConnections: its TLS session cache
 * stays). `between()` runs after the first load (the run reads its
 * counters there). Returns the two records; the second is not loaded when
 * the first failed. Never throws for a failed load.
 */
export async function loadPair({
  view,
  clientNs,
  protocol,
  spki,
  serverAddr,
  target = siteTarget(protocol, serverAddr),
  timeoutMs,
  signal,
  emulation = {},
  gatherers: [firstGatherers, secondGatherers] = [gatherersFor(), gatherersFor()],
  between = async () => {},
}) {
  const loads = [firstGatherers, secondGatherers].map((gatherers, i) => ({
    protocol,
    target,
    timeoutMs,
    emulation,
    gatherers,
    // the second load finds the first's responses in the browser's cache
    cached: i === 1,
  }));
  const records = [noLoad(null), noLoad(null)];
  const browser = { clientNs, protocol, spki, target, timeoutMs, signal };
  // the second load, once the first is measured: not when the first failed
  const second = async (measure) => {
    if (records[0].ok) {
      await between();
      await attempt(records[1], measure);
    } else records[1].error = `not loaded: the pair's first view failed (${records[0].error})`;
  };
  if (view === 'repeat')
    await withProfile(async (userDataDir) => {
      const once = (load, record) => () =>
        withChromium({ ...browser, userDataDir, killAfterMs: loadBoundMs(timeoutMs, load.gatherers) }, (b) =>
          measureLoad(b, load, record),
        );
      await attempt(records[0], once(loads[0], records[0]));
      await second(once(loads[1], records[1]));
    });
  else {
    // one Chromium for both loads: each load's bound, and the closing between
    const killAfterMs = loads.reduce((a, l) => a + loadBoundMs(timeoutMs, l.gatherers), 0) + CLOSE_MS;
    try {
      await withChromium({ ...browser, netBenchmarking: true, killAfterMs }, async (b) => {
        await attempt(records[0], () => measureLoad(b, loads[0], records[0]));
        await second(async () => {
          await closeConnections(b);
          await measureLoad(b, loads[1], records[1]);
        });
      });
    } catch (e) {
      // the browser failed (its launch, or it was killed): the loads it did not finish
      if (unfinished(records[0])) fail(records[0], e);
      if (unfinished(records[1])) await second(() => Promise.reject(e));
    }
  }
  return records;
}

// Pure: how long a load's browser may take before it is killed: the page
// load's timeout, the grace, and what its gatherers add after the load.
const loadBoundMs = (timeoutMs, gatherers) => timeoutMs + KILL_GRACE_MS + afterLoadMs(gatherers);

const unfinished = (record) => !record.ok && record.error === null;

function fail(record, e) {
  record.ok = false;
  record.error = String(e?.message ?? e).split('\n')[0];
}

// Runs `measure()` (a load into `record`, measureLoad); a failure is the
// record's error. The record's wall_ms: the whole of it (Chromium's start
// and close too, where `measure` has them).
async function attempt(record, measure) {
  const started = Date.now();
  try {
    await measure();
  } catch (e) {
    fail(record, e);
    // how long after navigation start it failed (slot-phase.js: did a handover fall in it?)
    if (record.nav_unix_ms !== undefined && record.load_wall_ms === undefined)
      record.failed_after_ms = Date.now() - record.nav_unix_ms;
  } finally {
    record.wall_ms = Date.now() - started;
  }
}

// One load in an open Chromium, in a tab of its own that is closed
// afterwards: emulated, the gatherers started, the page loaded and its
// timeline read into `record`, the gatherers stopped; then judged.
async function measureLoad(browser, load, record) {
  const { target, timeoutMs, emulation, gatherers } = load;
  const page = await browser.newPage();
  await emulate(page, emulation);
  const cdp = await page.createCDPSession();
  await cdp.send('Network.enable');
  await runGatherers(gatherers, 'start', { page, cdp }, record);
  page.on('requestfailed', (r) => record.errors.push({ url: r.url(), error: r.failure()?.errorText ?? 'failed' }));
  page.on('pageerror', (e) => record.errors.push({ error: `page: ${e.message}` }));
  const t0 = Date.now();
  // where the navigation fell in a LEO slot process (slot-phase.js)
  record.nav_unix_ms = t0;
  await page.goto(target.url, { waitUntil: 'load', timeout: timeoutMs });
  record.load_wall_ms = Date.now() - t0;
  record.navigation = await page.evaluate(navigation);
  const p = await page.evaluate(paint);
  record.paints = p.paints;
  record.lcp = p.lcp;
  record.resources = await page.evaluate(resources);
  await runGatherers(gatherers, 'stop', { page, cdp }, record);
  await page.close();
  judgeLoad(record, load);
}

// A measured record judged, in place (no I/O): the protocols seen, its
// metrics (with the visual gatherer's), the status of what the server
// answered; ok or why not.
function judgeLoad(record, { protocol, target, cached }) {
  const check = checkProtocol(protocol, record.navigation, record.resources, {
    failedOk: Boolean(target.replay),
    cached: Boolean(cached),
  });
  record.protocol_seen = check.seen;
  // the visual gatherer's metrics (Speed Index, CLS, …) join the load's
  const { metrics: visualMetrics, ...visual } = record.visual ?? {};
  record.metrics = {
    ...deriveMetrics(record.navigation, record.paints, record.lcp, record.resources),
    ...visualMetrics,
  };
  if (record.visual) record.visual = visual;
  const status = checkStatus(record.navigation, record.resources, { resources: !target.replay });
  record.ok = check.ok && status.ok;
  record.error = [check.error, status.error].filter(Boolean).join('; ') || null;
}
