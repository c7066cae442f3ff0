// compare's budget (harness/analysis/compare/budget.js): the default
// limits, a budget file read and checked, the limits of one scenario and
// the rules that match nothing.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  parseBudget,
  readBudget,
  limitsFor,
  unmatchedRules,
  budgetedMetrics,
  defaultBudget,
  describeLimits,
} from '../../harness/analysis/compare/budget.js';
import { scenarios } from '../fixtures.js';

describe('compare budget', () => {
  it("without --budget: the limits the kinds give (page loads': 10 % on three times), said so in words", () => {
    assert.deepEqual(defaultBudget(), {
      alpha: 0.05,
      metrics: {
        response_start_ms: { max_slowdown_pct: 10 },
        fcp_ms: { max_slowdown_pct: 10 },
        plt_ms: { max_slowdown_pct: 10 },
        mean_goodput_mbps: { max_slowdown_pct: 10 },
      },
      scenarios: [],
    });
    assert.equal(
      describeLimits(defaultBudget().metrics),
      '10 % on response_start_ms, fcp_ms, plt_ms, mean_goodput_mbps',
    );
    // given the result sets' groups: the limits of the kinds present, on metrics they have
    const bulkGroup = { kind: 'bulk', scenario: { profile: 'geo' }, metrics: { mean_goodput_mbps: {}, ttfb_ms: {} } };
    assert.deepEqual(defaultBudget([bulkGroup]).metrics, { mean_goodput_mbps: { max_slowdown_pct: 10 } });
    const pageGroup = { scenario: { profile: 'geo' }, metrics: { plt_ms: {}, fcp_ms: {} } };
    assert.deepEqual(Object.keys(defaultBudget([pageGroup, bulkGroup]).metrics), [
      'fcp_ms',
      'plt_ms',
      'mean_goodput_mbps',
    ]);
    assert.equal(
      describeLimits({ a: { max_median: 5 }, b: { max_slowdown_pct: 5, min_median: 1 }, c: { max_median: 5 } }),
      'at most 5 on a, c; at least 1, 5 % on b',
    );
    assert.equal(describeLimits({}), 'no limit');
  });

  it("a bulk rule matches a download's direction and view", () => {
    const budget = parseBudget(
      {
        scenarios: [
          {
            match: { kind: 'bulk', direction: 'up', view: 'revisit' },
            metrics: { time_to_10mb_ms: { max_median: 9000 } },
          },
        ],
      },
      'b',
    );
    const scenario = (direction, view) => ({ profile: 'geo', loss_pct: 0, protocol: 'quic', direction, view });
    assert.deepEqual(limitsFor(budget, 'bulk', scenario('up', 'revisit')), { time_to_10mb_ms: { max_median: 9000 } });
    assert.deepEqual(limitsFor(budget, 'bulk', scenario('down', 'revisit')), {});
    assert.deepEqual(limitsFor(budget, 'bulk', scenario('up', 'first')), {});
  });

  it('rejects malformed budgets, naming the file, the key and what was expected', () => {
    const rejects = (doc, message) => assert.throws(() => parseBudget(doc, 'b'), { name: 'UsageError', message });
    rejects([], 'b: expected a mapping with "metrics" and/or "scenarios"');
    rejects({ metric: {} }, 'b: metric: unknown key; expected alpha, metrics, scenarios');
    rejects({ alpha: 2, metrics: { plt_ms: { max_median: 1 } } }, 'b: alpha: expected a number between 0 and 1, got 2');
    rejects({ metrics: [1] }, 'b: metrics: expected an object of metric names');
    rejects({ metrics: { plt_ms: 5 } }, 'b: metrics.plt_ms: expected {max_median, min_median, max_slowdown_pct}');
    rejects(
      { metrics: { plt_ms: { max_slowdown: 10 } } },
      'b: metrics.plt_ms.max_slowdown: unknown limit; expected max_median, min_median, max_slowdown_pct',
    );
    rejects(
      { metrics: { plt_ms: { max_median: -1 } } },
      'b: metrics.plt_ms.max_median: expected a number >= 0, got -1',
    );
    rejects({ scenarios: {} }, 'b: scenarios: expected a list');
    rejects({ scenarios: [5] }, 'b: scenarios[0]: expected {match, metrics}');
    rejects({ scenarios: [{ match: {}, metric: {} }] }, 'b: scenarios[0].metric: unknown key; expected match, metrics');
    rejects(
      { scenarios: [{ match: [1], metrics: { plt_ms: { max_median: 1 } } }] },
      'b: scenarios[0].match: expected a mapping of kind, profile, loss_pct, protocol, site, view, cc, direction',
    );
    rejects(
      { scenarios: [{ match: { host: 'x' }, metrics: { plt_ms: { max_median: 1 } } }] },
      'b: scenarios[0].match.host: unknown key; expected kind, profile, loss_pct, protocol, site, view, cc, direction',
    );
    rejects(
      { scenarios: [{ match: {}, metrics: { plt_ms: { max_median: 'fast' } } }] },
      'b: scenarios[0].metrics.plt_ms.max_median: expected a number >= 0, got "fast"',
    );
    rejects({}, 'b: sets no limit (metrics: {plt_ms: {max_slowdown_pct: 10}}, …)');
  });

  it('a checked budget keeps its file, alpha, limits and rules', () => {
    const doc = {
      alpha: 0.01,
      metrics: { plt_ms: { max_slowdown_pct: 10 } },
      scenarios: [{ match: { profile: 'geo' }, metrics: { fcp_ms: { max_median: 5000 } } }],
    };
    const budget = parseBudget(doc, 'b.yaml');
    assert.deepEqual(budget, { file: 'b.yaml', ...doc });
    assert.deepEqual([...budgetedMetrics(budget)], ['plt_ms', 'fcp_ms']);
    assert.equal(parseBudget({ metrics: { plt_ms: { max_median: 1 } } }).alpha, 0.05, 'alpha defaults to 0.05');
  });

  it('per-scenario limits override the defaults, key by key, later rules last', () => {
    const [geoH1, geoH3, leoH1] = scenarios({ protocols: ['h1', 'h3'] });
    const budget = parseBudget(
      {
        metrics: { plt_ms: { max_slowdown_pct: 10 } },
        scenarios: [
          { match: { profile: 'geo', protocol: ['h3', 'h3-pep'] }, metrics: { plt_ms: { max_median: 7000 } } },
          { match: { kind: 'pageload', loss_pct: 0 }, metrics: { plt_ms: { max_median: 9000 } } },
          { match: { profile: 'leo' }, metrics: { fcp_ms: { min_median: 1 } } },
        ],
      },
      'b.yaml',
    );
    assert.deepEqual(limitsFor(budget, 'pageload', geoH3), { plt_ms: { max_slowdown_pct: 10, max_median: 9000 } });
    assert.deepEqual(limitsFor(budget, 'pageload', geoH1), { plt_ms: { max_slowdown_pct: 10, max_median: 9000 } });
    assert.deepEqual(limitsFor(budget, 'bulk', geoH1), { plt_ms: { max_slowdown_pct: 10 } }, 'kind matches too');
    assert.deepEqual(limitsFor(budget, 'pageload', leoH1), {
      plt_ms: { max_slowdown_pct: 10, max_median: 9000 },
      fcp_ms: { min_median: 1 },
    });
  });

  it('names the rules that match no group, with the values the groups have', () => {
    const groups = scenarios({ protocols: ['h1', 'h3'] }).map((scenario) => ({ scenario }));
    const rule = (match) => parseBudget({ scenarios: [{ match, metrics: { plt_ms: { max_median: 1 } } }] });
    assert.deepEqual(unmatchedRules(rule({ profile: 'geo', protocol: ['h3', 'h3-pep'] }), groups), []);
    assert.deepEqual(unmatchedRules(rule({ loss_pct: '0' }), groups), [], 'YAML text matches a number');
    assert.deepEqual(unmatchedRules(rule({ profile: 'goe', kind: 'pageload' }), groups), [
      {
        rule: 'scenarios[0]',
        match: { profile: 'goe', kind: 'pageload' },
        have: { profile: ['geo', 'leo'], kind: ['pageload'] },
      },
    ]);
  });

  describe('reading a budget file (YAML or JSON)', () => {
    let tmp;
    before(() => (tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-budget-'))));
    after(() => fs.rmSync(tmp, { recursive: true, force: true }));
    const write = (name, text) => {
      const file = path.join(tmp, name);
      fs.writeFileSync(file, text);
      return file;
    };

    it('reads YAML and JSON alike', () => {
      const yaml = readBudget(write('b.yaml', 'metrics:\n  plt_ms: { max_slowdown_pct: 10 }\n'));
      const json = readBudget(write('b.json', JSON.stringify({ metrics: { plt_ms: { max_slowdown_pct: 10 } } })));
      assert.deepEqual({ ...yaml, file: null }, { ...json, file: null });
      assert.deepEqual(yaml.metrics, { plt_ms: { max_slowdown_pct: 10 } });
    });

    it('a file it cannot read or parse, or a bad key in it, is an error naming the file', () => {
      const missing = path.join(tmp, 'nowhere.yaml');
      assert.throws(() => readBudget(missing), {
        name: 'UsageError',
        message: `${missing}: cannot read the budget file`,
      });
      assert.throws(() => readBudget(tmp), { message: `${tmp}: cannot read the budget file` });
      const broken = write('broken.yaml', 'metrics: [\n  plt_ms: {\n');
      assert.throws(() => readBudget(broken), {
        name: 'UsageError',
        message: /^\S+broken\.yaml: neither YAML nor JSON \(/,
      });
      const typo = write('typo.yaml', 'metrics:\n  plt_ms: { max_slowdown: 10 }\n');
      assert.throws(() => readBudget(typo), { message: /typo\.yaml: metrics\.plt_ms\.max_slowdown: unknown limit/ });
      assert.throws(() => readBudget(write('empty.yaml', '')), { message: /empty\.yaml: expected a mapping/ });
    });

    it('docs/budget-example.yaml is a valid budget', () => {
      const b = readBudget(path.join(import.meta.dirname, '../../docs/budget-example.yaml'));
      assert.deepEqual(Object.keys(b.metrics), ['response_start_ms', 'fcp_ms', 'plt_ms']);
      assert.equal(b.scenarios.length, 3);
    });
  });
});
