import assert from 'node:assert/strict';
import { summarize } from '../../harness/analysis/summary.js';
import { groupKey, kindOf } from '../../harness/kinds/index.js';
import { scenarioKey, scenarioLabel } from '../../harness/kinds/pageload.js';
import { scenarios, makeRecords } from '../fixtures.js';

describe('summary', () => {
  it('gives every group n, failed runs and per metric median, mean, p10, p90, min, max, ci95', () => {
    const list = scenarios({ profiles: ['geo'] });
    const recs = makeRecords(list, { runs: 10, fail: [[0, 4, 'timeout']] });
    const groups = summarize(recs, { seed: 3 });
    assert.equal(groups.length, 2);
    const g = groups[0];
    assert.deepEqual(g.scenario, list[0]);
    assert.equal(g.runs, 10);
    assert.equal(g.failed, 1);
    assert.deepEqual(g.failures, [{ run: 4, error: 'timeout' }]);
    for (const m of ['response_start_ms', 'fcp_ms', 'plt_ms']) {
      const d = g.metrics[m];
      assert.equal(d.n, 9);
      assert.deepEqual(Object.keys(d), ['n', 'median', 'mean', 'p10', 'p90', 'min', 'max', 'ci95']);
      assert.ok(d.min <= d.p10 && d.p10 <= d.median && d.median <= d.p90 && d.p90 <= d.max);
      assert.ok(d.ci95[0] <= d.median && d.median <= d.ci95[1]);
    }
    assert.deepEqual(summarize(recs, { seed: 3 }), groups, 'same data and seed, same summary');
  });

  it('keeps records of other kinds apart and summarises whatever numbers they carry', () => {
    const page = makeRecords(scenarios({ profiles: ['geo'], protocols: ['h3'] }), { runs: 3 });
    const bulk = [1, 2, 3].map((run) => ({
      kind: 'bulk',
      scenario: { profile: 'geo', protocol: 'tcp-pep', size_mb: 10 },
      run,
      ok: true,
      metrics: { goodput_mbps: 15 + run, note: 'x' },
    }));
    const groups = summarize([...page, ...bulk, { ...bulk[0], run: 4, ok: false, error: 'reset', metrics: null }]);
    assert.equal(groups.length, 2);
    assert.equal(groups[0].kind, undefined, "page-load groups keep summary.json's shape");
    const b = groups[1];
    assert.equal(b.kind, 'bulk');
    assert.equal(b.runs, 4);
    assert.equal(b.failed, 1);
    assert.deepEqual(Object.keys(b.metrics), ['goodput_mbps']);
    assert.equal(b.metrics.goodput_mbps.median, 17);
    assert.equal(kindOf(page[0]).name, 'pageload');
    assert.equal(groupKey('pageload', page[0].scenario), scenarioKey(page[0].scenario));
    assert.equal(groupKey('bulk', { b: 1, a: 2 }), groupKey('bulk', { a: 2, b: 1 }));
    assert.equal(
      scenarioLabel({ profile: 'geo', loss_pct: 1, protocol: 'h3', site: 'kepler' }),
      'geo loss 1 % h3 kepler',
    );
  });
});
