// The report's First and repeat views section (issue 30 item 6): each
// repeat or revisit view under its pair's first view, with the medians, the
// comparison (ratio, p, Cliff's δ) and each load's cache and handshake
// counts; from results.jsonl or from summary.json alone. The records are
// hand-made in the shapes the contract names: `cache_use` as
// pageload/gather/cache-use.js writes it, `handshakes` as the servers'
// connection logs give it ({origin, proxy_st?}, each with by_protocol).
import assert from 'node:assert/strict';
import { summarize } from '../../harness/analysis/summary.js';
import { buildReport, renderReport } from '../../harness/report/html.js';
import { formatBenchSummary } from '../../harness/pageload/summary-table.js';
import { handshakeCounts as hs, makeViewPairs as pairs } from '../fixtures.js';

const BASE = { profile: 'geo', loss_pct: 0, protocol: 'h3', site: 'kepler' };
const HOSTILE = `"'><x-inj>`;

const MATRIX = { profiles: ['geo'], losses: [0], protocols: ['h3'], sites: ['kepler'], views: ['revisit'], runs: 12 };
const section = (html) => /<section id="first-and-repeat">[^]*?<\/section>/.exec(html)?.[0] ?? null;
// the text of a section's cells, row by row (tags dropped, entities as they are)
const rows = (html) =>
  [...html.matchAll(/<tr[^>]*>([^]*?)<\/tr>/g)].map((m) =>
    [...m[1].matchAll(/<t[hd][^>]*>([^]*?)<\/t[hd]>/g)].map((c) =>
      c[1]
        .replace(/<[^>]+>/g, ' ')
        .replace(/\s+/g, ' ')
        .trim(),
    ),
  );

describe('report: first and repeat views side by side', () => {
  const records = pairs(12);
  const summary = { meta: { matrix: MATRIX }, groups: summarize(records) };

  it('summary: each load has its medians of the cache and handshake counts', () => {
    const [first, second] = summary.groups;
    assert.deepEqual(first.cache_use, { n: 12, from_cache: 0, revalidated: 0, fetched: 76 });
    assert.deepEqual(second.cache_use, { n: 12, from_cache: 0, revalidated: 75, fetched: 1 });
    assert.deepEqual(second.handshakes, {
      origin: {
        n: 12,
        connections: 1,
        full: 0,
        resumed: 1,
        early_offered: 0.5,
        early_accepted: 0.5,
        early_requests: 1.5,
      },
    });
  });

  it('a pair per scenario: both loads, the second against the first with p and δ, and the counts of each', () => {
    const model = buildReport({ summary, records });
    const part = model.pageload;
    assert.equal(part.viewPairs.length, 1);
    const html = section(renderReport(summary, { records }));
    assert.ok(html, 'the section is shown');
    const [head1, head2, first, second, ratio] = rows(html);
    assert.deepEqual(head1, ['scenario', 'load', 'n', 'medians, ms', 'responses medians', 'origin handshakes medians']);
    assert.deepEqual(head2, [
      'Response Start',
      'First Contentful Paint',
      'Page Load Time',
      'from cache',
      'revalidated (304)',
      'fetched',
      'connections',
      'resumed',
      '0-RTT offered',
      '0-RTT accepted',
      'requests in 0-RTT',
    ]);
    const med = (g, k) => String(Math.round(g.metrics[k].median));
    const [gFirst, gSecond] = summary.groups;
    assert.deepEqual(first, [
      'geo · loss 0 % · h3 · kepler',
      'first view',
      '12',
      med(gFirst, 'response_start_ms'),
      med(gFirst, 'fcp_ms'),
      med(gFirst, 'plt_ms'),
      '0',
      '0',
      '76',
      '1',
      '0',
      '0',
      '0',
      '0',
    ]);
    assert.deepEqual(second, [
      'revisit view',
      '12',
      med(gSecond, 'response_start_ms'),
      med(gSecond, 'fcp_ms'),
      med(gSecond, 'plt_ms'),
      '0',
      '75',
      '1',
      '1',
      '1',
      '0.5',
      '0.5',
      '1.5',
    ]);
    // the comparison is the Comparisons section's own (one computation, two places)
    const c = part.comparisons.find((x) => x.kind === 'revisit view vs first view');
    const plt = c.metrics.find((x) => x.metric.key === 'plt_ms');
    assert.ok(plt.ratio < 0.5 && plt.p < 0.001 && plt.cliffs_delta === -1, JSON.stringify(plt));
    assert.deepEqual(
      part.viewPairs[0].comparison.metrics.map((x) => [x.metric.key, x.ratio, x.p, x.cliffs_delta]),
      c.metrics.map((x) => [x.metric.key, x.ratio, x.p, x.cliffs_delta]),
    );
    assert.equal(ratio[0], 'revisit / first');
    assert.equal(ratio[4], `×${plt.ratio.toFixed(2)} p &lt;0.001 δ -1.00 large`);
    assert.match(
      html,
      /<a href="#g0">first view<\/a>[^]*<a href="#g1">revisit view<\/a>/,
      'each load links to its runs',
    );
    assert.match(renderReport(summary, { records }), /<a href="#first-and-repeat">First and repeat views<\/a>/);
  });

  it('from summary.json alone: the medians and counts, the p-values and δ not', () => {
    const html = section(renderReport(summary));
    const [, , first, second, ratio] = rows(html);
    assert.equal(first[8], '76');
    assert.equal(second[6], '75');
    assert.match(ratio[4], /^×0\.\d\d p – δ –$/);
  });

  it('a summary.json from before the counts, beside records with them: the counts from the records', () => {
    const stale = summary.groups.map(({ cache_use: _, handshakes: __, ...g }) => g);
    const [, , first, second] = rows(section(renderReport({ meta: {}, groups: stale }, { records })));
    assert.equal(first[8], '76');
    assert.equal(second[6], '75');
    assert.equal(second.at(-1), '1.5');
    // without the records there is nothing to count
    assert.match(section(renderReport({ meta: {}, groups: stale })), /These records have no cache or handshake counts/);
  });

  it('LCP and Speed Index where a load measured them; Proxy-ST handshakes where the QUIC PEP ran', () => {
    const rs = pairs(3, {
      scenario: { ...BASE, protocol: 'h3-pep' },
      extra: () => ({ handshakes: { origin: hs(1, 0), proxy_st: hs(2, 1, 1, 4) } }),
    }).map((r) => ({ ...r, metrics: { ...r.metrics, lcp_ms: r.metrics.fcp_ms + 10 } }));
    const html = section(
      renderReport({ meta: {}, groups: summarize([...records, ...rs]) }, { records: [...records, ...rs] }),
    );
    const head = rows(html)[1];
    assert.deepEqual(head.slice(0, 4), [
      'Response Start',
      'First Contentful Paint',
      'Page Load Time',
      'Largest Contentful Paint',
    ]);
    assert.ok(!head.includes('Speed Index'), 'no load measured Speed Index');
    assert.equal(head.filter((x) => x === 'connections').length, 2, 'origin and Proxy-ST');
    assert.match(html, /Proxy-ST handshakes/);
    const body = rows(html);
    // the h3 pair (no LCP) shows – in that column; the h3-pep pair its medians
    assert.equal(body[2][6], '–');
    assert.notEqual(body[5][6], '–');
    // h3's loads had no Proxy-ST: – , not 0
    assert.deepEqual(body[2].slice(-5), ['–', '–', '–', '–', '–']);
    assert.deepEqual(body[6].slice(-5), ['2', '1', '1', '1', '4']);
  });

  it('records without counts show none (not zeros); no repeat or revisit view, no section', () => {
    const old = pairs(3, { counts: false });
    const groups = summarize(old);
    assert.ok(
      groups.every((g) => !('cache_use' in g) && !('handshakes' in g)),
      'no counts in summary.json',
    );
    const html = section(renderReport({ meta: {}, groups }, { records: old }));
    assert.deepEqual(rows(html)[1], ['Response Start', 'First Contentful Paint', 'Page Load Time']);
    assert.match(html, /These records have no cache or handshake counts/);
    // a failed load's counts are not a measurement
    const failed = pairs(2).map((r, i) => (i === 3 ? { ...r, ok: false, cache_use: { fetched: 1000 } } : r));
    assert.equal(summarize(failed)[1].cache_use.n, 1);
    // first views alone: no section, no link to it
    const firsts = summarize(records.map((r) => ({ ...r, scenario: BASE })));
    const page = renderReport({ meta: {}, groups: firsts });
    assert.equal(section(page), null);
    assert.doesNotMatch(page, /first-and-repeat/);
  });

  it('escapes whatever summary.json says of a pair and its counts', () => {
    const poison = (set) => {
      const groups = structuredClone(summary.groups);
      set(groups);
      const html = renderReport({ meta: {}, groups });
      assert.ok(!html.includes('<x-inj'), 'an element made by input');
      return section(html);
    };
    assert.match(
      poison((g) => (g[1].cache_use.revalidated = HOSTILE)),
      /<td class="num"[^>]*>–<\/td>/,
    );
    poison((g) => (g[1].handshakes.origin.n = HOSTILE));
    poison((g) => (g[1].handshakes[HOSTILE] = g[1].handshakes.origin));
    poison((g) => (g[0].scenario.site = g[1].scenario.site = HOSTILE));
    poison((g) => (g[0].scenario.view = g[1].scenario.view = HOSTILE));
    poison((g) => (g[1].metrics.plt_ms.median = HOSTILE));
    poison((g) => (g[1].runs = HOSTILE));
  });

  it("bench's table: with views, each load's cache counts and the origin's resumed handshakes and 0-RTT", () => {
    const text = formatBenchSummary(summary);
    const [, head, first, second] = text.split('\n');
    assert.match(head, / +cached\/304\/fetched +resumed\/conns +0-RTT +runs +failed$/);
    assert.match(first, / 0\/0\/76 +0\/1 +0 +12 +0$/);
    assert.match(second, / 0\/75\/1 +1\/1 +0\.5 +12 +0$/);
    // records without counts: no count columns
    assert.doesNotMatch(formatBenchSummary({ groups: summarize(pairs(2, { counts: false })) }), /cached|0-RTT/);
  });
});
