import assert from 'node:assert/strict';
import { lighthouseFlags, keyMetrics, reportSlug } from '../../harness/pageload/lighthouse.js';
import { renderReport } from '../../harness/report/html.js';
import { summarize } from '../../harness/analysis/summary.js';
import { scenarios, makeRecords } from '../fixtures.js';

describe('lighthouse (bench --lighthouse)', () => {
  it('audits performance only, with no throttling of its own', () => {
    const f = lighthouseFlags(90000);
    assert.deepEqual(f.onlyCategories, ['performance']);
    // no network throttling, and the runs' CPU (test/unit/emulation.test.js): none by default
    assert.equal(f.throttling.downloadThroughputKbps, 0);
    assert.equal(f.throttling.requestLatencyMs, 0);
    assert.equal(f.throttling.cpuSlowdownMultiplier, 1);
    assert.deepEqual(f.output, ['json', 'html']);
    assert.equal(f.maxWaitForLoad, 90000);
  });

  it('keeps the score and key metrics; names files per scenario', () => {
    const lhr = {
      lighthouseVersion: '13.5.0',
      categories: { performance: { score: 0.42 } },
      audits: {
        'first-contentful-paint': { numericValue: 2759.5 },
        'largest-contentful-paint': { numericValue: 3100 },
        'cumulative-layout-shift': { numericValue: 0.01 },
        'speed-index': {},
      },
    };
    assert.deepEqual(keyMetrics(lhr), {
      score: 0.42,
      metrics: { 'first-contentful-paint': 2759.5, 'largest-contentful-paint': 3100, 'cumulative-layout-shift': 0.01 },
      version: '13.5.0',
      runtime_error: null,
    });
    const a = reportSlug({ profile: 'geo', loss_pct: 0.1, protocol: 'h3-pep', site: 'kepler' });
    assert.match(a, /^geo-loss0\.1-h3-pep-kepler-[0-9a-f]{8}$/);
    const b = reportSlug({ profile: 'geo', loss_pct: 0.1, protocol: 'h3-pep', site: '/tmp/my site' });
    const c = reportSlug({ profile: 'geo', loss_pct: 0.1, protocol: 'h3-pep', site: '/tmp/my_site' });
    assert.match(b, /^[A-Za-z0-9._-]+$/);
    assert.notEqual(b, c);
    // a benchmark auditing several runs keeps each run's reports
    const s = { profile: 'geo', loss_pct: 0.1, protocol: 'h3-pep', site: 'kepler' };
    assert.equal(reportSlug(s, 1), a);
    assert.equal(reportSlug(s, 3), `${a}-run3`);
  });

  it('the report lists each audit with its numbers and links', () => {
    const recs = makeRecords(scenarios({ profiles: ['geo'], protocols: ['h3'] }), { runs: 3 });
    recs[0].lighthouse = {
      json: 'lighthouse/a.report.json',
      html: 'lighthouse/a.report.html',
      score: 0.42,
      metrics: { 'first-contentful-paint': 2759.5, 'cumulative-layout-shift': 0.01 },
      error: null,
    };
    const html = renderReport({ meta: {}, groups: summarize(recs) }, { records: recs });
    assert.match(html, /<td>geo loss 0 % h3 kepler<\/td><td class="num">42<\/td><td class="num">2760<\/td>/);
    assert.match(
      html,
      /<a href="lighthouse\/a\.report\.html">HTML<\/a> · <a href="lighthouse\/a\.report\.json">JSON<\/a>/,
    );
    assert.match(html, /<td class="num">0\.010<\/td>/);
  });
});
