// h3-masque's plain parts: the protocol's chain, the proxies' command
// lines (no key for Proxy-ST, the satellite hop's packets big enough for
// Chromium's), the record's `masque` and whether a run went through it.
import assert from 'node:assert/strict';
import { MASQUE_PROTOCOLS, baseProtocol, isPep, pepKind } from '../../harness/core/protocols.js';
import {
  DEFAULT_MASQUE_MODE,
  MASQUE_ALLOW,
  MASQUE_MIN_MTU,
  checkMasqueCarried,
  masqueArgs,
  masqueRecord,
  masqueSatellite,
} from '../../harness/pep/masque-chain.js';
import { fecPlan, resolveHops } from '../../harness/pep/quic-chain.js';
import { checkPepOptions, parsePepOptions } from '../../harness/cli/pep-options.js';
import { parsePepSide } from '../../harness/pep/options.js';
import { pepRecord, checkThrough } from '../../harness/pep/chain.js';
import { validateBenchMatrix, checkBench } from '../../harness/cli/bench-plan.js';
import { comparisonPairs } from '../../harness/report/pageload/part.js';
import { satHopSetting } from '../../harness/kinds/pep-variants.js';

const files = {
  st: { log: '/d/st.log', stats: '/d/st.json' },
  gw: { cert: '/d/gw.pem', key: '/d/gw.key', log: '/d/gw.log', stats: '/d/gw.json' },
};
const bench = (protocols) => ({ profiles: [], losses: [], sites: [], runs: 1, protocols });

// the value after `flag` in `args`
const arg = (args, flag) => args[args.indexOf(flag) + 1];

// Proxy-ST's counters after a kepler load through the tunnel
const carried = {
  st: {
    mode: 'masque-client',
    masque: {
      mode: 'datagram',
      connections: 1,
      requests: 1,
      proxied: 1,
      refused: {},
      failed: 0,
      datagrams: { up: 120, down: 400 },
      capsules: { up: 0, down: 0 },
      bytes: { up: 30000, down: 500000 },
      dropped: 0,
      displaced: 4,
    },
  },
  gw: { masque: { proxied: 1, displaced: 9 } },
};

describe('h3-masque', () => {
  it('is HTTP/3 through the MASQUE chain, not a -pep protocol', () => {
    assert.deepEqual(MASQUE_PROTOCOLS, ['h3-masque']);
    assert.equal(pepKind('h3-masque'), 'masque');
    assert.equal(baseProtocol('h3-masque'), 'h3');
    assert.equal(isPep('h3-masque'), false);
    assert.equal(validateBenchMatrix(bench(['h3', 'h3-masque']), { profiles: () => ({}) }).protocols[1], 'h3-masque');
  });

  it('gives Proxy-ST no key and Proxy-GW only its own, with the origins it may reach', () => {
    const hops = resolveHops({}, null, { sat: { cc: 'bbr' } });
    const a = masqueArgs({ hops, files });
    assert.ok(!a.st.includes('--cert') && !a.st.includes('--key'), a.st.join(' '));
    assert.equal(arg(a.st, '--masque-via'), '198.18.2.2:4433');
    assert.equal(arg(a.st, '--listen'), '198.18.1.1:443');
    assert.equal(arg(a.st, '--next-hop-ca'), '/d/gw.pem');
    assert.equal(arg(a.gw, '--cert'), '/d/gw.pem');
    assert.equal(arg(a.gw, '--masque-listen'), '198.18.2.2:4433');
    assert.equal(arg(a.gw, '--masque-allow'), '198.18.3.2/32,198.19.0.0/16');
    // HTTP Datagrams unless --pep-sat masque=stream says otherwise
    assert.equal(arg(a.st, '--masque-mode'), 'datagram');
    assert.equal(DEFAULT_MASQUE_MODE, 'datagram');
    assert.ok(!a.gw.includes('--masque-mode'), 'Proxy-GW answers in kind');
    assert.deepEqual(MASQUE_ALLOW, ['198.18.3.2/32', '198.19.0.0/16']);
    // the satellite hop on both ends, its packets big enough for Chromium's
    for (const side of [arg(a.st, '--connect-side'), arg(a.gw, '--accept-side')]) {
      assert.match(side, /cc=bbr/);
      assert.match(side, new RegExp(`initial-mtu=${MASQUE_MIN_MTU}`));
    }
  });

  it("keeps a larger initial-mtu, drops Careful Resume, and lets Proxy-ST send at the return link's window", () => {
    assert.deepEqual(masqueSatellite({ 'initial-mtu': 1452, 'careful-resume': 'on', cc: 'sat' }), {
      'initial-mtu': 1452,
      cc: 'sat',
    });
    assert.deepEqual(masqueSatellite({ 'initial-mtu': 1200 }), { 'initial-mtu': 1400 });
    const hops = { satellite: { 'initial-window': 300 }, satelliteReturn: { 'initial-window': 120 } };
    const a = masqueArgs({ hops, files });
    assert.match(arg(a.st, '--connect-side'), /initial-window=120/);
    assert.match(arg(a.gw, '--accept-side'), /initial-window=300/);
  });

  it("records the tunnel's mode and counters, and a run counts only through it", () => {
    const rec = pepRecord({ kind: 'masque', settings: { mode: 'datagram' } }, carried);
    // Proxy-ST's counters, the requests named for what they are at the client
    const { requests, proxied, displaced, ...same } = carried.st.masque;
    assert.deepEqual([requests, proxied, displaced], [1, 1, 4]);
    assert.deepEqual(rec.masque, {
      requests_opened: 1,
      requests_accepted: 1,
      ...same,
      // lost inside the tunnel: up at Proxy-ST, down at Proxy-GW
      displaced: { up: 4, down: 9 },
      gw_proxied: 1,
    });
    assert.deepEqual(checkThrough('h3-masque', rec), { ok: true, error: null });
    assert.deepEqual(masqueRecord(null), { mode: null, requests_opened: 0 });
    const none = pepRecord({ kind: 'masque' }, { st: { masque: { ...carried.st.masque, requests: 0 } } });
    assert.match(checkThrough('h3-masque', none).error, /not through the MASQUE tunnel: no proxying request/);
    const refused = masqueRecord({ st: { masque: { ...carried.st.masque, refused: { 403: 2 } } } });
    assert.equal(checkMasqueCarried(refused).error, 'Proxy-GW refused proxying requests: 2 × 403');
    const oneWay = masqueRecord({ st: { masque: { ...carried.st.masque, datagrams: { up: 3, down: 0 } } } });
    assert.match(checkMasqueCarried(oneWay).error, /no packets carried both ways/);
    assert.match(
      checkMasqueCarried(masqueRecord({ st: { masque: { ...carried.st.masque, failed: 1 } } })).error,
      /failed/,
    );
  });

  it('codes the tunnel with --pep-sat fec=K/N: both proxies get --fec, the record its counters', () => {
    const chains = checkPepOptions(parsePepOptions({ sat: 'fec=8/10' }), ['masque']);
    assert.deepEqual(chains.masque.sat, { fec: '8/10' });
    const hops = resolveHops({}, null, { sat: chains.masque.sat, tunnel: 'warm' });
    const fec = { value: '8/10', hopRttMs: 580 };
    const a = masqueArgs({ hops, files, fec });
    for (const role of ['st', 'gw']) {
      assert.equal(arg(a[role], '--fec'), '8/10', role);
      assert.equal(arg(a[role], '--fec-hop-rtt-ms'), '580', role);
    }
    assert.ok(!masqueArgs({ hops, files }).st.includes('--fec'));
    assert.equal(fecPlan({}, null), null);
    const coder = (sent, received) => ({ setting: '8/10', sent, received });
    const stats = {
      st: { ...carried.st, fec: coder({ source_packets: 10, source_bytes: 1000 }, { repaired: 4, lost: 1 }) },
      gw: {
        ...carried.gw,
        fec: coder({ source_packets: 40, source_bytes: 40000, repair_packets: 10 }, { repaired: 0 }),
      },
    };
    const rec = pepRecord({ kind: 'masque', settings: { mode: 'datagram' } }, stats);
    assert.equal(rec.fec.setting, '8/10');
    assert.deepEqual([rec.fec.down.repair_packets, rec.fec.down.repaired, rec.fec.down.lost], [10, 4, 1]);
    assert.equal(pepRecord({ kind: 'masque' }, carried).fec, undefined);
  });

  it('carries the inner packets as capsules with --pep-sat masque=stream, and records the mode Proxy-ST used', () => {
    const chains = checkPepOptions(parsePepOptions({ sat: 'masque=stream,cc=bbr' }), ['masque']);
    assert.deepEqual(chains.masque.sat, { masque: 'stream', cc: 'bbr' });
    const hops = resolveHops({}, null, { sat: { cc: 'bbr' } });
    assert.equal(arg(masqueArgs({ hops, files, mode: 'stream' }).st, '--masque-mode'), 'stream');
    // the mode is what Proxy-ST says it did, not what was asked
    const asStream = {
      ...carried,
      st: {
        ...carried.st,
        masque: {
          ...carried.st.masque,
          mode: 'stream',
          datagrams: { up: 0, down: 0 },
          capsules: { up: 120, down: 400 },
        },
      },
    };
    const rec = pepRecord({ kind: 'masque', settings: { mode: 'datagram' } }, asStream);
    assert.equal(rec.masque.mode, 'stream');
    assert.deepEqual(rec.masque.capsules, { up: 120, down: 400 });
    // packets carried as capsules both ways are through the tunnel
    assert.deepEqual(checkThrough('h3-masque', rec), { ok: true, error: null });
    const oneWay = { ...asStream.st.masque, capsules: { up: 120, down: 0 } };
    assert.match(checkMasqueCarried(masqueRecord({ st: { masque: oneWay } })).error, /no packets carried both ways/);
    assert.equal(masqueRecord({ st: { masque: { requests: 1 } } }).mode, null, 'a Proxy-ST that says no mode');
  });

  it('refuses a bad masque mode, and masque= with any other chain or on the ground hops, in one line each', async () => {
    assert.deepEqual(parsePepSide('masque=datagram', '--pep-sat'), { masque: 'datagram' });
    assert.throws(() => parsePepSide('masque=reliable', '--pep-sat'), {
      name: 'UsageError',
      message:
        '--pep-sat: masque expects datagram or stream (how h3-masque\'s packets cross the satellite hop: HTTP Datagrams, or capsules on the request stream), got "reliable"',
    });
    const stream = parsePepOptions({ sat: 'masque=stream' });
    assert.throws(() => checkPepOptions(stream, ['quic', 'masque']), {
      name: 'UsageError',
      message:
        "--pep-sat masque=stream: sets how h3-masque's packets cross the satellite hop, which means nothing to the QUIC PEP (h3-pep, quic-pep); run h3-masque in a campaign of its own",
    });
    // the split-TCP PEP and QPEP too, named before their own sides are judged
    assert.throws(
      () => checkPepOptions(stream, ['tcp', 'qpep', 'masque']),
      /means nothing to the split-TCP PEP \(-pep over TCP, tcp-pep\) or QPEP \(-qpep, tcp-qpep\);/,
    );
    // the VPN baseline takes no sides: nothing to refuse
    assert.deepEqual(Object.keys(checkPepOptions(stream, ['vpn', 'masque'])), ['masque', 'vpn']);
    assert.throws(() => checkPepOptions(parsePepOptions({ ground: 'masque=stream' }), ['masque']), {
      message:
        "--pep-ground masque=stream: sets how h3-masque's packets cross the satellite hop; use --pep-sat masque=stream",
    });
    await assert.rejects(checkBench(bench(['h3-pep', 'h3-masque']), { pep: stream }, { profiles: () => ({}) }), {
      name: 'UsageError',
      message: /^--pep-sat masque=stream: .* QUIC PEP/,
    });
    // with no PEP at all, what any side would say: no protocol goes through one
    assert.throws(() => checkPepOptions(stream, []), /no protocol of the matrix goes through/);
  });

  it('refuses --pep-tunnel per-connection in one line, before anything runs', async () => {
    const per = parsePepOptions({ tunnel: 'per-connection' });
    const message =
      '--pep-tunnel per-connection: the MASQUE chain (h3-masque, quic-masque) carries every client flow over one standing HTTP/3 connection to Proxy-GW; use --pep-tunnel warm';
    assert.throws(() => checkPepOptions(per, ['masque']), { name: 'UsageError', message });
    await assert.rejects(checkBench(bench(['h3', 'h3-masque']), { pep: per }, { profiles: () => ({}) }), { message });
    // --pep-sat sets its satellite hop, as the QUIC PEP's
    const chains = checkPepOptions(parsePepOptions({ sat: 'cc=bbr' }), ['masque']);
    assert.deepEqual(chains.masque.sat, { cc: 'bbr' });
  });

  it('is compared with plain h3 and with the decrypting QUIC PEP, and says its satellite hop', () => {
    assert.deepEqual(
      comparisonPairs(['h1', 'h3', 'h3-pep', 'h3-masque']).map((p) => `${p.a}/${p.b} ${p.kind}`),
      [
        'h3-pep/h3 PEP vs no PEP',
        'h3-masque/h3 MASQUE vs no PEP',
        'h3-masque/h3-pep MASQUE vs QUIC PEP',
        'h3/h1 HTTP/3 vs HTTP/1.1',
      ],
    );
    assert.deepEqual(
      comparisonPairs(['h3-masque', 'h3-pep']).map((p) => `${p.a}/${p.b}`),
      ['h3-masque/h3-pep'],
    );
    const pep = { kind: 'masque', settings: { mode: 'datagram', satellite: { cc: 'sat', 'initial-window': 150 } } };
    assert.equal(satHopSetting(pep), 'MASQUE datagram tunnel, cc=sat, IW 150');
  });
});
