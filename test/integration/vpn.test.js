// The -vpn protocols over real namespaces: page loads and bulk downloads
// through an OpenVPN tunnel between st and gw, with short delays; the TUN
// devices' counters show the traffic crossed the tunnel, and nothing is
// left behind.
import assert from 'node:assert/strict';
import { runShort, satbench } from './helpers.js';

// Both tunnel ends carried packets both ways, and more than the handshake's.
function checkTun(rec) {
  const p = rec.scenario.protocol;
  assert.equal(rec.pep.kind, 'vpn', p);
  assert.equal(rec.pep.settings.proto, 'udp', p);
  for (const role of ['st', 'gw']) {
    const c = rec.pep.tun[role];
    assert.ok(c.rx_packets > 0 && c.tx_packets > 0, `${p}: ${role} ${JSON.stringify(c)}`);
    assert.ok(c.rx_bytes + c.tx_bytes > 1000, `${p}: ${role} ${JSON.stringify(c)}`);
  }
}

const runOverTunnel = (cmd, args) => runShort(cmd, args, 'vpn');

describe('VPN baseline (integration, OpenVPN between st and gw)', function () {
  it('loads a page over h1-vpn and h3-vpn through the tunnel', async () => {
    const recs = await runOverTunnel('bench', ['--protocol', 'h1-vpn,h3-vpn', '--site', 'kepler']);
    assert.deepEqual(
      recs.map((x) => x.scenario.protocol),
      ['h1-vpn', 'h3-vpn'],
    );
    const want = { 'h1-vpn': 'http/1.1', 'h3-vpn': 'h3' };
    for (const rec of recs) {
      assert.equal(rec.ok, true, `${rec.scenario.protocol}: ${rec.error}`);
      assert.equal(rec.protocol_seen.document, want[rec.scenario.protocol]);
      checkTun(rec);
    }
  });

  it('downloads over tcp-vpn and quic-vpn through the tunnel', async () => {
    const recs = await runOverTunnel('bulk', ['--protocol', 'tcp-vpn,quic-vpn', '--duration', '2']);
    assert.equal(recs.length, 2);
    for (const rec of recs) {
      assert.equal(rec.ok, true, `${rec.scenario.protocol}: ${rec.error}`);
      assert.ok(rec.metrics.bytes > 0, rec.scenario.protocol);
      checkTun(rec);
      // the download's bytes crossed gw's end of the tunnel towards st
      assert.ok(rec.pep.tun.gw.tx_bytes >= rec.metrics.bytes, JSON.stringify(rec.pep.tun.gw));
    }
  });

  it('refuses a protocol that does not exist in one line, before anything starts', async () => {
    const r = await satbench(['bench', '--profile', 'geo', '--protocol', 'h4-vpn', '-n', '1']);
    assert.equal(r.code, 2);
    const lines = r.stderr.trim().split('\n');
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0], /unknown protocol "h4-vpn"; expected .*h1-vpn, h1s-vpn, h2-vpn, h3-vpn/);
    assert.equal(r.stdout, '');
  });
});
