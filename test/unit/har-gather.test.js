// A run's HAR (pageload/gather/har.js, pageload/har-file.js): built by
// chrome-har from the DevTools events of real loads (test/har-events.json,
// captured by test/integration/capture-har-events.js) and checked against
// what the same load's record says; bodies fetched after the load; the
// file a run writes, and a run whose HAR cannot be written.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import har, {
  buildHar,
  closePending,
  PENDING,
  addContent,
  navigationStart,
  failureText,
  CONTENT_MS,
} from '../../harness/pageload/gather/har.js';
import { afterLoadMs, gatherersFor } from '../../harness/pageload/gather/index.js';
import { harPathOf, storeRunHar } from '../../harness/pageload/har-file.js';
import { checkHar } from '../../harness/archive/har-check.js';
import { importedArchive } from '../har-entry.js';
import { isFavicon } from '../../harness/pageload/load.js';

const { loads, failed } = JSON.parse(fs.readFileSync(new URL('../har-events.json', import.meta.url), 'utf8'));
const SCENARIO = { profile: 'geo', loss_pct: 0, protocol: 'h3', site: 'kepler' };
const SATBENCH = { scenario: SCENARIO, run: 3, seed: 4, rtt_ms: 30 };
const TIMINGS = ['blocked', 'dns', 'connect', 'ssl', 'send', 'wait', 'receive'];
const close = (a, b, within, what) => assert.ok(Math.abs(a - b) <= within, `${what}: ${a} vs ${b}`);
// Chromium's own favicon request, which the record leaves out of its count
const favicon = (e) => isFavicon({ initiatorType: 'other', name: e.request.url });

describe('the HAR of a run (gather/har.js)', () => {
  it('the fixture holds real h3 and h1 loads', () => {
    assert.deepEqual(
      loads.map((l) => [l.protocol, l.record.protocol_seen.document]),
      [
        ['h3', 'h3'],
        ['h1', 'http/1.1'],
      ],
    );
  });

  for (const { protocol, events, record } of loads)
    describe(`from the DevTools events of a real ${protocol} load`, () => {
      const built = buildHar(events, { navigation: record.navigation, satbench: SATBENCH });
      const [page] = built.log.pages;
      const entries = built.log.entries.filter((e) => !favicon(e));
      const since = (iso) => Date.parse(iso) - Date.parse(page.startedDateTime);

      it('passes the HAR 1.2 schema check', () => {
        checkHar(built, `${protocol} fixture`);
      });

      it('holds the document and every resource the record counts, over the protocols it saw', () => {
        assert.equal(built.log.pages.length, 1);
        assert.equal(entries.length, record.metrics.resource_count + 1);
        assert.deepEqual(
          entries.map((e) => e.request.url).sort(),
          [record.navigation.name, ...record.resources.filter((r) => !isFavicon(r)).map((r) => r.name)].sort(),
        );
        assert.equal(entries[0].request.url, record.navigation.name, 'the document first');
        assert.equal(entries[0]._protocol, record.protocol_seen.document);
        assert.deepEqual(
          [...new Set(entries.slice(1).map((e) => e._protocol))],
          Object.keys(record.protocol_seen.resources),
        );
      });

      it('gives every request its phases, protocol, connection, priority and sizes, where Resource Timing has them', () => {
        const timing = Object.fromEntries([record.navigation, ...record.resources].map((r) => [r.name, r]));
        for (const e of entries) {
          const url = e.request.url;
          const t = e.timings;
          for (const k of TIMINGS) assert.equal(typeof t[k], 'number', `${url}: timings.${k}`);
          assert.equal(e._protocol, e.response.httpVersion, url);
          assert.ok(Number(e._connectionId) > 0, `${url}: connection ${e._connectionId}`);
          assert.equal(e._connectionId, e.connection, url);
          assert.match(e._priority, /^(VeryHigh|High|Medium|Low|VeryLow)$/, url);
          const rt = timing[url];
          assert.equal(e.response.content.size, rt.decodedBodySize, `${url}: decoded bytes`);
          assert.ok(e.response._transferSize > rt.encodedBodySize, `${url}: bytes on the wire, headers too`);
          // one phase after the other, from when the page asked for it (ms from navigation
          // start, as Resource Timing counts) to its first byte and its last
          const start = since(e.startedDateTime);
          const before = (k) => TIMINGS.slice(0, TIMINGS.indexOf(k) + 1).filter((x) => x !== 'ssl');
          const upTo = (k) => before(k).reduce((sum, x) => sum + Math.max(0, t[x]), start);
          close(start, rt.fetchStart ?? rt.startTime, 1, `${url}: asked for`);
          close(upTo('wait'), rt.responseStart, 1, `${url}: first byte`);
          close(upTo('receive'), rt.responseEnd, 1, `${url}: last byte`);
          close(start + e.time, upTo('receive'), 0.01, `${url}: time is the phases' sum`);
          assert.equal(t.connect > 0, rt.connectEnd > rt.connectStart, `${url}: a connection of its own`);
          if (t.connect > 0) close(t.connect, rt.connectEnd - rt.connectStart, 1, `${url}: connect`);
          assert.ok(t._blocked_queueing >= 0 && t._blocked_queueing <= t.blocked, url);
        }
      });

      it("starts the page at navigation start, its pageTimings the record's DOMContentLoaded and load", () => {
        close(page.pageTimings.onContentLoad, record.metrics.dom_content_loaded_ms, 0.001, 'onContentLoad');
        close(page.pageTimings.onLoad, record.metrics.plt_ms, 0.001, 'onLoad');
        const first = events.find((e) => e.method === 'Network.requestWillBeSent').params.timestamp;
        assert.ok(navigationStart(events, record.navigation) < first, 'navigation starts before the first request');
        assert.equal(page.comment, undefined);
      });

      it('lists entries in start order and keeps satbench facts in its page', () => {
        const starts = built.log.entries.map((e) => Date.parse(e.startedDateTime));
        assert.deepEqual(
          starts,
          [...starts].sort((a, b) => a - b),
        );
        assert.deepEqual(page._satbench, SATBENCH);
      });

      it("without the navigation entry, keeps chrome-har's start and says so", () => {
        const bare = buildHar(events);
        assert.equal(bare.log.pages[0].comment, 'times from the first request: navigation start unknown');
        // chrome-har's: DevTools' load event, from the first request
        assert.ok(bare.log.pages[0].pageTimings.onLoad > 0);
        assert.ok(Date.parse(bare.log.pages[0].startedDateTime) > Date.parse(page.startedDateTime));
        assert.equal(bare.log.pages[0]._satbench, undefined);
      });
    });

  describe("a real load's failed requests: every one the record's errors list", () => {
    const built = buildHar(failed.events, { navigation: failed.record.navigation, satbench: SATBENCH });

    it('the fixture: an h2 load with requests that failed before any response', () => {
      assert.equal(failed.protocol, 'h2');
      assert.deepEqual(
        failed.record.errors.map((e) => e.url.replace(/^.*\//, '')),
        ['a.js', 'gone.gif'],
        JSON.stringify(failed.record.errors),
      );
    });

    it("names each error as DevTools does: the network error, else why it was blocked, and CORS's kind", () => {
      const gone = built.log.entries.find((e) => e.request.url.endsWith('/gone.gif'));
      const script = built.log.entries.find((e) => e.request.url.endsWith('/a.js'));
      assert.deepEqual(
        [gone.response._error, script.response._error],
        ['net::ERR_UNSAFE_PORT', 'blocked:mixed-content'],
      );
      assert.equal(
        failureText({ errorText: 'net::ERR_FAILED', corsErrorStatus: { corsError: 'MissingAllowOriginHeader' } }),
        'net::ERR_FAILED (CORS MissingAllowOriginHeader)',
      );
      assert.equal(failureText({ errorText: '' }), 'failed');
    });

    it('is in the HAR with status 0 and its error, as DevTools keeps it, and the HAR passes the schema check', () => {
      for (const { url, error } of failed.record.errors) {
        const e = built.log.entries.find((x) => x.request.url === url);
        assert.ok(e, `${url} is in the HAR`);
        assert.deepEqual([e.response.status, e.connection], [0, undefined], url);
        // puppeteer names a blocked request by its reason alone
        assert.ok(e.response._error === error || e.response._error === `blocked:${error}`, e.response._error);
        assert.ok(e.timings.blocked >= 0 && e.time === e.timings.blocked, url);
      }
      checkHar(built, 'the failed load');
      // and the page's own requests as before
      assert.ok(built.log.entries.some((e) => e.request.url.endsWith('/p.gif') && e.response.status === 200));
    });
  });

  describe('a failed request (chrome-har drops it; DevTools keeps it)', () => {
    // the h3 load, and two requests like its image's that fail: one before
    // any response (its connection refused), one after a 404 (a CORS error)
    const { events, record } = loads[0];
    const image = events.find((e) => e.method === 'Network.requestWillBeSent' && e.params.type === 'Image').params;
    const imageResponse = events.find(
      (e) => e.method === 'Network.responseReceived' && e.params.requestId === image.requestId,
    ).params;
    const asked = (requestId, url, type, after) => ({
      method: 'Network.requestWillBeSent',
      params: { ...image, requestId, type, timestamp: image.timestamp + after, request: { ...image.request, url } },
    });
    const failedAt = (requestId, type, at, errorText) => ({
      method: 'Network.loadingFailed',
      params: { requestId, timestamp: image.timestamp + at, type, errorText, canceled: false },
    });
    const REFUSED = 'https://satbench.test:9/gone.js';
    const CORS = 'https://satbench.test/cors.json';
    const withFailures = [
      ...events,
      asked('f.1', REFUSED, 'Script', 0.001),
      asked('f.2', CORS, 'Fetch', 0.002),
      {
        method: 'Network.responseReceived',
        params: {
          ...imageResponse,
          requestId: 'f.2',
          type: 'Fetch',
          response: { ...imageResponse.response, url: CORS, status: 404, statusText: 'Not Found' },
        },
      },
      failedAt('f.1', 'Script', 0.051, 'net::ERR_CONNECTION_REFUSED'),
      failedAt('f.2', 'Fetch', 0.2, 'net::ERR_FAILED'),
    ];
    const built = buildHar(withFailures, { navigation: record.navigation, satbench: SATBENCH });
    const entryOf = (url) => built.log.entries.find((e) => e.request.url === url);

    it("is kept: status 0 and DevTools' _error, no connection, its time blocked; after a response, that response", () => {
      assert.equal(
        built.log.entries.length,
        buildHar(events, { navigation: record.navigation }).log.entries.length + 2,
      );
      const refused = entryOf(REFUSED);
      assert.equal(refused.response.status, 0);
      assert.equal(refused.response._error, 'net::ERR_CONNECTION_REFUSED');
      assert.equal(refused.response.httpVersion, '');
      assert.equal(refused.connection, undefined);
      assert.equal(refused._connectionId, undefined);
      assert.equal(refused.serverIPAddress, '');
      close(refused.timings.blocked, 50, 0.01, 'blocked from when it was asked for until it failed');
      assert.equal(refused.time, refused.timings.blocked);
      for (const k of ['dns', 'connect', 'ssl']) assert.equal(refused.timings[k], -1, k);
      const image = built.log.entries.find((e) => e._resourceType === 'image');
      close(
        Date.parse(refused.startedDateTime) - Date.parse(image.startedDateTime),
        1,
        1,
        'asked for 1 ms after the image',
      );
      const cors = entryOf(CORS);
      assert.equal(cors.response.status, 404);
      assert.equal(cors.response._error, 'net::ERR_FAILED');
      assert.ok(cors.timings.wait > 0 && cors.timings.receive >= 0);
      assert.equal(cors._connectionId, image._connectionId);
      // the others as they were
      assert.ok(
        built.log.entries.filter((e) => ![REFUSED, CORS].includes(e.request.url)).every((e) => !e.response._error),
      );
    });

    it('passes the HAR 1.2 schema check', () => {
      checkHar(built, 'a HAR with failed requests');
    });

    it('a request still in flight when the HAR is built is kept as DevTools keeps it: status 0, pending, blocked until then', () => {
      const STUCK = 'https://satbench.test/stuck.js';
      const last = Math.max(...withFailures.map((e) => e.params.timestamp ?? -Infinity));
      const har = buildHar([...withFailures, asked('p.1', STUCK, 'Script', 0.003)], {
        navigation: record.navigation,
      });
      assert.equal(har.log.entries.length, built.log.entries.length + 1, 'chrome-har alone drops it');
      const stuck = har.log.entries.find((e) => e.request.url === STUCK);
      assert.deepEqual([stuck.response.status, stuck.response._error, stuck.connection], [0, PENDING, undefined]);
      close(stuck.timings.blocked, (last - image.timestamp - 0.003) * 1000, 0.01, 'blocked until the last event');
      checkHar(har, 'a HAR with a pending request');
      // a request that ended is not pending, and nothing is added without one
      assert.equal(closePending(withFailures), withFailures);
    });

    it('import-har lists it under missing with its error (there is no body to replay), and keeps the rest', () => {
      const withContent = structuredClone(built);
      for (const e of withContent.log.entries)
        if (e.response.content.size > 0) e.response.content.text = 'x'.repeat(e.response.content.size);
      const { archive } = importedArchive(withContent, 'run.har');
      assert.deepEqual(archive.missing, [
        { method: 'GET', url: REFUSED, reason: 'no response (net::ERR_CONNECTION_REFUSED)' },
        { method: 'GET', url: CORS, reason: 'failed: net::ERR_FAILED' },
      ]);
      assert.equal(archive.entries.length, withContent.log.entries.length - 2);
    });
  });

  it('fetches the bodies after the load, base64 where DevTools gives it so, and counts the lost', async () => {
    const built = buildHar(loads[0].events, { navigation: loads[0].record.navigation });
    const asked = [];
    const cdp = {
      send: async (method, { requestId }) => {
        asked.push(method);
        const e = built.log.entries.find((x) => x._requestId === requestId);
        if (e.request.url.endsWith('.css')) throw new Error('No resource with given identifier found');
        return e.request.url.endsWith('.gif')
          ? { body: 'R0lGODlh', base64Encoded: true }
          : { body: `body of ${e.request.url}`, base64Encoded: false };
      },
    };
    assert.deepEqual(await addContent(built, cdp), { lost: 1, late: 0 });
    const content = (end) => built.log.entries.find((e) => e.request.url.endsWith(end)).response.content;
    assert.deepEqual([content('.gif').text, content('.gif').encoding], ['R0lGODlh', 'base64']);
    assert.deepEqual(
      [content('/').text, content('/').encoding],
      [`body of ${loads[0].record.navigation.name}`, undefined],
    );
    assert.equal(content('.css').text, undefined);
    assert.equal(content('.css').comment, 'body no longer held by DevTools (No resource with given identifier found)');
    assert.ok(asked.every((m) => m === 'Network.getResponseBody'));
    // the size stays the decoded bytes DevTools counted (chrome-har's own body option adds the text's length to it)
    assert.equal(content('/').size, loads[0].record.navigation.decodedBodySize);
  });

  it('a body fetch that overruns its bound: the HAR is written with the bodies had by then, the others said to be late', async () => {
    const { events, record } = loads[0];
    const g = har({ satbench: SATBENCH, content: true, contentMs: 100 });
    g.events.push(...events);
    const asked = [];
    // DevTools answers two bodies, then hangs on the third
    const cdp = {
      send: (method, { requestId }) => {
        asked.push(requestId);
        return asked.length <= 2 ? Promise.resolve({ body: 'x', base64Encoded: false }) : new Promise(() => {});
      },
    };
    const started = Date.now();
    const bound = new Promise((resolve) => setTimeout(resolve, 2000, 'still fetching after 2 s'));
    const built = await Promise.race([g.stop({ cdp, record }), bound]);
    assert.notEqual(built, 'still fetching after 2 s');
    assert.ok(Date.now() - started < 1000, `${Date.now() - started} ms`);
    checkHar(built, 'the HAR');
    const bodies = built.log.entries.filter((e) => e.response.content.size > 0).map((e) => e.response.content);
    assert.deepEqual(
      bodies.map((c) => c.text),
      bodies.map((_, i) => (i < 2 ? 'x' : undefined)),
    );
    const late = bodies.slice(2);
    assert.ok(late.length > 0 && late.every((c) => c.comment === 'body not fetched within 100 ms after the load'));
    assert.equal(asked.length, 3, 'no body asked for after the bound');
    assert.equal(built.log.pages[0].comment, `${late.length} response bodies not fetched within 100 ms after the load`);
    // the run keeps it: written into its file as any HAR
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-har-late-'));
    try {
      const rec = { ok: true, har: built };
      storeRunHar(rec, dir, SCENARIO, 1);
      const read = JSON.parse(zlib.gunzipSync(fs.readFileSync(path.join(dir, rec.har))));
      assert.equal(read.log.entries.length, built.log.entries.length);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("declares its bound after the load, within the browser's kill bound: the body fetching's, with --har-content", () => {
    assert.equal(afterLoadMs(gatherersFor({ har: { satbench: SATBENCH } })), 0);
    assert.equal(afterLoadMs(gatherersFor({ har: { satbench: SATBENCH, content: true } })), CONTENT_MS);
    assert.equal(har({ content: true, contentMs: 300 }).afterLoadMs, 300);
  });

  it('is gathered only when asked (a run with a results folder), and records from before the navigation', async () => {
    assert.deepEqual(
      gatherersFor().map((g) => g.key),
      ['connections', 'cache_use', 'machine'],
    );
    assert.deepEqual(
      gatherersFor({ har: { satbench: SATBENCH } }).map((g) => g.key),
      ['connections', 'cache_use', 'machine', 'har'],
    );
    const listened = [];
    const sent = [];
    const g = har({ satbench: SATBENCH });
    await g.start({ cdp: { on: (m) => listened.push(m), send: async (m) => sent.push(m) } });
    assert.ok(listened.includes('Network.requestWillBeSent') && listened.includes('Page.loadEventFired'));
    assert.deepEqual(sent, ['Page.enable']);
  });
});

describe("a run's HAR file (har-file.js)", () => {
  let dir;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-har-file-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('is DIR/har/SCENARIO-runN.har.gz, gzip of the HAR, named in the record relative to DIR', () => {
    const rec = { ok: true, metrics: { plt_ms: 1 }, har: { log: { version: '1.2' } } };
    storeRunHar(rec, dir, SCENARIO, 3);
    assert.equal(rec.har, 'har/geo_0_h3_kepler-run3.har.gz');
    assert.equal(rec.har, harPathOf(SCENARIO, 3));
    assert.deepEqual(JSON.parse(zlib.gunzipSync(fs.readFileSync(path.join(dir, rec.har)))), {
      log: { version: '1.2' },
    });
    assert.equal(rec.not_captured, undefined);
  });

  it('cannot be written: the record keeps its timings, har is null and not_captured says why', () => {
    fs.writeFileSync(path.join(dir, 'har'), 'a file where the folder goes');
    const rec = { ok: true, metrics: { plt_ms: 1 }, har: { log: {} }, not_captured: { other: 'x' } };
    storeRunHar(rec, dir, SCENARIO, 1);
    assert.equal(rec.har, null);
    assert.deepEqual(rec.metrics, { plt_ms: 1 });
    assert.equal(rec.not_captured.other, 'x');
    assert.equal(
      rec.not_captured.har,
      `write: ${path.join(dir, 'har/geo_0_h3_kepler-run1.har.gz')}: writing it failed (${path.join(dir, 'har')} is a file, expected a folder); nothing was written`,
    );
  });

  it('a load without a HAR (none gathered, or its gatherer failed) writes nothing', () => {
    const rec = { ok: true, har: null, not_captured: { har: 'stop: no page among the DevTools events' } };
    storeRunHar(rec, dir, SCENARIO, 1);
    assert.deepEqual(fs.readdirSync(dir), []);
    assert.equal(rec.not_captured.har, 'stop: no page among the DevTools events');
  });
});
