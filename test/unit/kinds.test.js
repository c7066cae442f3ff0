// The registry of kinds, and a third, made-up kind (test/dns-kind.js)
// registered at run time: summary, compare, merge and the report handle it
// with no change anywhere else.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { kindOf, kindOfCommand, kindNamed, kinds, registerKind, DEFAULT_KIND } from '../../harness/kinds/index.js';
import { summarize } from '../../harness/analysis/summary.js';
import { parseBudget, defaultBudget } from '../../harness/analysis/compare/budget.js';
import { compareResults } from '../../harness/analysis/compare/judge.js';
import { formatText } from '../../harness/analysis/compare/text.js';
import { mergeSets, outsideMatrix } from '../../harness/analysis/merge.js';
import { renderReport } from '../../harness/report/html.js';
import { dns } from '../dns-kind.js';
import { scenarios, makeRecords } from '../fixtures.js';

// Lookups of `resolver` over geo, `ms` apart from run to run.
const lookups = (resolver, base, { runs = 12, fail = [] } = {}) =>
  Array.from({ length: runs }, (_, i) => ({
    kind: 'dns',
    scenario: { profile: 'geo', loss_pct: 0, resolver },
    run: i + 1,
    ok: !fail.includes(i + 1),
    error: fail.includes(i + 1) ? 'SERVFAIL' : null,
    metrics: fail.includes(i + 1) ? null : { lookup_ms: base + ((i * 7) % 11), answers: 2 },
  }));
const set = (records, p) => ({ path: p, source: p, records, summary: { meta: {}, groups: summarize(records) } });

describe('kinds', () => {
  it('records without a kind are page loads; unknown kinds get one generic kind each', () => {
    assert.equal(kindOf({ scenario: {} }), DEFAULT_KIND);
    assert.equal(kindOf({ kind: 'pageload' }).name, 'pageload');
    assert.equal(kindOf({ kind: 'bulk' }).name, 'bulk');
    const probe = kindOf({ kind: 'probe' });
    assert.equal(probe.unknown, true);
    assert.equal(kindOf({ kind: 'probe' }), probe, 'the same object each time');
    assert.equal(probe.label({ profile: 'geo', rtt: 1 }), 'probe profile=geo rtt=1');
    assert.equal(probe.key({ b: 1, a: 2 }), probe.key({ a: 2, b: 1 }));
    assert.deepEqual(
      kinds().map((k) => k.name),
      ['pageload', 'bulk'],
    );
  });

  it('each kind says whether its records carry `kind`, which command writes it, its matrix and budget', () => {
    // only the default kind's records may lack `kind`: kindOf reads a record without one as it
    assert.deepEqual(
      kinds().filter((k) => !('kind' in k.tag({}))),
      [DEFAULT_KIND],
    );
    assert.deepEqual(kindNamed('bulk').tag({ run: 1 }), { kind: 'bulk', run: 1 });
    assert.deepEqual(Object.keys(kindNamed('probe').tag({ run: 1 })), ['kind', 'run'], 'its name first');
    assert.equal(kindOfCommand('bench'), DEFAULT_KIND);
    assert.equal(kindOfCommand('bulk'), kindOf({ kind: 'bulk' }));
    assert.equal(kindOfCommand('report'), null);
    for (const k of kinds()) assert.equal(kindOfCommand(k.command), k, k.name);
    const page = { scenario: { profile: 'geo', loss_pct: 0, protocol: 'h1', site: 'x' }, run: 1 };
    assert.match(outsideMatrix(page, { sites: ['kepler'] }), /^site "x" is not one of \["kepler"\]$/);
    assert.equal(outsideMatrix({ ...page, kind: 'bulk' }, { sites: ['kepler'] }), null, 'bulk has no sites');
    const dnsLimits = { lookup_ms: { max_median: 900 } };
    const unregister = registerKind({ ...dns, defaultBudget: dnsLimits });
    try {
      assert.deepEqual(defaultBudget().metrics.lookup_ms, dnsLimits.lookup_ms);
    } finally {
      unregister();
    }
    assert.equal(defaultBudget().metrics.lookup_ms, undefined);
  });

  it('names its part of the report by key, which the report renders (an unknown key is refused)', () => {
    assert.deepEqual(
      kinds().map((k) => k.report),
      ['pageload', 'bulk'],
    );
    assert.equal(dns.report, 'medians', 'a kind without its own part: a table of medians');
    const unregister = registerKind({ ...dns, report: 'waterfall' });
    try {
      const records = lookups('udp', 300, { runs: 1 });
      assert.throws(
        () => renderReport({ meta: {}, groups: summarize(records) }, { records }),
        /kind dns: no report part "waterfall"/,
      );
    } finally {
      unregister();
    }
  });

  describe('a third kind: one new file plus its registration', () => {
    const page = makeRecords(scenarios({ profiles: ['geo'], protocols: ['h3'] }), { runs: 12 });
    const base = [...page, ...lookups('doh', 600, { fail: [4] }), ...lookups('udp', 300)];
    let unregister;
    before(() => {
      // before: dns records are of an unknown kind, summarised generically
      assert.deepEqual(Object.keys(summarize(base)[1].metrics), ['answers', 'lookup_ms']);
      unregister = registerKind(dns);
    });
    after(() => unregister());

    it('is one module that imports only what every kind starts from', () => {
      const src = fs.readFileSync(path.join(import.meta.dirname, '../dns-kind.js'), 'utf8');
      assert.deepEqual(
        [...src.matchAll(/^import .* from '([^']+)';$/gm)].map((m) => m[1]),
        ['../harness/kinds/generic.js'],
      );
      assert.throws(() => registerKind(dns), /registered already/);
    });

    it('summary: a group per scenario carrying its kind, its own metrics, failures counted', () => {
      const groups = summarize(base);
      assert.equal(groups.length, 3);
      assert.equal(groups[0].kind, undefined);
      const doh = groups[1];
      assert.equal(doh.kind, 'dns');
      assert.deepEqual(doh.scenario, { profile: 'geo', loss_pct: 0, resolver: 'doh' });
      assert.equal(doh.runs, 12);
      assert.deepEqual(doh.failures, [{ run: 4, error: 'SERVFAIL' }]);
      assert.deepEqual(Object.keys(doh.metrics), ['lookup_ms'], 'metricNames: only its own');
      assert.equal(doh.metrics.lookup_ms.n, 11);
    });

    it('compare: budgets match on its fields and a slower lookup fails, under its label', () => {
      const slower = [...page, ...lookups('doh', 900), ...lookups('udp', 300)];
      const budget = parseBudget({
        metrics: { plt_ms: { max_slowdown_pct: 10 } },
        scenarios: [{ match: { kind: 'dns', resolver: 'doh' }, metrics: { lookup_ms: { max_slowdown_pct: 20 } } }],
      });
      const res = compareResults(set(base, 'a'), set(slower, 'b'), budget);
      const rows = res.rows.filter((r) => r.kind === 'dns');
      assert.deepEqual(
        rows.map((r) => [r.label, r.metric, r.status]),
        [['geo loss 0 % doh', 'lookup_ms', 'fail']],
      );
      assert.deepEqual(res.failed_scenarios, ['geo loss 0 % doh']);
      assert.match(formatText(res), /REGRESSED: 1 check\(s\) failed in 1 scenario\(s\): geo loss 0 % doh$/m);
    });

    it('merge: its runs keep the shards order after the page loads; a run given twice is refused', () => {
      const matrix = { profiles: ['geo'], losses: [0], protocols: ['h3'], sites: ['kepler'], runs: 12 };
      const dnsRuns = lookups('udp', 300, { runs: 2 });
      const { records } = mergeSets(
        [
          { dir: 's1', records: [dnsRuns[1], ...page.slice(6)], meta: { matrix } },
          { dir: 's2', records: [dnsRuns[0], ...page.slice(0, 6)], meta: { matrix } },
        ],
        { now: 'T' },
      );
      assert.deepEqual(
        records.map((r) => `${r.kind ?? 'page'}${r.run}`),
        [...page.map((r) => `page${r.run}`), 'dns2', 'dns1'],
      );
      assert.throws(
        () =>
          mergeSets([
            { dir: 's1', records: dnsRuns, meta: {} },
            { dir: 's2', records: dnsRuns, meta: {} },
          ]),
        /s2: geo loss 0 % udp run 1 is also in s1/,
      );
    });

    it('report: its own section with its medians, linked from the contents, not under other results', () => {
      const html = renderReport({ meta: { generated: 'now' }, groups: summarize(base) }, { records: base });
      assert.match(html, /<nav class="toc"><a href="#medians">[^]*<a href="#dns">DNS lookups<\/a><a href="#failures">/);
      assert.match(
        html,
        /<section id="dns"><h2>DNS lookups<\/h2>[^]*<td>geo loss 0 % doh<\/td><td class="num">12<\/td><td class="num">1<\/td><td>lookup_ms 604<\/td>/,
      );
      assert.ok(!html.includes('<section id="other">'));
      assert.match(html, /<b>3<\/b> scenarios<\/div><div><b>36<\/b> runs/);
      // alone, it is the report: no empty page-load sections
      const only = lookups('udp', 300);
      const alone = renderReport({ meta: {}, groups: summarize(only) }, { records: only });
      assert.match(alone, /<section id="dns">/);
      assert.ok(!alone.includes('<section id="medians">'));
    });
  });
});
