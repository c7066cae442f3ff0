// The bytes of a browser download, binned from the DevTools events Chromium sent.
import assert from 'node:assert/strict';
import { browserDownload } from '../../harness/bulk/browser.js';

const near = (a, b, eps = 1e-9) => assert.ok(Math.abs(a - b) <= eps, `${a} ≉ ${b}`);

describe('bulk: a browser download from DevTools events', () => {
  const pageUrl = 'https://satbench.test/bulk.html';
  const fileUrl = 'https://satbench.test/size-2000.bin';
  const events = (extra = {}) => ({
    requests: [
      { id: 'p', url: pageUrl, ts: 10 },
      { id: 'f', url: fileUrl, ts: 10.1 },
    ],
    responses: {
      p: { protocol: 'h2', timing: { requestTime: 10.001, connectEnd: 60 } },
      f: { protocol: 'h2', status: 200 },
    },
    data: [
      ['f', 10.15, 1000],
      ['f', 10.25, 1000],
      ['p', 10.05, 500],
    ],
    finished: { f: 10.26 },
    failed: {},
    ...extra,
  });

  it("bins the file's bytes from the page request", () => {
    const d = browserDownload(events(), { pageUrl, fileUrl, binMs: 100, sizeBytes: 2000 });
    assert.deepEqual(d.bins, [0, 1000, 1000]);
    assert.equal(d.bytes, 2000);
    assert.ok(d.complete);
    near(d.ttfb_ms, 150, 1e-6);
    near(d.duration_ms, 250, 1e-6);
    near(d.connect_ms, 61, 1e-6);
    near(d.file_request_ms, 100, 1e-6);
    assert.equal(d.protocol, 'h2');
    assert.equal(d.error, null);
  });

  it("starts at the page's requestTime when the network stack stamped it before requestWillBeSent", () => {
    // the request (and its connection) began 8 ms before the event's stamp:
    // a 30 ms connect must not read as 22 ms
    const e = events();
    e.responses.p.timing = { requestTime: 9.992, connectEnd: 30 };
    const d = browserDownload(e, { pageUrl, fileUrl, binMs: 100, sizeBytes: 2000 });
    near(d.connect_ms, 30, 1e-6);
    near(d.ttfb_ms, 158, 1e-6);
    near(d.file_request_ms, 108, 1e-6);
  });

  it('starts at the navigation when Chromium connected before the request it was given to', () => {
    // the loading predictor opened the connection at the navigation's start,
    // 6 ms before the request: connectEnd (24 ms after requestTime) hides it
    const e = { ...events(), navStart: 9.994 };
    e.responses.p.timing = { requestTime: 10, connectEnd: 24 };
    const d = browserDownload(e, { pageUrl, fileUrl, binMs: 100, sizeBytes: 2000 });
    near(d.connect_ms, 30, 1e-6);
    near(d.ttfb_ms, 156, 1e-6);
  });

  it('a timed download counts only its duration; the abort at its end is no failure', () => {
    const d = browserDownload(events({ failed: { f: { error: 'net::ERR_ABORTED', ts: 10.5 } } }), {
      pageUrl,
      fileUrl,
      binMs: 100,
      durationMs: 200,
    });
    assert.deepEqual(d.bins, [0, 1000]);
    assert.equal(d.bytes, 1000);
    assert.equal(d.error, null);
    assert.ok(d.complete);
  });

  it('a failure before the end is one', () => {
    const d = browserDownload(events({ failed: { f: { error: 'net::ERR_CONNECTION_RESET', ts: 10.2 } } }), {
      pageUrl,
      fileUrl,
      binMs: 100,
      durationMs: 1000,
    });
    assert.match(d.error, /ERR_CONNECTION_RESET/);
    assert.equal(d.complete, false);
    const sized = browserDownload(
      events({ data: [['f', 10.15, 1000]], failed: { f: { error: 'net::ERR_ABORTED', ts: 10.2 } } }),
      { pageUrl, fileUrl, binMs: 100, sizeBytes: 2000 },
    );
    assert.match(sized.error, /ERR_ABORTED/);
    assert.equal(
      browserDownload({ ...events(), requests: [] }, { pageUrl, fileUrl, binMs: 100 }).error,
      'the download page was not requested',
    );
  });
});
