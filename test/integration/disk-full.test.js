// A disk that fills during a campaign, for real: a small tmpfs, the campaign
// loop and the results writer as bench and bulk use them. The write that
// does not fit ends the campaign with one line naming the file and ENOSPC;
// every record before it is whole and readable; once there is room again
// --resume finishes the matrix without repeating a run.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { UsageError } from '../../harness/core/errors.js';
import { runCampaign } from '../../harness/campaign/loop.js';
import { openResults } from '../../harness/campaign/results-dir.js';
import { newManifest } from '../../harness/campaign/manifest.js';
import { readResults } from '../../harness/results/store.js';
import { writeOutputs } from '../../harness/report/outputs.js';
import { benchInput } from '../../harness/cli/bench.js';

const KB = 1024;
const SIZE = 64 * KB; // the tmpfs
const FILLER = 32 * KB; // what the disk holds besides the campaign, freed before --resume
const RUNS = 24; // records of about 1.5 KB: more than the room left, less than the whole tmpfs

const scenario = { profile: 'geo', loss_pct: 0, protocol: 'h1', site: 'kepler' };
const ITEMS = Array.from({ length: RUNS }, (_, i) => ({ scenario, run: i + 1 }));
const record = ({ run }) => ({ scenario, run, ok: true, metrics: { plt_ms: 1000 + run }, pad: 'x'.repeat(1500) });

function campaign(outDir, { resume = false, manifest = null } = {}) {
  const ran = [];
  const warnings = [];
  const { file, done } = openResults(outDir, {
    kind: 'pageload',
    resume,
    manifest,
    onWarning: (w) => warnings.push(w),
  });
  const run = runCampaign({
    kind: 'pageload',
    items: ITEMS,
    done,
    resultsFile: file,
    runOne: async (item) => (ran.push(item.run), record(item)),
    name: () => 'geo h1',
    describe: () => 'ok',
    runs: RUNS,
  });
  return { file, ran, warnings, run };
}

describe('a full disk during a campaign', function () {
  this.timeout(30000);
  let mnt;

  before(() => {
    // npm test runs as root; a run without it fails here rather than passing untested
    assert.equal(process.getuid(), 0, 'mounting a tmpfs needs root: run the integration tests as root');
    mnt = fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-diskfull-'));
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${SIZE}`, 'satbench-diskfull', mnt]);
  });

  after(() => {
    if (!mnt) return;
    execFileSync('umount', [mnt]);
    fs.rmdirSync(mnt);
  });

  it('ends with one line naming the file and ENOSPC, keeps every finished record, and --resume finishes', async () => {
    const filler = path.join(mnt, 'filler');
    fs.writeFileSync(filler, Buffer.alloc(FILLER));
    const out = path.join(mnt, 'r');
    const values = { preset: 'quick', seed: '1', link: 'auto', timeout: '120', origin: 'rust', protocol: 'h1' };
    const manifest = newManifest({ command: 'bench', argv: [], values, ...benchInput(values) });

    const first = campaign(out, { manifest });
    await assert.rejects(first.run, (e) => {
      assert.ok(e instanceof UsageError, e.stack);
      assert.match(
        e.message,
        new RegExp(
          `^${first.file}: writing a run's record failed \\(ENOSPC: no space left on device\\); the records before it are intact; free space, then continue with \`satbench bench --resume ${out}\`$`,
        ),
      );
      return true;
    });
    const kept = readResults(first.file);
    assert.ok(kept.length > 0 && kept.length < RUNS, `the disk filled after ${kept.length} of ${RUNS} records`);
    assert.deepEqual(
      kept,
      first.ran.slice(0, -1).map((run) => record({ run })),
      'every finished record, whole',
    );
    assert.equal(first.ran.length, kept.length + 1, 'only the run being written is lost');
    assert.ok(fs.readFileSync(first.file, 'utf8').endsWith('}\n'), 'no torn line');

    // the outputs on the full disk: one line naming the file, and each file whole or absent, no leftovers
    assert.throws(
      () => writeOutputs(out, kept, { seed: 1 }),
      (e) => e instanceof UsageError && /(summary\.json|index\.html): writing it failed \(ENOSPC/.test(e.message),
    );
    for (const name of fs.readdirSync(out)) assert.doesNotMatch(name, /\.tmp$/, 'no temporary file left');
    const summaryFile = path.join(out, 'summary.json');
    if (fs.existsSync(summaryFile)) JSON.parse(fs.readFileSync(summaryFile, 'utf8'));
    const reportFile = path.join(out, 'index.html');
    if (fs.existsSync(reportFile)) assert.match(fs.readFileSync(reportFile, 'utf8'), /<\/html>\n$/);

    // a new campaign on the full disk: its campaign.json does not fit either, and says so in one line
    assert.throws(
      () => openResults(path.join(mnt, 'r2'), { kind: 'pageload', manifest }),
      (e) => e instanceof UsageError && /ENOSPC: no space left on device/.test(e.message) && !e.message.includes('\n'),
    );

    fs.rmSync(filler);
    const second = campaign(out, { resume: true });
    assert.equal(await second.run, RUNS - kept.length);
    assert.deepEqual(second.warnings, [], 'nothing torn to drop');
    assert.equal(second.ran[0], kept.length + 1, 'the lost run runs again, first');
    assert.deepEqual(
      readResults(second.file).map((r) => r.run),
      ITEMS.map((x) => x.run),
      'every run once, in order',
    );
  });
});
