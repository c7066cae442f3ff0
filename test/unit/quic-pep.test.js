import assert from 'node:assert/strict';
import {
  DEFAULT_HOPS,
  GW_NAME,
  PEP_ADDRESSES,
  QUIC_TPROXY,
  chainArgs,
  linkBdpBytes,
  resolveHops,
  fecPlan,
  linkRttMs,
  transparentNftRuleset,
  transparentPlan,
  tunnelAtLoad,
  tunnelInitialWindow,
  tunnelUp,
} from '../../harness/pep/quic-chain.js';
import { TPROXY } from '../../harness/pep/tcp-chain.js';
import { QPEP_TPROXY } from '../../harness/pep/qpep-chain.js';
import { chainSat, parsePepSide } from '../../harness/pep/options.js';
import { fecRecord } from '../../harness/pep/fec.js';
import { parsePepOptions, parsePepTunnel, checkPepOptions } from '../../harness/cli/pep-options.js';
import { pepRecord } from '../../harness/pep/chain.js';
import { parseProfile, withDefaultLimits } from '../../harness/testbed/profiles.js';

const argOf = (args, flag) => args[args.indexOf(flag) + 1];
const files = {
  st: { cert: '/t/st/cert.pem', key: '/t/st/key.pem', log: '/t/st.log', stats: '/t/st.json' },
  gw: { cert: '/t/gw/cert.pem', key: '/t/gw/key.pem', log: '/t/gw.log', stats: '/t/gw.json' },
};

function profile(doc) {
  return withDefaultLimits(parseProfile(doc, { file: 'test', name: 'test', readRelative: null }));
}

describe('QUIC PEP chain plan', () => {
  it('refuses what quic-pep would refuse, naming the hop', () => {
    assert.throws(() => resolveHops({ sat: {} }), /unknown hop "sat"/);
    assert.throws(
      () => chainArgs({ hops: { satellite: { cc: 'vegas' } }, files, originCertPath: '/o', siteHost: 's' }),
      /QUIC PEP satellite hop: cc must be cubic, newreno, bbr or sat, got "vegas"/,
    );
    assert.throws(
      () => chainArgs({ hops: { client: { 'initial-window': 1.5 } }, files, originCertPath: '/o', siteHost: 's' }),
      /QUIC PEP client hop: initial-window expects a whole number/,
    );
  });

  it("gives careful-resume=on to Proxy-GW's accepting side with its log, never to Proxy-ST's dialling one", () => {
    const withLogs = {
      st: { ...files.st, carefulResumeLog: '/t/cr-st.log' },
      gw: { ...files.gw, carefulResumeLog: '/t/cr-gw.log' },
    };
    const hops = resolveHops({}, null, { sat: { cc: 'cubic', 'careful-resume': 'on' } });
    const args = chainArgs({ hops, files: withLogs, originCertPath: '/o', siteHost: 's' });
    assert.equal(argOf(args.gw, '--accept-side'), 'cc=cubic,initial-window=100,careful-resume=on');
    assert.equal(argOf(args.gw, '--careful-resume-log'), '/t/cr-gw.log');
    assert.equal(argOf(args.st, '--connect-side'), 'cc=cubic,initial-window=100');
    assert.ok(!args.st.includes('--careful-resume-log'));
    const off = chainArgs({ hops: resolveHops(), files: withLogs, originCertPath: '/o', siteHost: 's' });
    assert.ok(!off.gw.includes('--careful-resume-log'));
    assert.throws(
      () => checkPepOptions(parsePepOptions({ ground: 'careful-resume=on' }), ['quic']),
      /^UsageError: --pep-ground careful-resume=on: Careful Resume is for the satellite hop/,
    );
    assert.equal(
      checkPepOptions(parsePepOptions({ sat: 'careful-resume=on' }), ['quic']).quic.sat['careful-resume'],
      'on',
    );
  });

  it('defaults to the paper: satellite hop NewReno with IW 100, client and server hops unchanged', () => {
    assert.deepEqual(resolveHops(), DEFAULT_HOPS);
    assert.deepEqual(resolveHops({ satellite: { 'initial-window': 32 } }).satellite, {
      cc: 'newreno',
      'initial-window': 32,
    });
    assert.deepEqual(resolveHops({ client: { cc: 'bbr' } }).client, { cc: 'bbr' });
  });

  it('lays the --pep-sat / --pep-ground sides over the hops, the later setting winning', () => {
    const h = resolveHops({}, null, {
      sat: { 'initial-window': '32', cc: 'cubic' },
      ground: { 'idle-timeout-ms': '5000' },
    });
    assert.deepEqual(h.satellite, { cc: 'cubic', 'initial-window': '32' });
    assert.deepEqual(h.client, { 'idle-timeout-ms': '5000' });
    assert.deepEqual(h.server, { 'idle-timeout-ms': '5000' });
    assert.throws(() => resolveHops({}, null, { sat: { sndbuf: 1 } }), /satellite hop: unknown option "sndbuf"/);
  });

  it('sizes the windows from what each link can hold: rate × RTT plus its queue', () => {
    const geo = profile({
      satellite: {
        forward: { delay: '250ms', rate: '20mbit', limit: '1MB' },
        return: { delay: '250ms', rate: '10mbit' },
      },
      internet: { forward: { delay: '40ms' }, return: { delay: '40ms' } },
    });
    // 2.5 MB/s × 0.5 s + 1 MB queue; the slower direction holds less
    assert.equal(linkBdpBytes(geo, 'satellite'), 1_250_000 + 1_000_000);
    assert.equal(linkBdpBytes(geo, 'internet'), null, 'no rate, no BDP');
    const h = resolveHops({}, geo);
    assert.equal(h.satellite['bdp-bytes'], 2_250_000);
    assert.equal(h.server['bdp-bytes'], undefined);
    // an explicit setting wins
    assert.equal(resolveHops({ satellite: { 'bdp-bytes': 5 } }, geo).satellite['bdp-bytes'], 5);
    // a loaded profile with a schedule (schedules come from CSV files)
    const dir = (delay_ms, rate_mbit = null, limit = null, points = null) => ({
      delay_ms,
      rate_mbit,
      limit,
      schedule: points && { points },
    });
    const sched = {
      links: {
        satellite: {
          forward: dir(20, 10, { packets: 100 }, [
            { delay_ms: 20, rate_mbit: 10 },
            { delay_ms: 60, rate_mbit: 50 },
          ]),
          return: dir(20),
        },
        internet: { forward: dir(1, 100, { packets: 10 }), return: dir(1) },
      },
    };
    // the fastest rate over the worst RTT (60 + 20 ms), plus 100 packets
    assert.equal(linkBdpBytes(sched, 'satellite'), Math.round((50e6 / 8) * 0.08) + 100 * 1500);
    assert.equal(linkBdpBytes(sched, 'internet'), Math.round((100e6 / 8) * 0.002) + 10 * 1500);
  });

  it("starts the standing tunnel at the satellite link's pipe, per-connection hops at the paper's 100", () => {
    const geo = profile({
      satellite: {
        forward: { delay: '250ms', rate: '20mbit', limit: '1MB' },
        return: { delay: '250ms', rate: '10mbit' },
      },
      internet: { forward: { delay: '40ms' }, return: { delay: '40ms' } },
    });
    // 2.5 MB/s × 0.5 s, no queue, in 1200-byte packets
    assert.equal(tunnelInitialWindow(geo), Math.ceil(1_250_000 / 1200));
    assert.equal(resolveHops({}, geo, { tunnel: 'warm' }).satellite['initial-window'], 1042);
    assert.equal(resolveHops({}, geo, { tunnel: 'per-connection' }).satellite['initial-window'], 100);
    assert.equal(resolveHops({}, geo).satellite['initial-window'], 100);
    // --pep-sat wins
    const mine = resolveHops({}, geo, { tunnel: 'warm', sat: { 'initial-window': '100' } });
    assert.equal(mine.satellite['initial-window'], '100');
    // a thin link never goes below the paper's window; no rate, no change
    const thin = profile({
      satellite: { forward: { delay: '10ms', rate: '1mbit' }, return: { delay: '10ms', rate: '1mbit' } },
      internet: { forward: { delay: '1ms' }, return: { delay: '1ms' } },
    });
    assert.equal(tunnelInitialWindow(thin), 100);
    const rateless = profile({
      satellite: { forward: { delay: '250ms' }, return: { delay: '250ms' } },
      internet: { forward: { delay: '1ms' }, return: { delay: '1ms' } },
    });
    assert.equal(tunnelInitialWindow(rateless), null);
    assert.equal(resolveHops({}, rateless, { tunnel: 'warm' }).satellite['initial-window'], 100);
    // cc=sat needs the pipe it starts from: only a warm tunnel over a link with a rate gets it
    assert.equal(resolveHops({}, geo, { tunnel: 'warm' }).satellite.cc, 'sat');
    assert.equal(resolveHops({}, geo, { tunnel: 'per-connection' }).satellite.cc, 'newreno');
    assert.equal(resolveHops({}, rateless, { tunnel: 'warm' }).satellite.cc, 'newreno');
    assert.equal(resolveHops({}, geo, { tunnel: 'warm', sat: { cc: 'newreno' } }).satellite.cc, 'newreno');
  });

  it("starts Proxy-ST's side of the tunnel at the return link's pipe when it is narrower", () => {
    const small = profile({
      satellite: { forward: { delay: '285ms', rate: '10mbit' }, return: { delay: '285ms', rate: '2mbit' } },
      internet: { forward: { delay: '40ms' }, return: { delay: '40ms' } },
    });
    const h = resolveHops({}, small, { tunnel: 'warm' });
    // 10 Mbit/s and 2 Mbit/s × 0.57 s in 1200-byte packets
    assert.equal(h.satellite['initial-window'], 594);
    assert.deepEqual(h.satelliteReturn, { ...h.satellite, 'initial-window': 119 });
    assert.equal(tunnelInitialWindow(small, 'return'), 119);
    // resolving again keeps it (chainArgs resolves what it is given)
    assert.deepEqual(resolveHops(h), h);
    // a window the user chose is both senders'; a symmetric link needs no second one
    assert.equal(
      resolveHops({}, small, { tunnel: 'warm', sat: { 'initial-window': '300' } }).satelliteReturn,
      undefined,
    );
    assert.equal(resolveHops({}, small, { tunnel: 'per-connection' }).satelliteReturn, undefined);
    const args = chainArgs({
      hops: h,
      files: Object.fromEntries(['st', 'gw'].map((r) => [r, { cert: 'c', key: 'k', log: 'l', stats: 's' }])),
      originCertPath: 'o',
      siteHost: 'satbench.test',
    });
    const side = (role, flag) => args[role][args[role].indexOf(flag) + 1];
    assert.match(side('gw', '--accept-side'), /initial-window=594/);
    assert.match(side('st', '--connect-side'), /initial-window=119/);
    assert.match(side('st', '--connect-side'), /cc=sat/);
  });

  it("gives each chain its preset's satellite hop, and --pep-sat to every chain when given", () => {
    const byChain = { quic: 'cc=sat', tcp: 'cc=bbr' };
    const preset = parsePepOptions({}, { satByChain: byChain });
    assert.deepEqual(chainSat(preset, 'quic'), { cc: 'sat' });
    assert.deepEqual(chainSat(preset, 'qpep'), { cc: 'sat' });
    assert.deepEqual(chainSat(preset, 'tcp'), { cc: 'bbr' });
    const mine = parsePepOptions({ sat: 'cc=cubic' }, { satByChain: byChain });
    assert.equal(mine.sat_by_chain, undefined);
    for (const kind of ['quic', 'qpep', 'tcp']) assert.deepEqual(chainSat(mine, kind), { cc: 'cubic' });
    assert.deepEqual(chainSat(parsePepOptions({}), 'tcp'), {});
    // each chain's side is checked against that chain's keys only
    assert.doesNotThrow(() => checkPepOptions(preset, ['quic', 'tcp']));
    assert.throws(
      () => checkPepOptions(parsePepOptions({}, { satByChain: { quic: 'sndbuf=1', tcp: 'cc=bbr' } }), ['quic']),
      /--pep-sat: sndbuf is a TCP option/,
    );
  });

  it('builds both command lines: st relays the client hop onto the satellite, gw the satellite onto the server hop', () => {
    const hops = resolveHops({ satellite: { 'bdp-bytes': 2_000_000 }, server: { 'idle-timeout-ms': 9000 } });
    const { st, gw } = chainArgs({
      hops,
      files,
      originCertPath: '/t/origin.pem',
      siteHost: 'satbench.test',
      qlogDir: '/out/qlog',
    });
    assert.equal(argOf(st, '--listen'), `${PEP_ADDRESSES.st}:443`);
    assert.equal(argOf(st, '--listen'), '198.18.1.1:443');
    assert.equal(argOf(st, '--next-hop'), '198.18.2.2:443');
    assert.equal(argOf(st, '--next-hop-name'), GW_NAME);
    assert.equal(argOf(st, '--next-hop-ca'), files.gw.cert, 'st pins gw');
    assert.equal(argOf(st, '--connect-side'), 'cc=newreno,initial-window=100,bdp-bytes=2000000');
    assert.ok(!st.includes('--accept-side'), 'client hop unchanged');
    assert.equal(argOf(gw, '--listen'), '198.18.2.2:443');
    assert.equal(argOf(gw, '--next-hop'), '198.18.3.2:443');
    assert.equal(argOf(gw, '--next-hop-name'), 'satbench.test');
    assert.equal(argOf(gw, '--next-hop-ca'), '/t/origin.pem', 'gw pins the origin');
    assert.equal(argOf(gw, '--accept-side'), 'cc=newreno,initial-window=100,bdp-bytes=2000000');
    assert.equal(argOf(gw, '--connect-side'), 'idle-timeout-ms=9000');
    for (const [role, a] of [
      ['st', st],
      ['gw', gw],
    ]) {
      assert.ok(a.includes('--h3'), `${role} completes the next hop's handshake first`);
      assert.equal(argOf(a, '--label'), role);
      assert.equal(argOf(a, '--alpn'), 'h3');
      assert.equal(argOf(a, '--cert'), files[role].cert);
      assert.equal(argOf(a, '--stats'), files[role].stats);
      assert.equal(argOf(a, '--log'), files[role].log);
      assert.equal(argOf(a, '--qlog-dir'), '/out/qlog');
    }
    const plain = chainArgs({
      hops: {},
      h3: false,
      files,
      originCertPath: '/o',
      siteHost: 's.test',
      alpn: ['satbulk'],
      next: { port: 4434, ca: '/t/satbulk.pem' },
    });
    assert.equal(argOf(plain.gw, '--next-hop'), '198.18.3.2:4434');
    assert.equal(argOf(plain.gw, '--next-hop-name'), 's.test');
    assert.equal(argOf(plain.gw, '--next-hop-ca'), '/t/satbulk.pem');
    assert.ok(!plain.st.includes('--h3') && !plain.st.includes('--qlog-dir'));
    assert.equal(argOf(plain.gw, '--alpn'), 'satbulk');
    assert.equal(
      argOf(plain.st, '--connect-side'),
      'cc=newreno,initial-window=100',
      'the paper setting without a profile',
    );
  });
});

describe('QUIC PEP chain, transparent (many origins)', () => {
  const pin = '47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=';
  const base = { hops: {}, files, originCertPath: '/o.pem', siteHost: 'satbench.test' };

  it("intercepts the client's QUIC to any address in st, and drops what it cannot hand over", () => {
    assert.equal(
      transparentNftRuleset({ listen: '198.18.1.1:443' }),
      `table ip satbench_quic_pep {
  chain prerouting {
    type filter hook prerouting priority mangle; policy accept;
    iifname "lan0" meta l4proto udp fib daddr type != local udp dport { 443 } meta mark set 0x3 tproxy ip to 198.18.1.1:443 accept
    iifname "lan0" meta l4proto udp fib daddr type != local udp dport { 443 } drop
  }
}
`,
    );
    // its own mark, routing table and nft table: never the split-TCP PEP's or QPEP's
    for (const other of [TPROXY, QPEP_TPROXY]) {
      assert.notEqual(QUIC_TPROXY.mark, other.mark);
      assert.notEqual(QUIC_TPROXY.table, other.table);
      assert.notEqual(QUIC_TPROXY.nftTable, other.nftTable);
    }
    const plan = transparentPlan({ originSpki: pin });
    assert.deepEqual(plan.st.rules, [
      ['rule', 'add', 'fwmark', '0x3', 'lookup', '102'],
      ['route', 'add', 'local', '0.0.0.0/0', 'dev', 'lo', 'table', '102'],
    ]);
    assert.deepEqual(plan.settings, {
      nft_table: 'satbench_quic_pep',
      listen: '198.18.1.1:443',
      port: 443,
      origin_spki: pin,
    });
  });

  it("gives Proxy-ST a transparent listener and Proxy-GW the origins' key instead of one next hop", () => {
    const t = transparentPlan({ originSpki: pin, allowDst: ['198.19.0.0/16', '198.18.3.2'] });
    const { st, gw } = chainArgs({ ...base, transparent: t });
    assert.ok(st.includes('--transparent') && st.includes('--tunnel'));
    assert.equal(argOf(st, '--listen'), '198.18.1.1:443', 'where TPROXY hands it the QUIC');
    assert.equal(argOf(st, '--next-hop'), '198.18.2.2:443', 'Proxy-GW, as always');
    assert.ok(gw.includes('--transparent'));
    assert.equal(argOf(gw, '--next-hop-spki'), pin);
    assert.equal(argOf(gw, '--allow-dst'), '198.19.0.0/16,198.18.3.2');
    for (const flag of ['--next-hop', '--next-hop-name', '--next-hop-ca', '--spare'])
      assert.ok(!gw.includes(flag), `gw has no ${flag}`);
    assert.ok(!chainArgs({ ...base, transparent: transparentPlan({ originSpki: pin }) }).gw.includes('--allow-dst'));
    // without it, nothing changes
    assert.deepEqual(chainArgs({ ...base, transparent: null }), chainArgs(base));
  });

  it('refuses what cannot work, in one line', () => {
    assert.throws(() => transparentPlan({}), /originSpki must be the origins' SPKI pin/);
    assert.throws(() => transparentPlan({ originSpki: 'abc' }), /got "abc"/);
    assert.throws(
      () => chainArgs({ ...base, tunnel: 'per-connection', transparent: transparentPlan({ originSpki: pin }) }),
      /^UsageError: QUIC PEP transparent: needs the standing tunnel/,
    );
  });
});

describe('QUIC PEP standing tunnel (--pep-tunnel)', () => {
  it('is warm unless asked otherwise, and refuses other modes in one line', () => {
    assert.equal(parsePepTunnel(undefined), 'warm');
    assert.equal(parsePepTunnel('per-connection'), 'per-connection');
    assert.equal(parsePepOptions({}).tunnel, 'warm');
    assert.throws(
      () => parsePepOptions({ tunnel: 'foo' }),
      /^UsageError: --pep-tunnel: expected warm or per-connection, got "foo"$/,
    );
  });

  it('gives both proxies --tunnel when warm, neither when per-connection', () => {
    const base = { hops: {}, files, originCertPath: '/o.pem', siteHost: 'satbench.test' };
    const warm = chainArgs(base);
    assert.ok(warm.st.includes('--tunnel') && warm.gw.includes('--tunnel'));
    assert.ok(warm.gw.includes('--spare') && !warm.st.includes('--spare'), 'an HTTP/3 origin gets a spare');
    assert.ok(!chainArgs({ ...base, h3: false }).gw.includes('--spare'), 'satbulk does not');
    const per = chainArgs({ ...base, tunnel: 'per-connection' });
    assert.ok(!per.st.includes('--tunnel') && !per.gw.includes('--tunnel'));
  });

  it("records the tunnel as the load began: its handshake, each end's window and RTT", () => {
    const stats = {
      st: { tunnel: { up: true, handshake_ms: 1210.5, clients: 0, cwnd: 120000, rtt_ms: 601.2 } },
      gw: { tunnel: { up: true, handshake_ms: 1200, clients: 0, cwnd: 130000, rtt_ms: 600.9 } },
    };
    assert.ok(tunnelUp(stats));
    assert.ok(!tunnelUp({ st: stats.st, gw: { tunnel: { up: false } } }));
    assert.ok(!tunnelUp(null));
    assert.deepEqual(tunnelAtLoad('warm', stats), {
      mode: 'warm',
      up: true,
      handshake_ms: 1210.5,
      clients_before: 0,
      st: { cwnd: 120000, rtt_ms: 601.2 },
      gw: { cwnd: 130000, rtt_ms: 600.9 },
    });
    assert.deepEqual(tunnelAtLoad('per-connection', stats), { mode: 'per-connection' });
    const rec = pepRecord(
      { kind: 'quic', settings: { tunnel: 'warm' }, tunnelAtLoad: () => tunnelAtLoad('warm', stats) },
      {
        st: { connections: 1 },
        gw: { connections: 1 },
      },
    );
    assert.equal(rec.tunnel.handshake_ms, 1210.5);
    assert.equal(rec.settings.tunnel, 'warm');
  });
});

describe('QUIC PEP forward error correction (--pep-sat fec=K/N)', () => {
  it('gives both proxies --fec with the satellite round trip, and keeps it out of the hop transport', () => {
    const chains = checkPepOptions(parsePepOptions({ sat: 'cc=cubic,fec=8/10' }), ['quic']);
    assert.deepEqual(chains.quic.sat, { cc: 'cubic', fec: '8/10' });
    const geo = profile({
      satellite: { forward: { delay: '290ms', rate: '20mbit' }, return: { delay: '290ms', rate: '2mbit' } },
      internet: { forward: { delay: '0ms' }, return: { delay: '0ms' } },
    });
    assert.equal(linkRttMs(geo, 'satellite'), 580);
    assert.deepEqual(fecPlan({ fec: '8/10' }, geo), { value: '8/10', hopRttMs: 580 });
    // the warm tunnel paces at its window: with 2 repairs per 8, at 8/10 of the pipe
    const pipe = tunnelInitialWindow(geo); // 20 Mbit/s × 580 ms in 1200-byte packets
    const coded = resolveHops({}, geo, { sat: { fec: '8/10' }, tunnel: 'warm' });
    assert.equal(coded.satellite['initial-window'], Math.ceil(Math.ceil(1_450_000 / 1200) * 0.8));
    assert.ok(!('fec' in coded.satellite), 'not a transport option');
    assert.equal(resolveHops({}, geo, { tunnel: 'warm' }).satellite['initial-window'], pipe);
    assert.deepEqual(fecPlan({ fec: '8/10' }, null), { value: '8/10', hopRttMs: null });
    const args = chainArgs({
      hops: resolveHops({}, null, { sat: { cc: 'cubic' } }),
      files,
      originCertPath: '/o',
      siteHost: 's',
      fec: { value: '8/10', hopRttMs: 580.4 },
    });
    for (const role of ['st', 'gw']) {
      assert.equal(argOf(args[role], '--fec'), '8/10', role);
      assert.equal(argOf(args[role], '--fec-hop-rtt-ms'), '580', role);
    }
    assert.equal(argOf(args.gw, '--accept-side'), 'cc=cubic,initial-window=100');
    const off = chainArgs({ hops: resolveHops(), files, originCertPath: '/o', siteHost: 's' });
    assert.ok(!off.st.includes('--fec') && !off.gw.includes('--fec'));
  });

  it('refuses a malformed K/N, fec on the ground hops and on the split-TCP PEP, in one line each', () => {
    for (const bad of ['8', '10/8', '0/4', '8/65', 'a/b'])
      assert.throws(() => parsePepSide(`fec=${bad}`, '--pep-sat'), {
        name: 'UsageError',
        message: new RegExp(`^--pep-sat: fec expects K/N, .* got "${bad}"$`),
      });
    assert.deepEqual(parsePepSide('fec=63/64', '--pep-sat'), { fec: '63/64' });
    assert.throws(
      () => checkPepOptions(parsePepOptions({ ground: 'fec=8/10' }), ['quic']),
      /^UsageError: --pep-ground fec=8\/10: forward error correction is for the satellite hop/,
    );
    assert.throws(
      () => checkPepOptions(parsePepOptions({ sat: 'fec=8/10' }), ['tcp']),
      /--pep-sat: fec is a QUIC option; the split-TCP PEP takes/,
    );
  });

  it('records per direction the repairs sent, the losses rebuilt and left, and the bytes the code cost', () => {
    const coder = (sent, received) => ({ setting: '8/10', sent, received });
    const stats = {
      st: {
        connections: 1,
        fec: coder(
          { source_packets: 80, source_bytes: 9600, source_header_bytes: 480, repair_packets: 20, repair_bytes: 2500 },
          { repaired: 30, lost: 2 },
        ),
      },
      gw: {
        connections: 1,
        fec: coder(
          {
            source_packets: 800,
            source_bytes: 960000,
            source_header_bytes: 4800,
            repair_packets: 200,
            repair_bytes: 250000,
          },
          { repaired: 1, lost: 0 },
        ),
      },
    };
    assert.deepEqual(fecRecord(stats), {
      setting: '8/10',
      down: {
        source_packets: 800,
        repair_packets: 200,
        repaired: 30,
        lost: 2,
        cost_bytes: 254800,
        overhead: 254800 / 960000,
      },
      up: { source_packets: 80, repair_packets: 20, repaired: 1, lost: 0, cost_bytes: 2980, overhead: 2980 / 9600 },
    });
    assert.equal(fecRecord({ st: { connections: 1 }, gw: { connections: 1 } }), null);
    assert.deepEqual(pepRecord({ kind: 'quic' }, stats).fec, fecRecord(stats));
    assert.equal(pepRecord({ kind: 'quic' }, { st: {}, gw: {} }).fec, undefined);
  });
});
