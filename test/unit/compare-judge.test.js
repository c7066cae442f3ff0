// compare's judging (harness/analysis/compare/judge.js): a median against
// the budget's ceiling, floor and allowed slowdown, a scenario against its
// baseline with significance, and whole result sets, on hand-made data.
import assert from 'node:assert/strict';
import {
  groupsByKey,
  checkBudgetFitsResults,
  metricSide,
  medianChange,
  significanceAgainstBaseline,
  ceilingAndFloorFailures,
  slowdownVerdict,
  limitsVerdict,
  judgeMetric,
  compareResults,
} from '../../harness/analysis/compare/judge.js';
import { parseBudget } from '../../harness/analysis/compare/budget.js';
import { summarize } from '../../harness/analysis/summary.js';
import { scenarios, makeRecords } from '../fixtures.js';

// A loaded result set as compare gets it: runs and their summary, or (with
// `runs: false`) only the summary, as from a summary.json.
const resultSet = (records, { runs = true, name = 'p' } = {}) => ({
  path: name,
  source: name,
  records: runs ? records : null,
  summary: { meta: {}, groups: summarize(records) },
});

// A copy of `records` with one metric scaled (only where `only` says).
const scaled = (records, metric, factor, only = () => true) =>
  records.map((r) =>
    r.ok && only(r.scenario)
      ? { ...r, metrics: { ...r.metrics, [metric]: Math.round(r.metrics[metric] * factor * 10) / 10 } }
      : r,
  );

const side = (over) => ({ n: 20, median: 100, ci95: [95, 105], runs: 20, failed: 0, ...over });

describe('compare judging: one metric', () => {
  it('the change of medians, worse up for times and down for rates; none without a baseline median', () => {
    const slower = medianChange(100, 130, false);
    assert.equal(slower.ratio, 1.3);
    assert.ok(Math.abs(slower.change_pct - 30) < 1e-9 && Math.abs(slower.worse_pct - 30) < 1e-9);
    const lowerRate = medianChange(20, 15, true);
    assert.deepEqual(lowerRate, { ratio: 0.75, change_pct: -25, worse_pct: 25 });
    const none = { ratio: null, change_pct: null, worse_pct: null };
    assert.deepEqual(medianChange(0, 15, false), none);
    assert.deepEqual(medianChange(null, 15, false), none);
    assert.deepEqual(medianChange(10, null, false), none);
  });

  it('a side is the metric of a group, zero runs where it has none', () => {
    const group = { runs: 5, failed: 1, metrics: { plt_ms: { n: 4, median: 7, ci95: [6, 8] } } };
    assert.deepEqual(metricSide(group, 'plt_ms'), { n: 4, median: 7, ci95: [6, 8], runs: 5, failed: 1 });
    assert.deepEqual(metricSide({}, 'plt_ms'), { n: 0, median: null, ci95: null, runs: null, failed: 0 });
  });

  it('significance on runs: Mann–Whitney below alpha and worse; on summaries: intervals apart', () => {
    const base = Array.from({ length: 12 }, (_, i) => 100 + i);
    const slower = base.map((v) => v * 1.5);
    const bySamples = (current, higherIsBetter = false) =>
      significanceAgainstBaseline(side({ median: 105.5 }), side({ median: 158 }), [base, current], {
        alpha: 0.05,
        higherIsBetter,
      });
    const s = bySamples(slower);
    assert.equal(s.significant, true);
    assert.ok(s.p < 0.001);
    assert.match(s.test, /^Mann–Whitney U \(/);
    assert.equal(s.magnitude, 'large');
    assert.deepEqual(s.warnings, []);
    assert.equal(bySamples(slower, true).significant, false, 'higher is better: a rise is no worsening');
    assert.equal(bySamples(base).significant, false);
    const few = significanceAgainstBaseline(side(), side(), [base.slice(0, 4), slower.slice(0, 4)], {
      alpha: 0.05,
      higherIsBetter: false,
    });
    assert.match(few.warnings[0], /^fewer than 10 runs on a side \(4 vs 4\)/);

    const byIntervals = (current, over = {}) =>
      significanceAgainstBaseline(side(over), side({ ci95: current, ...over }), null, {
        alpha: 0.05,
        higherIsBetter: false,
      });
    assert.deepEqual(byIntervals([106, 110]), {
      p: null,
      test: '95 % intervals',
      cliffs_delta: null,
      magnitude: null,
      significant: true,
      warnings: [],
    });
    assert.equal(byIntervals([104, 110]).significant, false, 'overlapping');
    assert.deepEqual(byIntervals([106, 110], { n: 5 }).warnings, ['fewer than 10 runs on a side (5 vs 5)']);
    assert.equal(byIntervals(null).significant, null, 'no interval: no test');
    assert.equal(byIntervals(null).test, null);
  });

  it('a median against the ceiling and the floor', () => {
    const limits = { max_median: 7000, min_median: 1000 };
    assert.deepEqual(ceilingAndFloorFailures(7000, limits, 'plt_ms'), []);
    assert.deepEqual(ceilingAndFloorFailures(7000.4, limits, 'plt_ms'), [
      'median 7000 ms is over the ceiling of 7000 ms',
    ]);
    assert.deepEqual(ceilingAndFloorFailures(999, limits, 'transfer_bytes'), [
      'median 999 B is under the floor of 1000 B',
    ]);
    assert.deepEqual(ceilingAndFloorFailures(1e9, {}, 'plt_ms'), []);
  });

  it('a slowdown past the allowed fails when significant and warns when not', () => {
    const limits = { max_slowdown_pct: 10 };
    const times = { higherIsBetter: false };
    assert.deepEqual(slowdownVerdict(10, limits, { ...times, p: 0.001, significant: true }), {
      failures: [],
      warnings: [],
    });
    assert.deepEqual(slowdownVerdict(30, {}, { ...times, p: 0.001, significant: true }).failures, []);
    assert.deepEqual(slowdownVerdict(null, limits, { ...times, p: null, significant: null }).warnings, []);
    assert.deepEqual(slowdownVerdict(30, limits, { ...times, p: 0.0001, significant: true }).failures, [
      '30.0 % slower, over the 10 % allowed, and significant (p < 0.001)',
    ]);
    assert.deepEqual(slowdownVerdict(12.34, limits, { higherIsBetter: true, p: null, significant: true }).failures, [
      '12.3 % lower, over the 10 % allowed, and significant (by non-overlapping 95 % intervals)',
    ]);
    assert.deepEqual(slowdownVerdict(12, limits, { ...times, p: 0.2, significant: false }), {
      failures: [],
      warnings: ['12.0 % slower, over the 10 % allowed, but not significant (p = 0.200)'],
    });
    assert.deepEqual(slowdownVerdict(12, limits, { ...times, p: null, significant: null }).warnings, [
      '12.0 % slower, over the 10 % allowed, but not significant (the 95 % intervals overlap)',
    ]);
  });

  it('no current value fails; no baseline leaves only the ceiling and floor', () => {
    const limits = { max_slowdown_pct: 10, max_median: 50 };
    const worse = { worsePct: 40, higherIsBetter: false, p: 0.0005, significant: true, currentAllFailed: false };
    assert.deepEqual(limitsVerdict(side(), side({ n: 0, median: null }), limits, 'plt_ms', worse), {
      failures: ['no value in the current results'],
      warnings: [],
    });
    assert.deepEqual(
      limitsVerdict(side(), side({ n: 0, median: null, failed: 20 }), limits, 'plt_ms', {
        ...worse,
        currentAllFailed: true,
      }).failures,
      ['no successful run in the current results (20 of 20 failed)'],
    );
    assert.deepEqual(limitsVerdict(side({ n: 0 }), side({ median: 140 }), limits, 'plt_ms', worse), {
      failures: ['median 140 ms is over the ceiling of 50 ms'],
      warnings: ['no successful run in the baseline: only the ceiling and floor are checked'],
    });
    assert.deepEqual(limitsVerdict(side(), side({ median: 140 }), limits, 'plt_ms', worse).failures, [
      'median 140 ms is over the ceiling of 50 ms',
      '40.0 % slower, over the 10 % allowed, and significant (p < 0.001)',
    ]);
  });

  it('a metric of a scenario: a row with its sides, change, test and status; none where neither side has it', () => {
    const list = scenarios({ profiles: ['geo'], protocols: ['h3'] });
    const base = groupsByKey(resultSet(makeRecords(list, { runs: 12, seed: 1 })));
    const current = groupsByKey(resultSet(makeRecords(list, { runs: 12, seed: 2, scale: { plt_ms: 1.5 } })));
    const [key] = base.keys();
    const row = judgeMetric(
      key,
      base.get(key),
      current.get(key),
      'plt_ms',
      { max_slowdown_pct: 10 },
      {
        alpha: 0.05,
        withRuns: true,
      },
    );
    assert.deepEqual(Object.keys(row), [
      'key',
      'kind',
      'scenario',
      'label',
      'metric',
      'limits',
      'base',
      'current',
      'ratio',
      'change_pct',
      'worse_pct',
      'p',
      'test',
      'cliffs_delta',
      'magnitude',
      'significant',
      'warnings',
      'failures',
      'status',
    ]);
    assert.equal(row.label, 'geo loss 0 % h3 kepler');
    assert.equal(row.status, 'fail');
    assert.equal(row.base.n, 12);
    assert.ok(row.change_pct > 40 && row.change_pct === row.worse_pct);
    assert.equal(row.significant, true);
    assert.equal(
      judgeMetric(
        key,
        base.get(key),
        current.get(key),
        'goodput_mbps',
        { min_median: 1 },
        { alpha: 0.05, withRuns: true },
      ),
      null,
    );
  });
});

describe('compare judging: result sets', () => {
  const list = scenarios({ protocols: ['h1', 'h3'] });
  const A = makeRecords(list, { runs: 20, seed: 11 });

  it('groups a set by scenario with the finite values of its successful runs', () => {
    const records = [
      ...makeRecords(list.slice(0, 1), { runs: 2 }),
      { scenario: list[0], run: 3, ok: false, metrics: { plt_ms: 1 } },
      { scenario: list[0], run: 4, ok: true, metrics: { plt_ms: null, fcp_ms: 5 } },
    ];
    const groups = groupsByKey(resultSet(records));
    assert.equal(groups.size, 1);
    const [entry] = groups.values();
    assert.equal(entry.kind.name, 'pageload');
    assert.equal(entry.values.plt_ms.length, 2, 'failed runs and nulls left out');
    assert.equal(entry.values.fcp_ms.length, 3);
    assert.deepEqual(groupsByKey(resultSet(records, { runs: false })).get(groups.keys().next().value).values, {});
  });

  it('a budget must fit the results: its metrics exist, its rules match', () => {
    const groups = summarize(A.slice(0, 8));
    const fits = (doc) => checkBudgetFitsResults(parseBudget(doc, 'b.yaml'), groups);
    fits({ metrics: { plt_ms: { max_median: 1 } }, scenarios: [{ match: { profile: 'leo' } }] });
    assert.throws(() => fits({ metrics: { plt: { max_median: 1 } } }), {
      name: 'UsageError',
      message:
        'b.yaml: plt: no such metric in either result set (they have dom_content_loaded_ms, fcp_ms, lcp_ms, plt_ms, resource_count, response_start_ms, transfer_bytes)',
    });
    assert.throws(
      () =>
        fits({ metrics: { plt_ms: { max_median: 1 } }, scenarios: [{ match: { profile: 'goe', protocol: 'h3' } }] }),
      {
        message:
          'b.yaml: scenarios[0].match.profile: "goe" matches no scenario of either result set (they have profile: geo, leo)',
      },
    );
  });

  it('A against A: every check ok, nothing missing or added', () => {
    const res = compareResults(resultSet(A, { name: 'a' }), resultSet(A, { name: 'b' }));
    assert.equal(res.rows.length, 12);
    assert.ok(res.rows.every((r) => r.status === 'ok'));
    assert.deepEqual(
      { ...res, rows: null },
      {
        baseline: { path: 'a', source: 'a', runs: 80 },
        current: { path: 'b', source: 'b', runs: 80 },
        alpha: 0.05,
        significance: 'Mann–Whitney U, two-sided',
        rows: null,
        missing: [],
        emulation_differs: [],
        added: [],
        regressions: 0,
        failed_scenarios: [],
        failed: false,
      },
    );
  });

  it('failures first; scenarios on one side only are missing or added; no common scenario is an error', () => {
    const geoH3 = (s) => s.profile === 'geo' && s.protocol === 'h3';
    const res = compareResults(resultSet(A), resultSet(scaled(A, 'plt_ms', 1.3, geoH3)));
    assert.equal(res.rows[0].status, 'fail');
    assert.deepEqual(res.failed_scenarios, ['geo loss 0 % h3 kepler']);
    assert.equal(res.regressions, 1);
    const other = makeRecords(scenarios({ protocols: ['h3', 'h3-pep'] }), { runs: 12 });
    const moved = compareResults(resultSet(A), resultSet(other));
    assert.deepEqual(moved.missing, ['geo loss 0 % h1 kepler', 'leo loss 0 % h1 kepler']);
    assert.deepEqual(moved.added, ['geo loss 0 % h3-pep kepler', 'leo loss 0 % h3-pep kepler']);
    const elsewhere = makeRecords(scenarios({ sites: ['kuhn-a'] }), { runs: 3 });
    assert.throws(() => compareResults(resultSet(A, { name: 'a' }), resultSet(elsewhere, { name: 'b' })), {
      name: 'UsageError',
      message: 'no scenario in common between a and b',
    });
  });

  it('says which scenarios ran with other emulation, as it says which are missing; from runs or campaign settings', () => {
    const emulated = (records, emulation, only = () => true) =>
      records.map((r) => (only(r.scenario) ? { ...r, emulation } : r));
    const desktop = { cpu_slowdown: 1, device: 'desktop' };
    const geo = (s) => s.profile === 'geo';
    const base = emulated(A, desktop);
    const same = compareResults(resultSet(base), resultSet(emulated(A, desktop)));
    assert.deepEqual(same.emulation_differs, []);
    const phone = compareResults(
      resultSet(base),
      resultSet(emulated(base, { cpu_slowdown: 4, device: 'mobile' }, geo)),
    );
    assert.deepEqual(phone.emulation_differs, [
      { label: 'geo loss 0 % h1 kepler', baseline: 'desktop, CPU not slowed', current: 'mobile, CPU 4× slower' },
      { label: 'geo loss 0 % h3 kepler', baseline: 'desktop, CPU not slowed', current: 'mobile, CPU 4× slower' },
    ]);
    // a warning, not a failure: the checks are judged as before
    assert.equal(phone.failed, same.failed);
    assert.deepEqual(
      phone.rows.map((r) => r.status),
      same.rows.map((r) => r.status),
    );
    // records from before emulation was recorded (laid out at 800×600); runs of two emulations in one scenario
    const old = compareResults(resultSet(A), resultSet(base));
    assert.equal(old.emulation_differs.length, 4);
    assert.deepEqual(old.emulation_differs[0], {
      label: 'geo loss 0 % h1 kepler',
      baseline: 'not recorded',
      current: 'desktop, CPU not slowed',
    });
    const mixed = compareResults(
      resultSet(base),
      resultSet(base.map((r) => (r.run % 2 ? { ...r, emulation: { cpu_slowdown: 1, device: 'mobile' } } : r))),
    );
    assert.equal(mixed.emulation_differs[0].current, 'desktop, CPU not slowed and mobile, CPU not slowed');
    // a summary.json: its campaign's settings (meta.settings.emulation, browser/emulation.js emulationSettings)
    const summaryOnly = (records, emulation) => ({
      ...resultSet(records, { runs: false }),
      summary: { meta: { settings: { emulation } }, groups: summarize(records) },
    });
    const fromSettings = compareResults(summaryOnly(base, { ...desktop, width: 1280 }), resultSet(base));
    assert.deepEqual(fromSettings.emulation_differs, []);
    const slower = compareResults(summaryOnly(base, { cpu_slowdown: 2, device: 'desktop' }), resultSet(base));
    assert.deepEqual(
      slower.emulation_differs.map((e) => [e.baseline, e.current]),
      Array(4).fill(['desktop, CPU 2× slower', 'desktop, CPU not slowed']),
    );
  });

  it('the visual metrics are summarised and budgetable: a Speed Index over its ceiling or slower fails', () => {
    // what the visual gatherer adds to each run's metrics (pageload/gather/visual.js)
    const withVisual = (records, si) =>
      records.map((r, i) =>
        r.ok
          ? {
              ...r,
              metrics: {
                ...r.metrics,
                first_visual_change_ms: r.metrics.fcp_ms,
                speed_index_ms: si + (i % 7) * 10,
                visual_complete_85_ms: si + 400,
                visual_complete_95_ms: si + 500,
                visual_complete_99_ms: si + 600,
                last_visual_change_ms: si + 700,
                cls: 0.01,
                tbt_ms: 0,
              },
            }
          : r,
      );
    const base = withVisual(A, 2000);
    const [group] = summarize(base);
    for (const m of [
      'first_visual_change_ms',
      'speed_index_ms',
      'visual_complete_99_ms',
      'last_visual_change_ms',
      'cls',
      'tbt_ms',
    ])
      assert.equal(group.metrics[m]?.n, 20, m);
    const budget = parseBudget({ metrics: { speed_index_ms: { max_median: 2500, max_slowdown_pct: 10 } } });
    assert.equal(compareResults(resultSet(base), resultSet(base), budget).failed, false);
    const slower = compareResults(resultSet(base), resultSet(withVisual(A, 2600)), budget);
    assert.equal(slower.regressions, 4);
    assert.ok(slower.rows.every((r) => r.metric === 'speed_index_ms' && r.status === 'fail'));
  });

  it('a slowdown over the budget that is not significant warns instead of failing', () => {
    // 5 noisy runs against 5 others, 12 % slower: too few runs to tell from noise.
    const few = makeRecords(list, { runs: 5, seed: 3, cv: 0.15 });
    const slower = makeRecords(list, { runs: 5, seed: 4, cv: 0.15, scale: { plt_ms: 1.12 } });
    const budget = parseBudget({ metrics: { plt_ms: { max_slowdown_pct: 5 } } });
    const res = compareResults(resultSet(few), resultSet(slower), budget);
    const row = res.rows.find((r) => r.change_pct > 5 && r.p >= 0.05);
    assert.ok(row, 'expected a slower but not significant row');
    assert.equal(row.status, 'warn');
    assert.match(row.warnings.join(' '), /not significant/);
    assert.match(row.warnings.join(' '), /fewer than 10 runs on a side \(5 vs 5\)/);
  });

  it('with a summary on a side, the intervals decide, and it says so', () => {
    const res = compareResults(resultSet(A, { runs: false }), resultSet(scaled(A, 'plt_ms', 1.3)));
    assert.equal(res.significance, 'non-overlapping bootstrap 95 % intervals of the medians (a side has no runs)');
    assert.equal(res.baseline.runs, null);
    assert.equal(res.regressions, 4);
    assert.ok(res.rows.every((r) => r.test === '95 % intervals' && r.p === null));
    assert.match(res.rows[0].failures[0], /significant \(by non-overlapping 95 % intervals\)$/);
  });

  it('a current scenario whose runs all failed fails', () => {
    const failing = A.map((r) =>
      r.scenario.protocol === 'h1' && r.scenario.profile === 'leo'
        ? { ...r, ok: false, error: 'timeout', metrics: null }
        : r,
    );
    const res = compareResults(resultSet(A), resultSet(failing));
    assert.deepEqual(res.failed_scenarios, ['leo loss 0 % h1 kepler']);
    assert.match(res.rows[0].failures[0], /no successful run in the current results \(20 of 20 failed\)/);
  });

  it('for rates (bulk goodput) a drop is the slowdown, and min_median is their floor', () => {
    const bulk = (factor, seed) => {
      const next = (i) => 1 + 0.03 * Math.sin(seed * 7 + i * 3.1); // a few percent of spread
      return Array.from({ length: 20 }, (_, i) => ({
        kind: 'bulk',
        scenario: { profile: 'geo', protocol: 'tcp-pep', size_mb: 10 },
        run: i + 1,
        ok: true,
        metrics: { goodput_mbps: 18 * factor * next(i) },
      }));
    };
    const budget = parseBudget({ metrics: { goodput_mbps: { max_slowdown_pct: 10, min_median: 12 } } });
    assert.equal(
      compareResults(resultSet(bulk(1, 1)), resultSet(bulk(1.3, 2)), budget).failed,
      false,
      'faster is fine',
    );
    const drop = compareResults(resultSet(bulk(1, 1)), resultSet(bulk(0.7, 2)), budget);
    assert.equal(drop.failed, true);
    assert.match(drop.rows[0].failures.join(' '), /^(29|30)\.\d % lower, over the 10 % allowed, and significant/);
    assert.match(
      compareResults(resultSet(bulk(1, 1)), resultSet(bulk(0.6, 2)), budget).rows[0].failures.join(' '),
      /under the floor of 12/,
    );
  });

  it('two bulk result sets without a budget are held to the bulk limits (mean goodput), not refused', () => {
    const bulk = (factor, seed) =>
      Array.from({ length: 20 }, (_, i) => ({
        kind: 'bulk',
        scenario: { profile: 'geo', loss_pct: 0, protocol: 'tcp', duration_s: 10 },
        run: i + 1,
        ok: true,
        metrics: { mean_goodput_mbps: 18 * factor * (1 + 0.03 * Math.sin(seed * 7 + i * 3.1)), ttfb_ms: 700 },
      }));
    const same = compareResults(resultSet(bulk(1, 1)), resultSet(bulk(1, 2)));
    assert.equal(same.failed, false);
    assert.deepEqual(
      same.rows.map((r) => r.metric),
      ['mean_goodput_mbps'],
    );
    assert.equal(compareResults(resultSet(bulk(1, 1)), resultSet(bulk(0.7, 2))).failed, true, 'a 30 % drop fails');
  });

  it('a rule must match a scenario of either side, and every value of its lists one', () => {
    const rule = (match) => parseBudget({ scenarios: [{ match, metrics: { plt_ms: { max_median: 1e9 } } }] }, 'b.yaml');
    const some = resultSet(A.slice(0, 8));
    assert.equal(compareResults(some, some, rule({ profile: 'geo', protocol: ['h3', 'h1'] })).failed, false);
    assert.equal(compareResults(some, some, rule({ kind: 'pageload', loss_pct: 0 })).failed, false);
    assert.throws(
      () => compareResults(some, some, rule({ profile: 'goe' })),
      /^UsageError: b\.yaml: scenarios\[0\]\.match/,
    );
    assert.throws(() => compareResults(some, some, rule({ kind: 'bulk' })), /matches no scenario .*kind: pageload/);
    // one typo among matching values is refused, naming it
    assert.throws(
      () => compareResults(some, some, rule({ profile: 'geo', protocol: ['h3', 'h3-pepp'] })),
      /^UsageError: b\.yaml: scenarios\[0\]\.match\.protocol: "h3-pepp" matches no scenario of either result set \(they have protocol: h1, /,
    );
    assert.throws(
      () => compareResults(some, some, rule({ loss_pct: [0, 0.1] })),
      /match\.loss_pct: 0\.1 matches no scenario/,
    );
    assert.throws(() => compareResults(some, some, rule({ loss_pct: 1 })), /\(they have loss_pct: 0\)/);
  });
});
