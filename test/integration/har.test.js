// A run's HAR, round trip: a short real bench run with --har-content writes
// DIR/har/SCENARIO-run1.har.gz, which passes the HAR 1.2 schema check and
// agrees with the run's record; `satbench import-har` makes a site archive
// of it, and bench replays that archive with no request unmatched.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { satbench, SHORT, records, tinySite, writeProfile, leftBehind } from './helpers.js';
import { checkHar } from '../../harness/archive/har-check.js';
import { readArchive } from '../../harness/archive/format.js';
import { isFavicon } from '../../harness/pageload/load.js';
import { harPathOf } from '../../harness/pageload/har-file.js';

const readHar = (dir, rec) => JSON.parse(zlib.gunzipSync(fs.readFileSync(path.join(dir, rec.har))));
const notFavicon = (e) => !isFavicon({ initiatorType: 'other', name: e.request.url });

describe("a run's HAR (integration, real Chromium)", function () {
  this.timeout(300000);

  it('bench writes each run a HAR 1.2 that import-har makes an archive of, which replays with nothing unmatched', async () => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-har-it-'));
    const profile = writeProfile(SHORT);
    const out = path.join(tmp, 'bench');
    const args = ['bench', '--profile', profile, '--protocol', 'h2', '-n', '1'];
    const r = await satbench([...args, '--site', tinySite(), '--har-content', '--out', out], { timeoutMs: 240000 });
    assert.equal(r.code, 0, r.stderr);
    const [rec] = records(out);
    assert.equal(rec.ok, true, rec.error);
    assert.equal(rec.not_captured, undefined);
    assert.equal(rec.har, harPathOf(rec.scenario, 1));
    const har = readHar(out, rec);
    checkHar(har, rec.har);
    // what the record says of the same load
    const entries = har.log.entries.filter(notFavicon);
    assert.equal(entries.length, rec.metrics.resource_count + 1);
    assert.ok(entries.every((e) => e._protocol === 'h2'));
    const [page] = har.log.pages;
    assert.ok(
      Math.abs(page.pageTimings.onLoad - rec.metrics.plt_ms) <= 1,
      `${page.pageTimings.onLoad} ${rec.metrics.plt_ms}`,
    );
    assert.deepEqual(page._satbench, { scenario: rec.scenario, run: 1, seed: rec.seed, rtt_ms: 30 });
    assert.ok(
      entries.every((e) => typeof e.response.content.text === 'string'),
      'every body, with --har-content',
    );

    const archive = path.join(tmp, 'archive');
    const imported = await satbench(['import-har', path.join(out, rec.har), '--out', archive]);
    assert.equal(imported.code, 0, imported.stderr);
    assert.deepEqual(readArchive(archive).missing, []);

    const replayOut = path.join(tmp, 'replay');
    const replay = await satbench([...args, '--site', archive, '--out', replayOut], { timeoutMs: 240000 });
    assert.equal(replay.code, 0, replay.stderr);
    const [again] = records(replayOut);
    assert.equal(again.ok, true, again.error);
    assert.deepEqual(again.origin_log.unmatched, []);
    assert.equal(again.metrics.resource_count, rec.metrics.resource_count);
    // without --har-content the run's HAR has no bodies, and import-har says so
    const bare = readHar(replayOut, again);
    checkHar(bare, again.har);
    assert.ok(bare.log.entries.every((e) => e.response.content.text === undefined));
    const refused = await satbench(['import-har', path.join(replayOut, again.har), '--out', path.join(tmp, 'no')]);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /no entry has its body \(response\.content\.text\)/);
    assert.deepEqual(await leftBehind(replay.made), [], 'a run left these behind');
    fs.rmSync(tmp, { recursive: true, force: true });
  });
});
