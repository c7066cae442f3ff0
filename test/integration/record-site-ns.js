// record-site.js in a network namespace of the test's own, and satbench
// record run inside it: shared by the record and the replay tests.
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { run } from '../../harness/core/sys.js';
import { makeCertificate } from '../../harness/core/certificates.js';
import { CLI } from './helpers.js';

const SITE = path.join(import.meta.dirname, 'record-site.js');
// the main page's hosts; six.html adds three more
export const HOSTS = ['www.record.test', 'cdn.record.test', 'api.record.test'];
const ALL_HOSTS = [...HOSTS, 'fonts.record.test', 'img.record.test', 'stats.record.test'];
// --resolve rules for the site's names (gone.record.test refuses connections)
export const RULES = [...ALL_HOSTS.map((h) => `${h}=127.0.0.1`), 'gone.record.test=127.0.0.3'].flatMap((r) => [
  '--resolve',
  r,
]);

/**
 * Starts the site in namespace `ns`. Returns {tmp, pin, served (path on
 * host → decoded body), record(args) (satbench record in the namespace),
 * stop()}.
 */
export async function startRecordSite(ns) {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-record-'));
  await run('ip', ['netns', 'add', ns]);
  await run('ip', ['netns', 'exec', ns, 'ip', 'link', 'set', 'lo', 'up']);
  const cert = await makeCertificate({ name: ALL_HOSTS.join(','), ip: '127.0.0.1', dir: path.join(tmp, 'cert') });
  const server = spawn('ip', ['netns', 'exec', ns, process.execPath, SITE, cert.cert, cert.key], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = readline.createInterface({ input: server.stdout });
  const line = await Promise.race([
    new Promise((resolve) => lines.once('line', resolve)),
    new Promise((_, reject) => server.once('exit', (code) => reject(new Error(`record-site.js exited (${code})`)))),
  ]);
  const served = Object.fromEntries(
    Object.entries(JSON.parse(line).decoded).map(([k, v]) => [k, v === null ? null : Buffer.from(v, 'base64')]),
  );
  const record = (args) =>
    new Promise((resolve) => {
      execFile(
        'ip',
        ['netns', 'exec', ns, process.execPath, CLI, 'record', ...args],
        { timeout: 120000 },
        (err, stdout, stderr) => resolve({ code: err ? err.code : 0, stdout, stderr }),
      );
    });
  const stop = async () => {
    server.kill();
    await run('ip', ['netns', 'del', ns], { allowFail: true });
    fs.rmSync(tmp, { recursive: true, force: true });
  };
  return { tmp, pin: cert.spki, served, record, stop };
}
