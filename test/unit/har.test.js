// import-har: a HAR 1.2 file as Chrome DevTools saves it with content,
// turned into an archive (text and base64 bodies, bodies compressed again
// under their content-encoding, redirects, entries without a body as
// missing), and the command's input refused in one line, nothing written.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { UsageError } from '../../harness/core/errors.js';
import { harResponses } from '../../harness/archive/har.js';
import { checkHar } from '../../harness/archive/har-check.js';
import { readArchive } from '../../harness/archive/format.js';
import { decodeBody } from '../../harness/archive/encoding.js';
import { satbench } from '../integration/helpers.js';
import { harEntry as entry, harLog as logOf, harPage as page, importedArchive } from '../har-entry.js';

const usage = (pattern) => (e) => e instanceof UsageError && pattern.test(e.message) && !e.message.includes('\n');
const PAGE = 'https://www.example.test/';
const GIF = Buffer.from('GIF89a\x01\x00\x01\x00\x80\x00\x00\xff\xff\xff\x00\x00\x00!', 'latin1');
const JS = 'console.log("hello");\n'.repeat(50);

const har = () =>
  logOf(
    [
      entry('http://www.example.test/', {
        status: 301,
        headers: [['location', PAGE]],
        _resourceType: 'document',
      }),
      entry(PAGE, {
        headers: [
          [':status', '200'],
          ['content-type', 'text/html; charset=utf-8'],
          ['content-encoding', 'gzip'],
          ['content-length', '123'],
        ],
        content: { size: 40, text: '<!doctype html><h1>Grüße</h1>' },
        _resourceType: 'document',
      }),
      entry('https://cdn.example.test/app.js', {
        ip: '[2001:db8::5]',
        headers: [['content-encoding', 'br']],
        content: { size: JS.length, text: JS },
        _resourceType: 'script',
      }),
      entry('https://cdn.example.test/a.gif', {
        content: { size: GIF.length, text: GIF.toString('base64'), encoding: 'base64' },
      }),
      entry('https://cdn.example.test/empty.txt', { content: { size: 0 } }),
      entry('https://cdn.example.test/lost.css', { content: { size: 512 } }),
      entry('https://ads.example.test/x.js', { status: 0 }),
      entry('https://cdn.example.test/b.js', { content: { size: 2, text: '{}' }, _fromCache: 'memory' }),
      entry('https://other.test/', { pageref: 'page_2', content: { size: 2, text: 'hi' } }),
    ],
    [page('page_1', PAGE), page('page_2', 'https://other.test/')],
  );
// the ads entry failed: status 0 and DevTools' error
const failedHar = () => {
  const h = har();
  h.log.entries[6].response._error = 'net::ERR_BLOCKED_BY_CLIENT';
  return h;
};

describe('import-har', () => {
  it("takes the first page's entries, its first document as the page", () => {
    const { page, responses, leftOut } = harResponses(failedHar(), 'f.har');
    assert.equal(page, 'http://www.example.test/');
    assert.equal(responses.length, 8);
    assert.equal(leftOut, 1);
  });

  it('stores text and base64 bodies as they went on the wire, redirects, and the missing with reasons', () => {
    const { archive, bodies } = importedArchive(failedHar(), 'f.har');
    const body = (url) => {
      const e = archive.entries.find((x) => x.url === url);
      return bodies.find(([n]) => n === e.body)[1];
    };
    assert.deepEqual(
      archive.entries.map((e) => [e.status, e.url, e.body]),
      [
        [301, 'http://www.example.test/', null],
        [200, PAGE, 'bodies/0001'],
        [200, 'https://cdn.example.test/app.js', 'bodies/0002'],
        [200, 'https://cdn.example.test/a.gif', 'bodies/0003'],
        [200, 'https://cdn.example.test/empty.txt', 'bodies/0004'],
      ],
    );
    assert.deepEqual(archive.entries[0].headers, [['location', PAGE]]);
    // pseudo-headers and content-length go; content-encoding stays, and the body is gzip again
    assert.deepEqual(archive.entries[1].headers, [
      ['content-type', 'text/html; charset=utf-8'],
      ['content-encoding', 'gzip'],
    ]);
    assert.equal(zlib.gunzipSync(body(PAGE)).toString('utf8'), '<!doctype html><h1>Grüße</h1>');
    assert.equal(zlib.brotliDecompressSync(body('https://cdn.example.test/app.js')).toString(), JS);
    assert.deepEqual(decodeBody(body('https://cdn.example.test/app.js'), 'br'), Buffer.from(JS));
    assert.deepEqual(body('https://cdn.example.test/a.gif'), GIF);
    assert.equal(body('https://cdn.example.test/empty.txt').length, 0);
    assert.deepEqual(archive.missing, [
      {
        method: 'GET',
        url: 'https://cdn.example.test/lost.css',
        reason: 'the HAR has no content for its body (512 bytes)',
      },
      { method: 'GET', url: 'https://ads.example.test/x.js', reason: 'no response (net::ERR_BLOCKED_BY_CLIENT)' },
      {
        method: 'GET',
        url: 'https://cdn.example.test/b.js',
        reason: "served from Chromium's cache, not the network, and no response from the network has it",
      },
    ]);
  });

  it('without pages: every entry; the first document, else the first HTML response, is the page', () => {
    const h = har();
    delete h.log.pages;
    h.log.entries = h.log.entries.slice(2, 4);
    assert.throws(
      () => harResponses(h, 'f.har'),
      usage(/^f\.har: no page among the entries: expected log\.pages\[0\]\.title to be the URL of an entry/),
    );
    h.log.entries.push(entry(PAGE, { headers: [['content-type', 'text/html']], content: { size: 2, text: 'hi' } }));
    const { page, pageFrom, responses, leftOut } = harResponses(h, 'f.har');
    assert.equal(page, PAGE);
    assert.equal(pageFrom, 'its first HTML response, log.entries[2]');
    assert.equal(responses.length, 3);
    assert.equal(leftOut, 0);
  });

  it('takes the page the HAR names (pages[].title), from the request that redirected to it, and refuses a page that is not HTML', () => {
    // as WebPageTest and browsertime write it: no _resourceType, the stylesheet first
    const h = har();
    for (const e of h.log.entries) delete e._resourceType;
    const css = entry('https://css.example.test/f1.css', {
      headers: [['content-type', 'text/css']],
      content: { size: 4, text: 'a{}\n' },
    });
    h.log.entries.unshift(css);
    assert.deepEqual(
      [harResponses(h, 'f.har').page, harResponses(h, 'f.har').pageFrom],
      ['http://www.example.test/', 'log.pages[0].title, from the request redirected to it'],
    );
    h.log.entries.splice(1, 1); // without the redirect, the title itself
    assert.deepEqual([harResponses(h, 'f.har').page, harResponses(h, 'f.har').pageFrom], [PAGE, 'log.pages[0].title']);
    h.log.pages[0].title = 'https://css.example.test/f1.css';
    assert.throws(
      () => harResponses(h, 'f.har'),
      usage(
        /^f\.har: the page https:\/\/css\.example\.test\/f1\.css \(log\.pages\[0\]\.title\) is not HTML \(log\.entries\[0\]: "text\/css"\): expected the HTML document/,
      ),
    );
  });

  it("keeps DevTools' _error terminal-safe, and drops a header value a server cannot send", () => {
    const h = failedHar();
    h.log.entries[6].response._error = 'net::ERR_X\x1b[2J\x1b[Hfake line\n\u009b31m';
    h.log.entries[1].response.headers.push(
      { name: 'x-bad', value: 'a\r\nset-cookie: b' },
      { name: 'x-nul', value: 'a\0' },
    );
    const { archive } = importedArchive(h, 'f.har');
    const reason = archive.missing.find((m) => m.url === 'https://ads.example.test/x.js').reason;
    assert.equal(reason, 'no response (net::ERR_X\\x1b[2J\\x1b[Hfake line\\x0a\\x9b31m)');
    assert.deepEqual(
      archive.entries[1].headers.map(([n]) => n),
      ['content-type', 'content-encoding'],
    );
  });

  it('refuses a HAR saved without content, and one a replay cannot take, naming the file and key', () => {
    const bare = har();
    for (const e of bare.log.entries) delete e.response.content.text;
    const withEntry = (extra) => logOf([entry(PAGE, extra)]);
    const cases = [
      [bare, /^f\.har: no entry has its body \(response\.content\.text\): save the HAR with content/],
      [logOf([]), /^f\.har: log\.entries: expected a non-empty array$/],
      [
        withEntry({ content: { text: 'x', encoding: 'gzip' } }),
        /^f\.har: log\.entries\[0\]\.response\.content\.encoding: expected "base64" or none, got "gzip"$/,
      ],
      [
        withEntry({ content: { text: 'not base64!', encoding: 'base64' } }),
        /^f\.har: log\.entries\[0\]\.response\.content\.text: expected base64 text$/,
      ],
      // Buffer.from would take "A" as an empty body
      ...['A', 'QUJD=', 'QQ=x', 'QQ===='].map((text) => [
        withEntry({ content: { text, encoding: 'base64' } }),
        /^f\.har: log\.entries\[0\]\.response\.content\.text: expected base64 text$/,
      ]),
      // named as the HAR names them, not as the archive being made
      [
        withEntry({
          headers: [
            ['content-type', 'text/html'],
            ['bad name', 'x'],
          ],
        }),
        /^f\.har: log\.entries\[0\]\.response\.headers\[1\]\.name: expected a header name \(RFC 9110 token\), got "bad name"$/,
      ],
      [
        withEntry({ status: 999 }),
        /^f\.har: log\.entries\[0\]\.response\.status: expected 0 \(no response\) or a status 100–599, got 999$/,
      ],
    ];
    const badMethod = withEntry();
    badMethod.log.entries[0].request.method = 'G T';
    cases.push([badMethod, /^f\.har: log\.entries\[0\]\.request\.method: expected an HTTP method, got "G T"$/]);
    for (const [input, message] of cases) assert.throws(() => harResponses(input, 'f.har'), usage(message));
  });

  describe('the HAR 1.2 schema check (har-check.js)', () => {
    it('passes what DevTools writes where har-schema would not: serverIPAddress "" and [IPv6], a URL with { | } in its query', () => {
      checkHar(failedHar(), 'f.har');
      const h = logOf([entry(`${PAGE}?q={a|b}`, { ip: '[::1]' }), entry(PAGE, { status: 0 })]);
      checkHar(h, 'f.har');
      assert.equal(h.log.entries[1].serverIPAddress, '');
    });

    it('refuses a file that fails it in one line: the file, the JSON path and what HAR 1.2 expects', () => {
      const broken = (change) => {
        const h = har();
        change(h.log.entries[2], h);
        return h;
      };
      const cases = [
        [{}, /^f\.har: log: expected an object, found none \(HAR 1\.2\)$/],
        [[], /^f\.har: \(the file\): expected an object, got \[\] \(HAR 1\.2\)$/],
        [{ log: { entries: [] } }, /^f\.har: log\.version: expected a string, found none \(HAR 1\.2\)$/],
        [
          broken((e) => delete e.request.method),
          /^f\.har: log\.entries\[2\]\.request\.method: expected a string, found none \(HAR 1\.2\)$/,
        ],
        [
          broken((e) => delete e.response.headers),
          /^f\.har: log\.entries\[2\]\.response\.headers: expected an array, found none \(HAR 1\.2\)$/,
        ],
        [
          broken((e) => (e.response.status = '200')),
          /^f\.har: log\.entries\[2\]\.response\.status: expected an integer, got "200" \(HAR 1\.2\)$/,
        ],
        [
          broken((e) => (e.response.headers[0].value = 7)),
          /^f\.har: log\.entries\[2\]\.response\.headers\[0\]\.value: expected a string, got 7 \(HAR 1\.2\)$/,
        ],
        [
          broken((e) => delete e.timings.receive),
          /^f\.har: log\.entries\[2\]\.timings\.receive: expected a number, found none \(HAR 1\.2\)$/,
        ],
        [
          broken((e) => (e.startedDateTime = 'yesterday')),
          /^f\.har: log\.entries\[2\]\.startedDateTime: expected a date and time in ISO 8601 with its time zone, got "yesterday" \(HAR 1\.2\)$/,
        ],
        [
          broken((e) => (e.request.url = 'not a url')),
          /^f\.har: log\.entries\[2\]\.request\.url: expected a URL, got "not a url" \(HAR 1\.2\)$/,
        ],
        [
          broken((e) => (e.serverIPAddress = 'cdn')),
          /^f\.har: log\.entries\[2\]\.serverIPAddress: expected an IPv4 or IPv6 address, or "" \(none\), got "cdn" \(HAR 1\.2\)$/,
        ],
        [
          broken((_, h) => delete h.log.pages[1].pageTimings),
          /^f\.har: log\.pages\[1\]\.pageTimings: expected an object, found none \(HAR 1\.2\)$/,
        ],
      ];
      for (const [input, message] of cases) {
        assert.throws(() => checkHar(input, 'f.har'), usage(message));
        // import-har checks it first
        assert.throws(() => harResponses(input, 'f.har'), usage(message));
      }
    });
  });

  describe('satbench import-har', function () {
    this.timeout(30000);
    let dir;
    before(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-har-'))));
    after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const at = (...p) => path.join(dir, ...p);

    it('writes the archive and says what it holds', async () => {
      fs.writeFileSync(at('page.har'), JSON.stringify(failedHar()));
      const r = await satbench(['import-har', at('page.har'), '--out', at('a')]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(
        r.stderr,
        /^wrote .*\/a\/archive\.json: 5 responses \(\d+ bytes of bodies\) from 4 origin\(s\), page http:\/\/www\.example\.test\/\n/,
      );
      assert.match(
        r.stderr,
        /\n3 request\(s\) cannot be replayed, listed under "missing":\n  GET https:\/\/cdn\.example\.test\/lost\.css: /,
      );
      assert.match(r.stderr, /\n1 entries of the HAR's other pages left out/);
      assert.match(
        r.stderr,
        /\nthe page: http:\/\/www\.example\.test\/ \(log\.pages\[0\]\.title, from the request redirected to it\)\n/,
      );
      const archive = readArchive(at('a'));
      assert.deepEqual(archive.source, { tool: 'import-har', from: 'page.har' });
      assert.ok(Date.parse(archive.created) > Date.parse('2026-01-01'));
    });

    it("reads a gzipped HAR, as bench writes each run's", async () => {
      fs.writeFileSync(at('page.har.gz'), zlib.gzipSync(JSON.stringify(failedHar())));
      const r = await satbench(['import-har', at('page.har.gz'), '--out', at('gz')]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(readArchive(at('gz')).entries.length, 5);
    });

    it('prints nothing a terminal would act on', async () => {
      const h = failedHar();
      h.log.entries[6].response._error = '\x1b[2J\x1b[1;1Hall good\nwrote';
      fs.writeFileSync(at('esc.har'), JSON.stringify(h));
      const r = await satbench(['import-har', at('esc.har'), '--out', at('esc')]);
      assert.equal(r.code, 0, r.stderr);
      assert.ok(!r.stderr.includes('\x1b'), r.stderr);
      // an error that quotes its input (here the file's name) too
      const e = await satbench(['import-har', at('x\x1b[2J.har'), '--out', at('esc2')]);
      assert.equal(e.code, 2, e.stderr);
      assert.match(e.stderr, /^satbench: .*x\\x1b\[2J\.har: cannot read it \(no such file\)\n$/);
      assert.match(
        r.stderr,
        /\n {2}GET https:\/\/ads\.example\.test\/x\.js: no response \(\\x1b\[2J\\x1b\[1;1Hall good\\x0awrote\)\n/,
      );
    });

    it('bad input: one line, exit 2, nothing written', async () => {
      const bare = har();
      for (const e of bare.log.entries) delete e.response.content.text;
      fs.writeFileSync(at('bare.har'), JSON.stringify(bare));
      fs.writeFileSync(at('broken.har'), '{"log": ');
      const unfit = failedHar();
      delete unfit.log.entries[3].timings;
      fs.writeFileSync(at('unfit.har'), JSON.stringify(unfit));
      fs.writeFileSync(at('cut.har.gz'), zlib.gzipSync(JSON.stringify(failedHar())).subarray(0, 200));
      fs.mkdirSync(at('full'));
      fs.writeFileSync(at('full', 'x'), '');
      const cases = [
        [[at('bare.har'), '--out', at('o1')], /bare\.har: no entry has its body/, at('o1')],
        [[at('broken.har'), '--out', at('o2')], /broken\.har: not JSON \(/, at('o2')],
        [[at('none.har'), '--out', at('o3')], /none\.har: cannot read it \(no such file\)$/, at('o3')],
        [
          [at('unfit.har'), '--out', at('o5')],
          /unfit\.har: log\.entries\[3\]\.timings: expected an object, found none \(HAR 1\.2\)$/,
          at('o5'),
        ],
        [[at('cut.har.gz'), '--out', at('o6')], /cut\.har\.gz: not whole gzip \(Z_BUF_ERROR\)$/, at('o6')],
        [[at('bare.har')], /^satbench: import-har: name the archive's folder with --out DIR$/, null],
        [['--out', at('o4')], /^satbench: import-har: name one HAR file/, at('o4')],
        [
          [at('bare.har'), '--out', at('full')],
          /--out .*full: holds 1 file\(s\) \(x, …\); expected a new or empty folder$/,
          null,
        ],
      ];
      for (const [args, message, absent] of cases) {
        const r = await satbench(['import-har', ...args]);
        assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
        assert.match(r.stderr.trim(), message);
        assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
        if (absent) assert.ok(!fs.existsSync(absent), `${absent} was written`);
      }
      assert.deepEqual(fs.readdirSync(at('full')), ['x']);
    });
  });
});
