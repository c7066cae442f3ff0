// satbench record against a site of the test's own: record-site.js serves
// www, cdn and api.record.test over HTTPS and www over HTTP inside a network
// namespace the test makes (nothing else is reachable from it), and the
// record runs there too, with --resolve and --spki. The archive must hold
// every response as it went on the wire and list what could not be stored.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { readArchive } from '../../harness/archive/format.js';
import { archiveOrigins, matchEntry } from '../../harness/archive/match.js';
import { decodeBody } from '../../harness/archive/encoding.js';
import { HOSTS, RULES, startRecordSite } from './record-site-ns.js';

describe('satbench record (integration, real Chromium)', function () {
  this.timeout(180000);
  const ns = `satbench-record-test-${process.pid}`;
  let site;
  let tmp;
  let served;
  let pin;
  const record = (args) => site.record(args);
  const rules = RULES;

  before(async () => {
    site = await startRecordSite(ns);
    ({ tmp, served, pin } = site);
  });

  after(() => site?.stop());

  it('stores every response of every origin, bodies as served, and lists what it could not store', async () => {
    const out = path.join(tmp, 'archive');
    const r = await record(['http://www.record.test/', '--out', out, '--settle-ms', '1000', ...rules, '--spki', pin]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stderr,
      /^wrote .*archive\/archive\.json: \d+ responses \(\d+ bytes of bodies\) from 5 origin\(s\), page http:\/\/www\.record\.test\/\n/,
    );
    const archive = readArchive(out);
    assert.equal(archive.page, 'http://www.record.test/');
    assert.deepEqual(archive.source, { tool: 'record', from: 'http://www.record.test/', device: 'desktop' });

    const byUrl = new Map(archive.entries.map((e) => [`${e.method} ${e.url.split('?')[0]}`, e]));
    const entry = (key) => {
      assert.ok(byUrl.has(key), `no entry for ${key}: ${[...byUrl.keys()].join(', ')}`);
      return byUrl.get(key);
    };
    const header = (e, name) => e.headers.find(([n]) => n.toLowerCase() === name)?.[1];
    const file = (e) => fs.readFileSync(path.join(out, e.body));

    // redirects: the page's own (http → https) and a resource's, without body
    const first = entry('GET http://www.record.test/');
    assert.deepEqual([first.status, header(first, 'location'), first.body], [301, 'https://www.record.test/', null]);
    const moved = entry('GET https://www.record.test/old.gif');
    assert.deepEqual(
      [moved.status, header(moved, 'location'), moved.body],
      [301, 'https://cdn.record.test/new.gif', null],
    );

    // compressed bodies are stored compressed, as the server sent them, with their header
    for (const [key, where, coding] of [
      ['GET https://www.record.test/', 'www.record.test/', 'gzip'],
      ['GET https://www.record.test/style.css', 'www.record.test/style.css', 'br'],
      ['GET https://cdn.record.test/app.js', 'cdn.record.test/app.js', 'deflate'],
      ['GET https://api.record.test/data.json', 'api.record.test/data.json', 'gzip'],
    ]) {
      const e = entry(key);
      assert.equal(header(e, 'content-encoding'), coding, key);
      assert.notDeepEqual(file(e), served[where], `${key}: stored decoded`);
      assert.deepEqual(decodeBody(file(e), coding), served[where], key);
    }
    assert.equal(
      zlib.gunzipSync(file(entry('GET https://www.record.test/'))).toString(),
      served['www.record.test/'].toString(),
    );

    // the rest byte for byte: binary, a latin-1 text, what the script loaded
    for (const [key, where] of [
      ['GET https://cdn.record.test/new.gif', 'cdn.record.test/new.gif'],
      ['GET https://www.record.test/latin.txt', 'www.record.test/latin.txt'],
      ['GET https://api.record.test/blob.bin', 'api.record.test/blob.bin'],
      ['GET https://cdn.record.test/pic.gif', 'cdn.record.test/pic.gif'],
    ])
      assert.deepEqual(file(entry(key)), served[where], key);
    assert.equal(header(entry('GET https://cdn.record.test/pic.gif'), 'x-served-by'), 'cdn');
    const ping = entry('POST https://api.record.test/ping');
    assert.deepEqual([ping.status, ping.body], [204, null]);

    // the server framed every body: no length or connection headers are kept
    for (const e of archive.entries)
      for (const [n] of e.headers)
        assert.ok(
          !['content-length', 'connection', 'keep-alive', 'transfer-encoding'].includes(n.toLowerCase()),
          `${e.url}: ${n}`,
        );
    const known = new Set([...byUrl.keys()].filter((k) => !k.endsWith('/favicon.ico')));
    assert.equal(known.size, 11, [...known].join(', '));

    assert.deepEqual(
      archive.missing.map((m) => [m.method, m.url, m.reason]),
      [
        ['GET', 'https://gone.record.test/x.gif', 'failed: net::ERR_CONNECTION_REFUSED'],
        ['GET', 'https://api.record.test/slow', 'still loading at the end of the settle time'],
      ],
    );
    const { origins, hosts } = archiveOrigins(archive);
    assert.deepEqual(origins.slice(0, 2), ['http://www.record.test:80', 'https://www.record.test:443']);
    assert.deepEqual(
      new Set(origins.slice(2)),
      new Set(['https://cdn.record.test:443', 'https://api.record.test:443', 'https://gone.record.test:443']),
    );
    assert.deepEqual(new Set(hosts), new Set([...HOSTS, 'gone.record.test']));
    // the session parameter differs on every load: the query-less fallback answers it
    assert.equal(matchEntry(archive, 'GET', 'https://api.record.test/data.json?session=1')?.status, 200);
  });

  it('records the page as the device --device names, and says which in the archive', async () => {
    const images = {};
    for (const device of ['mobile', 'desktop']) {
      const out = path.join(tmp, `device-${device}`);
      const page = 'https://www.record.test/device.html';
      const r = await record([page, '--out', out, '--settle-ms', '200', ...rules, '--spki', pin, '--device', device]);
      assert.equal(r.code, 0, r.stderr);
      const archive = readArchive(out);
      assert.equal(archive.source.device, device);
      images[device] = archive.entries.map((e) => e.url).filter((u) => u.endsWith('.gif'));
    }
    assert.deepEqual(images, {
      mobile: ['https://www.record.test/phone.gif'],
      desktop: ['https://www.record.test/desktop.gif'],
    });
  });

  it('a page that does not load, or answers an error, is one line and writes nothing', async () => {
    const cases = [
      [
        ['https://gone.record.test/', '--spki', pin],
        /^satbench: https:\/\/gone\.record\.test\/: did not load \(net::ERR_CONNECTION_REFUSED at .*\); nothing recorded$/,
      ],
      [
        ['https://www.record.test/nope', '--spki', pin],
        /^satbench: https:\/\/www\.record\.test\/nope: the page answered 404; nothing recorded$/,
      ],
      // without the pin the certificate is refused
      [['https://www.record.test/'], /: did not load \(net::ERR_CERT_AUTHORITY_INVALID at .*\); nothing recorded$/],
      [
        ['https://api.record.test/slow', '--spki', pin, '--timeout', '2'],
        /^satbench: https:\/\/api\.record\.test\/slow: no load event within 2 s \(--timeout\); nothing recorded$/,
      ],
    ];
    for (const [args, message] of cases) {
      const out = path.join(tmp, 'never');
      const r = await record([...args, '--out', out, ...rules]);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr.trim(), message, args.join(' '));
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      assert.ok(!fs.existsSync(out), `${args.join(' ')} wrote ${out}`);
    }
  });
});
