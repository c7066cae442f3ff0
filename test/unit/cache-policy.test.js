import assert from 'node:assert/strict';
import { parseCachePolicy, sitePolicy, cacheControl } from '../../harness/core/cache-policy.js';
import { UsageError } from '../../harness/core/errors.js';
import { benchInput } from '../../harness/cli/bench.js';
import { checkBench } from '../../harness/cli/bench-plan.js';

describe('cache policy (bench --cache)', () => {
  it('takes the four policies and refuses anything else in one line', () => {
    for (const p of ['none', 'revalidate', 'max-age=0', 'max-age=600', 'immutable'])
      assert.equal(parseCachePolicy(p), p);
    for (const bad of [
      '',
      'max-age',
      'max-age=',
      'max-age=-1',
      'max-age=1.5',
      'max-age=12345678901',
      'no-store',
      'NONE',
    ])
      assert.throws(
        () => parseCachePolicy(bad),
        (e) =>
          e instanceof UsageError &&
          e.message === `--cache: expected none, revalidate, max-age=SECONDS or immutable, got ${JSON.stringify(bad)}`,
        bad,
      );
  });

  it("defaults to what the site says: kepler's revalidation, an archive's recorded headers, else the origin's own", () => {
    assert.equal(sitePolicy('kepler'), 'revalidate');
    assert.equal(sitePolicy('kuhn-a'), null, "the origin's own");
    assert.equal(sitePolicy('/srv/my-site'), null);
    assert.equal(sitePolicy('/a', { archive: true }), null);
    assert.equal(sitePolicy('kepler', { given: 'immutable' }), 'immutable');
    assert.equal(sitePolicy('/a', { given: 'max-age=5', archive: true }), 'max-age=5');
  });

  it('writes the Cache-Control our origin writes (sites/origin/src/cache.rs)', () => {
    assert.equal(cacheControl('none'), 'no-store');
    assert.equal(cacheControl('revalidate'), 'no-cache');
    assert.equal(cacheControl('max-age=600'), 'max-age=600');
    assert.equal(cacheControl('immutable'), 'max-age=31536000, immutable');
  });

  it('bench --cache reaches the plan; a bad value is refused before anything runs', async () => {
    const base = { preset: 'quick', link: 'auto', seed: '1', timeout: '120', 'cpu-slowdown': '1', device: 'desktop' };
    const given = benchInput({ ...base, cache: 'max-age=600' });
    assert.equal(given.settings.cache, 'max-age=600');
    assert.equal(benchInput(base).settings.cache, null, 'none given: the site decides');
    const plan = await checkBench(given.matrix, given.settings, { congestionControls: ['cubic'] });
    assert.equal(plan.settings.cache, 'max-age=600');
    const bad = benchInput({ ...base, cache: 'forever' });
    await assert.rejects(
      checkBench(bad.matrix, bad.settings, { congestionControls: ['cubic'] }),
      /^UsageError: --cache: /,
    );
  });
});
