// Shared by the integration tests: run the CLI, write short-delay
// profiles, and look at what exists on the machine.
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from '../../harness/core/sys.js';
import { listNamespaces } from '../../harness/testbed/testbed.js';
import { readResults, RESULTS } from '../../harness/results/store.js';

export { alive } from '../../harness/testbed/testbed.js';

export const CLI = path.join(ROOT, 'harness/cli.js');

export function satbench(args, { timeoutMs = 120000, env } = {}) {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      { timeout: timeoutMs, env: { ...process.env, ...env } },
      (err, stdout, stderr) => {
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
      },
    );
  });
}

// satbench without CAP_NET_ADMIN (as root: with it dropped), so good input
// stops at "needs root" instead of building testbeds. Dropped rather than
// run as nobody, who could not read a clone under /root or in a mktemp -d
// folder; a non-root user lacks the capability the same way.
export function unprivilegedSatbench(args) {
  const [cmd, pre] =
    process.getuid() === 0
      ? ['setpriv', ['--bounding-set=-net_admin', '--inh-caps=-net_admin', process.execPath]]
      : [process.execPath, []];
  return new Promise((resolve) => {
    execFile(cmd, [...pre, CLI, ...args], { timeout: 30000 }, (err, stdout, stderr) =>
      resolve({ code: err ? err.code : 0, stdout, stderr }),
    );
  });
}

export function spawnSatbench(args) {
  return spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
}

export function exited(child) {
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

// A link with short delays (20 ms round trip over the satellite): the
// GEO/LEO presets are for bench, not for tests.
export const SHORT = {
  satellite: { forward: { delay: '10ms', rate: '20mbit' }, return: { delay: '10ms', rate: '20mbit' } },
  internet: { forward: { delay: '5ms' }, return: { delay: '5ms' } },
};

// The records of a results folder, as satbench reads them.
export const records = (dir) => readResults(path.join(dir, RESULTS));

export function writeProfile(obj) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-it-'));
  const file = path.join(dir, 'profile.json');
  fs.writeFileSync(file, JSON.stringify(obj));
  return file;
}

export async function namespacesOfTestbed(id) {
  return (await listNamespaces()).filter((n) => n.startsWith(`sbt-${id}-`));
}

export async function until(fn, ms = 10000) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 50));
  }
}

// A page of three resources (HTML, a stylesheet, an image) in a new folder.
export function tinySite() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-site-'));
  fs.writeFileSync(
    path.join(dir, 'index.html'),
    '<!doctype html><html><head><link rel="stylesheet" href="s.css"></head><body><h1>Over the satellite</h1><img src="p.gif" width="1" height="1"></body></html>',
  );
  fs.writeFileSync(path.join(dir, 's.css'), 'h1 { color: #123; }');
  fs.writeFileSync(
    path.join(dir, 'p.gif'),
    Buffer.from('R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==', 'base64'),
  );
  return dir;
}

// The command lines (NUL-separated, as /proc has them) of every process.
function commandLines() {
  return fs
    .readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map((d) => {
      try {
        return fs.readFileSync(`/proc/${d}/cmdline`, 'utf8');
      } catch {
        return '';
      }
    });
}

// No testbed namespace left, and no process whose command line `isOurs`
// (`what` names it in the failure).
export async function nothingLeft(isOurs, what) {
  assert.ok(!(await listNamespaces()).some((n) => n.startsWith('sbt-')), 'a run left namespaces behind');
  assert.ok(!commandLines().some(isOurs), `a run left ${what} running`);
}

// Runs `satbench CMD ARGS` once over SHORT into a fresh folder (named
// after `tag`) that must succeed; its records.
export async function runShort(cmd, args, tag) {
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), `satbench-${tag}-`)), 'r');
  const r = await satbench([cmd, '--profile', writeProfile(SHORT), ...args, '-n', '1', '--out', out], {
    timeoutMs: 240000,
  });
  assert.equal(r.code, 0, r.stderr);
  return records(out);
}
