import assert from 'node:assert/strict';
import {
  TCP_PEP_PRESETS,
  TPROXY,
  pepSettings,
  nodePlan,
  nftRuleset,
  rmemDefaultFor,
} from '../../harness/pep/tcp-chain.js';

const argOf = (args, flag) => args[args.indexOf(flag) + 1];

describe('split-TCP PEP plan', () => {
  it('defaults to the paper: satellite hop NewReno (reno) with IW 100, ground hops Cubic', () => {
    const s = pepSettings();
    assert.equal(s.preset, 'paper');
    assert.deepEqual(s.sat, { cc: 'reno', 'initial-window': 100 });
    assert.deepEqual(s.ground, { cc: 'cubic' });
    assert.equal(s.mem, null);
    assert.deepEqual(s.ports, [80, 443]);
  });

  it('has the TCP PEP configurations A–D of Kuhn et al.', () => {
    const MB = 1024 * 1024;
    assert.deepEqual(Object.keys(TCP_PEP_PRESETS), ['paper', 'A', 'B', 'C', 'D']);
    for (const [p, initialWindow, wmax, rmax, core] of [
      ['A', 10, 4 * MB, 6 * MB, 212992],
      ['B', 100, 4 * MB, 6 * MB, 212992],
      ['C', 10, 32 * MB, 32 * MB, 32 * MB],
      ['D', 100, 32 * MB, 32 * MB, 32 * MB],
    ]) {
      const s = pepSettings(p);
      assert.equal(s.sat['initial-window'], initialWindow, p);
      assert.equal(s.mem.tcp_wmem[2], wmax, p);
      assert.equal(s.mem.tcp_rmem[2], rmax, p);
      assert.equal(s.mem.core_mem, core, p);
    }
  });

  it('takes overrides and refuses nonsense', () => {
    const s = pepSettings('paper', {
      sat: { cc: 'newreno', 'initial-window': 32 },
      ground: { cc: 'bbr' },
      ports: 'all',
      idleTimeoutMs: 2000,
      maxConns: 3,
      splice: false,
    });
    assert.deepEqual(s.sat, { cc: 'reno', 'initial-window': 32 });
    assert.equal(s.ground.cc, 'bbr');
    assert.equal(s.ports, 'all');
    assert.equal(s.idle_timeout_ms, 2000);
    assert.throws(() => pepSettings('E'), /preset "E": expected one of paper, A, B, C, D/);
    assert.throws(() => pepSettings('paper', { sat: { 'initial-window': 0 } }), /initial window/);
    assert.throws(() => pepSettings('paper', { ground: { cc: 'cubic; rm -rf' } }), /not a congestion control name/);
    assert.throws(() => pepSettings('paper', { ports: [80, 70000] }), /ports/);
    assert.throws(() => pepSettings('paper', { ports: [] }), /ports/);
  });

  it('st: client connections in on lan0 (ground side), out over the satellite with its cc and IW', () => {
    const p = nodePlan('st', pepSettings(), { statsPath: '/x/st.json' });
    assert.equal(p.iface, 'lan0');
    assert.equal(argOf(p.args, '--accept-cc'), 'cubic');
    assert.equal(argOf(p.args, '--connect-cc'), 'reno');
    assert.equal(argOf(p.args, '--listen'), `127.0.0.1:${TPROXY.port}`);
    assert.equal(argOf(p.args, '--name'), 'st');
    assert.equal(argOf(p.args, '--stats'), '/x/st.json');
    assert.deepEqual(p.route, [
      'route',
      'replace',
      'default',
      'via',
      '198.18.2.2',
      'dev',
      'sat0',
      'initcwnd',
      '100',
      'initrwnd',
      '100',
    ]);
    assert.deepEqual(p.rules, [
      ['rule', 'add', 'fwmark', '0x1', 'lookup', '100'],
      ['route', 'add', 'local', '0.0.0.0/0', 'dev', 'lo', 'table', '100'],
    ]);
    assert.match(p.nft, /iifname "lan0"/);
  });

  it('gw: connections in on sat0 (satellite side), out to the server with the ground cc', () => {
    const p = nodePlan('gw', pepSettings('D'));
    assert.equal(p.iface, 'sat0');
    assert.equal(argOf(p.args, '--accept-cc'), 'cubic');
    assert.equal(argOf(p.args, '--connect-cc'), 'cubic');
    assert.ok(!p.args.includes('--stats'));
    assert.deepEqual(p.route, [
      'route',
      'replace',
      '198.18.2.1/32',
      'dev',
      'sat0',
      'src',
      '198.18.2.2',
      'initcwnd',
      '100',
      'initrwnd',
      '100',
    ]);
    assert.equal(p.sysctls['net.ipv4.tcp_wmem'], `4096 16384 ${32 * 1024 * 1024}`);
    assert.deepEqual(p.sysctls['net.ipv4.tcp_rmem'], [4096, 524288, 32 * 1024 * 1024]);
    const paperGw = nodePlan('gw', pepSettings());
    assert.equal(argOf(paperGw.args, '--accept-cc'), 'reno');
    assert.equal(argOf(paperGw.args, '--connect-cc'), 'cubic');
    assert.throws(() => nodePlan('client', pepSettings()), /role/);
  });

  it('passes per-side buffers, the idle timeout and the copy mode to the proxy', () => {
    const s = pepSettings('A', {
      sat: { sndbuf: 1 << 20, rcvbuf: 1 << 21 },
      idleTimeoutMs: 1500,
      maxConns: 9,
      splice: false,
    });
    const st = nodePlan('st', s).args;
    assert.equal(argOf(st, '--connect-sndbuf'), String(1 << 20));
    assert.equal(argOf(st, '--connect-rcvbuf'), String(1 << 21));
    assert.ok(!st.includes('--accept-sndbuf'));
    const gw = nodePlan('gw', s).args;
    assert.equal(argOf(gw, '--accept-rcvbuf'), String(1 << 21));
    assert.equal(argOf(gw, '--idle-timeout-ms'), '1500');
    assert.equal(argOf(gw, '--max-conns'), '9');
    assert.ok(gw.includes('--no-splice'));
  });

  it('gives the satellite-hop receiver room for the initial window', () => {
    assert.equal(rmemDefaultFor(10), 131072); // Linux's default already fits 10 segments
    assert.ok(rmemDefaultFor(100) / 2 >= 100 * 1448, String(rmemDefaultFor(100)));
    assert.equal(rmemDefaultFor(100, 1 << 20), 1 << 20);
    // the paper preset keeps the namespace's maximum (null: as read)
    assert.deepEqual(nodePlan('st', pepSettings()).sysctls, { 'net.ipv4.tcp_rmem': [4096, 524288, null] });
    assert.deepEqual(nodePlan('st', pepSettings('paper', { sat: { 'initial-window': 10 } })).sysctls, {});
  });

  it('writes an nft ruleset that steers only new TCP from the client side, to the listener', () => {
    const t = nftRuleset({ iface: 'lan0', ports: [80, 443] });
    assert.match(t, /^table ip satbench_tcp_pep \{/);
    assert.match(t, /type filter hook prerouting priority mangle; policy accept;/);
    assert.match(t, /meta l4proto tcp socket transparent 1 meta mark set 0x1 accept/);
    assert.match(
      t,
      /iifname "lan0" meta l4proto tcp fib daddr type != local tcp dport \{ 80, 443 \} meta mark set 0x1 tproxy ip to 127\.0\.0\.1:9480 accept/,
    );
    const all = nftRuleset({ iface: 'sat0', ports: 'all' });
    assert.ok(!all.includes('dport'));
    assert.match(all, /iifname "sat0" meta l4proto tcp fib daddr type != local meta mark set 0x1 tproxy/);
  });
});
