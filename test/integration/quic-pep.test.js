// The QUIC PEP chain on a real testbed: origin in server, Proxy-GW in gw,
// Proxy-ST in st, linkem with short delays in between, and a real
// Chromium h3 page load through the chain.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SHORT, writeProfile } from './helpers.js';
import { createTestbed, listNamespaces } from '../../harness/testbed/testbed.js';
import { loadProfile } from '../../harness/testbed/profiles.js';
import { run } from '../../harness/core/sys.js';
import { SITE_HOST } from '../../harness/testbed/addressing.js';
import { loadPage } from '../../harness/pageload/load.js';
import { startOrigin } from '../../harness/servers/origin.js';
import { startQuicPepChain, PEP_ADDRESSES } from '../../harness/pep/quic-chain.js';
import { pepRecord } from '../../harness/pep/chain.js';

function tinySite() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-site-'));
  fs.writeFileSync(
    path.join(dir, 'index.html'),
    '<!doctype html><html><head><link rel="stylesheet" href="s.css"></head><body><h1>Through the PEPs</h1>' +
      '<img src="p.gif" width="1" height="1"><script src="a.js"></script></body></html>',
  );
  fs.writeFileSync(path.join(dir, 's.css'), 'h1 { color: #123; }');
  fs.writeFileSync(path.join(dir, 'a.js'), `window.big = "${'x'.repeat(300000)}";`);
  fs.writeFileSync(
    path.join(dir, 'p.gif'),
    Buffer.from('R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==', 'base64'),
  );
  return dir;
}

// Datagrams of random bytes, some shaped like QUIC long headers, from the client namespace.
async function sendGarbage(ns, addr, port) {
  const script = `
    const s = require('node:dgram').createSocket('udp4');
    let n = 0; const sizes = [0, 1, 40, 1200, 1350, 1500];
    (async () => {
      for (const size of sizes) for (const first of [0x00, 0x40, 0xc0, 0xff]) {
        const b = Buffer.alloc(size);
        for (let i = 0; i < size; i++) b[i] = Math.floor(Math.random() * 256);
        if (size > 5) { b[0] = first; b.writeUInt32BE(1, 1); b[5] = 8; }
        await new Promise((r) => s.send(b, ${port}, '${addr}', r)); n++;
      }
      s.close(); console.log(n);
    })();`;
  const r = await run('ip', ['netns', 'exec', ns, process.execPath, '-e', script]);
  return Number(r.stdout.trim());
}

// The tiny site over h3-pep through `chain`: every resource over h3.
async function loadTinySite(tb, chain) {
  const rec = await loadPage({
    clientNs: tb.ns.client,
    protocol: 'h3-pep',
    spki: chain.spki,
    serverAddr: chain.serverAddr,
    timeoutMs: 60000,
  });
  assert.equal(rec.ok, true, `${rec.error} ${JSON.stringify(rec.errors)}`);
  assert.deepEqual(Object.keys(rec.protocol_seen.resources), ['h3']);
  assert.equal(rec.metrics.resource_count, 3);
  return rec;
}

describe('QUIC PEP chain (integration, real Chromium)', function () {
  it('loads a page over h3 through Proxy-ST and Proxy-GW (a connection per client connection), and the proxies count it', async function () {
    this.timeout(120000);
    const tb = await createTestbed({ profile: loadProfile(writeProfile(SHORT)), link: 'linkem' });
    const qlogDir = path.join(tb.dir, 'qlog');
    try {
      const { cert: originCert } = await startOrigin(tb, { siteDir: tinySite() });
      const chain = await startQuicPepChain(tb, {
        siteHost: SITE_HOST,
        originCertPath: originCert,
        qlogDir,
        tunnel: 'per-connection',
      });
      assert.equal(chain.ca, path.join(tb.dir, 'quic-pep', 'st-tls', 'cert.pem'));
      assert.equal(chain.serverAddr, '198.18.1.1');
      // the short profile's satellite link: 20 Mbit/s × 20 ms plus its queue
      const sat = chain.settings.hops.satellite;
      const bdpBytes = sat['bdp-bytes'];
      assert.deepEqual(
        { ...sat, 'bdp-bytes': undefined },
        { cc: 'newreno', 'initial-window': 100, 'bdp-bytes': undefined },
      );
      assert.ok(bdpBytes > 50000 && bdpBytes < 500000, `satellite hop BDP ${bdpBytes}`);

      // garbage first: it must neither crash Proxy-ST nor leave state behind
      const sent = await sendGarbage(tb.ns.client, PEP_ADDRESSES.st, 443);
      assert.ok(sent > 20);

      const rec = await loadTinySite(tb, chain);
      assert.equal(rec.protocol_seen.document, 'h3');
      // RTT through the chain ≥ 30 ms (as the page-load test allows: 1.5 RTT)
      assert.ok(rec.metrics.response_start_ms >= 45, `responseStart ${rec.metrics.response_start_ms}`);

      const stats = await chain.stats();
      for (const role of ['st', 'gw']) {
        const s = stats[role];
        assert.ok(s, `${role}: no stats`);
        assert.equal(s.mode, 'h3');
        assert.ok(s.connections >= 1, `${role} relayed: ${JSON.stringify(s)}`);
        assert.equal(s.failed, 0, `${role}: ${JSON.stringify(s)}`);
        assert.ok(s.streams.client_bidi >= 4, `${role}: requests ${JSON.stringify(s.streams)}`);
        // HTTP/3 control streams (and the origin's QPACK streams) both ways
        assert.ok(s.streams.client_uni >= 1 && s.streams.server_uni >= 1, `${role}: ${JSON.stringify(s.streams)}`);
        assert.ok(s.bytes.down > 300000, `${role}: ${JSON.stringify(s.bytes)}`);
        assert.equal(s.stream_id_mismatches, 0);
        const log = fs.readFileSync(chain.logs[role], 'utf8');
        assert.match(log, /conn 1 relayed .* alpn=h3 next_hop_limits=bidi:\d+,uni:\d+/, log);
      }
      assert.equal(stats.st.accepted, stats.st.connections, 'garbage was not taken for connections');
      // Proxy-ST's satellite side ran NewReno with IW 100, as its log says
      assert.ok(
        fs.readFileSync(chain.logs.st, 'utf8').includes(`next hop side: cc=newreno iw=100 window=${2 * bdpBytes} `),
      );
      // one qlog per connection and side
      const qlogs = fs.readdirSync(qlogDir);
      assert.ok(qlogs.includes('st-00001-client.sqlog') && qlogs.includes('gw-00001-nexthop.sqlog'), qlogs.join(' '));
    } finally {
      await tb.destroy();
    }
    assert.ok(
      !(await listNamespaces()).some((n) => n.startsWith(`sbt-${tb.id}-`)),
      'the testbed left namespaces behind',
    );
  });

  it('loads a page over h3 through the standing tunnel, which was up before the load and carried it all', async function () {
    this.timeout(120000);
    const tb = await createTestbed({ profile: loadProfile(writeProfile(SHORT)), link: 'linkem' });
    try {
      const { cert: originCert } = await startOrigin(tb, { siteDir: tinySite() });
      const chain = await startQuicPepChain(tb, { siteHost: SITE_HOST, originCertPath: originCert });
      assert.equal(chain.settings.tunnel, 'warm', 'the default');
      await chain.beforeLoad();
      const at = chain.tunnelAtLoad();
      assert.equal(at.up, true, JSON.stringify(at));
      // one satellite round trip (20 ms) at least, outside the load
      assert.ok(at.handshake_ms >= 20, JSON.stringify(at));
      assert.equal(at.clients_before, 0);
      assert.ok(at.st.cwnd > 0 && at.gw.cwnd > 0 && at.st.rtt_ms >= 20, JSON.stringify(at));

      await loadTinySite(tb, chain);

      const stats = await chain.stats();
      for (const role of ['st', 'gw']) {
        const s = stats[role];
        const t = s.tunnel;
        assert.equal(t.opened, 1, `${role}: one tunnel: ${JSON.stringify(t)}`);
        assert.equal(t.up, true);
        assert.equal(t.bad_headers, 0);
        assert.ok(t.clients >= 1, `${role}: ${JSON.stringify(t)}`);
        assert.ok(s.connections >= 1 && s.failed === 0, `${role}: ${JSON.stringify(s)}`);
        assert.ok(s.bytes.down > 300000, `${role}: ${JSON.stringify(s.bytes)}`);
        assert.equal(s.stream_id_mismatches, 0);
      }
      // requests and the client's control/QPACK streams went in at ST,
      // the origin's control/QPACK streams in at GW
      assert.ok(stats.st.tunnel.streams >= 5, JSON.stringify(stats.st.tunnel));
      assert.ok(stats.gw.tunnel.streams >= 1, JSON.stringify(stats.gw.tunnel));
      // the page's connection took Proxy-GW's spare origin connection
      assert.ok(stats.gw.tunnel.spares_used >= 1, JSON.stringify(stats.gw.tunnel));
      assert.ok(stats.st.streams.client_bidi >= 4 && stats.gw.streams.client_bidi >= 4);
      assert.match(fs.readFileSync(chain.logs.st, 'utf8'), /tunnel up to 198\.18\.2\.2:443 handshake_ms=\d+/);
      assert.match(fs.readFileSync(chain.logs.st, 'utf8'), /conn 1 carried over the tunnel .* alpn=h3/);
      assert.match(fs.readFileSync(chain.logs.gw, 'utf8'), /conn 1 relayed over the tunnel to 198\.18\.3\.2:443/);
      // the run record's pep part carries it
      assert.equal(pepRecord({ kind: 'quic', ...chain }, stats).tunnel.handshake_ms, at.handshake_ms);
    } finally {
      await tb.destroy();
    }
  });
});
