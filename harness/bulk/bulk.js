// `satbench bulk`: a matrix of downloads (profiles × losses × protocols ×
// runs), a fresh testbed per run, every run's record (kind "bulk")
// appended and flushed to results.jsonl as it ends, then summary.json and
// index.html.
//
// Protocols:
// - quic, tcp: `satbulk get` in the client namespace from `satbulk serve`
//   in the server namespace (sites/bulk), end to end.
// - quic-pep: the same through the QUIC PEP chain (harness/pep/quic-chain.js):
//   the client connects to Proxy-ST, Proxy-GW connects to satbulk.
// - tcp-pep: the same through the split-TCP PEP chain (harness/pep/tcp-chain.js),
//   which intercepts the connection to satbulk's TCP port on its way.
// - browser-h1, -h2, -h3: Chromium fetches one large file from our origin
//   (a page of ours starts the fetch and drains it); the bytes come from
//   the DevTools protocol's Network.dataReceived events (as Border et al.
//   measured a browser download).
//
// Every download is timed from t0, just before connecting (for the
// browser: the request of the page that starts the fetch), and binned;
// harness/results/goodput.js turns the bins into metrics.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { UsageError } from '../core/errors.js';
import { binPath, run } from '../core/sys.js';
import { ADDRESSES } from '../testbed/addressing.js';
import { loadProfile, configuredSummary } from '../testbed/profiles.js';
import { createTestbed, startProcess } from '../testbed/testbed.js';
import { launchChromium, closeChromium, siteUrl, SITE_HOST } from '../pageload/runner.js';
import { startOrigin, originQuicArgs, QUIC_KEYS } from '../servers/origin.js';
import { appendFlushed, readResults } from '../results/store.js';
import { writeOutputs } from '../analysis/outputs.js';
import { groupKey } from '../kinds/index.js';
import { objectivesFor } from '../results/objectives.js';
import { gatherEnvironment } from '../campaign/environment.js';
import {
  downloadMetrics,
  judgeRun,
  condenseTrace,
  binEvents,
  MARKS_S,
  markMetric,
  sizeMetric,
  OBJECTIVE_SIZES,
} from '../results/goodput.js';

export const BULK_PROTOCOLS = ['quic', 'quic-pep', 'tcp', 'tcp-pep', 'browser-h1', 'browser-h2', 'browser-h3'];
// satbulk's ports. The split-TCP PEP is told to intercept TCP_PORT.
export const QUIC_PORT = 4434;
export const TCP_PORT = 5201;
export const DEFAULT_BIN_MS = 100;
const BULK_PAGE = 'bulk.html';

const PEP_MODULES = {
  'quic-pep': { file: '../pep/quic-chain.js', fn: 'startQuicPepChain' },
  'tcp-pep': { file: '../pep/tcp-chain.js', fn: 'startTcpPepChain' },
};

const isBrowser = (p) => p.startsWith('browser-');
// browser-h2 → h2, the page-load protocol whose Chromium flags it shares.
const browserProtocol = (p) => p.replace(/^browser-/, '');

/**
 * The start function of a PEP chain's module, or a UsageError saying what
 * is missing (the chains are written alongside this command).
 */
export async function pepStarter(protocol) {
  const m = PEP_MODULES[protocol];
  let mod;
  try {
    mod = await import(m.file);
  } catch (e) {
    if (e.code === 'ERR_MODULE_NOT_FOUND' && e.message.includes(m.file.slice(2))) {
      throw new UsageError(
        `--protocol ${protocol}: harness/${m.file.slice(2)} (the PEP chain) is not there yet; use a protocol without -pep`,
      );
    }
    throw e;
  }
  if (typeof mod[m.fn] !== 'function') {
    throw new UsageError(
      `--protocol ${protocol}: harness/${m.file.slice(2)} has no ${m.fn}() yet; use a protocol without -pep`,
    );
  }
  return mod[m.fn];
}

// PEP hop settings: the QUIC options (origin.js QUIC_KEYS) for the QUIC
// PEP; cc, initial-window, sndbuf and rcvbuf for the split-TCP PEP.
const TCP_PEP_KEYS = ['cc', 'initial-window', 'sndbuf', 'rcvbuf'];
export const PEP_KEYS = [...new Set([...QUIC_KEYS, ...TCP_PEP_KEYS])];

/** Pure: "cc=newreno,initial-window=100" → {cc: 'newreno', 'initial-window': '100'}. */
export function parsePepSide(text, flag) {
  const out = {};
  for (const item of String(text)
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean)) {
    const [key, ...rest] = item.split('=');
    if (!PEP_KEYS.includes(key))
      throw new UsageError(`${flag}: unknown option ${JSON.stringify(key)}; expected ${PEP_KEYS.join(', ')}`);
    out[key] = rest.length ? rest.join('=') : true;
    if (key !== 'cc' && key !== 'ack-frequency' && !/^\d+$/.test(String(out[key]))) {
      throw new UsageError(`${flag}: ${key} expects a whole number, got ${JSON.stringify(out[key])}`);
    }
  }
  return out;
}

/** Pure: a PEP side's settings as the split-TCP chain takes them ({cc, iw, sndbuf, rcvbuf}). */
export function tcpPepSide(side = {}, flag = '--pep-sat') {
  const out = {};
  for (const [k, v] of Object.entries(side)) {
    if (!TCP_PEP_KEYS.includes(k))
      throw new UsageError(`${flag}: ${k} is a QUIC option; the split-TCP PEP takes ${TCP_PEP_KEYS.join(', ')}`);
    if (k === 'cc') out.cc = v;
    else if (k === 'initial-window') out.iw = Number(v);
    else out[k] = Number(v);
  }
  return out;
}

/** Pure: a PEP side's settings as the QUIC chain takes them (QuicOptions names). */
export function quicPepSide(side = {}, flag = '--pep-sat') {
  for (const k of Object.keys(side)) {
    if (!QUIC_KEYS.includes(k))
      throw new UsageError(`${flag}: ${k} is a TCP option; the QUIC PEP takes ${QUIC_KEYS.join(', ')}`);
  }
  return { ...side };
}

/** Pure: every (scenario, run) of a bulk matrix, run-major (as bench's). */
export function expandBulkMatrix({
  profiles,
  losses,
  protocols,
  runs,
  duration_s: durationS = null,
  size_bytes: sizeBytes = null,
}) {
  const scenarios = [];
  for (const profile of profiles)
    for (const loss of losses)
      for (const protocol of protocols) {
        scenarios.push({
          profile,
          loss_pct: loss ?? null,
          protocol,
          ...(sizeBytes ? { size_bytes: sizeBytes } : { duration_s: durationS }),
        });
      }
  const out = [];
  for (let r = 1; r <= runs; r++) for (const scenario of scenarios) out.push({ scenario, run: r });
  return out;
}

export function validateBulkMatrix(m) {
  for (const p of m.protocols) {
    if (!BULK_PROTOCOLS.includes(p))
      throw new UsageError(
        `--protocol: unknown bulk protocol ${JSON.stringify(p)}; expected ${BULK_PROTOCOLS.join(', ')}`,
      );
  }
  if (!m.protocols.length) throw new UsageError('--protocol: name at least one protocol');
  for (const l of m.losses)
    if (l !== null && !(l >= 0 && l <= 100))
      throw new UsageError(`--loss: expected percentages between 0 and 100, got ${l}`);
  for (const p of m.profiles) loadProfile(p); // unknown names fail here, before anything runs
  if ((m.duration_s == null) === (m.size_bytes == null))
    throw new UsageError('give --duration or --size (one of them)');
  if (m.duration_s != null && !(m.duration_s > 0))
    throw new UsageError(`--duration: expected seconds > 0, got ${m.duration_s}`);
  if (m.size_bytes != null && !(Number.isInteger(m.size_bytes) && m.size_bytes >= 1))
    throw new UsageError(`--size: expected a whole number of bytes >= 1, got ${m.size_bytes}`);
  if (!Number.isInteger(m.runs) || m.runs < 1)
    throw new UsageError(`-n: expected a whole number of runs >= 1, got ${m.runs}`);
  return m;
}

/**
 * Pure: how long a download may take before it counts as stalled: the
 * duration and 30 s, or four times the size at the link rate and a minute.
 */
export function transferTimeoutS(scenario, linkMbps) {
  if (scenario.duration_s) return scenario.duration_s + 30;
  if (!linkMbps) return 600;
  return Math.ceil((4 * scenario.size_bytes * 8) / (linkMbps * 1e6)) + 60;
}

/** Pure: `satbulk get` arguments for a scenario. */
export function satbulkGetArgs(scenario, { addr, ca, binMs = DEFAULT_BIN_MS, quicArgs = [], timeoutS }) {
  const proto = scenario.protocol.startsWith('quic') ? 'quic' : 'tcp';
  const a = ['get', proto, '--addr', addr, '--json', '--bin-ms', String(binMs)];
  a.push(
    ...(scenario.size_bytes ? ['--bytes', String(scenario.size_bytes)] : ['--duration', String(scenario.duration_s)]),
  );
  if (timeoutS) a.push('--timeout', String(timeoutS));
  if (proto === 'quic') a.push('--ca', ca, '--name', SITE_HOST, ...quicArgs);
  return a;
}

const wait = (ms) => new Promise((r) => setTimeout(r, ms));

function readTrace(file) {
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .flatMap((l) => {
      try {
        return [JSON.parse(l)];
      } catch {
        return []; // a line cut by teardown
      }
    });
}

// The sender writes a connection's last trace line once the client has
// gone; through a PEP that news crosses the satellite first.
export function everyConnectionEnded(lines) {
  const ended = new Set(lines.filter((l) => l.final).map((l) => l.conn));
  return lines.length > 0 && lines.every((l) => ended.has(l.conn));
}

async function traceWhenFinal(file, ms) {
  const end = Date.now() + ms;
  let lines = readTrace(file);
  while (Date.now() < end && !everyConnectionEnded(lines)) {
    await wait(50);
    lines = readTrace(file);
  }
  return lines;
}

// ------------------------------------------------------------ satbulk runs

async function satbulkRun(tb, scenario, profile, ctx) {
  const certDir = path.join(tb.dir, 'tls');
  await run(binPath('origin'), ['gen-cert', '--name', SITE_HOST, '--ip', ADDRESSES.server, '--out', certDir]);
  const cert = path.join(certDir, 'cert.pem');
  const key = path.join(certDir, 'key.pem');
  const tracePath = path.join(tb.dir, 'satbulk.trace.jsonl');
  const bin = binPath('satbulk');
  await startProcess(
    tb.state,
    'satbulk',
    [
      'ip',
      'netns',
      'exec',
      tb.ns.server,
      bin,
      'serve',
      '--addr',
      ADDRESSES.server,
      '--quic-port',
      String(QUIC_PORT),
      '--tcp-port',
      String(TCP_PORT),
      '--cert',
      cert,
      '--key',
      key,
      '--trace',
      tracePath,
      ...originQuicArgs(profile, ctx.quic),
    ],
    { logPath: path.join(tb.dir, 'satbulk.log'), what: 'the satbulk server' },
  );

  let addr = `${ADDRESSES.server}:${scenario.protocol.startsWith('quic') ? QUIC_PORT : TCP_PORT}`;
  let ca = cert;
  let chain = null;
  if (scenario.protocol === 'quic-pep') {
    const start = await pepStarter('quic-pep');
    chain = await start(tb, {
      next: { addr: ADDRESSES.server, port: QUIC_PORT, name: SITE_HOST, ca: cert },
      // satbulk is not HTTP/3: the chain's default parallel handshakes
      alpn: ['satbulk'],
      h3: false,
      sat: quicPepSide(ctx.pep.sat, '--pep-sat'),
      ground: quicPepSide(ctx.pep.ground, '--pep-ground'),
    });
    addr = `${chain.addr ?? chain.serverAddr ?? ADDRESSES.st}:${chain.port ?? 443}`;
    ca = chain.ca ?? chain.caFile ?? cert;
  } else if (scenario.protocol === 'tcp-pep') {
    const start = await pepStarter('tcp-pep');
    chain = await start(tb, {
      preset: ctx.pep.preset ?? 'paper',
      ports: [TCP_PORT],
      dir: tb.dir,
      ...(Object.keys(ctx.pep.sat).length ? { sat: tcpPepSide(ctx.pep.sat, '--pep-sat') } : {}),
      ...(Object.keys(ctx.pep.ground).length ? { ground: tcpPepSide(ctx.pep.ground, '--pep-ground') } : {}),
    });
  }
  const timeoutS = transferTimeoutS(scenario, ctx.linkMbps);
  const clientQuic = originQuicArgs(profile, ctx.quicClient);
  const r = await run(
    'ip',
    [
      'netns',
      'exec',
      tb.ns.client,
      bin,
      ...satbulkGetArgs(scenario, { addr, ca, binMs: ctx.binMs, quicArgs: clientQuic, timeoutS }),
    ],
    { allowFail: true, timeoutMs: (timeoutS + 30) * 1000 },
  );
  let dl;
  try {
    dl = JSON.parse(r.stdout);
  } catch {
    throw new Error(
      `satbulk get failed: ${(r.stderr || r.stdout).trim().split('\n').slice(-3).join(' | ') || `exit ${r.code}`}`,
    );
  }
  const lines = await traceWhenFinal(tracePath, chain ? 5000 : 2000);
  return {
    dl,
    sender: condenseTrace(lines, dl.t0_unix_ms || null),
    protocol_seen: dl.protocol === 'quic' ? (dl.alpn ?? null) : 'tcp',
    pep: chain
      ? { settings: chain.settings ?? null, stats: typeof chain.stats === 'function' ? await chain.stats() : null }
      : null,
  };
}

// ------------------------------------------------------------ browser runs

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

const NEXT_HOP = { h1: 'http/1.1', h2: 'h2', h3: 'h3' };

/**
 * Pure: a browser download from the DevTools events the run collected:
 * t0 is the page's request (the connection to the origin starts there);
 * bins, connect and first-byte times, and the protocol seen. `events`:
 * {requests: [{id, url, ts}], responses: {id: response}, data: [[id, ts,
 * bytes]], finished: {id: ts}, failed: {id: {error, ts}}} (ts in seconds).
 * A load that fails once every byte wanted is in does not count: Chromium
 * reports a fetch read through a stream as aborted when it ends, and a
 * timed download is cut on purpose.
 */
export function browserDownload(events, { pageUrl, fileUrl, binMs, durationMs = null, sizeBytes = null }) {
  const page = events.requests.find((r) => r.url === pageUrl);
  const file = events.requests.find((r) => r.url === fileUrl);
  if (!page) return { error: 'the download page was not requested' };
  const t0 = page.ts;
  const until = durationMs ?? Infinity;
  const arrivals = file
    ? events.data.filter(([id]) => id === file.id).map(([, ts, bytes]) => ({ t_ms: (ts - t0) * 1000, bytes }))
    : [];
  const counted = arrivals.filter((a) => a.t_ms < until);
  const { bins, bytes } = binEvents(counted, binMs, durationMs);
  const resp = file ? events.responses[file.id] : null;
  const pageResp = events.responses[page.id];
  const timing = pageResp?.timing;
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

async function browserRun(tb, scenario, profile, ctx) {
  const file = browserFile(scenario);
  const siteDir = path.join(tb.dir, 'bulk-site');
  writeBulkSite(siteDir, file);
  const p = browserProtocol(scenario.protocol);
  const { spki } = await startOrigin(tb, { origin: 'rust', siteDir, quicArgs: originQuicArgs(profile, ctx.quic) });
  const pageUrl = `${siteUrl(p)}${BULK_PAGE}`;
  const fileUrl = `${siteUrl(p)}${file.name}`;
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-chromium-'));
  const timeoutMs = transferTimeoutS(scenario, ctx.linkMbps) * 1000;
  const events = { requests: [], responses: {}, data: [], finished: {}, failed: {} };
  let browser;
  let js;
  const killer = setTimeout(() => browser?.process()?.kill('SIGKILL'), timeoutMs + 30000); // a hung browser
  try {
    browser = await launchChromium({
      clientNs: tb.ns.client,
      protocol: p,
      spki,
      userDataDir,
      timeoutMs: timeoutMs + 10000,
    });
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
  } finally {
    clearTimeout(killer);
    await closeChromium(browser, userDataDir);
  }
  const got = browserDownload(events, {
    pageUrl,
    fileUrl,
    binMs: ctx.binMs,
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
    bin_ms: ctx.binMs,
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

// ------------------------------------------------------------ one run

const DOWNLOAD_FIELDS = [
  'connect_ms',
  'ttfb_ms',
  'bytes',
  'duration_ms',
  'complete',
  'requested_bytes',
  'requested_duration_ms',
  't0_unix_ms',
  'addr',
  'transport',
];

async function oneBulkRun({ scenario, run: runNo }, ctx) {
  const profile = loadProfile(scenario.profile, { lossPct: scenario.loss_pct });
  const linkMbps = configuredSummary(profile).forward_mbps;
  const runCtx = { ...ctx, linkMbps };
  const base = {
    kind: 'bulk',
    scenario,
    run: runNo,
    seed: ctx.seed + runNo,
    link_rate_mbps: linkMbps,
    settings: ctx.settings,
  };
  const tb = await createTestbed({ profile, link: ctx.link, seed: ctx.seed + runNo, tcp: ctx.tcp });
  base.link = tb.backend;
  try {
    let r;
    try {
      r = isBrowser(scenario.protocol)
        ? await browserRun(tb, scenario, profile, runCtx)
        : await satbulkRun(tb, scenario, profile, runCtx);
    } catch (e) {
      if (e instanceof UsageError) throw e;
      return { ...base, ok: false, error: e.message.split('\n')[0], link_stats: await tb.linkStats() };
    }
    const { dl } = r;
    const metrics = downloadMetrics(dl, { linkMbps });
    if (r.sender?.slow_start_exit_ms != null) metrics.sender_slow_start_exit_ms = r.sender.slow_start_exit_ms;
    if (r.sender?.max_cwnd) metrics.sender_max_cwnd_bytes = r.sender.max_cwnd;
    const objectives = objectivesFor(scenario.profile);
    return {
      ...base,
      ok: Boolean(dl.ok),
      error: dl.ok ? null : (dl.error ?? 'the download failed'),
      protocol_seen: r.protocol_seen,
      metrics,
      objectives: objectives ? judgeRun(metrics, objectives) : null,
      goodput: { bin_ms: dl.bin_ms, bins: dl.bins },
      download: Object.fromEntries(DOWNLOAD_FIELDS.filter((k) => dl[k] !== undefined).map((k) => [k, dl[k]])),
      sender: r.sender,
      pep: r.pep,
      link_stats: await tb.linkStats(),
    };
  } finally {
    await tb.destroy();
  }
}

// ------------------------------------------------------------ summary

/** Pure: the table `satbench bulk` prints without --json. */
export function formatBulkSummary(summary) {
  const mb = (v) => (v?.median == null ? '-' : (v.median / 1e6).toFixed(2));
  const s = (v) => (v?.median == null ? '-' : (v.median / 1000).toFixed(2));
  const rows = [
    [
      'profile',
      'loss',
      'protocol',
      'runs',
      'failed',
      ...MARKS_S.map((t) => `MB@${t}s`),
      't90% s',
      ...OBJECTIVE_SIZES.map((b) => `t${b / 1e6}MB s`),
      'objectives',
    ],
  ];
  for (const g of summary.groups.filter((x) => x.kind === 'bulk')) {
    const m = g.metrics ?? {};
    const obj = g.objectives
      ? g.objectives.results.map((o) => `${o.bytes / 1e6}MB≤${o.limit_s}s ${o.met ? 'met' : 'missed'}`).join(', ')
      : '';
    rows.push([
      g.scenario.profile,
      g.scenario.loss_pct ?? 'profile',
      g.scenario.protocol,
      g.runs,
      g.failed,
      ...MARKS_S.map((t) => mb(m[markMetric(t)])),
      s(m.time_to_90pct_rate_ms),
      ...OBJECTIVE_SIZES.map((b) => s(m[sizeMetric(b)])),
      obj,
    ]);
  }
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => String(r[i]).length)));
  return rows
    .map((r) =>
      r
        .map((c, i) => String(c).padEnd(widths[i]))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

const fmtDuration = (ms) => (ms < 90000 ? `${Math.round(ms / 1000)} s` : `${Math.round(ms / 60000)} min`);

/**
 * Runs the bulk matrix into `outDir` (as bench: --resume skips finished
 * runs). Returns the summary. `quic` / `quicClient`: satbulk's (and the
 * origin's) QUIC options of the sender and the receiver; `tcp`: the end
 * hosts' TCP (testbed); `pep`: {preset, sat, ground} hop settings.
 */
export async function bulk(
  matrix,
  {
    outDir,
    link = 'auto',
    seed = 1,
    resume = false,
    binMs = DEFAULT_BIN_MS,
    onProgress = () => {},
    meta = {},
    quic = {},
    quicClient = {},
    tcp,
    pep = {},
  },
) {
  validateBulkMatrix(matrix);
  const pepSettings = { preset: pep.preset ?? null, sat: pep.sat ?? {}, ground: pep.ground ?? {} };
  for (const p of matrix.protocols) {
    if (!PEP_MODULES[p]) continue;
    await pepStarter(p); // a missing chain fails before anything runs
    (p === 'tcp-pep' ? tcpPepSide : quicPepSide)(pepSettings.sat, '--pep-sat');
    (p === 'tcp-pep' ? tcpPepSide : quicPepSide)(pepSettings.ground, '--pep-ground');
  }
  for (const p of matrix.protocols) binPath(isBrowser(p) ? 'origin' : 'satbulk');
  fs.mkdirSync(outDir, { recursive: true });
  const resultsFile = path.join(outDir, 'results.jsonl');
  const done = new Set();
  if (resume)
    for (const r of readResults(resultsFile)) done.add(`${groupKey(r.kind ?? 'pageload', r.scenario)}#${r.run}`);
  else if (fs.existsSync(resultsFile)) {
    throw new UsageError(`${resultsFile} exists: continue it with --resume ${outDir}, or pick another --out`);
  }
  const settings = { quic, quic_client: quicClient, tcp: tcp ?? null, pep: pepSettings, bin_ms: binMs };
  const ctx = { link, seed, binMs, quic, quicClient, tcp, pep: pepSettings, settings };
  const todo = expandBulkMatrix(matrix).filter((x) => !done.has(`${groupKey('bulk', x.scenario)}#${x.run}`));
  const startedAt = Date.now();
  let last = null;
  for (const [i, item] of todo.entries()) {
    const s = item.scenario;
    const left = i ? fmtDuration(((Date.now() - startedAt) / i) * (todo.length - i)) : '?';
    const what = s.size_bytes ? `${s.size_bytes / 1e6} MB` : `${s.duration_s} s`;
    onProgress(
      `[${i + 1}/${todo.length}] ${s.profile} loss ${s.loss_pct ?? 'as profile'} % ${s.protocol} ${what}: run ${item.run} of ${matrix.runs}` +
        `${last ? ` · last ${last}` : ''} · about ${left} left`,
    );
    const rec = await oneBulkRun(item, ctx);
    appendFlushed(resultsFile, rec);
    last = rec.ok
      ? `${(rec.metrics.bytes / 1e6).toFixed(1)} MB in ${(rec.metrics.duration_ms / 1000).toFixed(1)} s`
      : `failed (${rec.error})`;
  }
  const records = readResults(resultsFile);
  return writeOutputs(outDir, records, {
    ...meta,
    kind: 'bulk',
    seed,
    link,
    settings,
    matrix,
    environment: await gatherEnvironment(matrix),
    generated: new Date().toISOString(),
  });
}
