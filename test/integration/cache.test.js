// bench --cache, for real: a repeat view (Chromium started again on the same
// profile) over our origin. With `revalidate` (no-cache) the second load asks
// about every object with a conditional request and gets 304s; with
// `max-age=600` it takes every object from the disk cache without a request.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { satbench, SHORT, records, tinySite, writeProfile, leftBehind } from './helpers.js';
import { isFavicon } from '../../harness/pageload/load.js';

const outDir = (what) => path.join(fs.mkdtempSync(path.join(os.tmpdir(), `satbench-cache-${what}-`)), 'r');

// The page's own objects (the favicon aside): the document and its resources.
const objects = (rec) => [rec.navigation, ...rec.resources.filter((r) => !isFavicon(r))];

async function repeatView(cache, protocols, { origin = 'rust' } = {}) {
  const out = outDir(cache);
  const r = await satbench(
    [
      ...['bench', '--profile', writeProfile(SHORT), '--site', tinySite(), '--cache', cache, '--origin', origin],
      ...['--protocol', protocols, '--view', 'repeat', '-n', '1', '--out', out],
    ],
    { timeoutMs: 300000 },
  );
  assert.equal(r.code, 0, r.stderr);
  const recs = records(out);
  for (const rec of recs) assert.equal(rec.ok, true, rec.error);
  assert.deepEqual(await leftBehind(r.made), [], 'a run left these behind');
  // each run's pair: [first view, repeat view]
  return recs.reduce(
    (pairs, rec, i) => (i % 2 ? [...pairs.slice(0, -1), [pairs.at(-1)[0], rec]] : [...pairs, [rec]]),
    [],
  );
}

describe('cache policy (integration, real Chromium)', function () {
  it('revalidate: the repeat view revalidates every object, the origin answering 304', async () => {
    // h1 too: Chromium keeps no protocol with an HTTP/1.1 response it cached (load.js checkProtocol)
    for (const [first, second] of await repeatView('revalidate', 'h1,h2,h3')) {
      const n = objects(second).length;
      const what = `${second.scenario.protocol}: ${JSON.stringify(second.cache_use)} ${JSON.stringify(second.origin_log)}`;
      assert.ok(n >= 3, what);
      assert.deepEqual(first.cache_use, { from_cache: 0, revalidated: 0, fetched: first.cache_use.fetched }, what);
      assert.ok(first.cache_use.fetched >= n, what);
      assert.equal(second.cache_use.revalidated, n, what);
      assert.equal(second.cache_use.from_cache, 0, what);
      assert.equal(second.origin_log.statuses[304], n, what);
      assert.equal(second.origin_log.statuses[200] ?? 0, 0, what);
      assert.equal(second.cache_use.fetched, second.origin_log.statuses[404] ?? 0, `only the favicon's 404: ${what}`);
      // what went over the wire, as the origin saw it
      const wire = { h1: 'http/1.1', h2: 'h2', h3: 'h3' }[second.scenario.protocol];
      assert.deepEqual(Object.keys(second.origin_log.protocols), [wire], what);
    }
  });

  it('H2O matches: revalidate makes every object of the repeat view a 304 there too', async () => {
    for (const [, second] of await repeatView('revalidate', 'h2', { origin: 'h2o' })) {
      const n = objects(second).length;
      const what = `${JSON.stringify(second.cache_use)} ${JSON.stringify(second.origin_log)}`;
      assert.equal(second.cache_use.revalidated, n, what);
      assert.equal(second.origin_log.statuses[304], n, what);
      assert.equal(second.origin_log.statuses[200] ?? 0, 0, what);
    }
  });

  it('max-age=600: the repeat view takes every object from the cache without a request', async () => {
    for (const [first, second] of await repeatView('max-age=600', 'h1,h2')) {
      const n = objects(second).length;
      const what = `${JSON.stringify(second.cache_use)} ${JSON.stringify(second.origin_log)}`;
      assert.ok(first.cache_use.fetched >= n, what);
      assert.equal(second.cache_use.from_cache, n, what);
      assert.equal(second.cache_use.revalidated, 0, what);
      assert.equal(second.origin_log.statuses[200] ?? 0, 0, what);
      assert.equal(second.origin_log.statuses[304] ?? 0, 0, what);
      assert.equal(second.cache_use.fetched, second.origin_log.statuses[404] ?? 0, `only the favicon's 404: ${what}`);
      for (const o of objects(second)) assert.equal(o.transferSize, 0, `${o.name} came over the network`);
    }
  });
});
