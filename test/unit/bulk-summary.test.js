// Bulk groups in the summary (curve, objectives, PEP ratio) and the table `bulk` prints.
import assert from 'node:assert/strict';
import { formatBulkSummary } from '../../harness/bulk/summary-table.js';
import { summarize } from '../../harness/analysis/summary.js';

describe('bulk: summary', () => {
  const rec = (protocol, run, bins, extra = {}) => ({
    kind: 'bulk',
    scenario: { profile: 'quic4sat-medium', loss_pct: null, protocol, size_bytes: 100e6 },
    run,
    ok: true,
    error: null,
    link_rate_mbps: 50,
    goodput: { bin_ms: 1000, bins },
    metrics: { time_to_2mb_ms: 2000 * bins.length, bytes_at_1s: bins[0] },
    ...extra,
  });
  const records = [
    rec('quic', 1, [1e6, 2e6]),
    rec('quic', 2, [1e6, 2e6]),
    rec('quic-pep', 1, [2e6, 4e6]),
    rec('quic-pep', 2, [2e6, 4e6]),
    { ...rec('quic-pep', 3, []), ok: false, error: 'boom', metrics: null, goodput: null },
    {
      scenario: { profile: 'geo', loss_pct: 0, protocol: 'h1', site: 'kepler' },
      run: 1,
      ok: true,
      metrics: { plt_ms: 1 },
    },
  ];
  const groups = summarize(records); // curves, objectives and PEP ratios come with the statistics

  it('adds the curve, the objectives and the PEP ratio to bulk groups only', () => {
    const pageload = groups.find((g) => !g.kind);
    assert.ok(!('curve' in pageload), 'page-load groups keep their shape');
    const quic = groups.find((g) => g.kind === 'bulk' && g.scenario.protocol === 'quic');
    const pep = groups.find((g) => g.kind === 'bulk' && g.scenario.protocol === 'quic-pep');
    assert.deepEqual(quic.curve.mean_bytes, [1e6, 3e6]);
    assert.equal(quic.metrics.bytes_at_1s.median, 1e6);
    assert.equal(quic.link_rate_mbps, 50);
    assert.deepEqual(pep.vs_no_pep.ratio, [2, 2]);
    assert.equal(pep.vs_no_pep.protocol, 'quic');
    assert.equal(pep.failed, 1);
    assert.equal(pep.objectives.scenario, 'medium');
    // 2 MB in 4 s twice and one failed run: the median misses 3 s by 1 s
    assert.deepEqual(pep.objectives.results[0], {
      bytes: 2e6,
      limit_s: 3,
      median_s: 4,
      met: false,
      runs_met: 0,
      runs: 3,
      over_s: 1,
    });
  });

  it('prints a table of the medians', () => {
    const text = formatBulkSummary({ groups });
    assert.match(text, /quic-pep/);
    assert.match(text, /2MB≤3s missed/);
    assert.equal(text.split('\n').length, 3);
  });
});
