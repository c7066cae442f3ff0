// A recorded page replayed in a testbed: record-site.js's six.html (six
// origins: www, fonts, cdn, img, api and stats.record.test; a redirect,
// gzip and brotli bodies, requests made by a script) recorded with
// `satbench record`, then `bench --site DIR` over h1s, h2, h3, through
// both PEPs and through the MASQUE tunnel: every origin at its own address, names answered by dnsmasq,
// every resource over the protocol asked for, no request unmatched, one
// connection per origin over h2 and h3.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { satbench, SHORT, records, writeProfile, leftBehind } from './helpers.js';
import { RULES, startRecordSite } from './record-site-ns.js';
import { readArchive } from '../../harness/archive/format.js';

const SIX_ORIGINS = ['api', 'cdn', 'fonts', 'img', 'stats', 'www'].map((h) => `https://${h}.record.test`);
const WANT = { h1s: 'http/1.1', h2: 'h2', h3: 'h3', 'h1s-pep': 'http/1.1', 'h2-pep': 'h2', 'h3-pep': 'h3' };

describe('replaying a site archive (integration, real Chromium)', function () {
  this.timeout(300000);
  let site;
  let archiveDir;

  before(async () => {
    site = await startRecordSite(`satbench-replay-test-${process.pid}`);
    archiveDir = path.join(site.tmp, 'archive');
    const r = await site.record([
      'https://www.record.test/six.html',
      '--out',
      archiveDir,
      '--settle-ms',
      '1000',
      ...RULES,
      '--spki',
      site.pin,
    ]);
    assert.equal(r.code, 0, r.stderr);
  });

  after(() => site?.stop());

  it('replays six origins over h1s, h2, h3, h1s-pep and h3-pep, DNS in gw, nothing unmatched', async () => {
    const out = path.join(site.tmp, 'replay');
    const protocols = ['h1s', 'h2', 'h3', 'h1s-pep', 'h3-pep'];
    const r = await satbench(
      [
        'bench',
        '--profile',
        writeProfile(SHORT),
        '--site',
        archiveDir,
        '--protocol',
        protocols.join(','),
        '-n',
        '1',
        '--out',
        out,
      ],
      { timeoutMs: 240000 },
    );
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(readArchive(archiveDir).missing, [], 'the recording stored everything');
    const recs = records(out);
    assert.deepEqual(
      recs.map((x) => x.scenario.protocol),
      protocols,
    );
    for (const rec of recs) {
      const p = rec.scenario.protocol;
      assert.equal(rec.ok, true, `${p}: ${rec.error}`);
      assert.equal(rec.navigation.name, 'https://www.record.test/six.html', p);
      assert.equal(rec.navigation.nextHopProtocol, WANT[p], p);
      for (const x of rec.resources) assert.equal(x.nextHopProtocol, WANT[p], `${p}: ${x.name}`);
      assert.deepEqual(rec.origin_log.unmatched, [], `${p}: unmatched requests`);
      assert.ok(rec.origin_log.requests >= 7, `${p}: ${rec.origin_log.requests} requests at the origin`);
      // every origin reached; one connection each over h2 and h3 (api's fetch may
      // need a second, uncredentialed one), up to six over HTTP/1.1
      assert.deepEqual(Object.keys(rec.connections).sort(), SIX_ORIGINS, `${p}: ${JSON.stringify(rec.connections)}`);
      for (const [origin, n] of Object.entries(rec.connections)) {
        const most = WANT[p] === 'http/1.1' ? 6 : origin.includes('api.') ? 2 : 1;
        assert.ok(n >= 1 && n <= most, `${p}: ${n} connections to ${origin}`);
      }
      // dnsmasq in gw answered: a lookup crosses the 20 ms satellite round trip (a resource whose
      // connection was already open, or opened ahead, shows none)
      const lookups = rec.resources.map((x) => x.domainLookupEnd - x.domainLookupStart);
      assert.ok(
        lookups.some((ms) => ms >= 18),
        `${p}: DNS times ${lookups.map((ms) => ms.toFixed(1))}`,
      );
    }
    // h3-pep: Proxy-ST intercepted each origin's QUIC and Proxy-GW dialled each origin's own address
    const pep = recs.find((x) => x.scenario.protocol === 'h3-pep').pep;
    const dests = Object.keys(pep.stats.gw.destinations); // address → {connections, names}
    assert.equal(dests.length, 6, `h3-pep: Proxy-GW's destinations ${JSON.stringify(pep.stats.gw.destinations)}`);
    const summary = JSON.parse(fs.readFileSync(path.join(out, 'summary.json'), 'utf8'));
    assert.equal(summary.meta.settings.dns, 'gw');
    // the report's Origins section
    assert.ok(
      summary.groups.every((g) => g.origins.origins.length === 6),
      'per-origin figures in every group',
    );
    assert.match(fs.readFileSync(path.join(out, 'index.html'), 'utf8'), /<section id="origins">/);
    assert.deepEqual(await leftBehind(r.made), [], 'a run left these behind');
  });

  // h3-masque over many origins: TPROXY in st catches Chromium's QUIC to
  // each origin's own address, and each origin's flow gets a proxying
  // request of its own over the one HTTP/3 connection to Proxy-GW
  it('replays six origins over h3-masque, each origin its own proxying request', async () => {
    const out = path.join(site.tmp, 'replay-masque');
    const r = await satbench(
      [
        ...['bench', '--profile', writeProfile(SHORT), '--site', archiveDir, '--protocol', 'h3-masque'],
        ...['-n', '1', '--out', out],
      ],
      { timeoutMs: 240000 },
    );
    assert.equal(r.code, 0, r.stderr);
    const [rec] = records(out);
    assert.equal(rec.ok, true, rec.error);
    assert.equal(rec.navigation.nextHopProtocol, 'h3');
    for (const x of rec.resources) assert.equal(x.nextHopProtocol, 'h3', x.name);
    assert.deepEqual(rec.origin_log.unmatched, [], 'unmatched requests');
    assert.deepEqual(Object.keys(rec.connections).sort(), SIX_ORIGINS, JSON.stringify(rec.connections));
    const m = rec.pep.masque;
    console.log(`      masque: ${JSON.stringify(m)}`);
    assert.equal(m.connections, 1, JSON.stringify(m));
    assert.ok(m.requests_opened >= SIX_ORIGINS.length, JSON.stringify(m));
    assert.equal(m.requests_accepted, m.requests_opened, JSON.stringify(m));
    assert.deepEqual(await leftBehind(r.made), [], 'a run left these behind');
  });

  it('--cache revalidate: a repeat view of the archive revalidates what it had fetched, the origin answering 304', async () => {
    const out = path.join(site.tmp, 'replay-cache');
    const r = await satbench(
      [
        ...['bench', '--profile', writeProfile(SHORT), '--site', archiveDir, '--protocol', 'h2'],
        ...['--view', 'repeat', '--cache', 'revalidate', '-n', '1', '--out', out],
      ],
      { timeoutMs: 240000 },
    );
    assert.equal(r.code, 0, r.stderr);
    const [first, second] = records(out);
    for (const rec of [first, second]) assert.equal(rec.ok, true, rec.error);
    const what = `${JSON.stringify(second.cache_use)} ${JSON.stringify(second.origin_log.statuses)}`;
    // the archive recorded no validators: the origin made them from its body files
    assert.equal(first.cache_use.revalidated, 0, what);
    assert.ok(second.cache_use.revalidated >= 6, what);
    assert.equal(second.origin_log.statuses[304], second.cache_use.revalidated, what);
    assert.equal(second.cache_use.from_cache, 0, what);
    assert.deepEqual(await leftBehind(r.made), [], 'a run left these behind');
  });

  it('refuses cleartext h1 for an https page, and --dns without an archive, before anything runs', async () => {
    const args = ['bench', '--profile', writeProfile(SHORT), '--site', archiveDir, '-n', '1'];
    const h1 = await satbench([...args, '--protocol', 'h1', '--out', path.join(site.tmp, 'no-h1')]);
    assert.equal(h1.code, 2);
    assert.match(
      h1.stderr,
      /--protocol h1: .* is a page over https \(https:\/\/www\.record\.test\/six\.html\); cleartext h1 cannot replay it/,
    );
    const dns = await satbench([
      'bench',
      '--profile',
      writeProfile(SHORT),
      '--protocol',
      'h2',
      '--dns',
      'st',
      '-n',
      '1',
    ]);
    assert.equal(dns.code, 2);
    assert.match(dns.stderr, /--dns st: only for a site archive/);
  });
});
