// `satbench bulk --resume` for real (bench's is in pageload.test.js): the
// folder's own matrix and settings with no options typed, a contradicting
// option refused before anything runs, the torn last line dropped with a
// warning and its run measured again, no finished run repeated.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { satbench, SHORT, writeProfile } from './helpers.js';

describe('bulk --resume (integration)', function () {
  this.timeout(180000);

  it("continues from the folder's campaign.json, dropping a torn last line, repeating no finished run", async () => {
    const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-bulk-resume-')), 'r');
    const args = ['--profile', writeProfile(SHORT), '--protocol', 'tcp', '--duration', '1', '--seed', '5'];
    const first = await satbench(['bulk', ...args, '-n', '2', '--out', out]);
    assert.equal(first.code, 0, first.stderr);
    const saved = JSON.parse(fs.readFileSync(path.join(out, 'campaign.json'), 'utf8'));
    assert.equal(saved.command, 'bulk');
    assert.deepEqual(saved.matrix.protocols, ['tcp']);
    assert.equal(saved.settings.seed, 5);

    // as if satbench had stopped while writing run 2's record
    const file = path.join(out, 'results.jsonl');
    const [run1, run2] = fs.readFileSync(file, 'utf8').trim().split('\n');
    fs.writeFileSync(file, `${run1}\n${run2.slice(0, 80)}`);
    const report = await satbench(['report', out]);
    assert.equal(report.code, 2);
    assert.match(report.stderr, /line 2 is torn .*; `satbench bulk --resume .*` drops it/);

    const contradicts = await satbench(['bulk', '--resume', out, '--seed', '6', '--duration', '2']);
    assert.equal(contradicts.code, 2);
    assert.match(
      contradicts.stderr,
      /^satbench: --resume .*: --seed 6 \(started with --seed 5\), --duration 2 \(started with --duration 1\): contradicts/,
    );
    assert.equal(fs.readFileSync(file, 'utf8'), `${run1}\n${run2.slice(0, 80)}`, 'a refused resume changes nothing');

    const resumed = await satbench(['bulk', '--resume', out, '--seed', '5']);
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.match(resumed.stderr, /warning: .*results\.jsonl: dropped line 2, torn \(80 bytes/);
    const lines = fs.readFileSync(file, 'utf8').trim().split('\n');
    assert.equal(lines[0], run1, 'the finished run is kept as it was');
    const recs = lines.map((l) => JSON.parse(l));
    assert.deepEqual(
      recs.map((r) => [r.scenario.protocol, r.run, r.ok]),
      [
        ['tcp', 1, true],
        ['tcp', 2, true],
      ],
    );
    const summary = JSON.parse(fs.readFileSync(path.join(out, 'summary.json'), 'utf8'));
    assert.equal(summary.meta.seed, 5);
    assert.equal(summary.groups[0].runs, 2);
  });
});
