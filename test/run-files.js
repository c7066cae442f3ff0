// Hand-made run files for the report's tests, written to issue 28's
// contract as the HAR and visual gatherers write them: a gzip HAR 1.2 of a
// page load over a satellite link (the document one round trip after its
// handshake, then its stylesheet, then a wave of images: over h3 on the
// document's connection, over h1 on six), with `_connectionId`,
// `_protocol`, `_priority` and `log.pages[0]._satbench`; and a filmstrip
// folder of small JPEGs named `<ms>.jpg`, with record.visual's progress.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import jpeg from 'jpeg-js';
import { runFolder } from '../harness/campaign/results-dir.js';
import { scenarioKey } from '../harness/kinds/pageload.js';
import { harEntry, harLog, harPage } from './har-entry.js';

const T0 = Date.parse('2026-01-01T00:00:00.000Z');
const iso = (ms) => new Date(T0 + ms).toISOString();

// One HAR entry starting at `at` ms with `timings` (HAR's: connect includes ssl).
function entry({
  url,
  at,
  timings,
  connection,
  protocol,
  priority = 'High',
  type = 'image',
  status = 200,
  bytes = 9000,
}) {
  return harEntry(url, {
    status,
    protocol,
    connection: String(connection),
    ip: '198.18.0.2',
    startedDateTime: iso(at),
    timings: { blocked: 1, send: 0.2, wait: 0, receive: 5, ...timings },
    content: { size: bytes, mimeType: type === 'image' ? 'image/jpeg' : 'text/html' },
    response: { statusText: 'OK', bodySize: bytes, _transferSize: bytes + 200 },
    _connectionId: connection,
    _protocol: protocol,
    _priority: priority,
    _resourceType: type,
  });
}

/**
 * A HAR 1.2 of one load of `images` images over `protocol` ('h3' or
 * 'http/1.1') with a satellite round trip of `rttMs`; `url(path)` makes
 * each URL (a test puts hostile strings in them).
 */
export function makeHar({
  rttMs = 600,
  protocol = 'h3',
  images = 12,
  scenario = {},
  run = 1,
  url = (p) => `https://satbench.test${p}`,
} = {}) {
  const rtt = rttMs;
  const h3 = protocol === 'h3';
  // the document: the handshake (QUIC's one round trip, TCP's one), the request's one
  const handshake = h3 ? { connect: rtt + 2, ssl: rtt } : { connect: rtt + 2 };
  const entries = [
    entry({
      url: url('/'),
      at: 0,
      timings: { dns: 0.5, ...handshake, wait: rtt + 10, receive: 40 },
      connection: 11,
      protocol,
      priority: 'VeryHigh',
      type: 'document',
      bytes: 30000,
    }),
  ];
  const docEnd = 1 + 0.5 + handshake.connect + 0.2 + rtt + 10 + 40;
  entries.push(
    entry({
      url: url('/style.css'),
      at: docEnd,
      timings: { wait: rtt + 5, receive: 10, _queued: 3 },
      connection: 11,
      protocol,
      type: 'stylesheet',
    }),
  );
  // the images, one round trip later: over h3 all on the document's
  // connection; over h1 on six connections, a handshake each first
  const wave = docEnd + rtt + 20;
  for (let i = 0; i < images; i++) {
    const conn = h3 ? 11 : 12 + (i % 6);
    const fresh = !h3 && i < 6;
    const queued = h3 ? 0 : Math.floor(i / 6) * (rtt + 30);
    entries.push(
      entry({
        url: url(`/images/${i}.jpg`),
        at: wave + queued,
        timings: { ...(fresh ? { connect: rtt + 1 } : {}), wait: rtt + 3, receive: 20 + 5 * i, blocked: fresh ? 1 : 2 },
        connection: conn,
        protocol,
        priority: 'Low',
      }),
    );
  }
  const end = Math.max(...entries.map((e) => Date.parse(e.startedDateTime) - T0 + e.time));
  return harLog(entries, [
    harPage('page_1', url('/'), {
      startedDateTime: iso(0),
      pageTimings: { onContentLoad: Math.round(docEnd + rtt + 30), onLoad: Math.round(end + 15) },
      _satbench: { scenario, run, seed: 1, rtt_ms: rttMs },
    }),
  ]);
}

// A small JPEG of one grey level: frames of the page as it fills in.
export function makeFrame(level, { width = 32, height = 24 } = {}) {
  const data = Buffer.alloc(width * height * 4, level);
  for (let i = 3; i < data.length; i += 4) data[i] = 255;
  return jpeg.encode({ data, width, height }, 60).data;
}

// The filmstrip's frames of a load that paints at `ms` (each a new image).
export const framesAt = (times) => times.map((ms, i) => ({ ms, jpeg: makeFrame(255 - 30 * (i + 1)) }));

/**
 * Writes `record`'s HAR and filmstrip into results folder `dir` where the
 * contract puts them, and names them in the record (har, visual). `har`
 * null: none written (the record says why in not_captured); `frames`
 * likewise. Returns the record.
 */
export function writeRunFiles(dir, record, { har, frames = framesAt([0, 900, 1500, 2400]) }) {
  const key = scenarioKey(record.scenario);
  if (har) {
    const file = `${runFolder(dir, 'har', key, record.run)}.har.gz`;
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, zlib.gzipSync(JSON.stringify(har)));
    record.har = path.relative(dir, file);
  } else {
    record.har = null;
    (record.not_captured ??= {}).har = 'Network.enable: the test said no';
  }
  if (frames) {
    const folder = runFolder(dir, 'filmstrip', key, record.run);
    fs.mkdirSync(folder, { recursive: true });
    for (const f of frames) fs.writeFileSync(path.join(folder, `${String(f.ms).padStart(6, '0')}.jpg`), f.jpeg);
    const last = frames.at(-1).ms;
    record.visual = {
      frames: path.relative(dir, folder),
      progress: frames.map((f, i) => [f.ms, Math.round((100 * (i + 1)) / frames.length)]),
      waited_ms: 500,
    };
    record.metrics = { ...record.metrics, last_visual_change_ms: last };
  } else {
    record.visual = null;
    (record.not_captured ??= {}).visual = 'Tracing.start: the test said no';
  }
  return record;
}
