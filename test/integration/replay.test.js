// A recorded page replayed in a testbed: record-site.js's page (www, cdn
// and api.record.test, a redirect, gzip/br/deflate bodies, requests made
// by a script) recorded with `satbench record`, then `bench --site DIR`
// over TLS protocols and through the split-TCP PEP: every origin at its
// own address, names answered by dnsmasq, every resource over the
// protocol asked for, and nothing unmatched but what the archive lists
// as missing.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { satbench, SHORT, records, writeProfile } from './helpers.js';
import { RULES, startRecordSite } from './record-site-ns.js';
import { listTestbeds } from '../../harness/testbed/testbed.js';
import { readArchive } from '../../harness/archive/format.js';

const WANT = { h1s: 'http/1.1', h2: 'h2', h3: 'h3', 'h1s-pep': 'http/1.1', 'h2-pep': 'h2', 'h3-pep': 'h3' };

describe('replaying a site archive (integration, real Chromium)', function () {
  this.timeout(300000);
  let site;
  let archiveDir;

  before(async () => {
    site = await startRecordSite(`satbench-replay-test-${process.pid}`);
    archiveDir = path.join(site.tmp, 'archive');
    const r = await site.record([
      'http://www.record.test/',
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

  it('replays every origin over h1s, h2, h3, h1s-pep and h3-pep, DNS in gw, and counts what the archive lacks', async () => {
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
    const archive = readArchive(archiveDir);
    // what the page asks for and the archive could not store (a refused host)
    const missing = archive.missing.map((m) => m.url);
    const recs = records(out);
    assert.deepEqual(
      recs.map((x) => x.scenario.protocol),
      protocols,
    );
    for (const rec of recs) {
      const p = rec.scenario.protocol;
      assert.equal(rec.ok, true, `${p}: ${rec.error}`);
      assert.equal(rec.navigation.name, 'https://www.record.test/', p);
      assert.equal(rec.navigation.nextHopProtocol, WANT[p], p);
      // resources answered over the network (a cross-origin fetch that a 404 fails CORS has none)
      const answered = rec.resources.filter((x) => x.nextHopProtocol);
      assert.ok(answered.length >= 4, `${p}: ${answered.length} resources`);
      for (const x of answered) assert.equal(x.nextHopProtocol, WANT[p], `${p}: ${x.name}`);
      // unmatched: only what the archive lists as missing
      for (const u of rec.origin_log.unmatched) assert.ok(missing.includes(u), `${p}: ${u} unmatched`);
      assert.ok(rec.origin_log.requests >= 8, `${p}: ${rec.origin_log.requests} requests at the origin`);
      // one connection per origin over h2 and h3; up to six for HTTP/1.1
      for (const origin of ['https://www.record.test', 'https://cdn.record.test']) {
        const n = rec.connections[origin];
        assert.ok(n >= 1 && n <= (WANT[p] === 'http/1.1' ? 6 : 1), `${p}: ${n} connections to ${origin}`);
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
    const dests = Object.keys(pep.stats.gw.destinations?.addresses ?? pep.stats.gw.destinations ?? {});
    assert.ok(dests.length >= 2, `h3-pep: Proxy-GW's destinations ${JSON.stringify(pep.stats.gw.destinations)}`);
    const summary = JSON.parse(fs.readFileSync(path.join(out, 'summary.json'), 'utf8'));
    assert.equal(summary.meta.dns, 'gw');
    // the report's Origins section
    assert.ok(
      summary.groups.every((g) => g.origins.origins.length >= 3),
      'per-origin figures in every group',
    );
    assert.match(fs.readFileSync(path.join(out, 'index.html'), 'utf8'), /<section id="origins">/);
    // the bench has exited: a testbed of its would have no living owner (others may be running)
    const left = (await listTestbeds()).filter((tb) => !tb.owner_alive);
    assert.deepEqual(left, [], 'a run left a testbed behind');
  });

  it('refuses cleartext h1 for an https page, and --dns without an archive, before anything runs', async () => {
    const args = ['bench', '--profile', writeProfile(SHORT), '--site', archiveDir, '-n', '1'];
    const h1 = await satbench([...args, '--protocol', 'h1', '--out', path.join(site.tmp, 'no-h1')]);
    assert.equal(h1.code, 2);
    assert.match(
      h1.stderr,
      /--protocol h1: .* is a page over https \(https:\/\/www\.record\.test\/\); cleartext h1 cannot replay it/,
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
