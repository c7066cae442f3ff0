import assert from 'node:assert/strict';
import { originStats, runOriginTimes } from '../../harness/kinds/pageload-origins.js';
import { pageload } from '../../harness/kinds/pageload.js';
import { renderReport } from '../../harness/report/html.js';

// Resource Timing entries as Chromium gives them (ms from navigation start).
const entry = (name, { dns = 0, connect = 0, tls = 0, at = 100 } = {}) => ({
  name,
  domainLookupStart: at,
  domainLookupEnd: at + dns,
  connectStart: at + dns,
  secureConnectionStart: tls ? at + dns + connect - tls : 0,
  connectEnd: at + dns + connect,
});

const run = (n, { dnsCdn, unmatched = [] }) => ({
  ok: true,
  scenario: { profile: 'geo', loss_pct: 0, protocol: 'h2', site: '/a' },
  run: n,
  archive: { hosts: 2, dns: 'gw' },
  navigation: entry('https://www.example.test/', { dns: 600, connect: 1200, tls: 600, at: 0 }),
  resources: [
    entry('https://www.example.test/a.css'), // the document's connection: nothing paid
    entry('https://cdn.example.test/x.js?v=1', { dns: dnsCdn, connect: 1180, tls: 590 }),
    entry('https://cdn.example.test/y.js', { dns: 0, connect: 0 }),
  ],
  connections: { 'https://www.example.test': 1, 'https://cdn.example.test': n },
  origin_log: { unmatched },
});

describe("a replayed archive's origins", () => {
  it('takes each origin its DNS, connect and TLS times once per run', () => {
    assert.deepEqual(runOriginTimes(run(1, { dnsCdn: 590 })), {
      'https://www.example.test': { dns_ms: 600, connect_ms: 1200, tls_ms: 600 },
      'https://cdn.example.test': { dns_ms: 590, connect_ms: 1180, tls_ms: 590 },
    });
  });

  it('gives per-origin medians over ok runs, and every unmatched request once', () => {
    const failed = { ...run(4, { dnsCdn: 9999 }), ok: false };
    const stats = originStats([
      run(1, { dnsCdn: 580 }),
      run(2, { dnsCdn: 600, unmatched: ['https://cdn.example.test/gone'] }),
      run(3, { dnsCdn: 620, unmatched: ['https://cdn.example.test/gone'] }),
      failed,
    ]);
    assert.deepEqual(stats.origins, [
      { origin: 'https://www.example.test', runs: 3, dns_ms: 600, connect_ms: 1200, tls_ms: 600, connections: 1 },
      { origin: 'https://cdn.example.test', runs: 3, dns_ms: 600, connect_ms: 1180, tls_ms: 590, connections: 2 },
    ]);
    assert.deepEqual(stats.unmatched, { requests: ['https://cdn.example.test/gone'], runs: 2 });
  });

  it('puts them in summary groups of replays only, and the report shows them', () => {
    const recs = [run(1, { dnsCdn: 580 }), run(2, { dnsCdn: 600, unmatched: ['https://cdn.example.test/gone'] })];
    const [replay] = pageload.complete([{ group: { scenario: recs[0].scenario }, records: recs }]);
    assert.equal(replay.origins.origins.length, 2);
    const plain = { ...recs[0], archive: undefined };
    const [site] = pageload.complete([{ group: { scenario: {} }, records: [plain] }]);
    assert.equal(site.origins, undefined);
    const html = renderReport({
      meta: {},
      groups: [{ ...replay, runs: 2, failed: 0, metrics: {} }],
    });
    assert.match(html, /<section id="origins">/);
    assert.match(html, /https:\/\/cdn\.example\.test<\/td><td class="num">2<\/td><td class="num">590<\/td>/);
    assert.match(html, /Unmatched requests .* in 1 run\(s\): <code>https:\/\/cdn\.example\.test\/gone<\/code>/);
  });
});
