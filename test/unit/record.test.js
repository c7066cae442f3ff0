// record's input, checked before Chromium starts, and the command line its
// Chromium gets: host-resolver rules and pins only when asked for.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { UsageError } from '../../harness/core/errors.js';
import { recordInput, resolveRule, spkiPin } from '../../harness/cli/record.js';
import { recordArgs } from '../../harness/browser/record.js';
import { QUIET_CHROMIUM_FLAGS } from '../../harness/browser/chromium.js';
import { satbench } from '../integration/helpers.js';

const usage = (pattern) => (e) => e instanceof UsageError && pattern.test(e.message) && !e.message.includes('\n');
const PIN = 'n4bQgYhMfWWaL+qgxVrQFaO/TxsrC4Is0V1sFbDwCgg=';
const DEFAULTS = { 'settle-ms': '2000', timeout: '60', resolve: [], spki: [], device: 'desktop' };

describe('satbench record: input and Chromium', () => {
  const out = () => path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-rec-')), 'a');

  it('reads the URL, its folder, the times, --resolve and --spki', () => {
    const dir = out();
    const v = {
      ...DEFAULTS,
      out: dir,
      'settle-ms': '500',
      timeout: '9',
      resolve: ['WWW.a.test=10.0.0.1', 'b.test=::1'],
      spki: [PIN],
    };
    assert.deepEqual(recordInput(v, ['https://WWW.A.test/x#y']), {
      url: 'https://www.a.test/x',
      out: dir,
      settleMs: 500,
      timeoutMs: 9000,
      resolve: [
        ['www.a.test', '10.0.0.1'],
        ['b.test', '::1'],
      ],
      spki: [PIN],
      emulation: { cpuSlowdown: 1, device: 'desktop' },
    });
    assert.deepEqual(recordInput({ ...v, device: 'mobile' }, ['https://a.test/']).emulation, {
      cpuSlowdown: 1,
      device: 'mobile',
    });
  });

  it('refuses bad input in one line naming the option', () => {
    const v = { ...DEFAULTS, out: out() };
    const cases = [
      [v, [], /^record: name one URL \(satbench record URL --out DIR\)$/],
      [v, ['a.test'], /^record: expected an http or https URL, got "a\.test"$/],
      [v, ['ftp://a.test/'], /^record: expected an http or https URL/],
      [{ ...v, out: undefined }, ['https://a.test/'], /^record: name the archive's folder with --out DIR$/],
      [{ ...v, timeout: '0' }, ['https://a.test/'], /^--timeout: expected a whole number >= 1, got "0"$/],
      [{ ...v, 'settle-ms': '-1' }, ['https://a.test/'], /^--settle-ms: expected a whole number >= 0/],
      [
        { ...v, device: 'tablet' },
        ['https://a.test/'],
        /^--device: unknown device "tablet"; known devices: desktop, mobile$/,
      ],
      [
        { ...v, 'cpu-slowdown': '4' },
        ['https://a.test/'],
        /^--cpu-slowdown: not for record: an archive keeps the page's responses, not how long its work took.*\(bench --site DIR --cpu-slowdown N\)$/,
      ],
    ];
    for (const [values, operands, message] of cases) assert.throws(() => recordInput(values, operands), usage(message));
    assert.throws(
      () => resolveRule('a.test'),
      usage(/^--resolve: expected HOST=IP \(an IPv4 or IPv6 address\), got "a\.test"$/),
    );
    assert.throws(() => resolveRule('a.test=example.org'), usage(/^--resolve: expected HOST=IP/));
    assert.throws(() => spkiPin('abc'), usage(/^--spki: expected a base64 SHA-256 pin \(44 characters\), got "abc"$/));
  });

  it("gives Chromium satbench's quiet flags, and rules and pins only when asked", () => {
    const plain = recordArgs('/tmp/p');
    for (const f of [...QUIET_CHROMIUM_FLAGS, '--headless=new', '--user-data-dir=/tmp/p'])
      assert.ok(plain.includes(f), f);
    assert.ok(!plain.some((a) => /host-resolver-rules|spki-list|quic/.test(a)), plain.join(' '));
    const asked = recordArgs('/tmp/p', {
      resolve: [
        ['a.test', '10.0.0.1'],
        ['b.test', '::1'],
      ],
      spki: [PIN, PIN],
    });
    assert.ok(asked.includes('--host-resolver-rules=MAP a.test 10.0.0.1, MAP b.test [::1]'));
    assert.ok(asked.includes(`--ignore-certificate-errors-spki-list=${PIN},${PIN}`));
  });

  it('refuses --cpu-slowdown in one line saying why, before starting Chromium', async () => {
    const r = await satbench(['record', 'https://a.test/', '--out', out(), '--cpu-slowdown', '4']);
    assert.equal(r.code, 2);
    assert.match(
      r.stderr,
      /^satbench: --cpu-slowdown: not for record: .*give it to bench when the archive is replayed/,
    );
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  });

  it('refuses a --out that is not empty before starting Chromium', async () => {
    const dir = out();
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'archive.json'), '{}');
    const r = await satbench(['record', 'https://a.test/', '--out', dir]);
    assert.equal(r.code, 2);
    assert.match(
      r.stderr,
      /^satbench: --out .*: holds 1 file\(s\) \(archive\.json, …\); expected a new or empty folder\n$/,
    );
  });
});
