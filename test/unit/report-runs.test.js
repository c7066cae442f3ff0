// The report's run views (issue 28): a run's HAR as waterfall rows, the
// satellite round trips marked, its connections as lanes, the median run
// of a scenario, its filmstrip's frames, the median runs side by side;
// and the run shown without a HAR or frames that are missing or unreadable.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import {
  waterfallOf,
  rowOf,
  roundTripMarks,
  connectionLanes,
  roundTripsAt,
  sendWaves,
  PHASES,
  MAX_ROUND_TRIP_MARKS,
} from '../../harness/report/pageload/waterfall.js';
import {
  framesOf,
  visualChanges,
  filmstripStep,
  filmstripCells,
  toInline,
  MAX_CELLS,
} from '../../harness/report/pageload/filmstrip.js';
import { medianRun } from '../../harness/report/pageload/median-run.js';
import { buildRunViews, wavesSentence } from '../../harness/report/pageload/run-views.js';
import { renderReport } from '../../harness/report/html.js';
import { runFiles, namedFiles } from '../../harness/report/run-files.js';
import { reportFolder, mergeFolders } from '../../harness/report/outputs.js';
import { summarize } from '../../harness/analysis/summary.js';
import { scenarioLabel } from '../../harness/kinds/pageload.js';
import { scenarios, makeRecords, writeResultsDir } from '../fixtures.js';
import { makeHar, writeRunFiles, framesAt } from '../run-files.js';

const phase = (row, name) => row.phases[PHASES.indexOf(name)];
const reportData = (html) =>
  JSON.parse(/<script type="application\/json" id="report-data">([^]*?)<\/script>/.exec(html)[1]);

describe('report: a HAR as a waterfall', () => {
  const har = makeHar({ rttMs: 600, protocol: 'h3', images: 4 });

  it('a row per entry in start order, times from the page start, the handshake apart from the connect', () => {
    const wf = waterfallOf(har, { metrics: { fcp_ms: 1900, lcp_ms: 2500 } });
    assert.equal(wf.rows.length, 6);
    const doc = wf.rows[0];
    assert.equal(doc.url, 'https://satbench.test/');
    assert.equal(doc.start, 0);
    assert.equal(doc.protocol, 'h3');
    assert.equal(doc.connection, '11');
    assert.equal(doc.priority, 'VeryHigh');
    // HAR counts ssl inside connect: drawn apart, never twice
    assert.equal(phase(doc, 'ssl'), 600);
    assert.equal(phase(doc, 'connect'), 2);
    assert.equal(phase(doc, 'dns'), 0.5);
    assert.equal(phase(doc, 'wait'), 610);
    assert.equal(doc.bytes, 30200, "the bytes on the wire (chrome-har's _transferSize)");
    // _queued (Chromium held the request) is drawn before startedDateTime
    const css = wf.rows[1];
    assert.equal(phase(css, 'queued'), 3);
    const at = (e) => Date.parse(e.startedDateTime);
    assert.equal(css.start, at(har.log.entries[1]) - at(har.log.pages[0]) - 3);
    // the events: DOMContentLoaded and load from the page timings, FCP and LCP from the record
    assert.deepEqual(
      wf.marks.map((m) => `${m.key} ${m.ms}`),
      [
        'fcp 1900',
        'lcp 2500',
        `dcl ${har.log.pages[0].pageTimings.onContentLoad}`,
        `load ${har.log.pages[0].pageTimings.onLoad}`,
      ],
    );
    assert.equal(wf.end, har.log.pages[0].pageTimings.onLoad);
    assert.equal(wf.rtt, 600, "the HAR's _satbench.rtt_ms");
  });

  it('reads what chrome-har gives without the contract fields, and -1 as no phase', () => {
    const e = structuredClone(har.log.entries[2]);
    delete e._connectionId;
    delete e._protocol;
    e.timings = { blocked: -1, dns: -1, connect: -1, ssl: -1, send: 0.5, wait: 100, receive: -1 };
    const row = rowOf(e, Date.parse(har.log.pages[0].startedDateTime));
    assert.equal(row.connection, '11', 'the standard `connection` field');
    assert.equal(row.protocol, 'h3', 'response.httpVersion');
    assert.deepEqual(row.phases, [0, 0, 0, 0, 0, 0.5, 100, 0]);
    e.connection = '0';
    assert.equal(rowOf(e, 0).connection, null, 'connection 0: none (a cached response)');
    assert.equal(rowOf({ ...e, startedDateTime: 'yesterday' }, 0), null);
    // a failed request, as the run's HAR keeps it: status 0 and DevTools' error
    assert.equal(row.error, null);
    const failed = { ...e, response: { ...e.response, status: 0, _error: 'net::ERR_UNSAFE_PORT' } };
    assert.deepEqual([rowOf(failed, 0).status, rowOf(failed, 0).error], [0, 'net::ERR_UNSAFE_PORT']);
  });

  it('without page timings the events come from the record; the RTT from the profile; entries without a start are counted', () => {
    const bare = structuredClone(har);
    delete bare.log.pages[0].pageTimings;
    delete bare.log.pages[0]._satbench;
    bare.log.entries.push({ request: { url: 'x' } });
    const wf = waterfallOf(bare, { metrics: { plt_ms: 4000, dom_content_loaded_ms: 2000 }, rttMs: 580 });
    assert.deepEqual(
      wf.marks.map((m) => `${m.key} ${m.ms}`),
      ['dcl 2000', 'load 4000'],
    );
    assert.equal(wf.rtt, 580);
    assert.equal(wf.skipped, 1);
    assert.throws(() => waterfallOf({ log: {} }), /no log\.entries/);
    assert.throws(() => waterfallOf(null), /no log\.entries/);
  });

  it('marks every whole satellite round trip along the axis, so that a reader counts them', () => {
    assert.deepEqual(roundTripMarks(600, 2000), [
      { ms: 600, n: 1 },
      { ms: 1200, n: 2 },
      { ms: 1800, n: 3 },
    ]);
    assert.deepEqual(roundTripMarks(600, 1800).at(-1), { ms: 1800, n: 3 });
    assert.deepEqual(roundTripMarks(null, 2000), []);
    assert.deepEqual(roundTripMarks(0, 2000), []);
    assert.equal(roundTripMarks(10, 10 * MAX_ROUND_TRIP_MARKS).length, MAX_ROUND_TRIP_MARKS);
    assert.deepEqual(roundTripMarks(10, 10 * (MAX_ROUND_TRIP_MARKS + 1)), [], 'too dense: none');
    assert.equal(roundTripsAt(5086, 580), 8.8);
    assert.equal(roundTripsAt(5086, null), null);
    // the fixture's h3 load: handshake, document, stylesheet and images each a round trip
    const wf = waterfallOf(makeHar({ rttMs: 600, protocol: 'h3', images: 4 }));
    const load = wf.marks.find((m) => m.key === 'load').ms;
    assert.equal(wf.roundTrips.length, Math.floor(load / 600));
    assert.equal(wf.roundTrips.length, 4);
  });

  it('counts the waves: after how many round trips each request left (its handshake included)', () => {
    // the fixture's h3 load: the document is sent after the handshake's
    // round trip, the stylesheet after the document's, the images one later
    const h3 = waterfallOf(makeHar({ rttMs: 600, protocol: 'h3', images: 4 }));
    const load = h3.marks.find((m) => m.key === 'load').ms;
    assert.deepEqual(
      sendWaves(h3.rows, 600, load).map((w) => [w.n, w.requests, w.connecting]),
      [
        [1, 1, 1],
        [2, 1, 0],
        [3, 4, 0],
      ],
    );
    assert.equal(sendWaves(h3.rows, 600, load)[0].first, 'https://satbench.test/');
    // over h1 the first six images open a connection each (a handshake
    // first); the two others, queued one round trip, leave in the same one
    const h1 = waterfallOf(makeHar({ rttMs: 600, protocol: 'http/1.1', images: 8 }));
    assert.deepEqual(
      sendWaves(h1.rows, 600).map((w) => [w.n, w.requests, w.connecting]),
      [
        [1, 1, 1],
        [2, 1, 0],
        [4, 8, 6],
      ],
    );
    assert.deepEqual(
      sendWaves(h3.rows, 600, 1000).map((w) => w.n),
      [1],
      'requests after the load event are left out',
    );
    assert.deepEqual(sendWaves(h3.rows, null), []);
    assert.equal(
      wavesSentence([
        { n: 1, requests: 1, connecting: 1 },
        { n: 2, requests: 14, connecting: 0 },
      ]),
      'Requests sent after 1 round trip: 1 (1 opening a connection); after 2: 14.',
    );
  });

  it('connections as lanes in the order of first use, requests without one last', () => {
    const h1 = waterfallOf(makeHar({ protocol: 'http/1.1', images: 8 }));
    const lanes = h1.lanes;
    assert.deepEqual(
      lanes.map((l) => l.connection),
      ['11', '12', '13', '14', '15', '16', '17'],
    );
    assert.deepEqual(lanes[0].rows, [0, 1], 'the document and the stylesheet share its connection');
    assert.deepEqual(lanes[1].rows, [2, 8], 'images 0 and 6 on the first image connection');
    assert.equal(lanes[0].protocol, 'http/1.1');
    assert.equal(lanes[1].start, h1.rows[2].start);
    assert.ok(lanes[1].end > h1.rows[8].start);
    const rows = [
      { connection: null, start: 5, phases: [1], protocol: null },
      { connection: '3', start: 1, phases: [2], protocol: 'h2' },
      { connection: null, start: 7, phases: [1], protocol: null },
    ];
    assert.deepEqual(
      connectionLanes(rows).map((l) => [l.connection, l.rows, l.start, l.end]),
      [
        ['3', [1], 1, 3],
        [null, [0, 2], 5, 8],
      ],
    );
    assert.equal(waterfallOf(makeHar({ protocol: 'h3', images: 8 })).lanes.length, 1, 'h3: one connection');
  });
});

describe('report: the median run and the filmstrip', () => {
  const rec = (run, plt, ok = true) => ({ run, ok, metrics: plt === null ? null : { plt_ms: plt } });

  it('the median run by Page Load Time: the middle one, of an even count the faster of the middle two', () => {
    assert.equal(medianRun([rec(1, 300), rec(2, 100), rec(3, 200)]).run, 3);
    assert.equal(medianRun([rec(1, 400), rec(2, 100), rec(3, 300), rec(4, 200)]).run, 4);
    assert.equal(
      medianRun([rec(1, 100), rec(2, 9), rec(3, 50, false), rec(4, null)]).run,
      2,
      'failed runs and runs without PLT are not candidates',
    );
    assert.equal(medianRun([rec(2, 100), rec(1, 100)]).run, 1, 'ties by run number');
    assert.equal(medianRun([rec(1, 5, false)]), null);
    assert.equal(medianRun([rec(1, 5), rec(2, 7)], 'fcp_ms'), null);
  });

  it('frames from their file names, by time; a frame like the one before it is no change', () => {
    assert.deepEqual(framesOf(['001300.jpg', 'x.png', '000000.jpg', '12.jpeg', 'a.jpg', '..jpg']), [
      { ms: 0, name: '000000.jpg' },
      { ms: 12, name: '12.jpeg' },
      { ms: 1300, name: '001300.jpg' },
    ]);
    const frames = [
      { ms: 0, h: 'a' },
      { ms: 100, h: 'a' },
      { ms: 200, h: 'b' },
      { ms: 300, h: 'b' },
      { ms: 400, h: 'a' },
    ];
    assert.deepEqual(
      visualChanges(frames, (f) => f.h).map((f) => f.ms),
      [0, 200, 400],
    );
  });

  it('a cell every step showing the last frame by then, the changes marked', () => {
    assert.equal(filmstripStep(2000), 100);
    assert.equal(filmstripStep(7000), 200);
    assert.equal(filmstripStep(12000), 500);
    assert.ok(Math.ceil(60000 / filmstripStep(60000)) + 1 <= MAX_CELLS);
    assert.equal(filmstripStep(10e6), 10000, 'beyond the steps: the coarsest');
    const cells = filmstripCells([150, 420, 430], { step: 100, endMs: 450 });
    assert.deepEqual(
      cells.map((c) => `${c.ms}:${c.frame}${c.changed ? '*' : ''}`),
      ['0:-1', '100:-1', '200:0*', '300:0', '400:0', '500:2*'],
    );
    assert.deepEqual(
      filmstripCells([0], { step: 100, endMs: 0 }).map((c) => `${c.ms}:${c.frame}${c.changed ? '*' : ''}`),
      ['0:0*'],
    );
  });

  it("inlines every median run's views, the others' in order while the whole stays within the budget", () => {
    const runs = [
      { id: 'a', median: false, bytes: 40 },
      { id: 'm1', median: true, bytes: 60 },
      { id: 'b', median: false, bytes: 50 },
      { id: 'c', median: false, bytes: 10 },
      { id: 'm2', median: true, bytes: 60 },
    ];
    assert.deepEqual([...toInline(runs, 1000)], ['a', 'm1', 'b', 'c', 'm2']);
    assert.deepEqual([...toInline(runs, 100)], ['a', 'm1', 'm2'], 'b and c would go beyond 100');
    assert.deepEqual([...toInline(runs, 110)], ['a', 'm1', 'c', 'm2']);
    assert.deepEqual([...toInline(runs, 0)], ['m1', 'm2'], 'the medians whatever the budget');
  });
});

describe('report: run views from a results folder', function () {
  this.timeout(30000);
  let tmp;
  before(() => (tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-runviews-'))));
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  // A results folder of h3 and h3-pep over geo, 3 runs each, with their run files.
  function folder(name, edit = () => {}) {
    const dir = path.join(tmp, name);
    fs.mkdirSync(dir);
    const records = makeRecords(scenarios({ profiles: ['geo'], protocols: ['h3', 'h3-pep'] }), { runs: 3 });
    for (const r of records)
      writeRunFiles(dir, r, {
        har: makeHar({ rttMs: 600, protocol: 'h3', scenario: r.scenario, run: r.run }),
        frames: framesAt([0, 1000 + r.run * 100, 2000]),
      });
    edit(records, dir);
    return writeResultsDir(records, { dir, meta: { seed: 7 } });
  }

  it('a waterfall and a filmstrip for every run; each median run marked and its frames inlined; the pairs side by side', () => {
    const dir = folder('ok');
    reportFolder(dir);
    const html = fs.readFileSync(path.join(dir, 'index.html'), 'utf8');
    const data = reportData(html);
    const ids = Object.keys(data.runViews);
    assert.equal(ids.length, 6);
    for (const id of ids) {
      const v = data.runViews[id];
      assert.equal(v.waterfall.rows.length, 14, id);
      assert.equal(v.waterfall.rtt, 600);
      assert.ok(v.frames.every((src) => src.startsWith('data:image/jpeg;base64,')));
      assert.equal(v.frames.length, 3);
      assert.ok(v.film.cells.some((c) => c.changed));
      assert.deepEqual(v.progress.at(-1), [2000, 100]);
      assert.match(html, new RegExp(`<details class="run-view" id="view-${id}" data-view="${id}">`));
    }
    const records = fs
      .readFileSync(path.join(dir, 'results.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const medianOf = (protocol) => medianRun(records.filter((r) => r.scenario.protocol === protocol));
    assert.equal((html.match(/<b>· the median run<\/b>/g) ?? []).length, 2);
    assert.match(html, /<nav class="toc">[^]*<a href="#side-by-side">Side by side<\/a>/);
    assert.equal(data.compareViews.length, 1, 'h3-pep / h3');
    const c = data.compareViews[0];
    assert.equal(c.a.view, `g1-${medianOf('h3-pep').run}`);
    assert.equal(c.b.view, `g0-${medianOf('h3').run}`);
    assert.equal(c.a.film.step, c.b.film.step, 'one time axis');
    assert.equal(c.a.film.cells.length, c.b.film.cells.length);
    assert.match(html, /The load event came \d+(\.\d)? round trips of 600 ms/);
    assert.match(
      html,
      /<li>files: <a href="har\/geo_0_h3_kepler-run1\.har\.gz">HAR<\/a> · <a href="filmstrip\/geo_0_h3_kepler-run1">frames<\/a><\/li>/,
    );
    assert.match(html, /<a href="#view-g1-\d">run \d<\/a>, Page Load Time \d+ ms/);
  });

  it('a missing, unreadable or outside HAR, or missing frames: the run is shown without them, saying so', () => {
    const dir = folder('broken', (records, d) => {
      fs.rmSync(path.join(d, records[0].har));
      fs.writeFileSync(path.join(d, records[1].har), 'not gzip');
      records[2].har = '../../etc/passwd';
      fs.rmSync(path.join(d, records[3].visual.frames), { recursive: true });
      fs.writeFileSync(path.join(d, records[4].har), zlib.gzipSync('{"log": {}}'));
      records[5].har = null;
      records[5].not_captured = { har: 'Network.enable failed' };
    });
    reportFolder(dir);
    const html = fs.readFileSync(path.join(dir, 'index.html'), 'utf8');
    const data = reportData(html);
    assert.equal(Object.keys(data.runViews).length, 6, 'every run keeps its view');
    assert.match(html, /HAR har\/geo_0_h3_kepler-run1\.har\.gz: missing/);
    assert.match(html, /HAR har\/geo_0_h3-pep_kepler-run1\.har\.gz: incorrect header check/);
    assert.match(html, /HAR &quot;\.\.\/\.\.\/etc\/passwd&quot;: not a path inside the results folder/);
    assert.match(html, /filmstrip filmstrip\/geo_0_h3-pep_kepler-run2: missing/);
    assert.match(html, /not a HAR: no log\.entries/);
    assert.match(html, /HAR not captured: Network\.enable failed/);
    assert.equal(data.runViews['g0-1'].waterfall, null);
    assert.ok(data.runViews['g0-1'].frames, 'its filmstrip is still there');
    assert.ok(data.runViews['g1-2'].waterfall, 'its waterfall is still there');
    assert.equal(data.runViews['g1-2'].frames, null);
    // the runs' numbers are all there
    assert.equal((html.match(/<tr id="run-g\d-\d">/g) ?? []).length, 6);
  });

  it("the other runs' waterfalls and frames are left out beyond the budget, their files linked", () => {
    const dir = folder('budget');
    const records = fs
      .readFileSync(path.join(dir, 'results.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const groups = summarize(records).map((g, index) => ({
      ...g,
      index,
      recs: records
        .filter((r) => r.scenario.protocol === g.scenario.protocol)
        .map((record, i) => ({ line: i + 1, record })),
    }));
    const views = buildRunViews(groups, { files: runFiles(dir, { inlineBudget: 0 }), label: scenarioLabel });
    const medians = [...views.medians.values()].sort();
    assert.deepEqual(
      [...views.runs.values()]
        .filter((v) => v.film)
        .map((v) => v.id)
        .sort(),
      medians,
    );
    assert.deepEqual(
      [...views.runs.values()]
        .filter((v) => v.waterfall)
        .map((v) => v.id)
        .sort(),
      medians,
    );
    const linked = [...views.runs.values()].find((v) => !v.median);
    assert.match(linked.filmNote, /^3 frames, left out to keep this file small/);
    assert.match(linked.filmLink, /^filmstrip\/geo_0_h3/);
    assert.match(linked.harNote, /^waterfall left out to keep this file small/);
    assert.match(linked.harLink, /^har\/geo_0_h3/);
    // a budget of every run's waterfall: the other runs' waterfalls go before their frames
    const everyWaterfall = buildRunViews(groups, {
      files: runFiles(dir, { inlineBudget: Infinity }),
      label: scenarioLabel,
    });
    const budget = [...everyWaterfall.runs.values()].reduce((a, v) => a + JSON.stringify(v.waterfall).length, 0);
    const some = buildRunViews(groups, { files: runFiles(dir, { inlineBudget: budget }), label: scenarioLabel });
    assert.equal([...some.runs.values()].filter((v) => v.waterfall).length, 6);
    assert.equal([...some.runs.values()].filter((v) => v.film).length, 2);
    // room for the medians' frames and one more run's: the medians' count first, never past the budget
    const film = (v) => (4 / 3) * v.frames.reduce((a, f) => a + f.bytes, 0);
    const views2 = [...everyWaterfall.runs.values()];
    const room = budget + views2.filter((v) => v.median).reduce((a, v) => a + film(v), 0) + 1.5 * film(views2[0]);
    const two = buildRunViews(groups, { files: runFiles(dir, { inlineBudget: room }), label: scenarioLabel });
    const inlined = [...two.runs.values()].filter((v) => v.film);
    assert.equal(inlined.length, 3);
    assert.equal(inlined.filter((v) => v.median).length, 2);
  });

  it('without the results folder (renderReport alone) the runs say their files were not read', () => {
    const records = makeRecords(scenarios({ profiles: ['geo'], protocols: ['h3'] }), { runs: 1 });
    records[0].har = 'har/x.har.gz';
    records[0].visual = { frames: 'filmstrip/x', progress: [[100, 100]] };
    const html = renderReport({ meta: {}, groups: summarize(records) }, { records });
    assert.match(html, /HAR har\/x\.har\.gz: the results folder was not read/);
    assert.deepEqual(reportData(html).runViews['g0-1'].progress, [[100, 100]]);
    // records from before issue 28 get no view at all
    const old = makeRecords(scenarios({ profiles: ['geo'], protocols: ['h3'] }), { runs: 1 });
    assert.doesNotMatch(
      renderReport({ meta: {}, groups: summarize(old) }, { records: old }),
      /<details class="run-view"/,
    );
  });

  it('merge brings every run file along, and its report reads them', () => {
    const a = folder('ma');
    // the second shard's runs are 4-6, their files named so
    const b = folder('mb', (records, d) =>
      records.forEach((r) => {
        r.run += 3;
        r.seed += 3;
        writeRunFiles(d, r, { har: makeHar({ scenario: r.scenario, run: r.run }), frames: framesAt([0, 500]) });
      }),
    );
    const out = path.join(tmp, 'merged');
    mergeFolders([a, b], out);
    const html = fs.readFileSync(path.join(out, 'index.html'), 'utf8');
    const data = reportData(html);
    assert.equal(Object.keys(data.runViews).length, 12);
    assert.ok(Object.values(data.runViews).every((v) => v.waterfall && v.frames));
    assert.ok(fs.existsSync(path.join(out, 'har/geo_0_h3-pep_kepler-run6.har.gz')));
    assert.equal(fs.readdirSync(path.join(out, 'filmstrip/geo_0_h3_kepler-run5')).length, 2);
    // only files inside a folder come along
    assert.deepEqual(namedFiles({ har: '../x.har.gz', visual: { frames: '/etc' } }), []);
    assert.deepEqual(namedFiles({ har: 'har/a.har.gz', visual: null }), ['har/a.har.gz']);
  });
});
