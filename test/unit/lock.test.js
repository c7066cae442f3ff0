// One campaign writes a results folder at a time (campaign/lock.js): a
// second `bench --resume DIR` while the first runs is refused in one line
// naming the holder, before it reads or writes anything there; a lock
// whose process is gone is taken over.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { UsageError } from '../../harness/core/errors.js';
import { LOCK, lockResults, holderAlive } from '../../harness/campaign/lock.js';
import { openResults } from '../../harness/campaign/results-dir.js';
import { startTicks } from '../../harness/testbed/processes.js';
import { newManifest } from '../../harness/campaign/manifest.js';
import { benchInput } from '../../harness/cli/bench.js';
import { satbench } from '../integration/helpers.js';

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-lock-'));

// A live process that is not us, and its lock in `dir`.
function foreignHolder(dir) {
  const child = spawn('sleep', ['60'], { stdio: 'ignore' });
  const holder = { pid: child.pid, start: startTicks(child.pid), command: 'bench', since: '2026-11-28T00:00:00Z' };
  fs.writeFileSync(path.join(dir, LOCK), JSON.stringify(holder));
  return child;
}

describe('a results folder locked by the campaign that writes it', function () {
  this.timeout(60000);
  const children = [];
  afterEach(() => {
    for (const c of children.splice(0)) c.kill('SIGKILL');
  });

  it('judges a holder alive by its PID and that process’s start time (a recycled PID is not it)', () => {
    const now = { alive: (pid) => pid === 42, startTicks: () => 1000 };
    assert.equal(holderAlive({ pid: 42, start: 1000 }, now), true);
    assert.equal(holderAlive({ pid: 42, start: 999 }, now), false, 'PID recycled');
    assert.equal(holderAlive({ pid: 43, start: 1000 }, now), false, 'gone');
    assert.equal(holderAlive(null, now), false);
  });

  it('refuses a second holder in one line naming the first; takes over a dead one; lets its own process in again', () => {
    const dir = tmp();
    const child = foreignHolder(dir);
    children.push(child);
    assert.throws(
      () => lockResults(dir, 'bench'),
      (e) => e instanceof UsageError && e.message.includes(`in use by satbench bench (pid ${child.pid}`),
    );
    child.kill('SIGKILL');
    return new Promise((resolve) => child.on('exit', resolve)).then(() => {
      const release = lockResults(dir, 'bench');
      assert.equal(JSON.parse(fs.readFileSync(path.join(dir, LOCK), 'utf8')).pid, process.pid);
      lockResults(dir, 'bench'); // the holder itself (a resume in the same process)
      release();
      assert.ok(!fs.existsSync(path.join(dir, LOCK)), 'released');
    });
  });

  it('a resume of a folder another campaign holds reads and writes nothing there', () => {
    const dir = tmp();
    const torn = '{"scenario":{"profile":"leo"},"run":1,"ok":true}\n{"scenario":';
    fs.writeFileSync(path.join(dir, 'results.jsonl'), torn);
    children.push(foreignHolder(dir));
    assert.throws(() => openResults(dir, { resume: true, kind: 'pageload' }), /in use by satbench bench/);
    assert.equal(fs.readFileSync(path.join(dir, 'results.jsonl'), 'utf8'), torn, 'the torn line is not repaired');
  });

  it('satbench bench --resume of a held folder: exit 2, one line naming the holder, nothing run', async () => {
    const dir = tmp();
    const values = { preset: 'quick', seed: '1', link: 'auto', timeout: '120', profile: 'leo', protocol: 'h1', n: '1' };
    const m = newManifest({ command: 'bench', argv: [], values, ...benchInput(values) });
    fs.writeFileSync(path.join(dir, 'campaign.json'), JSON.stringify(m));
    const child = foreignHolder(dir);
    children.push(child);
    const r = await satbench(['bench', '--resume', dir]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr.trim(), new RegExp(`^satbench: ${dir}: in use by satbench bench \\(pid ${child.pid},`));
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.deepEqual(fs.readdirSync(dir).sort(), ['campaign.json', LOCK]);
  });
});
