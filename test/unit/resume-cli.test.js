// `bench --resume`, `bulk --resume` and `--out` from the command line, as a
// user types them: a missing folder, a folder without a saved campaign,
// contradicting options and --out naming a file are one line and exit 2
// before privileges and before anything is made; the saved campaign with
// the same (or no) options goes on to the line saying root is needed. A
// torn results.jsonl is named by report, with the command that repairs it.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { unprivilegedSatbench as satbench } from '../integration/helpers.js';
import { newManifest } from '../../harness/campaign/manifest.js';
import { benchInput } from '../../harness/cli/bench.js';
import { bulkInput } from '../../harness/cli/bulk.js';

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-resume-cli-'));
const listing = (dir) => fs.readdirSync(dir, { recursive: true }).sort();

// A folder as `bench --profile leo --protocol h1 -n 3 --seed 7 --out DIR` leaves it (campaign.json).
function benchFolder() {
  const dir = tmp();
  const values = { preset: 'quick', seed: '7', link: 'auto', timeout: '120', origin: 'rust' };
  Object.assign(values, { profile: 'leo', protocol: 'h1', n: '3' });
  const argv = ['--profile', 'leo', '--protocol', 'h1', '-n', '3', '--seed', '7', '--out', dir];
  const m = newManifest({ command: 'bench', argv, values, ...benchInput(values) });
  fs.writeFileSync(path.join(dir, 'campaign.json'), JSON.stringify(m));
  return dir;
}

function oneLine(r, pattern) {
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr.trim(), pattern);
  assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  assert.doesNotMatch(r.stderr, /needs root|internal error|at .*\.js:\d+/);
}

describe('--resume and --out from the command line', function () {
  this.timeout(60000);

  it('bench --resume of a missing folder: exit 2, one line, nothing made', async () => {
    const dir = path.join(tmp(), 'mine');
    oneLine(await satbench(['bench', '--resume', dir]), new RegExp(`^satbench: --resume ${dir}: no such folder`));
    assert.ok(!fs.existsSync(dir));
  });

  it('bench --resume of a folder without campaign.json (or of a bulk one): exit 2, one line', async () => {
    const dir = tmp();
    oneLine(await satbench(['bench', '--resume', dir]), /: no campaign\.json there .*start anew with another --out$/);
    const values = { seed: '1', link: 'auto', 'bin-ms': '100' };
    const m = newManifest({ command: 'bulk', argv: [], values, ...bulkInput(values) });
    fs.writeFileSync(path.join(dir, 'campaign.json'), JSON.stringify(m));
    oneLine(
      await satbench(['bench', '--resume', dir]),
      /holds a bulk campaign; continue it with `satbench bulk --resume/,
    );
    assert.deepEqual(listing(dir), ['campaign.json']);
  });

  it('bench --resume with options that contradict the saved ones: exit 2, one line naming each', async () => {
    const dir = benchFolder();
    const r = await satbench([
      'bench',
      '--resume',
      dir,
      '--profile',
      'leo,geo',
      '-n',
      '5',
      '--seed',
      '7',
      '--link',
      'netem',
    ]);
    oneLine(
      r,
      new RegExp(
        `^satbench: --resume ${dir}: --profile leo,geo \\(started with --profile leo\\), -n 5 \\(started with -n 3\\), --link netem \\(started with --link auto\\): contradicts the campaign saved in ${dir}/campaign\\.json`,
      ),
    );
    assert.deepEqual(listing(dir), ['campaign.json']);
  });

  it('bench --resume with no options or the same ones goes on (to the line saying root is needed)', async () => {
    const dir = benchFolder();
    for (const more of [[], ['--profile', 'leo', '-n', '3', '--seed', '07', '--preset', 'quick', '--json']]) {
      const r = await satbench(['bench', '--resume', dir, ...more]);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /^satbench: bench builds network namespaces and needs root/);
    }
    assert.deepEqual(listing(dir), ['campaign.json']);
  });

  it('--out and --resume naming different folders: exit 2, one line', async () => {
    const dir = benchFolder();
    oneLine(await satbench(['bench', '--resume', dir, '--out', tmp()]), /--out .*, --resume .*: give one folder/);
  });

  it('--out naming a regular file: exit 2, one line, nothing made (bench and bulk)', async () => {
    const dir = tmp();
    const file = path.join(dir, 'results.txt');
    fs.writeFileSync(file, 'mine');
    for (const cmd of ['bench', 'bulk']) {
      oneLine(await satbench([cmd, '--out', file]), new RegExp(`^satbench: --out ${file}: is a file, not a folder$`));
      oneLine(await satbench([cmd, '--out', path.join(file, 'sub')]), new RegExp(`${file} is a file, not a folder$`));
    }
    assert.deepEqual(listing(dir), ['results.txt']);
    assert.equal(fs.readFileSync(file, 'utf8'), 'mine');
  });

  it('report names a torn last line and the command that repairs it, in one line', async () => {
    const dir = benchFolder();
    const rec = { scenario: { profile: 'leo', loss_pct: 0, protocol: 'h1', site: 'kepler' }, run: 1, ok: true };
    fs.writeFileSync(path.join(dir, 'results.jsonl'), JSON.stringify(rec) + '\n{"scenario":{"prof');
    oneLine(
      await satbench(['report', dir]),
      new RegExp(
        `^satbench: ${dir}/results\\.jsonl: line 2 is torn \\(the run being written when satbench stopped\\); \`satbench bench --resume ${dir}\` drops it`,
      ),
    );
  });
});
