// The report's content and its safety: numbers from summary.json, the
// paper's medians where the scenario matches, comparisons, and every input
// string escaped.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { presetSetup } from '../../harness/pageload/presets.js';
import { renderReport, buildReport, escapeHtml, jsonForScript, inlineScript } from '../../harness/report/html.js';
import { loadReference, paperMedian } from '../../harness/report/paper.js';
import { comparisonPairs, altSvcSentence } from '../../harness/report/pageload/part.js';
import { summarize } from '../../harness/analysis/summary.js';
import { splitByBoundary } from '../../harness/analysis/boundary-split.js';
import { fmtP } from '../../harness/core/stats.js';
import { reportFolder } from '../../harness/report/outputs.js';
import os from 'node:os';
import { UsageError } from '../../harness/core/errors.js';
import {
  scenarios,
  makeRecords,
  writeResultsDir,
  bulkScenarios,
  makeBulkRecords,
  makeViewPairs,
  handshakeCounts,
} from '../fixtures.js';
import { makeHar, makeFrame } from '../run-files.js';

const EVIL = '<script>alert(1)</script>';

describe('report', () => {
  const list = scenarios({ protocols: ['h1', 'h1-pep', 'h3', 'h3-pep'], losses: [0, 1] });
  const records = makeRecords(list, { runs: 12, fail: [[2, 5, 'wrong protocol: <b>document</b> over h2']] });
  const summary = {
    meta: {
      seed: 1,
      generated: 'now',
      matrix: {
        profiles: ['geo', 'leo'],
        losses: [0, 1],
        protocols: ['h1', 'h1-pep', 'h3', 'h3-pep'],
        sites: ['kepler'],
        runs: 12,
      },
    },
    groups: summarize(records),
  };

  it("puts the paper's median beside ours only where the scenario matches", () => {
    const ref = loadReference();
    assert.equal(paperMedian(ref, { profile: 'geo', loss_pct: 0, protocol: 'h3', site: 'kepler' }, 'plt'), 7669);
    assert.equal(paperMedian(ref, { profile: 'leo', loss_pct: 0.01, protocol: 'h1-pep', site: 'kepler' }, 'fcp'), 1085);
    assert.equal(paperMedian(ref, { profile: 'geo', loss_pct: 0, protocol: 'h3', site: 'kuhn-a' }, 'plt'), null);
    assert.equal(paperMedian(ref, { profile: 'geo-jitter', loss_pct: 0, protocol: 'h3', site: 'kepler' }, 'plt'), null);
    // the access-model profiles (ifip2022's) are the paper's links with its access layer
    assert.equal(paperMedian(ref, { profile: 'geo-dvb', loss_pct: 0, protocol: 'h3', site: 'kepler' }, 'plt'), 7669);
    assert.equal(
      paperMedian(ref, { profile: 'leo-dvb', loss_pct: 0.01, protocol: 'h1-pep', site: 'kepler' }, 'fcp'),
      1085,
    );
    assert.equal(paperMedian(ref, { profile: 'geo', loss_pct: 0, protocol: 'h2', site: 'kepler' }, 'plt'), null);
  });

  it("the Environment says which parts of the preset's own set-up ran, and why", () => {
    const run = { matrix: summary.meta.matrix, settings: { origin: 'h2o-patched', pep: { tunnel: 'per-connection' } } };
    const paper = presetSetup('ifip2022', { ...run, matrix: { ...run.matrix, profiles: ['geo-dvb', 'leo-dvb'] } });
    assert.deepEqual(paper.length, 3);
    assert.match(paper[0], /^link profiles geo-dvb, leo-dvb: the access models/);
    assert.match(paper[1], /^QUIC PEP: a connection per client connection, NewReno with an initial window of 100/);
    assert.match(paper[2], /^origin h2o-patched: H2O without the OpenSSL 3 handshake bug/);
    // satbench's own defaults, typed; an origin that fell back where h2o-patched is not built
    const ours = presetSetup(
      'ifip2022',
      {
        ...run,
        settings: { origin: 'h2o', pep: { tunnel: 'warm' } },
        argv: ['--profile', 'geo,leo', '--pep-tunnel=warm'],
      },
      { patched: false },
    );
    assert.match(ours[0], /^link profiles geo, leo: chosen with --profile; the paper's are geo-dvb, leo-dvb$/);
    assert.match(ours[1], /^QUIC PEP: the standing warm tunnel, satbench's own, chosen with --pep-tunnel$/);
    assert.match(ours[2], /^origin h2o: h2o-patched is not built here/);
    // a campaign saved before the preset was the paper's set-up
    const old = presetSetup('ifip2022', { ...run, settings: { origin: 'h2o', pep: {} } }, { patched: true });
    assert.match(old[1], /warm tunnel, satbench's own, as the campaign saved it \(started before ifip2022/);
    assert.match(old[2], /^origin h2o: as the campaign saved it/);
    assert.deepEqual(presetSetup('quick', run), []);
    const html = renderReport({
      ...summary,
      meta: { ...summary.meta, preset: 'ifip2022', preset_setup: ['a <b>', 'c'] },
    });
    assert.match(html, /<tr><th>preset set-up<\/th><td>a &lt;b&gt;<br>c<\/td><\/tr>/);
    assert.doesNotMatch(renderReport(summary), /preset set-up/, 'older summaries do not say');
  });

  it("says when HTTP/3 loads had Alt-Svc on every response, unlike the paper's testbed, and only then", () => {
    const note =
      /<p class="legend-note alt-svc">HTTP\/3 here: our origin sent Alt-Svc on every response \(--alt-svc all\)/;
    const withAltSvc = (v) => ({ ...summary, meta: { ...summary.meta, alt_svc: v } });
    assert.match(renderReport(withAltSvc('all'), { records }), note);
    assert.doesNotMatch(renderReport(withAltSvc('tcp'), { records }), note);
    assert.doesNotMatch(renderReport(summary, { records }), note, 'older summaries do not say');
    assert.equal(altSvcSentence(['h1', 'h1-pep'], 'all'), null, 'no HTTP/3, nothing to say');
    // a group of a kind without protocols (or a hand-made summary) among them
    assert.equal(altSvcSentence([undefined, 'h1'], 'all'), null);
    assert.match(altSvcSentence([undefined, 'h3'], 'all'), /^HTTP\/3 here/);
  });

  it("the matrix shows summary.json's medians, with intervals and the paper's values", () => {
    const html = renderReport(summary, { records });
    for (const g of summary.groups) {
      for (const m of ['response_start_ms', 'fcp_ms', 'plt_ms']) {
        const cell = new RegExp(
          `<div class="scroll matrix" data-metric="${m}">[\\s\\S]*?<td data-key="${escapeHtml(`${g.scenario.profile}|${g.scenario.loss_pct}|${g.scenario.protocol}|kepler`).replace(/\|/g, '\\|')}" data-median="([^"]*)"[^>]*><a class="med" href="#g\\d+">(\\d+)</a>`,
        );
        const match = cell.exec(html);
        assert.ok(match, `${m} of ${JSON.stringify(g.scenario)}`);
        assert.equal(Number(match[1]), g.metrics[m].median);
        assert.equal(Number(match[2]), Math.round(g.metrics[m].median));
      }
    }
    assert.match(html, /data-paper="7669">paper 7669 · ×\d\.\d\d</);
    assert.match(html, /n 11, 1 failed/);
  });

  it('compares PEP with no PEP and HTTP/3 with HTTP/1.1', () => {
    assert.deepEqual(
      comparisonPairs(['h1', 'h1-pep', 'h3', 'h3-pep']).map((p) => `${p.a}/${p.b}`),
      ['h1-pep/h1', 'h3-pep/h3', 'h3/h1', 'h3-pep/h1-pep'],
    );
    assert.deepEqual(comparisonPairs(['h3-pep']), []);
    const model = buildReport({ summary, records, reference: loadReference() });
    const c = model.pageload.comparisons.find(
      (x) => x.a === 'h3-pep' && x.b === 'h3' && x.profile === 'geo' && x.loss_pct === 0,
    );
    const plt = c.metrics.find((x) => x.metric.key === 'plt_ms');
    const med = (p) =>
      summary.groups.find((g) => g.scenario.profile === 'geo' && g.scenario.loss_pct === 0 && g.scenario.protocol === p)
        .metrics.plt_ms.median;
    assert.equal(plt.ratio, med('h3-pep') / med('h3'));
    assert.equal(plt.paper_ratio, 7344 / 7669);
    assert.ok(plt.p > 0 && plt.p <= 1);
    assert.ok(plt.cliffs_delta >= -1 && plt.cliffs_delta <= 1);
    assert.equal(model.pageload.blocks.length, 4, 'a distribution block per profile × loss × site');
  });

  it('escapes every string that comes from input', () => {
    const evil = [{ profile: EVIL, loss_pct: 0, protocol: 'h3', site: EVIL }];
    const recs = makeRecords(evil, { runs: 2, fail: [[0, 2, `<img src=x onerror=alert(2)>`]] });
    recs[0].navigation.name = `https://x/${EVIL}`;
    const s = {
      meta: {
        generated: EVIL,
        seed: 1,
        argv: [EVIL],
        environment: {
          satbench: EVIL,
          chromium_flags: { h3: [EVIL] },
          profiles: { [EVIL]: { description: EVIL, configured: {}, links: { x: EVIL } } },
        },
      },
      groups: summarize(recs),
    };
    recs[0].lighthouse = {
      error: EVIL,
      score: 0.5,
      metrics: {},
      html: 'javascript:alert(3)',
      json: `lighthouse/${EVIL}`,
    };
    const html = renderReport(s, { records: recs });
    assert.match(html, /<section id="lighthouse">/);
    assert.ok(!html.includes('javascript:alert(3)'), 'links only to files in the folder');
    assert.ok(!html.includes(EVIL), 'a raw <script> from input');
    assert.ok(!html.includes('<img src=x'), 'raw HTML from input');
    assert.ok(html.includes('&lt;script&gt;alert(1)&lt;/script&gt;'));
    // the embedded JSON cannot close its <script> element
    const scripts = html.match(/<script\b/g).length;
    assert.equal(html.match(/<\/script>/g).length, scripts);
    assert.equal(escapeHtml(`"'&`), '&quot;&#39;&amp;');
    assert.equal(JSON.parse(jsonForScript({ a: '</script><!--' })).a, '</script><!--');
    assert.ok(!jsonForScript({ a: '</script>' }).includes('</'));
    assert.equal(inlineScript('var s = "</script>";'), 'var s = "<\\/script>";');
    assert.throws(() => inlineScript('x = "<!--"'));
  });

  it('embeds every raw record, compressed, one per results.jsonl line', () => {
    const html = renderReport(summary, { records });
    const b64 =
      /<script type="application\/octet-stream" id="raw-records" data-encoding="gzip\+base64">([^<]*)<\/script>/.exec(
        html,
      )[1];
    const lines = zlib.gunzipSync(Buffer.from(b64, 'base64')).toString().trim().split('\n');
    assert.equal(lines.length, records.length);
    assert.deepEqual(JSON.parse(lines[7]), records[7]);
    assert.match(html, /<details class="raw" data-line="8"><summary>results\.jsonl line 8<\/summary>/);
  });

  it('works from summary.json alone and for other kinds of records', () => {
    const bulk = [
      {
        kind: 'bulk',
        scenario: { profile: 'geo', protocol: 'tcp-pep' },
        run: 1,
        ok: true,
        metrics: { goodput_mbps: 17.5 },
      },
    ];
    const other = [{ kind: 'probe', scenario: { profile: 'geo' }, run: 1, ok: true, metrics: { rtt_ms: 581 } }];
    const html = renderReport({ meta: {}, groups: summarize([...records.slice(0, 8), ...bulk, ...other]) });
    assert.match(html, /Built from summary\.json alone: no distributions, the comparisons&#39; p-values/);
    // a bulk group without curve or known metrics still shows, with every median
    assert.match(html, /bulk tcp-pep · geo · the profile&#39;s loss/);
    assert.match(html, /goodput_mbps 17\.5/);
    assert.match(html, /No goodput curve/);
    // kinds the report does not know are listed apart
    assert.match(html, /<section id="other">[\s\S]*probe profile=geo[\s\S]*rtt_ms 581/);
  });

  it('satbench report DIR keeps a matching summary.json and rewrites a stale one', () => {
    const dir = writeResultsDir(records, { meta: { seed: 1 } });
    const before = fs.readFileSync(path.join(dir, 'summary.json'), 'utf8');
    let r = reportFolder(dir);
    assert.equal(r.rewrote, false);
    assert.equal(fs.readFileSync(path.join(dir, 'summary.json'), 'utf8'), before);
    assert.ok(fs.readFileSync(path.join(dir, 'index.html'), 'utf8').includes('id="raw-records"'));
    fs.appendFileSync(path.join(dir, 'results.jsonl'), JSON.stringify({ ...records[0], run: 13 }) + '\n');
    r = reportFolder(dir);
    assert.equal(r.rewrote, true);
    assert.equal(JSON.parse(fs.readFileSync(path.join(dir, 'summary.json'), 'utf8')).groups[0].runs, 13);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

describe('report: runs split by a slot boundary inside the load', () => {
  const list = scenarios({ profiles: ['starlink', 'leo'], protocols: ['h1', 'h3'] });
  const records = makeRecords(list, { runs: 12, fail: [[0, 3, 'timeout']] });
  // over starlink a boundary in every third load, which takes 40 % longer
  // (the failed run 3 of the first scenario too: a handover before it failed)
  for (const r of records.filter((x) => x.scenario.profile === 'starlink')) {
    const boundary = r.run % 3 === 0;
    r.slot = { period_s: 15, phase_s: boundary ? 14.2 : 3.1, boundary_in_load: boundary };
    if (boundary && r.ok) r.metrics.plt_ms = Math.round(r.metrics.plt_ms * 1.4);
  }
  const summary = { meta: { seed: 1, generated: 'now' }, groups: summarize(records) };
  const dataOf = (html) =>
    JSON.parse(/<script type="application\/json" id="report-data">([^]*?)<\/script>/.exec(html)[1]);

  it('gives each slot scenario its medians with and without a boundary, n and p, from summary.json', () => {
    const html = renderReport(summary, { records });
    assert.match(html, /<a href="#slot-boundaries">Slot boundaries<\/a>/);
    const section = /<section id="slot-boundaries">([\s\S]*?)<\/section>/.exec(html)[1];
    const rows = [...section.matchAll(/<tr><th><a href="#g(\d+)">([^<]*)<\/a><\/th>(.*)<\/tr>/g)];
    assert.deepEqual(
      rows.map((m) => m[2]),
      ['starlink loss 0 % h1 kepler', 'starlink loss 0 % h3 kepler'],
      'only the scenarios over a slot process',
    );
    for (const [, index, , cells] of rows) {
      const g = summary.groups[Number(index)];
      const recs = records.filter(
        (r) => r.scenario.protocol === g.scenario.protocol && r.scenario.profile === 'starlink',
      );
      const plt = splitByBoundary(recs, 'plt_ms');
      // Response Start, FCP, PLT: boundary, none, p each; PLT last
      const tds = [...cells.matchAll(/<td class="num[^"]*">([^<]*)(?:<span class="n">n (\d+)<\/span>)?/g)];
      const [w, wo, p, failedWith, failedWithout] = tds.slice(-5);
      const failed = recs.filter((r) => !r.ok);
      assert.deepEqual(
        [Number(failedWith[1]), Number(failedWithout[1])],
        [failed.filter((r) => r.run % 3 === 0).length, failed.filter((r) => r.run % 3 !== 0).length],
      );
      assert.equal(w[1].trim(), String(Math.round(plt.with.median)));
      assert.equal(Number(w[2]), plt.with.n);
      assert.equal(wo[1].trim(), String(Math.round(plt.without.median)));
      assert.equal(Number(wo[2]), plt.without.n);
      assert.equal(p[1].trim(), fmtP(plt.p));
      // every third successful run, in neither group none
      assert.equal(plt.with.n, recs.filter((r) => r.ok && r.run % 3 === 0).length);
      assert.equal(plt.with.n + plt.without.n, g.metrics.plt_ms.n);
    }
    assert.equal(records.filter((r) => r.slot && !r.ok).length, 1, 'the failed run is split too');
    assert.match(section, /<td class="num sig">/, 'a 40 % slower group is significant');
    assert.match(section, /⚠/, 'fewer than 10 runs with a boundary');
  });

  it('Distributions: two CDFs side by side per metric for a slot block, the other blocks as before', () => {
    const html = renderReport(summary, { records });
    const data = dataOf(html);
    const starlink = data.blocks.find((b) => b.title.startsWith('starlink'));
    const leo = data.blocks.find((b) => b.title.startsWith('leo'));
    assert.equal(starlink.split, true);
    assert.equal('split' in leo, false);
    const h1 = data.series['starlink|0|h1|kepler'];
    assert.deepEqual(
      h1.boundary,
      h1.runs.map(([run]) => run % 3 === 0),
    );
    assert.equal('boundary' in data.series['leo|0|h1|kepler'], false);
    const splitCanvases = [
      ...html.matchAll(
        /<canvas data-block="(b\d+)" data-metric="([^"]+)" data-chart="cdf" data-split="(with|without)"/g,
      ),
    ];
    assert.deepEqual(
      splitCanvases.map((m) => `${m[1]} ${m[2]} ${m[3]}`),
      ['response_start_ms', 'fcp_ms', 'plt_ms'].flatMap((k) => [
        `${starlink.id} ${k} with`,
        `${starlink.id} ${k} without`,
      ]),
    );
    assert.match(html, /Over a link with a slot process, under each block/);

    // a campaign without slots: the section, the split charts and their note are absent
    const plain = records.filter((r) => r.scenario.profile === 'leo');
    const before = renderReport({ meta: summary.meta, groups: summarize(plain) }, { records: plain });
    assert.doesNotMatch(
      before,
      /slot-boundaries|<canvas[^>]*data-split|Split by slot boundary|Over a link with a slot process/,
    );
    assert.equal(dataOf(before).blocks[0].split, undefined);
  });

  it('from summary.json alone: the medians, and no charts', () => {
    const html = renderReport(summary);
    assert.match(html, /<section id="slot-boundaries">/);
    assert.doesNotMatch(html, /<canvas[^>]*data-split/);
    // numbers only as numbers: a summary.json edited by hand cannot break the table
    const g = structuredClone(summary.groups[0]);
    g.boundary_split.metrics.plt_ms = { with: { n: 'x', median: 'y' }, without: null, p: '<x-inj>' };
    const odd = renderReport({ meta: summary.meta, groups: [g] });
    assert.match(odd, /<section id="slot-boundaries">[\s\S]*?<td class="num">–/);
    assert.ok(!odd.includes('<x-inj'));
  });
});

// Every field of a summary.json or of a results.jsonl, one at a time, set
// to a hostile string (and every object key renamed to one): the report
// built from the file either refuses it in one line (UsageError) or
// escapes it. `<x-inj` anywhere in the HTML would be an element made by
// input; in attributes the quotes would end them.
describe('report: hostile input in any field', function () {
  // hundreds of reports, each from a folder (with a run's HAR and frames):
  // tens of seconds alone, more on a shared 2-core machine
  this.timeout(180000);
  const HOSTILE = `"'><x-inj>`;
  const page = makeRecords(scenarios({ profiles: ['geo'], protocols: ['h1', 'h1-pep', 'h3-pep'] }), {
    runs: 2,
    fail: [[0, 2, 'boom']],
  });
  page[0].lighthouse = {
    score: 0.5,
    metrics: { 'first-contentful-paint': 1, 'cumulative-layout-shift': 0.1 },
    html: 'lighthouse/a.html',
    json: 'lighthouse/a.json',
    error: 'e',
  };
  // a run's HAR and filmstrip (issue 28), in the folder as the run wrote them
  page[0].har = 'har/geo_0_h1_kepler-run1.har.gz';
  page[0].visual = {
    frames: 'filmstrip/geo_0_h1_kepler-run1',
    progress: [
      [0, 0],
      [900, 100],
    ],
    waited_ms: 1,
  };
  page[0].not_captured = { cls: 'e' };
  // over a slot process (issue 29): a load with a boundary in it and one without
  page[1].slot = { period_s: 15, phase_s: 14, boundary_in_load: true };
  page[4].slot = { period_s: 15, phase_s: 2, boundary_in_load: false };
  const har = makeHar({ protocol: 'http/1.1', images: 1, scenario: page[0].scenario });
  const runFiles = (h = har) => ({
    [page[0].har]: zlib.gzipSync(JSON.stringify(h)),
    [`${page[0].visual.frames}/000000.jpg`]: makeFrame(250),
    [`${page[0].visual.frames}/000900.jpg`]: makeFrame(20),
  });
  const bulk = makeBulkRecords(
    bulkScenarios({ profiles: ['quic4sat-medium'], protocols: ['tcp', 'tcp-pep'], duration_s: 1 }),
    { runs: 1 },
  );
  // a revisit pair with its cache and handshake counts (issue 30), Proxy-ST's too
  const pair = makeViewPairs(1, {
    extra: () => ({ handshakes: { origin: handshakeCounts(1, 1, 1, 2), proxy_st: handshakeCounts(2, 0) } }),
  });
  const records = [...page, ...pair, ...bulk];
  const meta = {
    seed: 1,
    generated: 'now',
    preset: 'quick',
    argv: ['--profile', 'geo'],
    link: 'linkem',
    origin: 'rust',
    matrix: { profiles: ['geo'], losses: [0], protocols: ['h1', 'h1-pep', 'h3-pep'], sites: ['kepler'], runs: 2 },
    settings: { bin_ms: 100 },
    tcp: { cc: 'cubic' },
    quic: { cc: 'bbr' },
    shard: { index: 1, count: 2 },
    merged_from: [{ dir: 'd', shard: { index: 1, count: 2 } }],
    warnings: ['w'],
    environment: {
      satbench: '1',
      git: { commit: 'a', dirty: true },
      chromium: { version: '1', path: '/x' },
      kernel: 'k',
      os: 'o',
      cpu: { model: 'm', cores: 2, memory_gib: 4 },
      node: 'n',
      libraries: { a: '1' },
      chromium_flags: { h1: ['--a'] },
      profiles: {
        geo: { description: 'd', configured: { rtt_ms: 1, forward_mbps: 2, return_mbps: 3, loss_pct: 0 }, links: {} },
      },
    },
  };
  const summary = { meta, groups: summarize(records) };

  // Every leaf and every key of `v` (arrays below the top: their first two items).
  function fields(v, at = [], out = []) {
    if (!v || typeof v !== 'object') return out;
    const entries = Array.isArray(v) ? (at.length ? v.slice(0, 2) : v).map((x, i) => [i, x]) : Object.entries(v);
    for (const [k, x] of entries) {
      if (!Array.isArray(v)) out.push({ at, key: k });
      if (x && typeof x === 'object') fields(x, [...at, k], out);
      else out.push({ at: [...at, k] });
    }
    return out;
  }
  function poisoned(root, { at, key }) {
    const copy = structuredClone(root);
    const parent = (key === undefined ? at.slice(0, -1) : at).reduce((o, k) => o[k], copy);
    if (key === undefined) parent[at.at(-1)] = HOSTILE;
    else {
      parent[`${key}${HOSTILE}`] = parent[key];
      delete parent[key];
    }
    return copy;
  }
  const name = ({ at, key }) => (key === undefined ? at.join('.') : `key ${[...at, key].join('.')}`);

  let tmp;
  before(() => (tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-hostile-'))));
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  // `satbench report DIR` on a folder with these files: the HTML, or null when refused in one line.
  function report(files) {
    const dir = fs.mkdtempSync(path.join(tmp, 'r-'));
    for (const [f, text] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
      fs.writeFileSync(path.join(dir, f), text);
    }
    try {
      reportFolder(dir);
      return fs.readFileSync(path.join(dir, 'index.html'), 'utf8');
    } catch (e) {
      if (e instanceof UsageError && !e.message.includes('\n')) return null;
      throw e;
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
  const jsonl = (rs) => rs.map((r) => JSON.stringify(r)).join('\n') + '\n';

  // How many cases rendered, and those whose hostile string is on the page, escaped.
  function check(cases, files) {
    let rendered = 0;
    const shown = [];
    const injected = [];
    for (const c of cases) {
      const html = report(files(c));
      if (html === null) continue;
      rendered++;
      if (html.includes('&quot;&#39;&gt;&lt;x-inj&gt;')) shown.push(c);
      if (html.includes('<x-inj')) injected.push(name(c));
    }
    assert.deepEqual(injected, []);
    return { rendered, shown };
  }

  it('the clean files render, and an unescaped field would be seen', () => {
    const html = report({ 'summary.json': JSON.stringify(summary) });
    assert.match(html, /<b>10<\/b> runs/);
    assert.match(html, /<section id="first-and-repeat">/);
    assert.ok(html.includes('&quot;&#39;&gt;&lt;x-inj&gt;') === false);
    const bad = { ...summary, groups: [{ ...summary.groups[0], runs: HOSTILE }] };
    assert.ok(report({ 'summary.json': JSON.stringify(bad) }).includes('&quot;&#39;&gt;&lt;x-inj&gt;'));
  });

  it('summary.json alone: every field', () => {
    const cases = fields(summary);
    assert.ok(cases.length > 300, `${cases.length} fields`);
    const { rendered } = check(cases, (c) => ({ 'summary.json': JSON.stringify(poisoned(summary, c)) }));
    assert.ok(rendered > cases.length * 0.9, `${rendered} of ${cases.length} rendered`);
  });

  it('results.jsonl (with a matching summary.json): every field of every record', () => {
    const cases = fields(records);
    assert.ok(cases.length > 300, `${cases.length} fields`);
    const { rendered } = check(cases, (c) => {
      const rs = poisoned(records, c);
      // a record without a scenario is refused by the reader, before any summary
      const groups = rs.every((r) => r.scenario) ? summarize(rs) : [];
      return { ...runFiles(), 'results.jsonl': jsonl(rs), 'summary.json': JSON.stringify({ meta, groups }) };
    });
    assert.ok(rendered > cases.length * 0.9, `${rendered} of ${cases.length} rendered`);
  });

  it("a run's HAR: every field and key, inert in the report's data", () => {
    const cases = fields(har);
    assert.ok(cases.length > 150, `${cases.length} fields`);
    const files = (h) => ({ ...runFiles(h), 'results.jsonl': jsonl(records), 'summary.json': JSON.stringify(summary) });
    const { rendered } = check(cases, (c) => files(poisoned(har, c)));
    assert.equal(rendered, cases.length, `${rendered} of ${cases.length} rendered`);
    // a hostile URL reaches the page's data as it was, for the page's script to show as text
    const url = poisoned(har, { at: ['log', 'entries', 1, 'request', 'url'] });
    const html = report(files(url));
    const data = JSON.parse(/<script type="application\/json" id="report-data">([^]*?)<\/script>/.exec(html)[1]);
    assert.equal(Object.values(data.runViews)[0].waterfall.rows[1].url, HOSTILE);
  });

  it('results.jsonl and summary.json: every field of the summary beside the records', () => {
    const cases = fields(summary).filter((c) => c.at[0] === 'meta');
    assert.ok(cases.length > 80, `${cases.length} fields`);
    const { rendered, shown } = check(cases, (c) => ({
      'results.jsonl': jsonl(records),
      'summary.json': JSON.stringify(poisoned(summary, c)),
    }));
    // meta beside the records only describes the campaign: no field of it is refused,
    // and most of its values are on the page, so the check above saw them.
    assert.equal(rendered, cases.length, `${rendered} of ${cases.length} rendered`);
    const values = (cs) => cs.filter((c) => c.key === undefined).length;
    assert.ok(values(shown) > values(cases) * 0.9, `${values(shown)} of ${values(cases)} values shown`);
  });
});
