// QPEP's plain parts: the -qpep protocol names and what is refused (h3-qpep,
// quic-qpep, --pep-tunnel per-connection), the QUIC PEP chain's extra
// arguments and st's TPROXY plan, the through-the-tunnel check from the
// proxies' qpep counters, and where the report and summary put -qpep
// beside its plain protocol, the VPN baseline and the split-TCP PEP, with
// the tunnel's mode named.
import assert from 'node:assert/strict';
import { QPEP_PROTOCOLS, baseProtocol, isPep, isQpep, pepKind, usesQuicPep } from '../../harness/core/protocols.js';
import { QPEP_TPROXY, QPEP_PORTS, checkQpepRelayed, qpepPlan, qpepRelayed } from '../../harness/pep/qpep-chain.js';
import { TPROXY, nftRuleset, tproxyRules } from '../../harness/pep/tcp-chain.js';
import { chainArgs } from '../../harness/pep/quic-chain.js';
import { checkPepOptions, parsePepOptions } from '../../harness/cli/pep-options.js';
import { pepRecord, checkThrough } from '../../harness/pep/chain.js';
import { BULK_PROTOCOLS, bulkPepKind } from '../../harness/bulk/matrix.js';
import { validateBenchMatrix, checkBench } from '../../harness/cli/bench-plan.js';
import { validateBulkMatrix, checkBulk } from '../../harness/cli/bulk-plan.js';
import { BENCH_PRESETS } from '../../harness/pageload/presets.js';
import { comparisonPairs } from '../../harness/report/pageload/part.js';
import { quicTunnelModes, tunnelSentence, variantPairs } from '../../harness/kinds/pep-variants.js';
import { chromiumFlags } from '../../harness/campaign/environment.js';
import { summarize } from '../../harness/analysis/summary.js';
import { buildReport, renderReport } from '../../harness/report/html.js';
import { bulkRecord, scenarios, makeRecords } from '../fixtures.js';

const profiles = () => ({});
const bench = (protocols) => ({ profiles: [], losses: [], sites: [], runs: 1, protocols });
const bulkMatrix = (protocols) => ({ profiles: [], losses: [], runs: 1, duration_s: 1, protocols });
const files = {
  st: { cert: '/t/st/cert.pem', key: '/t/st/key.pem', log: '/t/st.log', stats: '/t/st.json' },
  gw: { cert: '/t/gw/cert.pem', key: '/t/gw/key.pem', log: '/t/gw.log', stats: '/t/gw.json' },
};

// A proxy's stats as quic-pep writes them, with QPEP's counters.
const proxyStats = (relayed, down = 0) => ({
  connections: 0,
  tunnel: { up: true, cwnd: 120000, rtt_ms: 21 },
  qpep: { accepted: relayed, relayed, failed: 0, refused: 0, active: 0, bytes: { up: 100, down } },
});

describe('QPEP: the -qpep protocols', () => {
  it('names h1-qpep, h1s-qpep, h2-qpep for bench and tcp-qpep for bulk, all through QPEP', () => {
    assert.deepEqual(QPEP_PROTOCOLS, ['h1-qpep', 'h1s-qpep', 'h2-qpep']);
    assert.deepEqual(QPEP_PROTOCOLS.map(pepKind), ['qpep', 'qpep', 'qpep']);
    assert.deepEqual(QPEP_PROTOCOLS.map(baseProtocol), ['h1', 'h1s', 'h2']);
    assert.deepEqual(['h1-pep', 'h3-pep', 'h1-vpn', 'h1'].map(pepKind), ['tcp', 'quic', 'vpn', null]);
    assert.equal(isPep('h1-qpep'), false, 'not the split-TCP PEP');
    assert.equal(isQpep('h1-pep'), false);
    assert.ok(BULK_PROTOCOLS.includes('tcp-qpep') && !BULK_PROTOCOLS.includes('quic-qpep'));
    assert.equal(bulkPepKind('tcp-qpep'), 'qpep');
    validateBenchMatrix(bench(QPEP_PROTOCOLS), { profiles });
    validateBulkMatrix(bulkMatrix(['tcp', 'tcp-qpep']), { profiles });
    assert.deepEqual(['h3-pep', 'quic-pep', 'h1-qpep', 'tcp-qpep', 'h1-pep', 'tcp-pep', 'h3'].map(usesQuicPep), [
      true,
      true,
      true,
      true,
      false,
      false,
      false,
    ]);
  });

  it('refuses h3-qpep and quic-qpep in one line saying what to use instead', () => {
    assert.throws(() => validateBenchMatrix(bench(['h1', 'h3-qpep']), { profiles }), {
      name: 'UsageError',
      message: '--protocol: h3-qpep: QPEP carries TCP; HTTP/3 through the QUIC PEP is h3-pep',
    });
    assert.throws(() => validateBulkMatrix(bulkMatrix(['quic-qpep']), { profiles }), {
      name: 'UsageError',
      message: '--protocol: quic-qpep: QPEP carries TCP; QUIC through the QUIC PEP is quic-pep',
    });
    assert.throws(
      () => validateBenchMatrix(bench(['h4-qpep']), { profiles }),
      /unknown protocol "h4-qpep"; expected .*h3-pep, h1-qpep, h1s-qpep, h2-qpep, h1-vpn/,
    );
  });

  it('refuses --pep-tunnel per-connection with a -qpep protocol, before anything runs', async () => {
    const per = parsePepOptions({ tunnel: 'per-connection' });
    const message =
      '--pep-tunnel per-connection: QPEP (the -qpep protocols) carries TCP over the standing tunnel; use --pep-tunnel warm';
    assert.throws(() => checkPepOptions(per, ['qpep']), { name: 'UsageError', message });
    await assert.rejects(checkBench(bench(['h1', 'h1-qpep']), { pep: per }, { profiles }), { message });
    assert.throws(() => checkBulk(bulkMatrix(['tcp-qpep']), { pep: per }, { profiles }), { message });
    // warm (the default) is fine, and per-connection without -qpep too
    checkPepOptions(parsePepOptions({}), ['qpep']);
    checkPepOptions(per, ['quic', 'tcp']);
    // the satellite hop is QUIC: the QUIC options, not the split-TCP PEP's
    assert.throws(() => checkPepOptions(parsePepOptions({ sat: 'sndbuf=1' }), ['qpep']), /--pep-sat: sndbuf is a TCP/);
    checkPepOptions(parsePepOptions({ sat: 'cc=bbr,initial-window=64' }), ['qpep']);
  });

  it('starts Chromium for a -qpep protocol exactly as for its plain protocol', () => {
    const f = chromiumFlags(['h1', 'h1-qpep', 'h1s', 'h1s-qpep', 'h2', 'h2-qpep']);
    assert.deepEqual(f['h1-qpep'], f.h1);
    assert.deepEqual(f['h1s-qpep'], f.h1s);
    assert.deepEqual(f['h2-qpep'], f.h2);
    assert.ok(
      f.h2.some((a) => a.includes('MAP satbench.test 198.18.3.2')),
      "the server's own address",
    );
  });

  it('adds h1-qpep to the quick preset', () => {
    assert.deepEqual(BENCH_PRESETS.quick.protocols, ['h1', 'h1-pep', 'h1-qpep', 'h3', 'h3-pep']);
    assert.match(BENCH_PRESETS.quick.description, /h1-qpep/);
    validateBenchMatrix({ ...BENCH_PRESETS.quick, profiles: [], sites: [] }, { profiles });
  });
});

describe("QPEP: the chain's plan", () => {
  it("gives Proxy-ST the transparent TCP listener, beside the QUIC PEP chain's tunnel arguments", () => {
    const plan = qpepPlan();
    assert.deepEqual(plan.extra, { st: ['--qpep-listen', '127.0.0.1:9481'], gw: ['--qpep-spares', '6'] });
    const args = chainArgs({ hops: {}, files, originCertPath: '/o', siteHost: 's', spare: false, extra: plan.extra });
    assert.ok(args.st.includes('--tunnel') && args.gw.includes('--tunnel'));
    assert.equal(args.st[args.st.indexOf('--qpep-listen') + 1], '127.0.0.1:9481');
    assert.ok(!args.gw.includes('--qpep-listen') && !args.gw.includes('--spare'));
    assert.ok(!args.st.some((a) => a.startsWith('--qpep-allow') || a === '--qpep-connect-cc'));
    // without extra the QUIC chain is as it was
    const plain = chainArgs({ hops: {}, files, originCertPath: '/o', siteHost: 's' });
    assert.ok(!plain.st.includes('--qpep-listen'));
    assert.deepEqual(plain.st, args.st.slice(0, -2));
  });

  it("makes --pep-ground's cc GW's TCP congestion control towards the server (Linux's names)", () => {
    const spares = ['--qpep-spares', '6'];
    assert.deepEqual(qpepPlan({ ground: { cc: 'newreno' } }).extra.gw, ['--qpep-connect-cc', 'reno', ...spares]);
    assert.deepEqual(qpepPlan({ ground: { cc: 'bbr' } }).extra.gw, ['--qpep-connect-cc', 'bbr', ...spares]);
    assert.equal(qpepPlan({ ground: { cc: 'cubic' } }).settings.connect_cc, 'cubic');
    assert.equal(qpepPlan().settings.connect_cc, null);
  });

  it("steers the client's new TCP on lan0 in st to QPEP's listener, with a table, mark and port of its own", () => {
    const { st, settings } = qpepPlan();
    assert.equal(
      st.nft,
      `table ip satbench_qpep {
  chain prerouting {
    type filter hook prerouting priority mangle; policy accept;
    meta l4proto tcp socket transparent 1 meta mark set 0x2 accept
    iifname "lan0" meta l4proto tcp fib daddr type != local tcp dport { 80, 443 } meta mark set 0x2 tproxy ip to 127.0.0.1:9481 accept
  }
}
`,
    );
    assert.deepEqual(st.rules, [
      ['rule', 'add', 'fwmark', '0x2', 'lookup', '101'],
      ['route', 'add', 'local', '0.0.0.0/0', 'dev', 'lo', 'table', '101'],
    ]);
    assert.deepEqual(settings, {
      listen: '127.0.0.1:9481',
      ports: QPEP_PORTS,
      nft_table: 'satbench_qpep',
      connect_cc: null,
      spares: 6,
    });
    // never the split-TCP PEP's
    for (const k of ['mark', 'table', 'port', 'nftTable']) assert.notEqual(QPEP_TPROXY[k], TPROXY[k], k);
    assert.notDeepEqual(tproxyRules(QPEP_TPROXY), tproxyRules());
    assert.match(nftRuleset({ iface: 'lan0' }), /^table ip satbench_tcp_pep .*127\.0\.0\.1:9480 accept/s);
    // bulk: satbulk's TCP port, or every port
    assert.match(qpepPlan({ ports: [5201] }).st.nft, /tcp dport \{ 5201 \} .*127\.0\.0\.1:9481/);
    assert.doesNotMatch(qpepPlan({ ports: 'all' }).st.nft, /dport/);
  });
});

describe('QPEP: through the tunnel or not', () => {
  it("keeps the proxies' qpep counters and the tunnel in the record and judges by relayed TCP connections", () => {
    const stats = { st: proxyStats(6, 400000), gw: proxyStats(6, 400000) };
    const atLoad = { mode: 'warm', up: true, handshake_ms: 25 };
    const chain = { kind: 'qpep', settings: { tunnel: 'warm' }, tunnelAtLoad: () => atLoad };
    const rec = pepRecord(chain, stats);
    assert.deepEqual(rec.relayed, { st: 6, gw: 6 });
    assert.deepEqual(rec.tunnel, atLoad);
    assert.equal(rec.stats, stats);
    assert.deepEqual(checkThrough('h1-qpep', rec), { ok: true, error: null });
    assert.deepEqual(checkThrough('tcp-qpep', rec), { ok: true, error: null });
  });

  it('fails a -qpep run when either end relayed no TCP connection', () => {
    const chain = { kind: 'qpep', settings: {} };
    const gwIdle = pepRecord(chain, { st: proxyStats(3), gw: proxyStats(0) });
    assert.deepEqual(checkThrough('h1-qpep', gwIdle), {
      ok: false,
      error: 'not through QPEP: gw relayed no TCP connection over the tunnel',
    });
    // QUIC connections relayed do not count: only TCP carried over the tunnel
    const quicOnly = pepRecord(chain, { st: { connections: 4 }, gw: { connections: 4 } });
    assert.deepEqual(quicOnly.relayed, { st: 0, gw: 0 });
    assert.equal(
      checkThrough('h2-qpep', quicOnly).error,
      'not through QPEP: st and gw relayed no TCP connection over the tunnel',
    );
    assert.equal(checkQpepRelayed(qpepRelayed({ st: null })).ok, false);
    assert.equal(checkQpepRelayed(undefined).ok, false);
  });
});

describe('QPEP: in the report and the summary', () => {
  it('pairs X-qpep with X, with X-vpn and with X-pep', () => {
    assert.deepEqual(
      comparisonPairs(['h1', 'h1-pep', 'h1-qpep', 'h1-vpn', 'h3', 'h3-pep', 'h2-qpep']).map(
        (p) => `${p.a}/${p.b} ${p.kind}`,
      ),
      [
        'h1-pep/h1 PEP vs no PEP',
        'h1-qpep/h1 QPEP vs no PEP',
        'h1-vpn/h1 VPN vs no VPN',
        'h3-pep/h3 PEP vs no PEP',
        'h1-qpep/h1-vpn QPEP vs VPN',
        'h1-qpep/h1-pep QPEP vs split-TCP PEP',
        'h3/h1 HTTP/3 vs HTTP/1.1',
        'h3-pep/h1-pep HTTP/3 vs HTTP/1.1',
      ],
    );
    assert.deepEqual(
      variantPairs(['tcp', 'tcp-pep', 'tcp-qpep', 'tcp-vpn', 'quic']).map((p) => `${p.a}/${p.b}`),
      ['tcp-pep/tcp', 'tcp-qpep/tcp', 'tcp-vpn/tcp', 'tcp-qpep/tcp-vpn', 'tcp-qpep/tcp-pep'],
    );
  });

  it('names the tunnel mode from the records, else from the settings', () => {
    const rec = (protocol, mode) => ({ scenario: { protocol }, pep: { tunnel: { mode } } });
    assert.deepEqual(quicTunnelModes({ protocols: ['h1', 'h1-qpep'], records: [rec('h1-qpep', 'warm')] }), ['warm']);
    // only the runs through the QUIC PEP
    assert.deepEqual(quicTunnelModes({ protocols: ['h1', 'h1-pep'], records: [rec('h1-qpep', 'warm')] }), []);
    assert.deepEqual(
      quicTunnelModes({ protocols: ['h3-pep'], records: [rec('h3-pep', 'warm'), rec('h3-pep', 'per-connection')] }),
      ['warm', 'per-connection'],
    );
    assert.deepEqual(quicTunnelModes({ protocols: ['h3-pep'], meta: { pep: { tunnel: 'per-connection' } } }), [
      'per-connection',
    ]);
    assert.deepEqual(quicTunnelModes({ protocols: ['tcp-qpep'], meta: { settings: { pep: { tunnel: 'warm' } } } }), [
      'warm',
    ]);
    assert.match(
      tunnelSentence(['h1', 'h1-qpep', 'h3-pep'], ['warm']),
      /^The QUIC PEP's satellite hop \(h1-qpep, h3-pep\): warm \(one standing/,
    );
    assert.equal(tunnelSentence(['h1', 'h1-pep'], ['warm']), null);
    assert.equal(tunnelSentence(['h1-qpep'], []), null);
  });

  it('shows h1-qpep against h1, h1-vpn and h1-pep, with the tunnel mode, in the page-load report', () => {
    const protocols = ['h1', 'h1-pep', 'h1-qpep', 'h1-vpn'];
    const records = makeRecords(scenarios({ protocols, profiles: ['geo'] }), { runs: 3 });
    for (const r of records)
      if (r.scenario.protocol === 'h1-qpep') r.pep = { kind: 'qpep', tunnel: { mode: 'warm', up: true } };
    const summary = { meta: { matrix: { protocols } }, groups: summarize(records) };
    const model = buildReport({ summary, records });
    const pairs = model.pageload.comparisons.map((c) => `${c.a}/${c.b} ${c.tunnel}`);
    assert.deepEqual(pairs, [
      'h1-pep/h1 null',
      'h1-qpep/h1 warm',
      'h1-vpn/h1 null',
      'h1-qpep/h1-vpn warm',
      'h1-qpep/h1-pep warm',
    ]);
    const html = renderReport(summary, { records });
    assert.match(
      html,
      /<td>QPEP vs VPN<br><small class="note tunnel-mode">tunnel warm<\/small><\/td><th>h1-qpep \/ h1-vpn<\/th>/,
    );
    assert.match(html, /<p class="legend-note tunnel-mode">The QUIC PEP&#39;s satellite hop \(h1-qpep\): warm/);
    // without records, from bench's settings
    const bare = buildReport({ summary: { ...summary, meta: { ...summary.meta, pep: { tunnel: 'warm' } } } });
    assert.ok(bare.pageload.comparisons.find((c) => c.a === 'h1-qpep').tunnel === 'warm');
  });

  it("gives a bulk -qpep group its lead over tcp (vs_no_pep) and its ratio to tcp-vpn's and tcp-pep's", () => {
    const rec = (protocol, bins) =>
      bulkRecord(protocol, bins, protocol === 'tcp-qpep' ? { pep: { kind: 'qpep', tunnel: { mode: 'warm' } } } : {});
    const records = [
      rec('tcp', [1e6, 2e6]),
      rec('tcp-pep', [2e6, 2e6]),
      rec('tcp-qpep', [2e6, 4e6]),
      rec('tcp-vpn', [5e5, 1e6]),
    ];
    const groups = summarize(records);
    const q = groups.find((g) => g.scenario.protocol === 'tcp-qpep');
    assert.equal(q.vs_no_pep.protocol, 'tcp');
    assert.deepEqual(q.vs_no_pep.ratio, [2, 2]);
    assert.deepEqual(
      q.vs_variants.map((v) => [v.protocol, v.ratio]),
      [
        ['tcp-vpn', [4, 4]],
        ['tcp-pep', [1, 1.5]],
      ],
    );
    assert.equal(groups.find((g) => g.scenario.protocol === 'tcp-vpn').vs_variants, undefined);
    const model = buildReport({ summary: { meta: {}, groups }, records });
    assert.deepEqual(
      model.bulk.blocks[0].ratio.map((s) => `${s.protocol}/${s.base}`),
      ['tcp-pep/tcp', 'tcp-qpep/tcp', 'tcp-qpep/tcp-vpn', 'tcp-qpep/tcp-pep', 'tcp-vpn/tcp'],
    );
    assert.match(model.bulk.tunnelNote, /\(tcp-qpep\): warm/);
  });
});
