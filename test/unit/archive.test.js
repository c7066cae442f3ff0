// Site archives: bodies encoded again as they went on the wire, text written
// back in its charset, the headers kept, an archive built from responses,
// the matching rule the replay shares, and reading, checking and writing.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { UsageError } from '../../harness/core/errors.js';
import { encodeBody, decodeBody, contentCodings, unknownCoding } from '../../harness/archive/encoding.js';
import { declaredCharset, textBytes } from '../../harness/archive/text.js';
import { servedHeaders, headerValue, headerPairs } from '../../harness/archive/headers.js';
import { buildArchive, carriesNoBody } from '../../harness/archive/build.js';
import { matchEntry, archiveOrigins, pageChain } from '../../harness/archive/match.js';
import { archiveUrl, originOf } from '../../harness/archive/urls.js';
import { validateArchive, readArchive, isArchive, ARCHIVE_FILE } from '../../harness/archive/format.js';
import { writeArchive, archiveJson } from '../../harness/archive/write.js';
import { requireNewOrEmpty } from '../../harness/core/folders.js';

const usage = (pattern) => (e) => e instanceof UsageError && pattern.test(e.message) && !e.message.includes('\n');
const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-archive-'));

const PAGE = 'https://www.example.test/';
const text = (t) => ({ text: t, base64: false });
const response = (url, over = {}) => ({
  method: 'GET',
  url,
  status: 200,
  headers: [['content-type', 'text/plain']],
  content: text(`body of ${url}`),
  ...over,
});
const build = (responses, page = PAGE) =>
  buildArchive({ page, source: { tool: 'record', from: page }, created: '2026-01-02T03:04:05.000Z', responses });
const bodyOf = (built, url) => {
  const entry = built.archive.entries.find((e) => e.url === url);
  return built.bodies.find(([name]) => name === entry.body)[1];
};

describe('site archives', () => {
  describe('bodies on the wire (encoding.js)', () => {
    const decoded = Buffer.from('a body that compresses, '.repeat(200));
    for (const coding of ['gzip', 'br', 'deflate', 'zstd', 'gzip, br', 'identity']) {
      it(`encodes under content-encoding "${coding}" and decodes back to the same bytes`, () => {
        const wire = encodeBody(decoded, coding);
        if (coding !== 'identity') assert.ok(wire.length < decoded.length / 5, `${coding}: ${wire.length} bytes`);
        assert.deepEqual(decodeBody(wire, coding), decoded);
      });
    }
    it('writes what a browser decodes: gzip, brotli and zlib deflate streams', () => {
      assert.deepEqual(zlib.gunzipSync(encodeBody(decoded, 'gzip')), decoded);
      assert.deepEqual(zlib.brotliDecompressSync(encodeBody(decoded, 'br')), decoded);
      assert.deepEqual(zlib.inflateSync(encodeBody(decoded, 'deflate')), decoded);
      // two codings: gzip first, then br over it
      assert.deepEqual(zlib.gunzipSync(zlib.brotliDecompressSync(encodeBody(decoded, 'gzip, br'))), decoded);
    });
    it('reads the codings of a header value and names one it cannot apply', () => {
      assert.deepEqual(contentCodings(' GZip , br'), ['gzip', 'br']);
      assert.deepEqual(contentCodings(null), []);
      assert.equal(unknownCoding('gzip, compress'), 'compress');
      assert.equal(unknownCoding('br'), null);
      assert.equal(unknownCoding(null), null);
    });
  });

  describe('text written back in its charset (text.js)', () => {
    it('finds the charset in content-type, else in an HTML <meta>', () => {
      assert.equal(declaredCharset('text/html; charset="ISO-8859-1"', ''), 'ISO-8859-1');
      assert.equal(declaredCharset('text/html', '<head><meta charset=koi8-r>'), 'koi8-r');
      assert.equal(
        declaredCharset('text/html', '<meta http-equiv="Content-Type" content="text/html; charset=windows-1251">'),
        'windows-1251',
      );
      assert.equal(declaredCharset('text/css', '<meta charset=koi8-r>'), null);
      assert.equal(declaredCharset(null, 'x'), null);
    });
    it('writes UTF-8, and single-byte charsets byte for byte (iso-8859-1 is windows-1252 to a browser)', () => {
      assert.deepEqual(textBytes('café €', null).bytes, Buffer.from('café €', 'utf8'));
      assert.deepEqual(textBytes('café €', 'iso-8859-1').bytes, Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x20, 0x80]));
      const koi = Buffer.from([0xf0, 0xd2, 0xc9, 0xd7, 0xc5, 0xd4]);
      assert.deepEqual(textBytes(new TextDecoder('koi8-r').decode(koi), 'KOI8-R').bytes, koi);
      assert.deepEqual(textBytes('hé', 'utf-16le').bytes, Buffer.from('hé', 'utf16le'));
    });
    it('says why it cannot: a multi-byte or unknown charset, a character the charset lacks', () => {
      assert.match(textBytes('x', 'shift_jis').error, /shift_jis cannot be written back \(multi-byte\)/);
      assert.match(textBytes('x', 'no-such-charset').error, /"no-such-charset" is unknown/);
      assert.match(textBytes('snow ☃', 'iso-8859-1').error, /windows-1252 has no byte for U\+2603/);
    });
  });

  describe('headers (headers.js)', () => {
    it('drops hop-by-hop headers, content-length, pseudo-headers and values no server sends, keeping order and case', () => {
      const h = [
        [':status', '200'],
        ['Content-Type', 'text/html'],
        ['Connection', 'keep-alive'],
        ['keep-alive', 'timeout=5'],
        ['Transfer-Encoding', 'chunked'],
        ['content-length', '12'],
        ['set-cookie', 'a=1'],
        ['x-broken', 'a\rb'],
        ['set-cookie', 'b=2'],
        ['x-tab', 'a\tcafé'],
      ];
      assert.deepEqual(servedHeaders(h), [
        ['Content-Type', 'text/html'],
        ['set-cookie', 'a=1'],
        ['set-cookie', 'b=2'],
        ['x-tab', 'a\tcafé'],
      ]);
      assert.equal(headerValue(h, 'set-cookie'), 'a=1, b=2');
      assert.equal(headerValue(h, 'content-type'), 'text/html');
      assert.equal(headerValue(h, 'vary'), null);
    });
    it('splits the newline-joined values DevTools gives into one pair each', () => {
      assert.deepEqual(headerPairs({ 'set-cookie': 'a=1\nb=2', vary: 'accept' }), [
        ['set-cookie', 'a=1'],
        ['set-cookie', 'b=2'],
        ['vary', 'accept'],
      ]);
    });
  });

  describe('an archive from responses (build.js)', () => {
    it('stores each response as an entry, bodies numbered by entry, redirects without body', () => {
      const built = build([
        response('http://www.example.test/', {
          status: 301,
          headers: [
            ['location', PAGE],
            ['content-length', '0'],
          ],
          content: null,
        }),
        response(PAGE, {
          headers: [
            ['content-type', 'text/html'],
            ['content-length', '99'],
          ],
        }),
        response('https://cdn.example.test/a.js#frag'),
      ]);
      const { archive, bodies } = built;
      assert.equal(archive.format, 'satbench-archive');
      assert.equal(archive.version, 1);
      assert.equal(archive.page, PAGE);
      assert.deepEqual(archive.source, { tool: 'record', from: PAGE });
      assert.deepEqual(archive.entries[0], {
        method: 'GET',
        url: 'http://www.example.test/',
        status: 301,
        headers: [['location', PAGE]],
        body: null,
      });
      assert.deepEqual(archive.entries[1].headers, [['content-type', 'text/html']]);
      assert.deepEqual(
        archive.entries.map((e) => [e.url, e.body]),
        [
          ['http://www.example.test/', null],
          [PAGE, 'bodies/0001'],
          ['https://cdn.example.test/a.js', 'bodies/0002'],
        ],
      );
      assert.deepEqual(
        bodies.map(([n, b]) => [n, b.toString()]),
        [
          ['bodies/0001', `body of ${PAGE}`],
          ['bodies/0002', 'body of https://cdn.example.test/a.js#frag'],
        ],
      );
      assert.deepEqual(archive.missing, []);
    });
    it('encodes a decoded body again under its content-encoding, and keeps the header', () => {
      const css = 'body { color: red; }\n'.repeat(100);
      const built = build([
        response(PAGE),
        response('https://www.example.test/s.css', { headers: [['content-encoding', 'br']], content: text(css) }),
        response('https://www.example.test/g.js', { headers: [['Content-Encoding', 'gzip']], content: text(css) }),
      ]);
      const br = bodyOf(built, 'https://www.example.test/s.css');
      assert.equal(zlib.brotliDecompressSync(br).toString(), css);
      assert.equal(zlib.gunzipSync(bodyOf(built, 'https://www.example.test/g.js')).toString(), css);
      assert.deepEqual(built.archive.entries[1].headers, [['content-encoding', 'br']]);
    });
    it('takes base64 bodies as bytes and text in its charset', () => {
      const bin = Buffer.from([0, 1, 2, 255, 254, 128]);
      const built = build([
        response(PAGE),
        response('https://www.example.test/b.bin', { content: { text: bin.toString('base64'), base64: true } }),
        response('https://www.example.test/l.txt', {
          headers: [['content-type', 'text/plain; charset=iso-8859-1']],
          content: text('é€'),
        }),
      ]);
      assert.deepEqual(bodyOf(built, 'https://www.example.test/b.bin'), bin);
      assert.deepEqual(bodyOf(built, 'https://www.example.test/l.txt'), Buffer.from([0xe9, 0x80]));
    });
    it('lists what cannot be stored under missing, with the reason; nothing is dropped unsaid', () => {
      const built = build([
        response(PAGE),
        response('https://www.example.test/gone.png', { missing: 'failed: net::ERR_CONNECTION_REFUSED' }),
        response('https://www.example.test/big.mp4', { content: null, noContent: 'DevTools has no body for it' }),
        response('https://www.example.test/nobody.js', { content: null }),
        response('https://www.example.test/z.txt', { headers: [['content-encoding', 'compress']] }),
        response('https://www.example.test/sj.txt', {
          headers: [['content-type', 'text/plain; charset=shift_jis']],
        }),
        response('https://www.example.test/cached.css', { fromCache: true }),
        response('https://www.example.test/204', { method: 'POST', status: 204, content: null }),
        response('https://www.example.test/head', { method: 'HEAD', content: null }),
        response('data:image/png;base64,AAAA'),
        response('blob:https://www.example.test/1234'),
      ]);
      assert.deepEqual(
        built.archive.missing.map((m) => [m.url.split('/').pop(), m.reason]),
        [
          ['gone.png', 'failed: net::ERR_CONNECTION_REFUSED'],
          ['big.mp4', 'DevTools has no body for it'],
          ['nobody.js', 'no body'],
          ['z.txt', 'content-encoding "compress" cannot be applied (known: gzip, x-gzip, deflate, br, identity, zstd)'],
          ['sj.txt', 'text body: charset shift_jis cannot be written back (multi-byte)'],
          ['cached.css', "served from Chromium's cache, not the network, and no response from the network has it"],
        ],
      );
      assert.deepEqual(
        built.archive.entries.map((e) => [e.method, e.url.split('/').pop(), e.body]),
        [
          ['GET', '', 'bodies/0000'],
          ['POST', '204', null],
          ['HEAD', 'head', null],
        ],
      );
      assert.deepEqual(built.skipped, ['data:image/png;base64,AAAA', 'blob:https://www.example.test/1234']);
    });
    it('leaves out a cache hit that a response from the network answers, and counts it', () => {
      const built = build([response(PAGE), response(`${PAGE}a.css`), response(`${PAGE}a.css`, { fromCache: true })]);
      assert.equal(built.archive.entries.length, 2);
      assert.deepEqual(built.archive.missing, []);
      assert.equal(built.cached, 1);
    });
    it('refuses an archive whose page is not stored, saying why', () => {
      assert.throws(
        () => build([response(PAGE, { missing: 'failed: net::ERR_TIMED_OUT' })]),
        usage(
          /^https:\/\/www\.example\.test\/: the page https:\/\/www\.example\.test\/ cannot be stored: failed: net::ERR_TIMED_OUT$/,
        ),
      );
      assert.throws(() => build([response(`${PAGE}other`)]), usage(/the page .* is not among the responses$/));
      const moved = response(PAGE, { status: 302, headers: [['location', '/home']], content: null });
      assert.throws(
        () => build([moved, response(`${PAGE}home`, { content: null, noContent: 'DevTools has no body for it' })]),
        usage(
          /: the page https:\/\/www\.example\.test\/home \(where https:\/\/www\.example\.test\/ redirects\) cannot be stored: DevTools has no body for it$/,
        ),
      );
      const back = response(`${PAGE}home`, { status: 301, headers: [['location', PAGE]], content: null });
      assert.throws(
        () => build([moved, back]),
        usage(/: the page https:\/\/www\.example\.test\/ redirects in a loop$/),
      );
      assert.throws(
        () => build([response(PAGE)], 'ftp://x/'),
        usage(/^ftp:\/\/x\/: expected an absolute http\(s\) URL$/),
      );
    });
    it('knows which responses carry no body', () => {
      assert.deepEqual(
        [[200], [204], [205], [304], [301], [302], [308], [101], [404], [500]].map(([s]) => carriesNoBody('GET', s)),
        [false, true, true, true, true, true, true, true, false, false],
      );
      assert.equal(carriesNoBody('HEAD', 200), true);
    });
  });

  describe('matching a request, origins and hosts (match.js, urls.js)', () => {
    const archive = {
      page: 'https://www.example.test/',
      entries: [
        { method: 'GET', url: 'https://www.example.test/', status: 200 },
        { method: 'GET', url: 'https://api.example.test/data?session=1', status: 200 },
        { method: 'GET', url: 'https://api.example.test/data?session=2', status: 201 },
        { method: 'POST', url: 'https://api.example.test/data', status: 204 },
        { method: 'GET', url: 'https://api.example.test/data', status: 202 },
        { method: 'GET', url: 'http://www.example.test:8080/a', status: 200 },
      ],
      missing: [{ method: 'GET', url: 'https://gone.example.test/x', reason: 'failed' }],
    };
    const status = (method, url) => matchEntry(archive, method, url)?.status ?? null;
    it('the same method and URL first, the first entry in archive order', () => {
      assert.equal(status('GET', 'https://api.example.test/data?session=2'), 201);
      assert.equal(status('GET', 'https://api.example.test/data'), 202);
      assert.equal(status('POST', 'https://api.example.test/data'), 204);
    });
    it('else the same method and URL without its query string: the first such entry', () => {
      assert.equal(status('GET', 'https://api.example.test/data?session=99'), 200);
      assert.equal(status('POST', 'https://api.example.test/data?x=1'), 204);
      assert.equal(status('GET', 'https://www.example.test/?utm=1'), 200);
    });
    it('compares URLs in archive form: case of scheme and host, default port, fragment', () => {
      assert.equal(status('GET', 'HTTPS://WWW.Example.test:443/#top'), 200);
      assert.equal(status('GET', 'http://www.example.test:8080/a'), 200);
      assert.equal(status('GET', 'http://www.example.test/a'), null);
    });
    it('HEAD takes a GET entry where no HEAD entry answers by the same rule', () => {
      const withHead = {
        ...archive,
        entries: [...archive.entries, { method: 'HEAD', url: 'https://api.example.test/data', status: 299 }],
      };
      const head = (url) => matchEntry(withHead, 'HEAD', url)?.status ?? null;
      assert.equal(head('https://www.example.test/'), 200);
      assert.equal(head('https://api.example.test/data'), 299);
      assert.equal(head('https://api.example.test/data?session=2'), 201);
      assert.equal(head('https://api.example.test/data?session=7'), 299);
      assert.equal(status('HEAD', 'https://api.example.test/data?session=7'), 200);
    });
    it('else nothing: another method, path or host, or no URL at all', () => {
      assert.equal(status('PUT', 'https://api.example.test/data'), null);
      assert.equal(status('get', 'https://www.example.test/'), null);
      assert.equal(status('GET', 'https://www.example.test/other'), null);
      assert.equal(status('GET', 'not a url'), null);
    });
    it("follows the page's redirects to its document", () => {
      const a = {
        page: 'http://example.test/',
        entries: [
          { method: 'GET', url: 'http://example.test/', status: 301, headers: [['Location', 'https://example.test/']] },
          { method: 'GET', url: 'https://example.test/', status: 302, headers: [['location', '/en/?x=1']] },
          { method: 'GET', url: 'https://example.test/en/', status: 200, headers: [['location', '/ignored']] },
        ],
        missing: [],
      };
      assert.deepEqual(pageChain(a), { chain: a.entries });
      a.entries.pop();
      assert.deepEqual(pageChain(a), { chain: a.entries, unanswered: 'https://example.test/en/?x=1' });
    });
    it('lists origins with their port and hosts, each once, the page first, then entries and missing', () => {
      assert.deepEqual(archiveOrigins({ ...archive, page: 'http://www.example.test:8080/a' }), {
        origins: [
          'http://www.example.test:8080',
          'https://www.example.test:443',
          'https://api.example.test:443',
          'https://gone.example.test:443',
        ],
        hosts: ['www.example.test', 'api.example.test', 'gone.example.test'],
      });
      assert.equal(originOf('http://a.test/x'), 'http://a.test:80');
      assert.equal(archiveUrl('HTTP://A.test:80/p?q#f'), 'http://a.test/p?q');
      assert.equal(archiveUrl('ws://a.test/'), null);
    });
  });

  describe('reading, checking and writing (format.js, write.js)', () => {
    const good = () =>
      build([
        response(PAGE, { headers: [['content-encoding', 'gzip']], content: text('<p>hi</p>') }),
        response(`${PAGE}r`, { status: 302, headers: [['location', PAGE]], content: null }),
        response(`${PAGE}gone`, { missing: 'failed: net::ERR_FAILED' }),
      ]);
    it('writes bodies and archive.json, which reads back the same, a line per entry', () => {
      const dir = path.join(tmp(), 'new', 'archive');
      const built = good();
      writeArchive(dir, built);
      assert.ok(isArchive(dir));
      assert.deepEqual(readArchive(dir), built.archive);
      assert.deepEqual(fs.readdirSync(dir).sort(), [ARCHIVE_FILE, 'bodies']);
      assert.equal(zlib.gunzipSync(fs.readFileSync(path.join(dir, 'bodies/0000'))).toString(), '<p>hi</p>');
      const lines = fs.readFileSync(path.join(dir, ARCHIVE_FILE), 'utf8').split('\n');
      assert.ok(lines.includes(`    ${JSON.stringify(built.archive.entries[1])}`));
      assert.equal(archiveJson(built.archive), lines.join('\n'));
    });
    it('leaves nothing behind when a write fails', () => {
      const parent = tmp();
      const dir = path.join(parent, 'a');
      const built = good();
      built.bodies.push(['bodies/no/such/folder', Buffer.from('x')]);
      assert.throws(() => writeArchive(dir, built), usage(/a: cannot write the archive \(ENOENT\)$/));
      assert.deepEqual(fs.readdirSync(parent), []);
      fs.mkdirSync(dir);
      assert.throws(() => writeArchive(dir, built), UsageError);
      assert.deepEqual(fs.readdirSync(dir), []);
    });
    it('--out must be new or an empty folder', () => {
      const parent = tmp();
      requireNewOrEmpty(path.join(parent, 'new'), '--out');
      requireNewOrEmpty(parent, '--out');
      fs.writeFileSync(path.join(parent, 'f'), '');
      assert.throws(
        () => requireNewOrEmpty(parent, '--out'),
        usage(/^--out .*: holds 1 file\(s\) \(f, …\); expected a new or empty folder$/),
      );
      assert.throws(() => requireNewOrEmpty(path.join(parent, 'f'), '--out'), usage(/f: is a file, not a folder$/));
    });
    it('names archive.json, the key and what was expected for each mistake', () => {
      const cases = [
        [(a) => (a.format = 'har'), /^F: format: expected "satbench-archive", got "har"$/],
        [(a) => (a.version = 2), /^F: version: expected 1 \(the version this satbench reads\), got 2$/],
        [
          (a) => (a.page = 'www.example.test'),
          /^F: page: expected an absolute http\(s\) URL .*, got "www.example.test"$/,
        ],
        [(a) => (a.page = 'https://www.example.test/#x'), /^F: page: expected an absolute/],
        [
          (a) => (a.page = 'https://www.example.test/nothing/'),
          /^F: page: expected a URL whose load ends at an entry \(GET\): no entry for https:\/\/www\.example\.test\/nothing\/, got "https:/,
        ],
        [
          (a) => (a.entries[0] = { ...a.entries[1], url: PAGE, headers: [['location', '/r']] }),
          /^F: page: expected a URL whose load ends at an entry \(GET\): a redirect loop, got/,
        ],
        [(a) => (a.created = 'yesterday'), /^F: created: expected an ISO 8601 time, got "yesterday"$/],
        [(a) => (a.source.tool = 'wpr'), /^F: source.tool: expected "record" or "import-har", got "wpr"$/],
        [(a) => delete a.source.from, /^F: source.from: expected a URL or file name, got nothing$/],
        [(a) => (a.entries = []), /^F: entries: expected a non-empty array, got \[\]$/],
        [(a) => (a.entries[1].status = '302'), /^F: entries\[1\]\.status: expected a status 100–599, got "302"$/],
        [(a) => (a.entries[1].method = 'G ET'), /^F: entries\[1\]\.method: expected an HTTP method/],
        [(a) => (a.entries[1].url = 'https://www.example.test/r#x'), /^F: entries\[1\]\.url: expected an absolute/],
        [
          (a) => a.entries[1].headers.push(['Content-Length', '3']),
          /^F: entries\[1\]\.headers\[1\]: expected no hop-by-hop header, got \["Content-Length","3"\]$/,
        ],
        [
          (a) => (a.entries[1].headers[0] = { location: '/' }),
          /^F: entries\[1\]\.headers\[0\]: expected \[name, value\]/,
        ],
        [
          (a) => (a.entries[0].body = '../../etc/passwd'),
          /^F: entries\[0\]\.body: expected null or "bodies\/NAME", got "..\/..\/etc\/passwd"$/,
        ],
        [(a) => (a.missing = {}), /^F: missing: expected an array, got \{\}$/],
        [(a) => (a.missing[0].reason = ''), /^F: missing\[0\]\.reason: expected a reason, got ""$/],
        [(a) => (a.missing[0].url = 'data:x'), /^F: missing\[0\]\.url: expected an absolute/],
      ];
      for (const [spoil, message] of cases) {
        const { archive } = good();
        spoil(archive);
        assert.throws(() => validateArchive(archive, 'F'), usage(message), String(spoil));
      }
      assert.throws(() => validateArchive([], 'F'), usage(/^F: \(top level\): expected an object, got \[\]$/));
    });
    it('reading: no archive.json, not JSON, a body file missing or outside the archive: one line each', () => {
      const dir = tmp();
      assert.throws(
        () => readArchive(dir),
        usage(/: no archive\.json, so not a site archive \(satbench record or import-har make one\)$/),
      );
      fs.writeFileSync(path.join(dir, ARCHIVE_FILE), '{"format": "satbench-archive",');
      assert.throws(() => readArchive(dir), usage(/archive\.json: not JSON \(/));
      const other = path.join(tmp(), 'x');
      writeArchive(other, good());
      fs.rmSync(path.join(other, 'bodies/0000'));
      assert.throws(
        () => readArchive(other),
        usage(/archive\.json: entries\[0\]\.body: expected the file .*\/x\/bodies\/0000, which is missing$/),
      );
      // a symlink out of the archive, which the origin refuses at its start; one inside is a body
      const secret = path.join(tmp(), 'secret');
      fs.writeFileSync(secret, 'not for the page');
      fs.symlinkSync(secret, path.join(other, 'bodies/0000'));
      assert.throws(
        () => readArchive(other),
        usage(
          /archive\.json: entries\[0\]\.body: expected the file .*\/x\/bodies\/0000, which leads outside the archive \(a symlink\)$/,
        ),
      );
      fs.rmSync(path.join(other, 'bodies/0000'));
      fs.mkdirSync(path.join(other, 'bodies/0000'));
      assert.throws(() => readArchive(other), usage(/entries\[0\]\.body: expected the file .*, which is not a file$/));
      fs.rmdirSync(path.join(other, 'bodies/0000'));
      fs.writeFileSync(path.join(other, 'bodies/real'), 'x');
      fs.symlinkSync('real', path.join(other, 'bodies/0000'));
      assert.equal(readArchive(other).entries[0].body, 'bodies/0000');
    });
  });
});
