import assert from 'node:assert/strict';
import { chromiumArgs, siteUrl } from '../../harness/browser/chromium.js';
import { checkProtocol, checkStatus, deriveMetrics } from '../../harness/pageload/load.js';
import { connectionsByOrigin } from '../../harness/pageload/gather/connections.js';
import { expandMatrix } from '../../harness/campaign/matrix.js';
import { summarize, bootstrapMedianCi } from '../../harness/analysis/summary.js';
import { renderReport, escapeHtml } from '../../harness/report/html.js';

const nav = (over = {}) => ({
  name: 'https://satbench.test/',
  nextHopProtocol: 'h3',
  responseStart: 240,
  loadEventStart: 900,
  domContentLoadedEventStart: 500,
  transferSize: 1000,
  encodedBodySize: 900,
  ...over,
});
const res = (n, proto = 'h3', scheme = 'https') =>
  Array.from({ length: n }, (_, i) => ({
    name: `${scheme}://satbench.test/r${i}`,
    nextHopProtocol: proto,
    transferSize: 10,
    encodedBodySize: 8,
  }));

describe('page-load runner decisions', () => {
  it('asks Chromium for the protocol of the run', () => {
    const h3 = chromiumArgs('h3', { userDataDir: '/tmp/u', spki: 'AAA=' });
    assert.ok(h3.includes('--origin-to-force-quic-on=satbench.test:443'));
    assert.ok(h3.includes('--ignore-certificate-errors-spki-list=AAA='));
    for (const flag of [
      '--no-sandbox',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--remote-debugging-pipe',
    ]) {
      assert.ok(h3.includes(flag), flag);
    }
    const h1 = chromiumArgs('h1', { userDataDir: '/tmp/u', spki: 'AAA=' });
    assert.ok(h1.includes('--disable-quic'));
    assert.ok(
      h1.some((a) => a.startsWith('--disable-features=HttpsUpgrades')),
      'h1 must not be upgraded to HTTPS',
    );
    assert.ok(!h1.some((a) => a.startsWith('--ignore-certificate-errors-spki-list')));
    assert.ok(chromiumArgs('h1s', { userDataDir: '/u', spki: 'A' }).includes('--disable-http2'));
    assert.ok(!chromiumArgs('h2', { userDataDir: '/u', spki: 'A' }).includes('--disable-http2'));
    assert.equal(siteUrl('h1'), 'http://satbench.test/');
    assert.equal(siteUrl('h3-pep'), 'https://satbench.test/');
  });

  it('fails a run whose document or a resource came back as an HTTP error', () => {
    const ok = (n) => res(n).map((r) => ({ ...r, responseStatus: 200 }));
    assert.deepEqual(checkStatus(nav({ responseStatus: 200 }), ok(3)), { ok: true, error: null });
    const favicon = { name: 'https://satbench.test/favicon.ico', initiatorType: 'other', responseStatus: 404 };
    assert.equal(
      checkStatus(nav({ responseStatus: 200 }), [...ok(3), favicon]).ok,
      true,
      'a missing favicon is not the page',
    );
    assert.equal(checkStatus(nav({ responseStatus: 0 }), ok(1)).ok, true, 'status 0: unknown, not an error');
    const r = checkStatus(nav({ responseStatus: 403 }), [
      ...ok(2),
      { ...ok(1)[0], name: 'https://satbench.test/s.css', responseStatus: 403 },
    ]);
    assert.equal(r.ok, false);
    assert.equal(r.error, 'HTTP error status: document 403; 1 resources (e.g. /s.css 403)');
  });

  it('accepts a run only when document and every resource used the protocol asked for', () => {
    const good = checkProtocol('h3', nav(), res(74));
    assert.equal(good.ok, true);
    assert.deepEqual(good.seen, { document: 'h3', resources: { h3: 74 } });
    const mixed = checkProtocol('h3', nav(), [...res(73), ...res(1, 'h2')]);
    assert.equal(mixed.ok, false);
    assert.match(mixed.error, /1 of 74 resources not over h3 \(e\.g\. https:\/\/satbench\.test\/r0 over h2\)/);
    assert.deepEqual(mixed.seen.resources, { h3: 73, h2: 1 });
    const doc = checkProtocol('h3', nav({ nextHopProtocol: 'h2' }), res(2));
    assert.match(doc.error, /document over h2, not h3/);
  });

  it("counts the connections Chromium opened per origin from the responses' connection ids", () => {
    const responses = [
      { url: 'https://www.example.test/', connectionId: 7 },
      { url: 'https://www.example.test/a.css', connectionId: 7 },
      { url: 'https://cdn.example.test/x.js?v=1', connectionId: 9 },
      { url: 'https://cdn.example.test/y.js', connectionId: 12 },
      { url: 'http://www.example.test:8080/z', connectionId: 3 },
      { url: 'https://www.example.test/cached.png', connectionId: 0 },
      { url: 'data:image/png;base64,AAAA', connectionId: 0 },
    ];
    assert.deepEqual(connectionsByOrigin(responses), {
      'https://www.example.test': 1,
      'https://cdn.example.test': 2,
      'http://www.example.test:8080': 1,
    });
    assert.deepEqual(connectionsByOrigin([]), {});
  });

  it('rejects an h1 run that was upgraded to HTTPS', () => {
    const upgraded = checkProtocol('h1', nav({ nextHopProtocol: 'http/1.1' }), res(3, 'http/1.1'));
    assert.equal(upgraded.ok, false);
    assert.match(upgraded.error, /not over http/);
    const cleartext = checkProtocol(
      'h1',
      nav({ name: 'http://satbench.test/', nextHopProtocol: 'http/1.1' }),
      res(3, 'http/1.1', 'http'),
    );
    assert.equal(cleartext.ok, true);
  });

  it('a second view over h1: a response from the cache or revalidated has no protocol, and counts as http/1.1 over http:', () => {
    const doc = nav({ name: 'http://satbench.test/', nextHopProtocol: '' });
    const cached = [...res(2, '', 'http'), ...res(1, 'http/1.1', 'http')];
    const second = checkProtocol('h1', doc, cached, { cached: true });
    assert.equal(second.ok, true, second.error);
    assert.deepEqual(second.seen, { document: '', resources: { '(none)': 2, 'http/1.1': 1 } });
    // not in a first view, not over https, not for another protocol
    assert.match(checkProtocol('h1', doc, cached).error, /document over an unknown protocol, not http\/1\.1/);
    assert.equal(checkProtocol('h1', nav({ nextHopProtocol: '' }), res(1, ''), { cached: true }).ok, false);
    assert.equal(checkProtocol('h3', nav({ nextHopProtocol: '' }), res(1, ''), { cached: true }).ok, false);
    assert.equal(checkProtocol('h1', doc, res(1, 'h2', 'http'), { cached: true }).ok, false);
  });

  it("derives the paper's metrics from the raw entries", () => {
    const m = deriveMetrics(
      nav(),
      [
        { name: 'first-paint', startTime: 600 },
        { name: 'first-contentful-paint', startTime: 610 },
      ],
      { startTime: 700 },
      res(2),
    );
    assert.equal(m.response_start_ms, 240);
    assert.equal(m.fcp_ms, 610);
    assert.equal(m.plt_ms, 900);
    assert.equal(m.lcp_ms, 700);
    assert.equal(m.resource_count, 2);
    assert.equal(m.transfer_bytes, 1020);
    assert.equal(m.connect_ms, null, 'no connection timing: no connect time');
    assert.equal(deriveMetrics(nav({ connectStart: 2.5, connectEnd: 614 }), [], null, []).connect_ms, 611.5);
    const withIcon = deriveMetrics(nav(), [], null, [
      ...res(2),
      { name: 'https://satbench.test/favicon.ico', initiatorType: 'other', nextHopProtocol: 'h3' },
    ]);
    assert.equal(withIcon.resource_count, 2);
    assert.equal(withIcon.favicon_seen, true);
  });
});

describe('matrix and summary', () => {
  it('expands the matrix run-major', () => {
    const items = expandMatrix({
      profiles: ['leo', 'geo'],
      losses: [0],
      protocols: ['h1', 'h3'],
      sites: ['kepler'],
      runs: 2,
    });
    assert.equal(items.length, 8);
    assert.deepEqual(
      items.slice(0, 4).map((x) => x.run),
      [1, 1, 1, 1],
    );
    assert.deepEqual(items[1].scenario, { profile: 'leo', loss_pct: 0, protocol: 'h3', site: 'kepler' });
  });

  it('summarises ok runs, counts failed ones, and gives the same interval for the same data', () => {
    const scenario = { profile: 'leo', loss_pct: 0, protocol: 'h3', site: 'kepler' };
    const records = [100, 110, 120, 130, 500].map((plt, i) => ({
      scenario,
      run: i + 1,
      ok: true,
      metrics: { plt_ms: plt },
    }));
    records.push({ scenario, run: 6, ok: false, error: 'timeout', metrics: null });
    const [g] = summarize(records);
    assert.equal(g.runs, 6);
    assert.equal(g.failed, 1);
    assert.deepEqual(g.failures, [{ run: 6, error: 'timeout' }]);
    assert.equal(g.metrics.plt_ms.median, 120);
    assert.equal(g.metrics.plt_ms.n, 5);
    assert.equal(g.metrics.plt_ms.min, 100);
    assert.deepEqual(
      bootstrapMedianCi([1, 2, 3, 4, 5, 6, 7], { seed: 4 }),
      bootstrapMedianCi([1, 2, 3, 4, 5, 6, 7], { seed: 4 }),
    );
    const [lo, hi] = g.metrics.plt_ms.ci95;
    assert.ok(lo <= 120 && 120 <= hi);
  });

  it('the report escapes every string that comes from input', () => {
    const scenario = { profile: 'leo', loss_pct: 0, protocol: 'h3', site: '<script>alert(1)</script>' };
    const html = renderReport({
      meta: { generated: 'now', seed: 1, link: 'linkem' },
      groups: summarize([{ scenario, run: 1, ok: false, error: '<b>x</b>' }]),
    });
    assert.ok(!html.includes('<script>alert(1)</script>'));
    assert.ok(html.includes('&lt;script&gt;alert(1)&lt;/script&gt;'));
    assert.ok(!html.includes('<b>x</b>'));
    assert.equal(escapeHtml(`"'&`), '&quot;&#39;&amp;');
  });
});
