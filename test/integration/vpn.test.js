// The -vpn protocols over real namespaces: page loads and bulk downloads
// through an OpenVPN tunnel between st and gw, with short delays; the TUN
// devices' counters show the traffic crossed the tunnel, and nothing is
// left behind.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { records, satbench, SHORT, writeProfile } from './helpers.js';
import { listNamespaces } from '../../harness/testbed/testbed.js';

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

async function nothingLeft() {
  assert.ok(!(await listNamespaces()).some((n) => n.startsWith('sbt-')), 'a run left namespaces behind');
  const ps = fs
    .readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map((d) => {
      try {
        return fs.readFileSync(`/proc/${d}/cmdline`, 'utf8');
      } catch {
        return '';
      }
    });
  assert.ok(!ps.some((c) => c.startsWith('openvpn\0')), 'a run left OpenVPN running');
}

// Runs `satbench CMD` over the short profile into a fresh folder; its records.
async function runOverTunnel(cmd, args) {
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-vpn-')), 'r');
  const r = await satbench([cmd, '--profile', writeProfile(SHORT), ...args, '-n', '1', '--out', out], {
    timeoutMs: 240000,
  });
  assert.equal(r.code, 0, r.stderr);
  return records(out);
}

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
    await nothingLeft();
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
    await nothingLeft();
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
