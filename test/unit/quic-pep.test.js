import assert from 'node:assert/strict';
import {
  DEFAULT_HOPS,
  GW_NAME,
  PEP_ADDRESSES,
  chainArgs,
  linkBdpBytes,
  resolveHops,
  sideFlag,
} from '../../harness/pep/quic-chain.js';
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
  it('turns a hop into quic-pep transport options', () => {
    assert.equal(sideFlag({}), '');
    assert.equal(sideFlag({ cc: 'newreno', initialWindow: 100 }), 'cc=newreno,initial-window=100');
    assert.equal(
      sideFlag({
        cc: 'bbr',
        initialMtu: 1400,
        ackFrequency: true,
        ackElicitingThreshold: 10,
        maxAckDelayMs: 25,
        bdpBytes: 1250000,
        idleTimeoutMs: 5000,
      }),
      'cc=bbr,initial-mtu=1400,ack-frequency,ack-eliciting-threshold=10,max-ack-delay-ms=25,bdp-bytes=1250000,idle-timeout-ms=5000',
    );
    assert.equal(sideFlag({ ackFrequency: false, cc: undefined }), '');
  });

  it('refuses what quic-pep would refuse, naming the hop', () => {
    assert.throws(
      () => sideFlag({ cc: 'vegas' }, 'satellite hop'),
      /QUIC PEP satellite hop: cc: expected cubic, newreno, bbr/,
    );
    assert.throws(() => sideFlag({ initialWindow: 1.5 }), /initialWindow: expected a whole number/);
    assert.throws(() => sideFlag({ window: 3 }), /unknown option "window"/);
    assert.throws(() => sideFlag({ ackFrequency: 'yes' }), /ackFrequency: expected true or false/);
    assert.throws(() => resolveHops({ sat: {} }), /unknown hop "sat"/);
  });

  it('defaults to the paper: satellite hop NewReno with IW 100, client and server hops unchanged', () => {
    assert.deepEqual(resolveHops(), DEFAULT_HOPS);
    assert.deepEqual(resolveHops({ satellite: { initialWindow: 32 } }).satellite, { cc: 'newreno', initialWindow: 32 });
    assert.deepEqual(resolveHops({ client: { cc: 'bbr' } }).client, { cc: 'bbr' });
  });

  it('takes the --pep-sat / --pep-ground shape: QuicOptions names, numbers as strings', () => {
    assert.equal(
      sideFlag({ 'initial-window': '32', 'ack-frequency': true, cc: 'bbr' }),
      'initial-window=32,ack-frequency,cc=bbr',
    );
    assert.throws(() => sideFlag({ 'initial-window': '3x' }), /expected a whole number/);
    const h = resolveHops({}, null, {
      sat: { 'initial-window': '32', cc: 'cubic' },
      ground: { 'idle-timeout-ms': '5000' },
    });
    assert.deepEqual(h.satellite, { cc: 'cubic', initialWindow: '32' }, 'one spelling per key; the later one wins');
    assert.deepEqual(h.client, { idleTimeoutMs: '5000' });
    assert.deepEqual(h.server, { idleTimeoutMs: '5000' });
    assert.equal(sideFlag(h.satellite), 'cc=cubic,initial-window=32');
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
    assert.equal(h.satellite.bdpBytes, 2_250_000);
    assert.equal(h.server.bdpBytes, undefined);
    // an explicit setting wins
    assert.equal(resolveHops({ satellite: { bdpBytes: 5 } }, geo).satellite.bdpBytes, 5);
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

  it('builds both command lines: st relays the client hop onto the satellite, gw the satellite onto the server hop', () => {
    const hops = resolveHops({ satellite: { bdpBytes: 2_000_000 }, server: { idleTimeoutMs: 9000 } });
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
