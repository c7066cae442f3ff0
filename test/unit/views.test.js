// bench --view first|repeat|revisit: the view as a matrix axis (keys of
// first views as they were), a pair's two records linked, written together
// and resumed together, and what summary, compare, merge and the report make
// of them. The loads themselves: test/integration/views.test.js.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { UsageError } from '../../harness/core/errors.js';
import {
  VIEWS,
  checkViews,
  loadLabel,
  loadLabels,
  loadScenarios,
  opensPair,
  pairedScenario,
  viewOf,
} from '../../harness/core/views.js';
import { expandMatrix, scenarioKey, scenarioLabel, pageload } from '../../harness/kinds/pageload.js';
import { benchInput } from '../../harness/cli/bench.js';
import { validateBenchMatrix } from '../../harness/cli/bench-plan.js';
import { summarize } from '../../harness/analysis/summary.js';
import { mergeSets, outsideMatrix } from '../../harness/analysis/merge.js';
import { parseBudget } from '../../harness/analysis/compare/budget.js';
import { compareResults } from '../../harness/analysis/compare/judge.js';
import { buildReport, renderReport } from '../../harness/report/html.js';
import { formatBenchSummary } from '../../harness/pageload/summary-table.js';
import { runCampaign } from '../../harness/campaign/loop.js';
import { openResults, withPartners } from '../../harness/campaign/results-dir.js';
import { appendFlushed, readResults } from '../../harness/results/store.js';
import { describeRun, linkPair, pageloadDeadlineMs } from '../../harness/pageload/run.js';
import { connectionReuse } from '../../harness/pageload/gather/connections.js';
import { chromiumArgs } from '../../harness/browser/chromium.js';
import { chromiumFlags } from '../../harness/campaign/environment.js';
import { buildHar } from '../../harness/pageload/gather/har.js';

const BASE = { profile: 'geo', loss_pct: 0, protocol: 'h3', site: 'kepler' };
const REPEAT = { ...BASE, view: 'repeat' };
const REPEAT_FIRST = { ...REPEAT, first_view: true };
const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-views-'));
const profiles = () => ({}); // any profile name is known
const CLI = { preset: 'quick', link: 'auto', seed: '1', timeout: '30', 'cpu-slowdown': '1', device: 'desktop' };

// A page-load record of `scenario`'s run `run` with PLT `plt` (and Response Start a tenth of it).
const rec = (scenario, run, plt, extra = {}) => ({
  scenario,
  run,
  seed: 1 + run,
  ok: true,
  metrics: { plt_ms: plt, response_start_ms: plt / 10, fcp_ms: plt / 2 },
  ...extra,
});
// A repeat pair of each of `runs` runs: the first view at `first` ms, the repeat view at `second`, linked.
const pairs = (runs, first, second, scenario = REPEAT) =>
  Array.from({ length: runs }, (_, i) =>
    linkPair([
      rec({ ...scenario, first_view: true }, i + 1, first + ((i * 37) % 101)),
      rec(scenario, i + 1, second + ((i * 53) % 89)),
    ]),
  ).flat();

describe('views (bench --view)', () => {
  it('a first view keeps the key and label of old; a pair has a key and label per load', () => {
    assert.equal(scenarioKey(BASE), 'geo|0|h3|kepler');
    assert.equal(scenarioLabel(BASE), 'geo loss 0 % h3 kepler');
    assert.equal(scenarioKey(REPEAT), 'geo|0|h3|kepler|repeat');
    assert.equal(scenarioKey(REPEAT_FIRST), 'geo|0|h3|kepler|repeat|first');
    assert.equal(scenarioKey({ ...BASE, view: 'revisit' }), 'geo|0|h3|kepler|revisit');
    assert.equal(scenarioLabel(REPEAT), 'geo loss 0 % h3 kepler repeat view');
    assert.equal(scenarioLabel(REPEAT_FIRST), "geo loss 0 % h3 kepler repeat pair's first view");
    assert.equal(viewOf(BASE), 'first');
    assert.equal(opensPair(REPEAT_FIRST), true);
    assert.equal(opensPair(REPEAT), false);
    assert.equal(opensPair({ ...BASE, first_view: true }), false, 'a first view alone opens no pair');
    assert.deepEqual(loadScenarios(BASE), [BASE]);
    assert.deepEqual(loadScenarios(REPEAT), [REPEAT_FIRST, REPEAT]);
    assert.deepEqual(pairedScenario(REPEAT), REPEAT_FIRST);
    assert.deepEqual(pairedScenario(REPEAT_FIRST), REPEAT);
    assert.equal(pairedScenario(BASE), null);
    assert.deepEqual(loadLabels(VIEWS), [
      '',
      "repeat pair's first view",
      'repeat view',
      "revisit pair's first view",
      'revisit view',
    ]);
    assert.equal(loadLabel(BASE), '');
  });

  it('--view is a matrix axis, first by default; a matrix of old (no views) expands as before', () => {
    const m = { profiles: ['geo'], losses: [0], protocols: ['h1', 'h3'], sites: ['kepler'], runs: 2 };
    const old = expandMatrix(m);
    assert.deepEqual(expandMatrix({ ...m, views: ['first'] }), old);
    assert.deepEqual(
      old.map((x) => scenarioKey(x.scenario)),
      ['geo|0|h1|kepler', 'geo|0|h3|kepler', 'geo|0|h1|kepler', 'geo|0|h3|kepler'],
    );
    const items = expandMatrix({ ...m, views: ['first', 'revisit'], runs: 1 });
    assert.deepEqual(
      items.map((x) => scenarioKey(x.scenario)),
      ['geo|0|h1|kepler', 'geo|0|h1|kepler|revisit', 'geo|0|h3|kepler', 'geo|0|h3|kepler|revisit'],
    );
    assert.deepEqual(benchInput({ ...CLI }).matrix.views, ['first']);
    assert.deepEqual(benchInput({ ...CLI, view: 'repeat, revisit' }).matrix.views, ['repeat', 'revisit']);
    const matrix = benchInput({ ...CLI, profile: 'geo', view: 'repeat' }).matrix;
    assert.deepEqual(validateBenchMatrix(matrix, { profiles }), matrix);
  });

  it('an unknown view or one given twice is one clear line', () => {
    assert.throws(() => checkViews(['first', 'bogus']), {
      name: UsageError.name,
      message: '--view: unknown view "bogus"; expected first, repeat, revisit',
    });
    const matrix = benchInput({ ...CLI, profile: 'geo', view: 'bogus' }).matrix;
    assert.throws(() => validateBenchMatrix(matrix, { profiles }), /^UsageError: --view: unknown view "bogus"/);
    assert.throws(() => benchInput({ ...CLI, view: 'repeat,repeat' }), /--view: repeat is given twice/);
  });

  it('a pair: both records linked, the first view first; a progress line names each load', () => {
    const [a, b] = linkPair([rec(REPEAT_FIRST, 3, 2000), rec(REPEAT, 3, 900)]);
    assert.deepEqual(a.paired_with, { scenario: REPEAT, run: 3 });
    assert.deepEqual(b.paired_with, { scenario: REPEAT_FIRST, run: 3 });
    const one = rec(BASE, 1, 5);
    assert.deepEqual(linkPair([one]), [one], 'a first view alone has no link');
    assert.equal(describeRun(a), "repeat pair's first view PLT 2000 ms");
    assert.equal(describeRun(b), 'repeat view PLT 900 ms');
    assert.equal(describeRun(one), 'PLT 5 ms');
    // the run's bound grows by a browser per load
    const single = pageloadDeadlineMs(30000);
    const pair = pageloadDeadlineMs(30000, { loads: 2 });
    assert.equal(pair - single, pageloadDeadlineMs(30000, { loads: 3 }) - pair);
    assert.ok(pair - single >= 30000);
  });

  it('the campaign loop appends a pair whole, in one write, and its item counts as done by its second record', async () => {
    const dir = tmp();
    const items = expandMatrix({
      profiles: ['geo'],
      losses: [0],
      protocols: ['h3'],
      sites: ['kepler'],
      views: ['repeat'],
      runs: 2,
    });
    const progress = [];
    const { file, done } = openResults(dir, { kind: 'pageload' });
    let writes = 0;
    const counting = { ...fs, writeSync: (...a) => (writes++, fs.writeSync(...a)) };
    appendFlushed(path.join(dir, 'probe.jsonl'), [rec(BASE, 1, 1), rec(BASE, 2, 2)], counting);
    assert.equal(writes, 1, 'two records, one write');
    assert.equal(readResults(path.join(dir, 'probe.jsonl')).length, 2);
    await runCampaign({
      kind: 'pageload',
      items: items.slice(0, 1),
      done,
      resultsFile: file,
      runOne: async ({ scenario, run }) =>
        linkPair(loadScenarios(scenario).map((s, i) => rec(s, run, 2000 - i * 1000))),
      name: scenarioLabel,
      describe: describeRun,
      runs: 2,
      onProgress: (l) => progress.push(l),
      interrupted: () => null,
    });
    assert.deepEqual(
      readResults(file).map((r) => scenarioKey(r.scenario)),
      ['geo|0|h3|kepler|repeat|first', 'geo|0|h3|kepler|repeat'],
    );
    assert.match(progress.at(-1), /repeat pair's first view PLT 2000 ms, repeat view PLT 1000 ms/);
    // resumed: run 1 is done, run 2 runs
    const again = openResults(dir, { resume: true, kind: 'pageload' });
    const ran = [];
    await runCampaign({
      kind: 'pageload',
      items,
      done: again.done,
      resultsFile: again.file,
      runOne: async (item) => (
        ran.push(item.run),
        linkPair(loadScenarios(item.scenario).map((s) => rec(s, item.run, 1)))
      ),
      name: scenarioLabel,
      describe: describeRun,
      runs: 2,
      interrupted: () => null,
    });
    again.release();
    assert.deepEqual(ran, [2]);
  });

  it('a resume drops an interrupted pair whole: its first view too, which the run records again', () => {
    const dir = tmp();
    const [a, b] = linkPair([rec(REPEAT_FIRST, 1, 2000), { ...rec(REPEAT, 1, 0), ok: false, interrupted: 'SIGINT' }]);
    const other = rec(BASE, 1, 3000);
    assert.deepEqual(withPartners([other, a, b], [b]), [a, b]);
    assert.deepEqual(withPartners([other, a, b], []), []);
    fs.writeFileSync(path.join(dir, 'results.jsonl'), [other, a, b].map((r) => JSON.stringify(r) + '\n').join(''));
    const warnings = [];
    const { done, release } = openResults(dir, { resume: true, kind: 'pageload', onWarning: (w) => warnings.push(w) });
    release();
    assert.deepEqual([...done], ['geo|0|h3|kepler#1']);
    assert.match(warnings.join('\n'), /dropped 2 run\(s\)/);
    assert.deepEqual(
      readResults(path.join(dir, 'results.jsonl')).map((r) => scenarioKey(r.scenario)),
      ['geo|0|h3|kepler'],
    );
  });

  it('summary: a group per load; the bench table says which load each is', () => {
    const records = [...pairs(3, 2000, 800), rec(BASE, 1, 2100)];
    const groups = summarize(records);
    assert.deepEqual(
      groups.map((g) => scenarioKey(g.scenario)),
      ['geo|0|h3|kepler|repeat|first', 'geo|0|h3|kepler|repeat', 'geo|0|h3|kepler'],
    );
    assert.deepEqual(
      groups.map((g) => g.runs),
      [3, 3, 1],
    );
    const table = formatBenchSummary({ groups });
    assert.match(table.split('\n')[1], /^profile +loss +protocol +site +view +Response Start/);
    assert.match(table, /h3 +kepler +repeat pair's first view +20\d /);
    assert.match(table, /h3 +kepler +repeat view +8\d /);
    assert.match(table, /h3 +kepler +first view +210 /);
    assert.doesNotMatch(formatBenchSummary({ groups: summarize([rec(BASE, 1, 1)]) }), /view/, 'no views, no column');
  });

  it('merge: a view outside the matrix is refused; shards come back in the matrix order, a first view before its pair', () => {
    const matrix = {
      profiles: ['geo'],
      losses: [0],
      protocols: ['h3'],
      sites: ['kepler'],
      views: ['first', 'repeat'],
      runs: 2,
    };
    assert.equal(outsideMatrix(rec(REPEAT_FIRST, 1, 1), matrix), null);
    assert.equal(outsideMatrix(rec(BASE, 1, 1), matrix), null);
    assert.match(outsideMatrix(rec({ ...BASE, view: 'revisit' }, 1, 1), matrix), /^view "revisit" is not one of/);
    const old = { ...matrix, views: undefined };
    assert.equal(outsideMatrix(rec(REPEAT, 1, 1), old), null, 'a matrix without views checks no view');
    const all = [rec(BASE, 1, 1), ...pairs(1, 2, 3), rec(BASE, 2, 1), ...pairs(2, 2, 3).slice(2)];
    const shuffled = [all[4], all[1], all[3], all[0], all[5], all[2]];
    const meta = { matrix, seed: 1 };
    const { records } = mergeSets([
      { dir: 'a', records: shuffled.slice(0, 3), meta },
      { dir: 'b', records: shuffled.slice(3), meta },
    ]);
    assert.deepEqual(
      records.map((r) => `${scenarioKey(r.scenario)}#${r.run}`),
      all.map((r) => `${scenarioKey(r.scenario)}#${r.run}`),
    );
    // a matrix of old, without views, still orders its first views
    const firsts = [rec(BASE, 2, 1), rec(BASE, 1, 1)];
    const merged = mergeSets([
      { dir: 'c', records: firsts, meta: { matrix: { ...matrix, views: undefined }, seed: 1 } },
    ]);
    assert.deepEqual(
      merged.records.map((r) => r.run),
      [1, 2],
    );
  });

  it('compare: a repeat view matches the same view of the baseline, and a budget can name the view', () => {
    const set = (records) => ({ path: 'x', source: 'x', records, summary: { meta: {}, groups: summarize(records) } });
    const base = set([...pairs(12, 2000, 800)]);
    const slower = set([...pairs(12, 2000, 1200)]);
    const budget = parseBudget(
      { scenarios: [{ match: { view: 'repeat' }, metrics: { plt_ms: { max_slowdown_pct: 10 } } }] },
      'b.yml',
    );
    const out = compareResults(base, slower, budget);
    const row = (key) => out.rows.find((r) => r.key === key && r.metric === 'plt_ms');
    assert.equal(row('geo|0|h3|kepler|repeat').status, 'fail', 'the repeat view got significantly slower');
    // the pair's first view is of the view too (the rule holds for it); it did not get slower
    assert.equal(row('geo|0|h3|kepler|repeat|first').status, 'ok');
    assert.equal(pageload.budgetMatch.includes('view'), true);
  });

  it("the report: a table set per load, and each repeat view against its pair's first view with p and Cliff's δ", () => {
    const records = [...pairs(12, 2000, 800), ...pairs(12, 2100, 1500, { ...BASE, protocol: 'h1', view: 'repeat' })];
    const matrix = {
      profiles: ['geo'],
      losses: [0],
      protocols: ['h1', 'h3'],
      sites: ['kepler'],
      views: ['repeat'],
      runs: 12,
    };
    const summary = { meta: { matrix }, groups: summarize(records) };
    const model = buildReport({ summary, records });
    const part = model.pageload;
    assert.deepEqual(
      part.matrix.map((t) => `${t.site}:${t.load}`),
      ["kepler:repeat pair's first view", 'kepler:repeat view'],
    );
    const views = part.comparisons.filter((c) => c.kind === 'repeat view vs first view');
    assert.deepEqual(
      views.map((c) => c.a),
      ['h3', 'h1'],
    );
    const plt = views[0].metrics.find((x) => x.metric.key === 'plt_ms');
    assert.ok(plt.ratio < 0.5, `repeat view over first view ${plt.ratio}`);
    assert.ok(plt.p < 0.001, `p ${plt.p}`);
    assert.equal(plt.cliffs_delta, -1);
    // HTTP/3 against HTTP/1.1 within each load
    const h3h1 = part.comparisons.filter((c) => c.kind === 'HTTP/3 vs HTTP/1.1').map((c) => c.a_load);
    assert.deepEqual(h3h1, ["repeat pair's first view", 'repeat view']);
    const html = renderReport(summary, { records });
    assert.match(html, /— kepler · repeat view<\/h3>/);
    assert.match(html, /<th>h3 repeat view \/ h3 repeat pair&#39;s first view<\/th>/);
  });

  it("a revisit's second load: how many of its connections the first had opened; its Chromium gets net-benchmarking", () => {
    const responses = [
      { url: 'https://a/', connectionId: 7 },
      { url: 'https://a/s.css', connectionId: 7 },
      { url: 'data:x', connectionId: 0 },
      { url: 'https://a/p.gif', connectionId: 9 },
    ];
    assert.deepEqual(connectionReuse(new Set([1, 2]), responses), { connections: 2, reused: 0 });
    assert.deepEqual(connectionReuse(new Set([7]), responses), { connections: 2, reused: 1 });
    const args = (o) => chromiumArgs('h3', { userDataDir: '/p', spki: 'x', ...o });
    assert.ok(args({ netBenchmarking: true }).includes('--enable-net-benchmarking'));
    assert.ok(!args({}).includes('--enable-net-benchmarking'));
    // the report's Environment shows the revisit's command line too
    assert.deepEqual(Object.keys(chromiumFlags(['h1', 'h3'], ['first', 'revisit'])), [
      'h1',
      'h1 revisit',
      'h3',
      'h3 revisit',
    ]);
    assert.deepEqual(Object.keys(chromiumFlags(['h3'])), ['h3']);
    assert.ok(chromiumFlags(['h3'], ['revisit'])['h3 revisit'].includes('--enable-net-benchmarking'));
  });

  it("a repeat view's HAR lists what came from the disk cache (chrome-har leaves it out unless asked)", () => {
    // a real h1 load's DevTools events, every response as a repeat view's come: from the disk cache
    const { loads } = JSON.parse(fs.readFileSync(new URL('../har-events.json', import.meta.url), 'utf8'));
    const { events, record } = loads.find((l) => l.protocol === 'h1');
    const cached = events.map((e) =>
      e.method === 'Network.responseReceived'
        ? { ...e, params: { ...e.params, response: { ...e.params.response, fromDiskCache: true } } }
        : e,
    );
    const built = buildHar(cached, { navigation: record.navigation });
    assert.equal(built.log.pages.length, 1);
    assert.deepEqual(
      built.log.entries.map((e) => e.request.url),
      buildHar(events, { navigation: record.navigation }).log.entries.map((e) => e.request.url),
    );
  });
});
