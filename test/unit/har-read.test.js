// Reading a HAR as a stream (archive/har-read.js): the same values as
// JSON.parse, its bodies kept on disk and read back exactly, base64
// checked and decoded piece by piece as it was whole (issue 27: a HAR's
// import took about 4 times its largest body in memory).
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { base64Check, base64Decoder, isBase64 } from '../../harness/archive/base64.js';
import { readHar, isBodyPath } from '../../harness/archive/har-read.js';
import { textBase64Bytes, textIsBase64, textString } from '../../harness/archive/body-text.js';
import { UsageError } from '../../harness/core/errors.js';
import { openSpool } from '../../harness/archive/spool.js';

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-har-read-'));
// the rule as it was written for a whole string, before it was read in pieces
const wholeRule = (text) => {
  const t = text.replace(/\s+/g, '');
  return /^[A-Za-z0-9+/]*={0,2}$/.test(t) && t.length % 4 !== 1 && (!t.endsWith('=') || t.length % 4 === 0);
};
const CASES = [
  '',
  'A',
  'QQ',
  'QQ=',
  'QQ==',
  'QQ===',
  'QUI=',
  'QUJD',
  'QUJDRA==',
  'QU=JD',
  'Q Q = =',
  'QUJD\nRA==',
  '=',
  '==QQ',
  'QUJD=RA=',
  'not base64!',
  'QUJDé',
  'QQ==QQ==',
  '\n',
  'QUJDRA',
];

describe('import-har: a HAR read as a stream', () => {
  it('checks base64 in pieces as the whole-string rule does, at every cut', () => {
    for (const text of CASES) {
      assert.equal(isBase64(text), wholeRule(text), JSON.stringify(text));
      for (let i = 0; i <= text.length; i++)
        for (let j = i; j <= text.length; j++) {
          const check = base64Check();
          [text.slice(0, i), text.slice(i, j), text.slice(j)].forEach((p) => check.add(p));
          assert.equal(check.ok(), wholeRule(text), `${JSON.stringify(text)} cut at ${i}, ${j}`);
          if (check.ok()) assert.equal(check.bytes(), Buffer.from(text, 'base64').length, JSON.stringify(text));
        }
    }
  });

  it('decodes base64 in pieces of any size to the bytes the whole decodes to', () => {
    const bytes = crypto.randomBytes(10007);
    for (const text of [bytes.toString('base64'), bytes.toString('base64').replace(/(.{76})/g, '$1\r\n')]) {
      const check = base64Check();
      check.add(text);
      for (const size of [1, 3, 4, 5, 77, 4096]) {
        const decoder = base64Decoder(Buffer.alloc(check.bytes()));
        for (let i = 0; i < text.length; i += size) decoder.push(text.slice(i, i + size));
        assert.ok(decoder.end().equals(bytes), `pieces of ${size}`);
      }
    }
  });

  it('reads the values JSON.parse reads, a "__proto__" key an own property', async () => {
    const dir = tmp();
    const docs = [
      { log: { entries: [], pages: [{ id: 'p', title: 'x"\\y\u0001' }] }, n: [1, -2.5e3, 0, true, false, null] },
      [[], {}, [[{ a: [1, { b: 'c' }] }]], ''],
      JSON.parse('{"__proto__": {"polluted": 1}, "k": "v", "k": "w"}'),
      'a string',
      42,
    ];
    for (const [i, doc] of docs.entries()) {
      const file = path.join(dir, `${i}.json`);
      fs.writeFileSync(file, JSON.stringify(doc));
      const { har, spool } = await readHar(file);
      spool.close();
      assert.deepEqual(har, JSON.parse(fs.readFileSync(file, 'utf8')), file);
    }
    const { har, spool } = await readHar(path.join(dir, '2.json'));
    spool.close();
    assert.equal(Object.getPrototypeOf(har), Object.prototype);
    assert.deepEqual(Object.keys(har), ['__proto__', 'k']);
    assert.equal({}.polluted, undefined);
  });

  it('keeps bodies on disk and reads them back exactly: text of any characters, base64 as its bytes', async () => {
    const dir = tmp();
    // past the spool's batches and reads (128 K), with characters of 1 to 4 bytes, some written as escapes
    const text = Array.from({ length: 200000 }, (_, i) => ['a', 'é', '€', '😀', '\n', '"'][i % 6]).join('');
    const pairs = `a${'😀'.repeat(70000)}`;
    const bytes = crypto.randomBytes(400000);
    const entry = (content) => ({
      request: { method: 'GET', url: 'https://a.test/' },
      response: { status: 200, content },
    });
    const har = {
      log: {
        entries: [
          entry({ text }),
          entry({ text: bytes.toString('base64'), encoding: 'base64' }),
          entry({ text: '' }),
          entry({ text: pairs }),
        ],
      },
    };
    const file = path.join(dir, 'bodies.har');
    // non-ASCII as \u escapes, so a surrogate pair can fall across the reader's pieces
    fs.writeFileSync(
      file,
      JSON.stringify(har).replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`),
    );
    const before = fs.readdirSync(os.tmpdir()).filter((f) => f.startsWith('satbench-spool-'));
    const read = await readHar(file);
    const [t, b, empty, p] = read.har.log.entries.map((e) => e.response.content.text);
    assert.equal(textString(p), pairs);
    assert.equal(typeof t, 'object', 'a body is kept on disk');
    assert.equal(t.length, text.length);
    assert.equal(textString(t), text);
    assert.equal(textIsBase64(t), false);
    assert.equal(textIsBase64(b), true);
    assert.ok(textBase64Bytes(b).equals(bytes));
    assert.equal(textString(empty), '');
    assert.equal(empty.length, 0);
    read.spool.close();
    // the spool's folder is gone at once: nothing is left behind, whatever happens to the process
    assert.deepEqual(
      fs.readdirSync(os.tmpdir()).filter((f) => f.startsWith('satbench-spool-')),
      before,
    );
    // only a body is kept on disk
    assert.equal(isBodyPath(['log', 'entries', 0, 'response', 'content', 'text']), true);
    assert.equal(isBodyPath(['log', 'entries', 0, 'request', 'postData', 'text']), false);
    assert.equal(isBodyPath(['log', 'entries', '0', 'response', 'content', 'text']), false);
  });

  it('a text whose pieces end between the halves of a pair reads back whole', () => {
    const spool = openSpool();
    for (const cut of [1, 2, 131071, 131072, 131073]) {
      const text = `${'a'.repeat(cut - 1)}😀${'é'.repeat(131072)}😀`;
      const writer = spool.text();
      // a piece that fills a batch exactly, ending in the first half of a pair
      writer.add(text.slice(0, cut));
      writer.add(text.slice(cut));
      assert.equal(writer.done().string(), text, `cut at ${cut}`);
    }
    spool.close();
  });

  it('reads a gzipped HAR, and names the file when it cannot be read, is not whole gzip or not JSON', async () => {
    const dir = tmp();
    const bad = path.join(dir, 'bad.har');
    for (const [text, expected] of [
      ['{"log": [1, 2', /bad\.har: not JSON \(/],
      ['{"log": 1} x', /bad\.har: not JSON \(/],
    ]) {
      fs.writeFileSync(bad, text);
      await assert.rejects(readHar(bad), (e) => e instanceof UsageError && expected.test(e.message));
    }
    await assert.rejects(
      readHar(dir),
      (e) => e instanceof UsageError && /: cannot read it \(a folder\)$/.test(e.message),
    );
    await assert.rejects(readHar(path.join(dir, 'none')), /none: cannot read it \(no such file\)$/);
    // gzipped, as bench writes each run's HAR: read as such, and a cut one named
    const doc = {
      log: { entries: [{ response: { content: { text: crypto.randomBytes(100000).toString('base64') } } }] },
    };
    const gz = path.join(dir, 'run.har.gz');
    fs.writeFileSync(gz, zlib.gzipSync(JSON.stringify(doc)));
    const { har, spool } = await readHar(gz);
    assert.equal(textString(har.log.entries[0].response.content.text), doc.log.entries[0].response.content.text);
    spool.close();
    fs.writeFileSync(gz, zlib.gzipSync(JSON.stringify(doc)).subarray(0, 200));
    await assert.rejects(readHar(gz), /run\.har\.gz: not whole gzip \(Z_BUF_ERROR\)$/);
  });
});
