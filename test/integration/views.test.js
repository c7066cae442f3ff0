// bench --view repeat and revisit, for real: Chromium in the client
// namespace, a short-delay link, the page loaded twice per run. A repeat
// view's second load comes from the disk cache where the origin lets it
// (H2O: Last-Modified, no Cache-Control, so a file modified long ago is
// heuristically fresh; our origin says no-store); a revisit's second load
// opens new connections.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { satbench, SHORT, records, tinySite, writeProfile, leftBehind } from './helpers.js';
import { isFavicon } from '../../harness/pageload/load.js';
import { scenarioKey } from '../../harness/kinds/pageload.js';

const outDir = (what) => path.join(fs.mkdtempSync(path.join(os.tmpdir(), `satbench-views-${what}-`)), 'r');

// A tiny site whose files were last modified 30 days ago: a cache may keep
// them fresh for 3 days without asking (RFC 9111 §4.2.2, 10 % of their age).
function oldSite() {
  const dir = tinySite();
  const then = new Date(Date.now() - 30 * 86400e3);
  for (const f of fs.readdirSync(dir)) fs.utimesSync(path.join(dir, f), then, then);
  return dir;
}

// The page's own objects (the favicon aside): the document and its resources.
const objects = (rec) => [rec.navigation, ...rec.resources.filter((r) => !isFavicon(r))];

// A run's pair: its first view and its second load, checked as linked.
function pairOf(out, view) {
  const recs = records(out);
  assert.equal(recs.length, 2, JSON.stringify(recs.map((r) => r.scenario)));
  const [first, second] = recs;
  for (const r of recs) assert.equal(r.ok, true, `${scenarioKey(r.scenario)}: ${r.error}`);
  assert.equal(first.scenario.view, view);
  assert.equal(first.scenario.first_view, true);
  assert.equal(second.scenario.view, view);
  assert.equal(second.scenario.first_view, undefined);
  assert.deepEqual(first.paired_with, { scenario: second.scenario, run: 1 });
  assert.deepEqual(second.paired_with, { scenario: first.scenario, run: 1 });
  assert.notEqual(first.har, second.har, 'each load its own HAR');
  return { first, second };
}

describe('views (integration, real Chromium)', function () {
  it('repeat: Chromium started again on the same profile loads a cacheable page from its disk cache', async () => {
    const out = outDir('repeat');
    const r = await satbench(
      [
        ...['bench', '--profile', writeProfile(SHORT), '--site', oldSite(), '--origin', 'h2o'],
        ...['--protocol', 'h2', '--view', 'repeat', '-n', '1', '--out', out],
      ],
      { timeoutMs: 240000 },
    );
    assert.equal(r.code, 0, r.stderr);
    const { first, second } = pairOf(out, 'repeat');
    // the first view fetched every object; the repeat view none: each came from the disk cache
    for (const o of objects(first)) assert.ok(o.transferSize > 0, `first view: ${o.name} ${o.transferSize}`);
    for (const o of objects(second)) {
      assert.equal(o.transferSize, 0, `repeat view: ${o.name} came over the network`);
      assert.ok(o.decodedBodySize > 0, `repeat view: ${o.name} has no body`);
    }
    // and the origin saw the page's objects once, in the first load
    assert.ok(first.origin_log.statuses[200] >= 3, JSON.stringify(first.origin_log));
    assert.equal(second.origin_log.statuses[200] ?? 0, 0, JSON.stringify(second.origin_log));
    assert.equal(second.origin_log.statuses[304] ?? 0, 0, 'nothing revalidated');
    assert.ok(fs.existsSync(path.join(out, second.har)));
    const summary = JSON.parse(fs.readFileSync(path.join(out, 'summary.json'), 'utf8'));
    assert.deepEqual(summary.meta.matrix.views, ['repeat']);
    assert.equal(summary.groups.length, 2);
    assert.match(fs.readFileSync(path.join(out, 'index.html'), 'utf8'), /repeat view vs first view/);
    assert.deepEqual(await leftBehind(r.made), [], 'a run left these behind');
  });

  it('revisit: the same Chromium, its connections closed, loads the page again over new connections', async () => {
    const out = outDir('revisit');
    const r = await satbench(
      [
        ...['bench', '--profile', writeProfile(SHORT), '--site', tinySite()],
        ...['--protocol', 'h2,h3', '--view', 'revisit', '-n', '1', '--out', out],
      ],
      { timeoutMs: 240000 },
    );
    assert.equal(r.code, 0, r.stderr);
    const recs = records(out);
    assert.equal(recs.length, 4);
    for (const [protocol, recsOf] of [
      ['h2', recs.slice(0, 2)],
      ['h3', recs.slice(2)],
    ]) {
      const [first, second] = recsOf;
      assert.equal(second.scenario.protocol, protocol);
      assert.equal(first.ok && second.ok, true, `${protocol}: ${first.error} ${second.error}`);
      assert.deepEqual(second.paired_with, { scenario: first.scenario, run: 1 });
      // none of the second load's connections is one of the first load's
      assert.ok(second.connection_reuse.connections >= 1, JSON.stringify(second.connection_reuse));
      assert.equal(second.connection_reuse.reused, 0, `${protocol}: ${JSON.stringify(second.connection_reuse)}`);
      // and the origin accepted a new connection during the second load
      assert.ok(second.handshakes.origin.connections >= 1, JSON.stringify(second.handshakes));
      // over h2 the document's request waited for the new connection's
      // handshake: most of a round trip (30 ms) after navigation start, more
      // than half of one; over a reused one it goes within a few ms.
      // Navigation Timing's connect times cannot tell: Chromium's preconnect
      // at navigation start opened the connection, and the request that took
      // it over shows connectStart = connectEnd. (Over h3 the resumed
      // handshake takes 0-RTT, so the request need not wait: 12 ms once.)
      if (protocol === 'h2')
        assert.ok(second.navigation.requestStart >= 15, `${protocol}: requestStart ${second.navigation.requestStart}`);
      // our origin says no-store: the second load asks for everything again
      assert.ok(second.origin_log.requests >= 3, JSON.stringify(second.origin_log));
    }
    assert.deepEqual(await leftBehind(r.made), [], 'a run left these behind');
  });
});
