// The -vpn protocols' plain parts: which chain they take, OpenVPN's command
// lines and the routes in st and gw, the through-the-tunnel check, and
// where the report and summary put -vpn beside its plain protocol.
import assert from 'node:assert/strict';
import { baseProtocol, isVpn, pepKind } from '../../harness/core/protocols.js';
import {
  VPN_ADDRESSES,
  VPN_SETTINGS,
  openvpnArgs,
  vpnRoutes,
  subnetOf,
  tunName,
  tunCounters,
  checkTunnelled,
} from '../../harness/pep/vpn-chain.js';
import { pepRecord, checkThrough } from '../../harness/pep/chain.js';
import { bulkPepKind } from '../../harness/bulk/matrix.js';
import { validateBulkMatrix } from '../../harness/cli/bulk-plan.js';
import { validateBenchMatrix } from '../../harness/cli/bench-plan.js';
import { comparisonPairs } from '../../harness/report/pageload/part.js';
import { chromiumFlags } from '../../harness/campaign/environment.js';
import { summarize } from '../../harness/analysis/summary.js';
import { LINK_PLAN } from '../../harness/testbed/addressing.js';
import { bulkRecord } from '../fixtures.js';

const files = { cert: 'C', key: 'K', peerFingerprint: 'AA:BB', pidPath: 'P', logPath: 'L' };
const profiles = () => ({});

// Pure: "--flag value" pairs of a command line → {flag: [values…]}.
const flagsOf = (args) => {
  const out = {};
  let cur = null;
  for (const a of args) {
    if (a.startsWith('--')) out[(cur = a)] = [];
    else out[cur].push(a);
  }
  return out;
};

describe('VPN baseline: the -vpn protocols', () => {
  it('names h1-vpn … h3-vpn and tcp-vpn, quic-vpn, all through the vpn chain', () => {
    assert.deepEqual(['h1-vpn', 'h1s-vpn', 'h2-vpn', 'h3-vpn'].map(pepKind), ['vpn', 'vpn', 'vpn', 'vpn']);
    assert.deepEqual(['h1-vpn', 'h3-vpn', 'h3-pep', 'h2'].map(baseProtocol), ['h1', 'h3', 'h3', 'h2']);
    assert.equal(isVpn('h1-pep'), false);
    assert.deepEqual(['tcp-vpn', 'quic-vpn', 'quic'].map(bulkPepKind), ['vpn', 'vpn', null]);
    validateBenchMatrix(
      { profiles: [], losses: [], sites: [], runs: 1, protocols: ['h1-vpn', 'h3-vpn'] },
      { profiles },
    );
    validateBulkMatrix(
      { profiles: [], losses: [], runs: 1, duration_s: 1, protocols: ['tcp-vpn', 'quic-vpn'] },
      { profiles },
    );
    assert.throws(
      () => validateBenchMatrix({ profiles: [], losses: [], sites: [], runs: 1, protocols: ['h4-vpn'] }, { profiles }),
      /--protocol: unknown protocol "h4-vpn"; expected h1, h1s, h2, h3, h1-pep, h1s-pep, h2-pep, h3-pep, h1-qpep, h1s-qpep, h2-qpep, h1-vpn, h1s-vpn, h2-vpn, h3-vpn, h3-masque$/,
    );
  });

  it('starts Chromium for a -vpn protocol exactly as for its plain protocol', () => {
    const f = chromiumFlags(['h1', 'h1-vpn', 'h3', 'h3-vpn', 'browser-h3']);
    assert.deepEqual(f['h1-vpn'], f.h1);
    assert.deepEqual(f['h3-vpn'], f.h3);
  });
});

describe('VPN baseline: OpenVPN and the routes', () => {
  const sat = LINK_PLAN.find((l) => l.name === 'sat');

  it('lets gw listen on its satellite address and st connect to it, TLS pinned both ways', () => {
    const gw = flagsOf(openvpnArgs('gw', { dev: 'vpnabc', files }));
    const st = flagsOf(openvpnArgs('st', { dev: 'vpnabc', files }));
    assert.deepEqual(gw['--local'], [sat.bAddr]);
    assert.deepEqual(gw['--lport'], ['1194']);
    assert.deepEqual(gw['--tls-server'], []);
    assert.deepEqual(gw['--dh'], ['none']);
    assert.deepEqual(st['--remote'], [sat.bAddr, '1194']);
    assert.deepEqual(st['--tls-client'], []);
    assert.ok(!('--local' in st) && '--nobind' in st);
    for (const f of [gw, st]) {
      assert.deepEqual(f['--dev'], ['vpnabc']);
      assert.deepEqual(f['--dev-type'], ['tun']);
      assert.deepEqual(f['--proto'], ['udp']);
      assert.deepEqual(f['--peer-fingerprint'], ['AA:BB']);
      assert.deepEqual(f['--data-ciphers'], ['AES-256-GCM']);
      assert.deepEqual(f['--allow-compression'], ['no']);
      assert.deepEqual(f['--log-append'], ['L']);
      assert.deepEqual(f['--writepid'], ['P']);
      // MTU and MSS stay OpenVPN's, and no static key
      for (const k of ['--tun-mtu', '--mssfix', '--fragment', '--secret', '--comp-lzo', '--compress'])
        assert.ok(!(k in f), k);
    }
    assert.deepEqual(gw['--ifconfig'], [VPN_ADDRESSES.gw, VPN_ADDRESSES.st]);
    assert.deepEqual(st['--ifconfig'], [VPN_ADDRESSES.st, VPN_ADDRESSES.gw]);
    assert.throws(() => openvpnArgs('client', { dev: 'x', files }), /role must be st or gw/);
  });

  it('puts the tunnel outside every link of the testbed and names one TUN per testbed', () => {
    for (const addr of Object.values(VPN_ADDRESSES)) {
      assert.ok(addr.startsWith('198.18.'), addr);
      for (const l of LINK_PLAN) assert.notEqual(subnetOf(addr, l.prefix), subnetOf(l.aAddr, l.prefix), l.name);
    }
    assert.equal(tunName('abc123'), 'vpnabc123');
    assert.ok(tunName('abcdefghijkl').length <= 15);
  });

  it("routes the server's subnets (an archive's origins too) into the tunnel in st and the client's back in gw", () => {
    assert.equal(subnetOf('198.18.3.2', 30), '198.18.3.0/30');
    assert.equal(subnetOf('198.18.1.2', 24), '198.18.1.0/24');
    assert.deepEqual(vpnRoutes('st', 'vpnx'), [
      ['route', 'replace', '198.18.3.0/30', 'via', VPN_ADDRESSES.gw, 'dev', 'vpnx'],
      ['route', 'replace', '198.19.0.0/16', 'via', VPN_ADDRESSES.gw, 'dev', 'vpnx'],
    ]);
    assert.deepEqual(vpnRoutes('gw', 'vpnx'), [
      ['route', 'replace', '198.18.1.0/24', 'via', VPN_ADDRESSES.st, 'dev', 'vpnx'],
    ]);
  });
});

describe('VPN baseline: through the tunnel or not', () => {
  const link = (rx, tx) => [
    { ifname: 'vpnx', stats64: { rx: { packets: rx, bytes: rx * 100 }, tx: { packets: tx, bytes: tx * 100 } } },
  ];

  it("reads a TUN device's counters from ip -s -j link", () => {
    assert.deepEqual(tunCounters(link(3, 4)), { rx_packets: 3, rx_bytes: 300, tx_packets: 4, tx_bytes: 400 });
    assert.deepEqual(tunCounters([{}]), { rx_packets: 0, rx_bytes: 0, tx_packets: 0, tx_bytes: 0 });
  });

  it('fails a -vpn run unless both ends carried packets both ways', () => {
    const busy = tunCounters(link(5, 5));
    assert.deepEqual(checkTunnelled({ st: busy, gw: busy }), { ok: true, error: null });
    assert.deepEqual(checkTunnelled({ st: busy, gw: tunCounters(link(5, 0)) }), {
      ok: false,
      error: 'not through the VPN tunnel: gw carried no packets both ways',
    });
    assert.equal(
      checkTunnelled({ st: { error: 'no vpnx in st' } }).error,
      'not through the VPN tunnel: st and gw carried no packets both ways',
    );
  });

  it("keeps the chain's kind, settings and counters in the record and judges by them", () => {
    const tun = { st: tunCounters(link(5, 5)), gw: tunCounters(link(0, 0)) };
    const pep = pepRecord({ kind: 'vpn', settings: VPN_SETTINGS }, tun);
    assert.deepEqual(pep, { kind: 'vpn', settings: VPN_SETTINGS, tun });
    assert.equal(checkThrough('h1-vpn', pep).ok, false);
    const tcp = pepRecord(
      { kind: 'tcp', settings: { preset: 'paper' } },
      { st: { connections: 2 }, gw: { connections: 2 } },
    );
    assert.deepEqual(tcp.relayed, { st: 2, gw: 2 });
    assert.equal(checkThrough('h1-pep', tcp).ok, true);
    assert.equal(checkThrough('h1', undefined).ok, true);
  });
});

describe('VPN baseline: in the report and the summary', () => {
  it('pairs X-vpn with X, and h3-vpn with h1-vpn', () => {
    assert.deepEqual(
      comparisonPairs(['h1', 'h1-vpn', 'h3', 'h3-vpn', 'h1-pep']).map((p) => `${p.a}/${p.b} ${p.kind}`),
      [
        'h1-vpn/h1 VPN vs no VPN',
        'h3-vpn/h3 VPN vs no VPN',
        'h1-pep/h1 PEP vs no PEP',
        'h3/h1 HTTP/3 vs HTTP/1.1',
        'h3-vpn/h1-vpn HTTP/3 vs HTTP/1.1',
      ],
    );
  });

  it('gives a bulk -vpn group its lead over the plain protocol (vs_no_pep)', () => {
    const groups = summarize([bulkRecord('tcp', [1e6, 2e6]), bulkRecord('tcp-vpn', [5e5, 1e6])]);
    const vpn = groups.find((g) => g.scenario.protocol === 'tcp-vpn');
    assert.equal(vpn.vs_no_pep.protocol, 'tcp');
    assert.deepEqual(vpn.vs_no_pep.ratio, [0.5, 0.5]);
  });
});
