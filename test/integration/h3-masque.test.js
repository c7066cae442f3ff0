// h3-masque on a real testbed with short delays: Chromium loads kepler from
// the origin's own address, TPROXY in st hands its QUIC to Proxy-ST, which
// carries it in CONNECT-UDP over one HTTP/3 connection to Proxy-GW; neither
// proxy holds a key for the origin's name, and Chromium pins the origin's
// key alone. With --pep-sat masque=stream the packets cross as capsules on
// the request streams, and the page loads as well.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { SHORT, writeProfile } from './helpers.js';
import { createTestbed, listNamespaces } from '../../harness/testbed/testbed.js';
import { loadProfile } from '../../harness/testbed/profiles.js';
import { run } from '../../harness/core/sys.js';
import { ADDRESSES, SITE_HOST } from '../../harness/testbed/addressing.js';
import { loadPage } from '../../harness/pageload/load.js';
import { startOrigin } from '../../harness/servers/origin.js';
import { startPepChain, pepRecord, checkThrough } from '../../harness/pep/chain.js';
import { chromiumArgs, siteTarget } from '../../harness/browser/chromium.js';
import { ensureSite } from '../../sites/generate.js';

// The SPKI pin of a PEM certificate, as Chromium takes it.
async function spkiOf(certPath) {
  const r = await run('sh', [
    '-c',
    `openssl x509 -in '${certPath}' -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64`,
  ]);
  return r.stdout.trim();
}

describe('h3-masque (integration, real Chromium)', function () {
  it('loads kepler over h3 end to end through the MASQUE tunnel, pinning only the origin', async function () {
    this.timeout(180000);
    const tb = await createTestbed({ profile: loadProfile(writeProfile(SHORT)), link: 'linkem' });
    try {
      const { spki: originSpki } = await startOrigin(tb, { siteDir: await ensureSite('kepler') });
      const chain = await startPepChain(tb, 'masque', { sides: { sat: {}, ground: {}, tunnel: 'warm' } });
      assert.equal(chain.spki, null, 'the chain has no key for Chromium to pin');
      assert.equal(chain.serverAddr, null, "Chromium goes to the origin's own address");
      assert.equal(chain.settings.satellite['initial-mtu'], 1400);

      // Chromium's pin list: the origin's key, nothing of the proxies'
      const target = siteTarget('h3-masque');
      assert.deepEqual(target.hosts, [{ name: SITE_HOST, address: ADDRESSES.server }]);
      const pins = chromiumArgs('h3-masque', { userDataDir: '/unused', spki: originSpki, target }).filter((a) =>
        a.startsWith('--ignore-certificate-errors-spki-list='),
      );
      console.log(`      Chromium's pin list: ${pins.join(' ')} (the origin's key: ${originSpki})`);
      assert.deepEqual(pins, [`--ignore-certificate-errors-spki-list=${originSpki}`]);
      // Proxy-GW's only certificate is its own, for its own name; Proxy-ST has none
      const gwPin = await spkiOf(path.join(tb.dir, 'masque', 'gw-tls', 'cert.pem'));
      assert.notEqual(gwPin, originSpki);
      const cmd = (role) => tb.state.processes.find((p) => p.role === `quic-pep-${role}`);
      assert.ok(cmd('st') && cmd('gw'), 'both proxies run');
      assert.deepEqual(
        fs.readdirSync(path.join(tb.dir, 'masque')).filter((f) => f.endsWith('-tls')),
        ['gw-tls'],
        'only Proxy-GW was given a certificate',
      );

      const rec = await loadPage({
        clientNs: tb.ns.client,
        protocol: 'h3-masque',
        spki: originSpki,
        target,
        timeoutMs: 90000,
      });
      assert.equal(rec.ok, true, `${rec.error} ${JSON.stringify(rec.errors)}`);
      assert.equal(rec.protocol_seen.document, 'h3');
      assert.deepEqual(Object.keys(rec.protocol_seen.resources), ['h3'], 'every resource over h3');
      assert.ok(rec.metrics.resource_count > 10, `resources: ${rec.metrics.resource_count}`);

      const pep = pepRecord(chain, await chain.stats());
      console.log(`      masque: ${JSON.stringify(pep.masque)}`);
      assert.deepEqual(checkThrough('h3-masque', pep), { ok: true, error: null });
      const m = pep.masque;
      assert.equal(m.mode, 'datagram');
      assert.ok(m.requests_opened >= 1 && m.requests_accepted === m.requests_opened, JSON.stringify(m));
      assert.equal(m.connections, 1, 'one HTTP/3 connection to Proxy-GW');
      assert.ok(m.datagrams.up > 10 && m.datagrams.down > 100, JSON.stringify(m));
      // kepler's bytes came down through the tunnel, inside the client's own QUIC
      assert.ok(m.bytes.down > 500000, JSON.stringify(m));
      const stLog = fs.readFileSync(chain.logs.st, 'utf8');
      assert.match(stLog, /masque flow 1 198\.18\.1\.2:\d+ -> 198\.18\.3\.2:443 proxying on stream 0/, stLog);
      const gwLog = fs.readFileSync(chain.logs.gw, 'utf8');
      assert.match(gwLog, /masque req 1 from 198\.18\.\d+\.\d+:\d+ proxying stream 0 to 198\.18\.3\.2:443/, gwLog);
    } finally {
      await tb.destroy();
    }
    assert.ok(
      !(await listNamespaces()).some((n) => n.startsWith(`sbt-${tb.id}-`)),
      'the testbed left namespaces behind',
    );
  });

  it('loads kepler with the packets as capsules on the request streams (--pep-sat masque=stream)', async function () {
    this.timeout(180000);
    const tb = await createTestbed({ profile: loadProfile(writeProfile(SHORT)), link: 'linkem' });
    try {
      const { spki } = await startOrigin(tb, { siteDir: await ensureSite('kepler') });
      const sides = { sat: { masque: 'stream' }, ground: {}, tunnel: 'warm' };
      const chain = await startPepChain(tb, 'masque', { sides });
      assert.equal(chain.settings.mode, 'stream');
      const cmd = tb.state.processes.find((p) => p.role === 'quic-pep-st');
      assert.ok(cmd, 'Proxy-ST runs');
      const rec = await loadPage({
        clientNs: tb.ns.client,
        protocol: 'h3-masque',
        spki,
        target: siteTarget('h3-masque'),
        timeoutMs: 90000,
      });
      assert.equal(rec.ok, true, `${rec.error} ${JSON.stringify(rec.errors)}`);
      assert.equal(rec.protocol_seen.document, 'h3');
      assert.deepEqual(Object.keys(rec.protocol_seen.resources), ['h3'], 'every resource over h3');
      assert.ok(rec.metrics.resource_count > 10, `resources: ${rec.metrics.resource_count}`);

      const stats = await chain.stats();
      const pep = pepRecord(chain, stats);
      console.log(`      masque (stream): ${JSON.stringify(pep.masque)}`);
      assert.deepEqual(checkThrough('h3-masque', pep), { ok: true, error: null });
      const m = pep.masque;
      assert.equal(m.mode, 'stream', "Proxy-ST's own word");
      assert.ok(m.capsules.up > 10 && m.capsules.down > 100, JSON.stringify(m));
      assert.deepEqual(m.datagrams, { up: 0, down: 0 }, 'no HTTP Datagram either way');
      assert.ok(m.bytes.down > 500000, JSON.stringify(m));
      // Proxy-GW answered in kind
      const g = stats.gw.masque;
      assert.ok(g.capsules.down > 100 && g.datagrams.down === 0, JSON.stringify(g));
    } finally {
      await tb.destroy();
    }
  });
});
