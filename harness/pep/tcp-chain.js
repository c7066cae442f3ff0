// The split-TCP PEP chain: a transparent `tcp-pep` in st and one in gw
// (distributed, like PEPsal). nftables TPROXY in each namespace hands the
// proxy the TCP connections arriving on its client-facing interface; st's
// onward connection crosses the satellite and is intercepted again in gw,
// which connects to the server. Each proxy connects onward from its own
// address (the client never notices; the server sees gw's address).
//
// The plain functions (preset → settings → per-node plan: CLI, nft ruleset,
// routes, sysctls) are unit-tested; `startTcpPepChain` applies a plan.
import fs from 'node:fs';
import path from 'node:path';
import { UsageError } from '../core/errors.js';
import { DEFAULTS } from '../core/defaults.js';
import { run, binPath } from '../core/sys.js';
import { inNs, requestStats, startProcess } from '../testbed/testbed.js';
import { LINK_PLAN, ORIGIN_TCP_PORTS, ROUTES } from '../testbed/addressing.js';
import { linuxCc } from '../testbed/congestion-control.js';

// Policy routing for TPROXY: packets marked MARK are delivered locally
// (table TABLE's `local 0.0.0.0/0 dev lo`). Only inside st and gw.
export const TPROXY = { mark: 0x1, table: 100, port: 9480, listen: '127.0.0.1', nftTable: 'satbench_tcp_pep' };

const MB = 1024 * 1024;
// Linux's own defaults: tcp_wmem max 4 MiB, tcp_rmem max 6 MiB, net.core.*mem 212992.
const LINUX_DEFAULT_MEM = { tcp_wmem: [4096, 16384, 4 * MB], tcp_rmem: [4096, 131072, 6 * MB], core_mem: 212992 };
const BIG_MEM = { tcp_wmem: [4096, 16384, 32 * MB], tcp_rmem: [4096, 131072, 32 * MB], core_mem: 32 * MB };

/**
 * The presets. `sat` is the satellite hop (st's onward side, gw's
 * accepted side), `ground` the client's and the server's hops. `mem` null
 * leaves the namespaces' buffer sysctls as they are.
 * - paper: Kosek et al. 2022: satellite hop NewReno with initial window
 *   100; client and server hops unchanged (Cubic, 10).
 * - A–D: Kuhn et al. 2020, Table III (quic4sat-scenarios.json "related"):
 *   A = wmem 4 MB, rmem 6 MB, core mem 0.2 MB (Linux's defaults), IW 10;
 *   B = A with IW 100; C = all 33 MB (32 MiB), IW 10; D = C with IW 100.
 *   The table names no congestion control: Linux's default, Cubic.
 */
export const TCP_PEP_PRESETS = {
  paper: {
    description: 'Kosek et al. 2022: satellite hop NewReno, IW 100; ground hops Cubic, IW 10',
    sat: { cc: 'reno', 'initial-window': 100 },
    ground: { cc: 'cubic' },
    mem: null,
  },
  A: {
    description: 'Kuhn et al. 2020 PEP A: wmem 4 MB, rmem 6 MB, core 0.2 MB, IW 10',
    sat: { cc: 'cubic', 'initial-window': 10 },
    ground: { cc: 'cubic' },
    mem: LINUX_DEFAULT_MEM,
  },
  B: {
    description: 'Kuhn et al. 2020 PEP B: wmem 4 MB, rmem 6 MB, core 0.2 MB, IW 100',
    sat: { cc: 'cubic', 'initial-window': 100 },
    ground: { cc: 'cubic' },
    mem: LINUX_DEFAULT_MEM,
  },
  C: {
    description: 'Kuhn et al. 2020 PEP C: all buffers 33 MB, IW 10',
    sat: { cc: 'cubic', 'initial-window': 10 },
    ground: { cc: 'cubic' },
    mem: BIG_MEM,
  },
  D: {
    description: 'Kuhn et al. 2020 PEP D: all buffers 33 MB, IW 100',
    sat: { cc: 'cubic', 'initial-window': 100 },
    ground: { cc: 'cubic' },
    mem: BIG_MEM,
  },
};

const MSS = 1448;

/**
 * Pure: a preset plus overrides → the chain's settings.
 * overrides: { sat: {cc, initial-window, sndbuf, rcvbuf}, ground: {cc, sndbuf, rcvbuf},
 *   ports: [port…] (default the origin's, ORIGIN_TCP_PORTS) | 'all', idleTimeoutMs, maxConns,
 *   pipeBytes, splice }
 */
export function pepSettings(preset = DEFAULTS.tcpPepPreset, overrides = {}) {
  const p = TCP_PEP_PRESETS[preset];
  if (!p)
    throw new UsageError(
      `TCP PEP preset ${JSON.stringify(preset)}: expected one of ${Object.keys(TCP_PEP_PRESETS).join(', ')}`,
    );
  const side = (base, over = {}) => {
    const s = { ...base, ...over };
    if (s.cc !== undefined) s.cc = linuxCc(s.cc);
    return s;
  };
  const s = {
    preset,
    description: p.description,
    sat: side(p.sat, overrides.sat),
    ground: side(p.ground, overrides.ground),
    mem: p.mem,
    ports: overrides.ports ?? ORIGIN_TCP_PORTS,
    idle_timeout_ms: overrides.idleTimeoutMs ?? 120000,
    max_conns: overrides.maxConns ?? 512,
    pipe_bytes: overrides.pipeBytes ?? 262144,
    splice: overrides.splice ?? true,
  };
  const initialWindow = s.sat['initial-window'];
  if (!Number.isInteger(initialWindow) || initialWindow < 1 || initialWindow > 1000) {
    throw new UsageError(
      `TCP PEP initial window: expected a whole number of packets between 1 and 1000, got ${JSON.stringify(initialWindow)}`,
    );
  }
  for (const [k, v] of [
    ['cc of the satellite hop', s.sat.cc],
    ['cc of the ground hops', s.ground.cc],
  ]) {
    if (typeof v !== 'string' || !/^[a-z0-9_]{1,15}$/.test(v))
      throw new UsageError(`TCP PEP ${k}: not a congestion control name: ${JSON.stringify(v)}`);
  }
  if (s.ports !== 'all') {
    if (
      !Array.isArray(s.ports) ||
      !s.ports.length ||
      !s.ports.every((x) => Number.isInteger(x) && x > 0 && x < 65536)
    ) {
      throw new UsageError(`TCP PEP ports: expected a list of TCP ports or 'all', got ${JSON.stringify(s.ports)}`);
    }
  }
  return s;
}

// The receiver's first advertised window is what its initial receive
// buffer allows (about half of tcp_rmem's default with Linux's scaling)
// and at most initrwnd segments: an IW of 100 needs room for 100 segments.
export function rmemDefaultFor(initialWindow, current = 131072) {
  return Math.max(current, 2 ** Math.ceil(Math.log2(initialWindow * MSS * 2.5)));
}

const satLink = LINK_PLAN.find((l) => l.name === 'sat');
const lanLink = LINK_PLAN.find((l) => l.name === 'lan');

/**
 * Pure: what one node of the chain needs.
 * st: connections come in on lan0 (accept side = ground), leave over the
 * satellite (connect side = sat); the satellite route is st's default.
 * gw: connections come in on sat0 (accept side = sat), leave to the server
 * (connect side = ground); the satellite route is the one back to st.
 */
export function nodePlan(role, s, { statsPath } = {}) {
  if (role !== 'st' && role !== 'gw') throw new Error(`nodePlan: role must be st or gw, got ${role}`);
  const [accept, connect] = role === 'st' ? [s.ground, s.sat] : [s.sat, s.ground];
  const iface = role === 'st' ? lanLink.dev : satLink.dev;
  // The satellite hop's initial window: the route's congestion and receive windows.
  const initialWindow = s.sat['initial-window'];
  const win = ['initcwnd', String(initialWindow), 'initrwnd', String(initialWindow)];
  const satRoute =
    role === 'st'
      ? (() => {
          const r = ROUTES.st.find((x) => x.to === 'default');
          return ['replace', r.to, 'via', r.via, 'dev', r.dev, ...win];
        })()
      : // gw reaches st's own address (st connects onward from it) over sat0.
        ['replace', `${satLink.aAddr}/32`, 'dev', satLink.dev, 'src', satLink.bAddr, ...win];
  const sysctls = {};
  const rmem = s.mem?.tcp_rmem ?? null;
  if (s.mem) sysctls['net.ipv4.tcp_wmem'] = s.mem.tcp_wmem.join(' ');
  if (rmem || initialWindow > 10) {
    const r = rmem ? [...rmem] : [4096, 131072, null];
    r[1] = rmemDefaultFor(initialWindow, r[1]);
    // Without a preset's maximum, keep the namespace's (written as read).
    sysctls['net.ipv4.tcp_rmem'] = r;
  }
  return {
    role,
    iface,
    args: tcpPepArgs(role, s, accept, connect, statsPath),
    nft: nftRuleset({ iface, ports: s.ports }),
    rules: tproxyRules(),
    route: ['route', ...satRoute],
    sysctls,
  };
}

function tcpPepArgs(role, s, accept, connect, statsPath) {
  const a = [
    '--listen',
    `${TPROXY.listen}:${TPROXY.port}`,
    '--name',
    role,
    '--accept-cc',
    accept.cc,
    '--connect-cc',
    connect.cc,
    '--idle-timeout-ms',
    String(s.idle_timeout_ms),
    '--max-conns',
    String(s.max_conns),
    '--pipe-bytes',
    String(s.pipe_bytes),
  ];
  for (const [flag, v] of [
    ['--accept-sndbuf', accept.sndbuf],
    ['--accept-rcvbuf', accept.rcvbuf],
    ['--connect-sndbuf', connect.sndbuf],
    ['--connect-rcvbuf', connect.rcvbuf],
  ]) {
    if (v !== undefined) a.push(flag, String(v));
  }
  if (!s.splice) a.push('--no-splice');
  if (statsPath) a.push('--stats', statsPath);
  return a;
}

/**
 * Pure: the namespace's nftables table. Packets of connections a proxy
 * socket already owns are marked for local delivery; new TCP connections
 * arriving on `iface` (to `ports`, or any port) for an address that is not
 * this node's are handed to the proxy's listener. `tproxy` (mark, listen,
 * nftTable) defaults to this chain's TPROXY; QPEP has its own
 * (pep/qpep-chain.js), so that the two never share a table.
 */
export function nftRuleset({ iface, ports = ORIGIN_TCP_PORTS, port, tproxy = TPROXY }) {
  const mark = `0x${tproxy.mark.toString(16)}`;
  const dport = ports === 'all' ? '' : ` tcp dport { ${ports.join(', ')} }`;
  return `table ip ${tproxy.nftTable} {
  chain prerouting {
    type filter hook prerouting priority mangle; policy accept;
    meta l4proto tcp socket transparent 1 meta mark set ${mark} accept
    iifname "${iface}" meta l4proto tcp fib daddr type != local${dport} meta mark set ${mark} tproxy ip to ${tproxy.listen}:${port ?? tproxy.port} accept
  }
}
`;
}

/**
 * Pure: the policy routing TPROXY needs (ip -n NS …): packets marked
 * `tproxy.mark` look up `tproxy.table`, which delivers everything locally.
 */
export function tproxyRules(tproxy = TPROXY) {
  return [
    ['rule', 'add', 'fwmark', `0x${tproxy.mark.toString(16)}`, 'lookup', String(tproxy.table)],
    ['route', 'add', 'local', '0.0.0.0/0', 'dev', 'lo', 'table', String(tproxy.table)],
  ];
}

/**
 * Sets up TPROXY in namespace `ns`: the policy routing, then the nftables
 * table `nft` (nftRuleset's). Both live in the namespace and go with it
 * when the testbed is torn down.
 */
export async function applyTproxy(ns, { rules, nft }) {
  for (const r of rules) await run('ip', ['-n', ns, ...r]);
  await inNs(ns, 'nft', ['-f', '-'], { input: nft });
}

async function applySysctls(ns, sysctls) {
  for (const [k, v] of Object.entries(sysctls)) {
    let val = v;
    if (Array.isArray(v)) {
      const cur = (await inNs(ns, 'sysctl', ['-n', k])).stdout.trim().split(/\s+/).map(Number);
      val = v.map((x, i) => x ?? cur[i]).join(' ');
    }
    await inNs(ns, 'sysctl', ['-qw', `${k}=${val}`]);
  }
}

/**
 * Sets up TPROXY and starts `tcp-pep` in tb.ns.st and tb.ns.gw (gw
 * first, so st's onward connections always find it). The processes are
 * recorded in the testbed's state: teardown ends them. Returns
 * { settings, logs, stats() }; stats() asks both proxies for their
 * counters (SIGUSR1) and returns { st: {...}, gw: {...} } — call it before
 * the testbed is destroyed.
 */
export async function startTcpPepChain(tb, { preset = DEFAULTS.tcpPepPreset, dir = tb.dir, ...overrides } = {}) {
  const settings = pepSettings(preset, overrides);
  const bin = binPath('tcp-pep');
  fs.mkdirSync(dir, { recursive: true });
  const files = {};
  for (const role of ['gw', 'st']) {
    const ns = tb.ns[role];
    const statsPath = path.resolve(dir, `tcp-pep-${role}.stats.json`);
    const logPath = path.resolve(dir, `tcp-pep-${role}.log`);
    const plan = nodePlan(role, settings, { statsPath });
    await applySysctls(ns, plan.sysctls);
    await run('ip', ['-n', ns, ...plan.route]);
    await applyTproxy(ns, plan);
    await startProcess(tb.state, `tcp-pep-${role}`, ['ip', 'netns', 'exec', ns, bin, ...plan.args], {
      logPath,
      what: `the TCP PEP in ${role}`,
    });
    files[role] = { statsPath, logPath };
  }
  return {
    settings,
    logs: { st: files.st.logPath, gw: files.gw.logPath },
    stats: async () => {
      const out = {};
      for (const role of ['st', 'gw']) out[role] = await readStats(tb.state, `tcp-pep-${role}`, files[role].statsPath);
      return out;
    },
  };
}

// SIGUSR1 makes tcp-pep rewrite its stats file.
async function readStats(state, role, file) {
  const pid = state.processes.find((p) => p.role === role)?.pid;
  return (pid && (await requestStats(pid, file))) ?? { error: `${role} is not running or wrote no stats` };
}
