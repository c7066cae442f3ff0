import { strict as assert } from 'node:assert';
import { runGatherers, gatherersFor, afterLoadMs } from '../../harness/pageload/gather/index.js';

describe('gatherers', () => {
  const ok = (key, value) => ({ key, start: () => {}, stop: () => value });
  const broken = (phase) => ({
    key: 'broken',
    [phase]: () => {
      throw new Error('trace buffer lost\nstack');
    },
  });

  it("puts each gatherer's result under its key", async () => {
    const record = {};
    const gs = [ok('a', 1), ok('b', { x: 2 })];
    await runGatherers(gs, 'start', {}, record);
    await runGatherers(gs, 'stop', {}, record);
    assert.deepEqual(record, { a: 1, b: { x: 2 } });
  });

  it('a failing gatherer leaves its field null and says why; the others still run', async () => {
    for (const phase of ['start', 'stop']) {
      const record = {};
      const gs = [broken(phase), ok('after', 3)];
      await runGatherers(gs, 'start', {}, record);
      await runGatherers(gs, 'stop', {}, record);
      assert.equal(record.broken, null);
      assert.deepEqual(record.not_captured, { broken: `${phase}: trace buffer lost` });
      assert.equal(record.after, 3);
    }
  });

  it('every load counts its connections and its cache use and records the machine’s CPU load; with --visual the visual gatherer too', () => {
    assert.deepEqual(
      gatherersFor().map((g) => g.key),
      ['connections', 'cache_use', 'machine'],
    );
    assert.deepEqual(
      gatherersFor({ visual: true }).map((g) => g.key),
      ['connections', 'cache_use', 'machine', 'visual'],
    );
    assert.equal(afterLoadMs(gatherersFor()), 0);
    assert.ok(afterLoadMs(gatherersFor({ visual: true })) > 5000, 'the wait after the load counts towards the bound');
  });
});
