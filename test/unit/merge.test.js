// bench --shard i/n and satbench merge.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { expandMatrix, parseShard, shardItems } from '../../harness/campaign/matrix.js';
import { mergeSets } from '../../harness/analysis/merge.js';
import { mergeFolders } from '../../harness/report/outputs.js';
import { readResults } from '../../harness/results/store.js';
import { scenarioKey } from '../../harness/kinds/pageload.js';
import { harPathOf, storeRunHar } from '../../harness/pageload/har-file.js';
import { makeRecords, writeResultsDir, makeBulkRecords, bulkScenarios } from '../fixtures.js';
import { CLI } from '../integration/helpers.js';
import { expandBulkMatrix } from '../../harness/bulk/matrix.js';
import { bulkInput } from '../../harness/cli/bulk.js';

const MATRIX = { profiles: ['geo', 'leo'], losses: [0, 1], protocols: ['h1', 'h3'], sites: ['kepler'], runs: 5 };
const id = (x) => `${scenarioKey(x.scenario)}#${x.run}`;

function satbench(args) {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { timeout: 60000 }, (err, stdout, stderr) =>
      resolve({ code: err ? err.code : 0, stdout, stderr }),
    );
  });
}

// The records shard i of n would have written, as bench's records look.
function shardRecords(shard) {
  const items = shardItems(expandMatrix(MATRIX), shard);
  const all = makeRecords(
    expandMatrix({ ...MATRIX, runs: 1 }).map((x) => x.scenario),
    { runs: MATRIX.runs },
  );
  const want = new Set(items.map(id));
  // run i of a matrix with seed 1 runs with seed 1 + i, as bench's do
  return all.filter((r) => want.has(id(r))).map((r) => ({ ...r, seed: 1 + r.run }));
}

// A bulk matrix (its download's duration) and its records, seed 0.
const BULK_MATRIX = {
  profiles: ['geo'],
  losses: [0],
  protocols: ['quic', 'tcp'],
  duration_s: 10,
  size_bytes: null,
  runs: 2,
};
const bulkRecords = () =>
  makeBulkRecords(bulkScenarios({ protocols: BULK_MATRIX.protocols }), { runs: BULK_MATRIX.runs, seed: 0 });

// The records of a campaign run with another seed.
const reseeded = (records, seed) => records.map((r) => ({ ...r, seed: seed + r.run }));

describe('shards and merge', () => {
  it('parses --shard i/n', () => {
    assert.deepEqual(parseShard('2/4'), { index: 2, count: 4 });
    for (const bad of ['0/4', '5/4', '2', 'a/b', '1/0']) assert.throws(() => parseShard(bad), /--shard: expected i\/n/);
  });

  it('the shards of a matrix are disjoint, cover it, are balanced and deterministic', () => {
    const all = expandMatrix(MATRIX);
    for (const count of [1, 2, 3, 7]) {
      const parts = Array.from({ length: count }, (_, i) => shardItems(all, { index: i + 1, count }));
      const ids = parts.flat().map(id);
      assert.equal(ids.length, all.length);
      assert.deepEqual(new Set(ids), new Set(all.map(id)));
      const sizes = parts.map((p) => p.length);
      assert.ok(Math.max(...sizes) - Math.min(...sizes) <= 1, `${count}: ${sizes}`);
      assert.deepEqual(shardItems(expandMatrix(MATRIX), { index: 1, count }), parts[0]);
    }
    // every scenario gets runs in every shard, even when the shard count divides the scenarios'
    for (let index = 1; index <= 4; index++) {
      const part = shardItems(all, { index, count: 4 });
      assert.equal(new Set(part.map((x) => scenarioKey(x.scenario))).size, 8, `shard ${index}/4`);
      assert.deepEqual(
        part,
        all.filter((x) => part.includes(x)),
        'run-major order kept',
      );
    }
  });

  it("bulk --shard: a bulk matrix's shards (uploads told from downloads) are disjoint, cover it, are balanced; merge joins them", () => {
    const matrix = { ...BULK_MATRIX, directions: ['down', 'up'] };
    const all = expandBulkMatrix(matrix);
    const bulkId = (x) => `${JSON.stringify(x.scenario)}#${x.run}`;
    for (const count of [2, 3, 5]) {
      const parts = Array.from({ length: count }, (_, i) => shardItems(all, { index: i + 1, count }));
      assert.deepEqual(parts.flat().map(bulkId).sort(), all.map(bulkId).sort(), `${count}: disjoint and covering`);
      const sizes = parts.map((p) => p.length);
      assert.ok(Math.max(...sizes) - Math.min(...sizes) <= 1, `${count}: ${sizes}`);
    }
    assert.deepEqual(bulkInput({ seed: '0', link: 'auto', 'bin-ms': '100', shard: '2/3' }).settings.shard, {
      index: 2,
      count: 3,
    });
    // the shards' folders, as `satbench bulk --shard i/2` writes them, merged
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-merge-bulk-shards-'));
    const records = makeBulkRecords(bulkScenarios({ protocols: BULK_MATRIX.protocols }), { runs: 2, seed: 0 });
    const recordId = (r) => `${JSON.stringify(r.scenario)}#${r.run}`;
    const dirs = [1, 2].map((index) => {
      const want = new Set(shardItems(expandBulkMatrix(BULK_MATRIX), { index, count: 2 }).map(bulkId));
      const meta = { kind: 'bulk', seed: 0, matrix: BULK_MATRIX, shard: { index, count: 2 } };
      return writeResultsDir(
        records.filter((r) => want.has(recordId(r))),
        { meta, dir: path.join(tmp, `s${index}`) },
      );
    });
    const merged = mergeFolders(dirs, path.join(tmp, 'm'));
    assert.equal(merged.records, 4);
    assert.deepEqual(merged.summary.meta.warnings ?? [], []);
    assert.deepEqual(
      merged.summary.meta.merged_from.map((x) => x.shard),
      [
        { index: 1, count: 2 },
        { index: 2, count: 2 },
      ],
    );
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('merges shards into the matrix order and refuses overlaps and mismatches', () => {
    const sets = [2, 1, 3].map((index) => ({
      dir: `s${index}`,
      records: shardRecords({ index, count: 3 }),
      meta: { seed: 1, matrix: MATRIX, shard: { index, count: 3 } },
    }));
    const { records, meta, warnings } = mergeSets(sets, { now: 'then' });
    assert.deepEqual(records.map(id), expandMatrix(MATRIX).map(id));
    assert.equal(meta.shard, undefined);
    assert.deepEqual(
      meta.merged_from.map((x) => x.shard.index),
      [2, 1, 3],
    );
    assert.deepEqual(warnings, []);
    assert.match(mergeSets(sets.slice(0, 2)).warnings[0], /shard\(s\) 3\/3 missing/);
    assert.throws(
      () =>
        mergeSets([sets[0], { ...sets[1], records: reseeded(sets[1].records, 2), meta: { ...sets[1].meta, seed: 2 } }]),
      /^UsageError: s1: its runs used seed 2, s2's seed 1; merge joins shards of one matrix and seed$/,
    );
    assert.throws(
      () => mergeSets([sets[0], { ...sets[1], meta: { ...sets[1].meta, seed: 2 } }]),
      /s1\/results\.jsonl: geo loss 0 % h1 kepler run 1 ran with seed 2 \(campaign seed 1\), s1's seed is 2/,
    );
    assert.throws(
      () => mergeSets([sets[0], { ...sets[1], meta: { ...sets[1].meta, matrix: { ...MATRIX, runs: 6 } } }]),
      /s1: its matrix .* differs from s2's/,
    );
    assert.throws(
      () => mergeSets([sets[0], { ...sets[0], dir: 'copy', meta: { ...sets[0].meta, shard: { index: 1, count: 3 } } }]),
      /copy: geo loss \d % h\d kepler run \d is also in s2/,
    );
    assert.throws(
      () => mergeSets([sets[0], { ...sets[1], meta: { ...sets[1].meta, shard: { index: 1, count: 4 } } }]),
      /shards of different splits/,
    );
  });

  it('checks matrix and seed from the records of a folder without summary.json (an interrupted shard)', () => {
    const full = { dir: 's1', records: shardRecords({ index: 1, count: 2 }), meta: { seed: 1, matrix: MATRIX } };
    const cut = shardRecords({ index: 2, count: 2 }).slice(0, 5);
    const bare = (records) => ({ dir: 's2', records, meta: {} });
    const ok = mergeSets([full, bare(cut)]);
    assert.equal(ok.records.length, 25);
    assert.equal(ok.meta.seed, 1);
    assert.throws(
      () => mergeSets([full, bare(reseeded(cut, 5))]),
      /^UsageError: s2: its runs used seed 5, s1's seed 1; merge joins shards of one matrix and seed$/,
    );
    assert.throws(
      () => mergeSets([bare(reseeded(cut, 5)), full]),
      /^UsageError: s1: its runs used seed 1, s2's seed 5/,
      'whichever comes first',
    );
    const other = cut.map((r) => ({ ...r, scenario: { ...r.scenario, profile: 'geo-jitter' } }));
    assert.throws(
      () => mergeSets([full, bare(other)]),
      /^UsageError: s2\/results\.jsonl: geo-jitter loss 0 % h\d kepler run 1 is not in s1's matrix \(profile "geo-jitter" is not one of \["geo","leo"\]\)/,
    );
    const more = cut.map((r) => ({ ...r, run: r.run + 5, seed: 1 + r.run + 5 }));
    assert.throws(() => mergeSets([full, bare(more)]), /run 6 is not within 1–5/);
    const mixed = [...cut.slice(0, 2), ...reseeded(cut.slice(2), 3)];
    assert.throws(
      () => mergeSets([bare(mixed), full]),
      /s2\/results\.jsonl: .* run \d ran with seed \d+ \(campaign seed 3\), .* is 1/,
    );
    // bulk: its matrix (meta.kind "bulk") has the download's duration or size
    const [bm, b] = [BULK_MATRIX, bulkRecords()];
    const bulkSet = { dir: 'b1', records: b.slice(0, 2), meta: { kind: 'bulk', seed: 0, matrix: bm } };
    assert.equal(mergeSets([bulkSet, { dir: 'b2', records: b.slice(2), meta: {} }]).records.length, 4);
    const longer = b.slice(2).map((r) => ({ ...r, scenario: { ...r.scenario, duration_s: 15 } }));
    assert.throws(
      () => mergeSets([bulkSet, { dir: 'b2', records: longer, meta: {} }]),
      /b2\/results\.jsonl: bulk profile=geo .* duration_s=15 run 2 is not in b1's matrix \(duration_s 15 is not 10\)/,
    );
    // an upload is in the matrix when its directions say up; a download (no direction) when they say down
    const up = b.slice(2).map((r) => ({ ...r, scenario: { ...r.scenario, direction: 'up' } }));
    assert.throws(
      () =>
        mergeSets([
          { ...bulkSet, meta: { ...bulkSet.meta, matrix: { ...bm, directions: ['down'] } } },
          { dir: 'b2', records: up, meta: {} },
        ]),
      /\(direction "up" is not one of \["down"\]\)/,
    );
    const both = { ...bulkSet, meta: { ...bulkSet.meta, matrix: { ...bm, directions: ['down', 'up'] } } };
    assert.equal(mergeSets([both, { dir: 'b2', records: up, meta: {} }]).records.length, 4);
    // no folder has the matrix: the seeds are still checked, and it says what was not
    const two = mergeSets([bare(cut), { ...bare(shardRecords({ index: 1, count: 2 })), dir: 's3' }]);
    assert.match(two.warnings.join('\n'), /no folder has a summary\.json with the matrix/);
  });

  it("takes an interrupted bulk shard's kind from its campaign.json's command, and checks its matrix", () => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-merge-bulk-'));
    const [bm, b] = [BULK_MATRIX, bulkRecords()];
    // results.jsonl and campaign.json only, as an interrupted `satbench bulk` leaves them
    const shard = (name, records) => {
      const dir = path.join(tmp, name);
      fs.mkdirSync(dir);
      fs.writeFileSync(path.join(dir, 'results.jsonl'), records.map((r) => JSON.stringify(r)).join('\n') + '\n');
      fs.writeFileSync(
        path.join(dir, 'campaign.json'),
        JSON.stringify({ format: 1, command: 'bulk', argv: [], options: {}, matrix: bm, settings: { seed: 0 } }),
      );
      return dir;
    };
    const [a, c] = [shard('a', b.slice(0, 2)), shard('c', b.slice(2))];
    const merged = mergeFolders([a, c], path.join(tmp, 'm'));
    assert.equal(merged.records, 4);
    assert.equal(merged.summary.meta.kind, 'bulk');
    assert.ok(merged.summary.groups.every((g) => g.kind === 'bulk'));
    // bulk's matrix is checked (a page-load matrix would not know duration_s)
    const longer = shard(
      'longer',
      b.slice(2).map((r) => ({ ...r, scenario: { ...r.scenario, duration_s: 15 } })),
    );
    assert.throws(
      () => mergeFolders([a, longer], path.join(tmp, 'm2')),
      /is not in .*a's matrix \(duration_s 15 is not 10\)/,
    );
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it("brings each run's HAR along, where its record names it", () => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-merge-har-'));
    const dirs = [1, 2].map((index) => {
      const dir = path.join(tmp, `s${index}`);
      const records = shardRecords({ index, count: 2 });
      // as bench writes them: each run's HAR beside its record
      for (const r of records) storeRunHar(Object.assign(r, { har: { log: { run: r.run } } }), dir, r.scenario, r.run);
      return writeResultsDir(records, { dir, meta: { seed: 1, matrix: MATRIX, shard: { index, count: 2 } } });
    });
    const out = path.join(tmp, 'm');
    mergeFolders(dirs, out);
    const merged = readResults(path.join(out, 'results.jsonl'));
    assert.equal(merged.length, 40);
    for (const r of merged) {
      assert.equal(r.har, harPathOf(r.scenario, r.run));
      assert.deepEqual(JSON.parse(zlib.gunzipSync(fs.readFileSync(path.join(out, r.har)))), { log: { run: r.run } });
    }
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('satbench merge joins shard folders into one result and report', async () => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-merge-'));
    const dirs = [1, 2].map((index) =>
      writeResultsDir(shardRecords({ index, count: 2 }), {
        dir: path.join(tmp, `shard${index}`),
        meta: { seed: 1, matrix: MATRIX, shard: { index, count: 2 } },
      }),
    );
    const out = path.join(tmp, 'merged');
    const r = await satbench(['merge', ...dirs, '--out', out]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /merged 40 runs from 2 folder\(s\)/);
    const merged = readResults(path.join(out, 'results.jsonl'));
    assert.deepEqual(merged.map(id), expandMatrix(MATRIX).map(id));
    const summary = JSON.parse(fs.readFileSync(path.join(out, 'summary.json'), 'utf8'));
    assert.equal(summary.groups.length, 8);
    assert.ok(summary.groups.every((g) => g.runs === 5));
    assert.ok(fs.readFileSync(path.join(out, 'index.html'), 'utf8').includes('merged from'));
    const again = await satbench(['merge', ...dirs, '--out', out]);
    assert.equal(again.code, 2);
    assert.match(again.stderr, /already holds a results\.jsonl/);
    // an interrupted shard: results.jsonl and campaign.json (the matrix as it started), no summary.json
    const cut = path.join(tmp, 'cut');
    fs.mkdirSync(cut);
    const other = { ...MATRIX, profiles: ['geo', 'geo-jitter'] };
    fs.writeFileSync(
      path.join(cut, 'campaign.json'),
      JSON.stringify({ format: 1, command: 'bench', argv: [], options: {}, matrix: other, settings: { seed: 1 } }),
    );
    fs.copyFileSync(path.join(dirs[1], 'results.jsonl'), path.join(cut, 'results.jsonl'));
    const mixed = await satbench(['merge', dirs[0], cut, '--out', path.join(tmp, 'm3')]);
    assert.equal(mixed.code, 2, mixed.stderr);
    assert.match(mixed.stderr, /^satbench: .*cut: its matrix .* differs from .*shard1's/);
    assert.ok(!fs.existsSync(path.join(tmp, 'm3')), 'nothing written');
    fs.writeFileSync(path.join(out, 'x'), '');
    const file = await satbench(['merge', ...dirs, '--out', path.join(out, 'x')]);
    assert.equal(file.code, 2);
    assert.match(file.stderr, /^satbench: --out .*x: is a file; expected a new folder\n$/);
    const missing = await satbench(['merge', dirs[0], path.join(tmp, 'nope'), '--out', path.join(tmp, 'm2')]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /nope: no results\.jsonl/);
    fs.rmSync(tmp, { recursive: true, force: true });
  });
});
