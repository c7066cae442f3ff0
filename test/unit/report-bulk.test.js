// The report's bulk-transfer part, from fixture records (no real runs):
// goodput and PEP-ratio chart data equal to summary.json's curves, the
// medians and objectives tables equal to its numbers, the page-load
// sections only where there are page loads, every input string escaped.
import assert from 'node:assert/strict';
import { renderReport, buildReport, jsonForScript } from '../../harness/report/html.js';
import { bulkTitle, BULK_COLUMNS } from '../../harness/report/bulk.js';
import { summarize } from '../../harness/analysis/summary.js';
import { scenarios, makeRecords, bulkScenarios, makeBulkRecords } from '../fixtures.js';

const EVIL = '<script>alert(1)</script>';

// One attribute of every element matching `tag[attr=…]`-ish patterns, in order.
const attrs = (html, re) => [...html.matchAll(re)].map((m) => m.slice(1));
const reportData = (html) =>
  JSON.parse(/<script type="application\/json" id="report-data">([^<]*)<\/script>/.exec(html)[1]);

describe('report: bulk transfers', () => {
  const matrix = {
    profiles: ['geo', 'quic4sat-medium', 'quic4sat-large'],
    losses: [0, 1, null],
    protocols: ['quic', 'quic-pep', 'tcp', 'tcp-pep'],
  };
  const list = [
    ...bulkScenarios({ losses: [0, 1], duration_s: 10 }),
    ...bulkScenarios({ profiles: ['quic4sat-medium', 'quic4sat-large'], losses: [null], size_bytes: 100e6 }),
  ];
  // run 2 of quic4sat-medium quic-pep fails
  const records = makeBulkRecords(list, { runs: 3, fail: [[9, 2, 'the download stalled']] });
  const summary = {
    meta: { kind: 'bulk', seed: 1, generated: 'now', argv: ['--preset', 'x'], matrix },
    groups: summarize(records),
  };
  const bulkGroups = summary.groups;
  const find = (profile, loss, protocol) =>
    bulkGroups.find(
      (g) =>
        g.scenario.profile === profile &&
        String(g.scenario.loss_pct) === String(loss) &&
        g.scenario.protocol === protocol,
    );

  it('names a block by profile, loss and download', () => {
    assert.equal(bulkTitle({ profile: 'geo', loss_pct: 0.1, duration_s: 15 }), 'geo · loss 0.1 % · 15 s download');
    assert.equal(
      bulkTitle({ profile: 'quic4sat-small', loss_pct: null, size_bytes: 100e6 }),
      "quic4sat-small · the profile's loss · 100 MB download",
    );
    assert.equal(
      bulkTitle({ profile: 'leo', loss_pct: 0, size_bytes: 1500, size_mb: 2 }),
      'leo · loss 0 % · 1500 bytes download · size_mb=2',
    );
  });

  it('names an upload as one, in its block and in the objectives table', () => {
    assert.equal(
      bulkTitle({ profile: 'quic4sat-small', loss_pct: null, size_bytes: 100e6, direction: 'up' }),
      "quic4sat-small · the profile's loss · 100 MB upload",
    );
    const ups = makeBulkRecords(
      bulkScenarios({ profiles: ['quic4sat-small'], losses: [null], size_bytes: 100e6 }).map((sc) => ({
        ...sc,
        direction: 'up',
      })),
      { runs: 1 },
    );
    const html = renderReport({ meta: summary.meta, groups: summarize(ups) }, { records: ups });
    assert.match(html, /<h3>Objectives<\/h3>/);
    assert.match(html, /quic4sat-small<small class="note">small · upload<\/small>/);
    // judged against the upload limits, not the download ones
    assert.match(html, /<td class="num">≤ 420<\/td>/);
    assert.doesNotMatch(html, /<td class="num">≤ 85<\/td>/);
  });

  it('groups the curves by profile × loss, one line per protocol, as summary.json has them', () => {
    const model = buildReport({ summary, records });
    const b = model.bulk;
    assert.deepEqual(
      b.blocks.map((x) => x.title),
      [
        'geo · loss 0 % · 10 s download',
        'geo · loss 1 % · 10 s download',
        "quic4sat-medium · the profile's loss · 100 MB download",
        "quic4sat-large · the profile's loss · 100 MB download",
      ],
    );
    for (const block of b.blocks) {
      assert.deepEqual(
        block.goodput.map((s) => s.protocol),
        matrix.protocols,
      );
      assert.deepEqual(
        block.ratio.map((s) => `${s.protocol}/${s.base}`),
        ['quic-pep/quic', 'tcp-pep/tcp'],
        "Kosek et al.'s Fig. 2 pairs",
      );
      const g = block.groups[0];
      assert.equal(block.link_rate_mbps, g.link_rate_mbps);
      for (const s of block.goodput) {
        const curve = block.groups.find((x) => x.protocol === s.protocol).curve;
        assert.equal(s.y.length, curve.mean_mbps.length);
        s.y.forEach((v, i) => assert.ok(Math.abs(v - curve.mean_mbps[i]) < 1e-3, `${s.protocol} bin ${i}`));
        assert.equal(s.t0_ms, curve.t_ms[0]);
        assert.equal(s.step_ms, curve.t_ms[1] - curve.t_ms[0]);
      }
      for (const s of block.ratio) {
        const vs = block.groups.find((x) => x.protocol === s.protocol).vs_no_pep;
        vs.ratio.forEach((r, i) => (r > 0 ? assert.ok(Math.abs(s.y[i] - r) / r < 1e-3) : assert.equal(s.y[i], null)));
      }
    }
    // with a PEP the first seconds are faster in the fixture, as in the paper
    const early = b.blocks[0].ratio[0].y.find((v) => v !== null);
    assert.ok(early > 1);
  });

  it("the medians table shows summary.json's medians, only for metrics some group has", () => {
    const html = renderReport(summary, { records });
    const cells = attrs(
      html,
      /<tr data-protocol="([^"]+)"><th><a href="#bg(\d+)">[^<]*<\/a><\/th><td class="num">[^]*?<\/tr>/g,
    );
    assert.equal(cells.length, bulkGroups.length);
    const model = buildReport({ summary, records });
    for (const g of model.bulk.groups) {
      const row = new RegExp(`<tr data-protocol="${g.protocol}"><th><a href="#${g.anchor}">[^]*?</tr>`).exec(html)[0];
      for (const c of model.bulk.columns) {
        const m = new RegExp(`data-metric="${c.key}"(?: data-median="([^"]*)")?`).exec(row);
        assert.ok(m, `${c.key} in ${g.anchor}`);
        if (g.metrics[c.key]) assert.equal(Number(m[1]), g.metrics[c.key].median);
        else assert.equal(m[1], undefined);
      }
    }
    assert.ok(model.bulk.columns.some((c) => c.key === 'bytes_at_10s'));
    // geo loss 0 quic: bytes at 1 s in MB with two decimals
    const q = find('geo', 0, 'quic-pep').metrics.bytes_at_1s;
    assert.match(
      html,
      new RegExp(`data-median="${q.median}" data-n="3"><span class="med">${(q.median / 1e6).toFixed(2)}</span>`),
    );

    // a 3 s download has no bytes at 5 or 10 s: no empty columns
    const short = makeBulkRecords(bulkScenarios({ duration_s: 3 }), { runs: 2 });
    const m3 = buildReport({ summary: { meta: {}, groups: summarize(short) }, records: short });
    assert.deepEqual(
      m3.bulk.columns.map((c) => c.key).filter((k) => k.startsWith('bytes_at')),
      ['bytes_at_1s', 'bytes_at_3s'],
    );
    assert.ok(BULK_COLUMNS.some((c) => c.key === 'bytes_at_5s'));
  });

  it("the objectives table is summary.json's objectives, met and missed marked", () => {
    const html = renderReport(summary, { records });
    const rows = attrs(html, /<tr class="(?:first)?" data-profile="([^"]*)" data-protocol="([^"]*)">([^]*?)<\/tr>/g);
    const judged = bulkGroups.filter((g) => g.objectives);
    assert.equal(judged.length, 8, 'quic4sat profiles only');
    assert.equal(rows.length, judged.length);
    let met = 0;
    for (const g of judged) {
      const [, , row] = rows.find(([p, proto]) => p === g.scenario.profile && proto === g.scenario.protocol);
      const verdicts = attrs(
        row,
        /<td class="verdict (met|missed)" data-bytes="(\d+)" data-limit-s="([^"]*)" data-median-s="([^"]*)" data-met="(true|false)" data-runs-met="(\d+)" data-runs="(\d+)"(?: data-over-s="[^"]*")?>(✓ met|✗ missed)/g,
      );
      assert.equal(verdicts.length, 3);
      g.objectives.results.forEach((r, i) => {
        const [cls, bytes, limit, median, isMet, runsMet, runs, text] = verdicts[i];
        assert.deepEqual(
          [
            Number(bytes),
            Number(limit),
            median === '' ? null : Number(median),
            isMet === 'true',
            Number(runsMet),
            Number(runs),
          ],
          [r.bytes, r.limit_s, r.median_s, r.met, r.runs_met, r.runs],
        );
        assert.equal(cls, r.met ? 'met' : 'missed');
        assert.equal(text, r.met ? '✓ met' : '✗ missed');
        if (r.met) met++;
      });
    }
    assert.ok(met > 0 && met < judged.length * 3, 'the fixture has both');
    assert.match(html, new RegExp(`<b>${met}</b> of <b>${judged.length * 3}</b> objectives met`));
    // the failed run counts against its scenario
    const failed = find('quic4sat-medium', null, 'quic-pep').objectives.results[0];
    assert.equal(failed.runs, 3);
    assert.ok(failed.runs_met <= 2);
    assert.match(html, /quic4sat-medium<small class="note">medium<\/small>/);
    // no objectives, no table
    const geoOnly = summarize(records.filter((r) => r.scenario.profile === 'geo'));
    assert.doesNotMatch(renderReport({ meta: {}, groups: geoOnly }), /class="objectives"/);
  });

  it('says for each objective row the satellite hop it ran with, how far off a missed one was, and the busiest process', () => {
    const hopOf = {
      'quic-pep': {
        kind: 'quic',
        settings: { tunnel: 'warm', hops: { satellite: { cc: 'sat', 'initial-window': 4167 } } },
      },
      'tcp-pep': { kind: 'tcp', settings: { preset: 'paper', sat: { cc: 'bbr', 'initial-window': 100 } } },
    };
    const withHops = records.map((r) => ({
      ...r,
      ...(hopOf[r.scenario.protocol] ? { pep: hopOf[r.scenario.protocol] } : {}),
      // quic-pep-st busy 90 % of the download, linkem 20 %
      cpu_ms: r.metrics
        ? { 'quic-pep-st': 0.9 * r.metrics.duration_ms, 'linkem-sat': 0.2 * r.metrics.duration_ms }
        : {},
    }));
    const groups = summarize(withHops);
    const html = renderReport({ meta: summary.meta, groups }, { records: withHops });
    const row = (profile, protocol) =>
      new RegExp(`data-profile="${profile}" data-protocol="${protocol}">([^]*?)</tr>`).exec(html)[1];
    assert.match(row('quic4sat-medium', 'quic-pep'), /<td class="sat-hop">warm tunnel, cc=sat, IW 4167<\/td>/);
    assert.match(row('quic4sat-large', 'tcp-pep'), /<td class="sat-hop">split TCP paper, cc=bbr, IW 100<\/td>/);
    assert.match(row('quic4sat-large', 'tcp'), /<td class="sat-hop"><span class="note">no PEP<\/span><\/td>/);
    assert.match(
      row('quic4sat-large', 'quic'),
      /data-role="quic-pep-st" data-share="0.9">quic-pep-st<small>90 % of a core/,
    );
    // every missed objective says by how much: seconds late, or what the median run received
    let shortfalls = 0;
    for (const g of groups.filter((x) => x.objectives)) {
      for (const r of g.objectives.results.filter((x) => !x.met)) {
        const cells = row(g.scenario.profile, g.scenario.protocol);
        if (r.median_s !== null) {
          assert.equal(r.over_s, r.median_s - r.limit_s);
          assert.ok(cells.includes(`<small class="shortfall">by ${r.over_s.toFixed(2)} s</small>`), cells);
        } else {
          assert.equal(typeof r.median_received_bytes, 'number');
          assert.ok(cells.includes('<small class="shortfall">median run got '), cells);
        }
        shortfalls++;
      }
      for (const r of g.objectives.results.filter((x) => x.met)) assert.equal(r.over_s, undefined);
    }
    assert.ok(shortfalls > 0, 'the fixture misses some');
    // summary.json has them too, busiest first
    const g = groups.find((x) => x.scenario.protocol === 'quic-pep' && x.scenario.profile === 'quic4sat-large');
    assert.equal(g.sat_hop, 'warm tunnel, cc=sat, IW 4167');
    assert.deepEqual(
      g.cpu.map((c) => [c.role, c.median_share]),
      [
        ['quic-pep-st', 0.9],
        ['linkem-sat', 0.2],
      ],
    );
  });

  it('a bulk-only report has no page-load sections; a page-load-only one no bulk section; a mixed one both', () => {
    const bulkOnly = renderReport(summary, { records });
    for (const id of ['medians', 'comparisons', 'distributions']) {
      assert.doesNotMatch(bulkOnly, new RegExp(`<section id="${id}"|href="#${id}"`), id);
    }
    assert.match(bulkOnly, /<nav class="toc"><a href="#bulk">Bulk transfers<\/a><a href="#failures">/);
    assert.match(bulkOnly, /<p class="lead">Bulk downloads over emulated/);
    assert.match(bulkOnly, /satbench bulk --preset x/, "the command line is bulk's");
    assert.doesNotMatch(bulkOnly, /No page-load results/);
    assert.equal((bulkOnly.match(/<canvas data-bulk="bb\d" data-chart="goodput"/g) ?? []).length, 4);
    assert.equal((bulkOnly.match(/<canvas data-bulk="bb\d" data-chart="ratio"/g) ?? []).length, 4);
    // every run listed, with its record; the failure links to its run
    assert.equal((bulkOnly.match(/<tr id="run-bg\d+-\d+">/g) ?? []).length, records.length);
    assert.match(bulkOnly, /<a href="#run-bg9-2">2<\/a><\/td><td class="failed">the download stalled<\/td>/);
    assert.match(bulkOnly, new RegExp(`<details class="raw" data-line="${records.length}">`));

    const pl = makeRecords(scenarios({ protocols: ['h1', 'h3'] }), { runs: 4 });
    const plOnly = renderReport({ meta: {}, groups: summarize(pl) }, { records: pl });
    // (the inlined script and styles know about bulk charts; the page does not show any)
    assert.doesNotMatch(plOnly.replace(/<style>[^]*?<\/style>|<script>[^]*?<\/script>/g, ''), /bulk/i);
    assert.match(
      plOnly,
      /<nav class="toc"><a href="#medians">Medians<\/a><a href="#comparisons">Comparisons<\/a><a href="#distributions">Distributions<\/a><a href="#failures">Failures<\/a><a href="#environment">Environment<\/a><a href="#runs">Runs<\/a><\/nav>/,
    );
    assert.match(plOnly, /<p class="lead">Page loads in Chromium over emulated satellite links\. Medians in ms/);
    assert.deepEqual(Object.keys(reportData(plOnly)), ['metrics', 'blocks', 'series']);

    const both = [...pl, ...records];
    const mixed = renderReport({ meta: {}, groups: summarize(both) }, { records: both });
    for (const id of ['medians', 'comparisons', 'distributions', 'bulk', 'failures', 'runs'])
      assert.match(mixed, new RegExp(`<section id="${id}"`), id);
    assert.match(mixed, /<p class="lead">Page loads in Chromium and bulk downloads/);
    assert.match(mixed, /<h3>Page loads<\/h3>[^]*<h3>Bulk transfers<\/h3>/);
    const data = reportData(mixed);
    assert.equal(data.blocks.length, 2);
    assert.equal(data.bulk.length, 4);
    // bulk records are counted beside the page loads, with their lines in results.jsonl
    assert.match(mixed, new RegExp(`<details class="raw" data-line="${pl.length + 1}">`));
  });

  it('draws from summary.json alone: the curves are in it', () => {
    const html = renderReport(summary);
    assert.equal(reportData(html).bulk.length, 4);
    assert.match(html, /Built from summary\.json alone: no per-run records/);
    assert.match(html, /class="objectives"/);
    assert.doesNotMatch(html, /id="raw-records"/);
  });

  it('escapes every string that comes from input', () => {
    const marks = ['<b class=x>1</b>', '<i>3</i>', '<u>k</u>', '<em>20</em>', '<img src=x'];
    const recs = makeBulkRecords(bulkScenarios({ protocols: ['quic', 'quic-pep'], duration_s: 3 }), {
      runs: 2,
      fail: [[1, 2, `${marks[4]} onerror=alert(2)>`]],
    });
    recs.forEach((r) => {
      r.scenario = {
        profile: EVIL,
        loss_pct: marks[0],
        protocol: `${r.scenario.protocol}${EVIL}`,
        duration_s: marks[1],
        [marks[2]]: EVIL,
      };
      r.link_rate_mbps = marks[3];
    });
    recs[0].protocol_seen = EVIL;
    const groups = summarize(recs);
    groups[0].objectives = {
      source: EVIL,
      scenario: EVIL,
      results: [{ bytes: EVIL, limit_s: EVIL, median_s: null, met: false, runs_met: EVIL, runs: EVIL }],
    };
    const html = renderReport(
      { meta: { kind: 'bulk', argv: [EVIL], settings: { x: EVIL } }, groups },
      { records: recs },
    );
    assert.match(html, /data-chart="goodput"/);
    assert.match(html, /class="objectives"/);
    assert.ok(!html.includes(EVIL), 'a raw <script> from input');
    for (const m of marks) assert.ok(!html.includes(m), m);
    assert.ok(html.includes('&lt;script&gt;alert(1)&lt;/script&gt;'));
    const scripts = html.match(/<script\b/g).length;
    assert.equal(html.match(/<\/script>/g).length, scripts);
    assert.ok(!jsonForScript(reportData(html)).includes('</'));
  });
});
