#!/usr/bin/env node
// How fast the split-TCP PEP forwards, per core of its own CPU.
// Three namespaces joined by veth pairs, no emulated delay:
//   client (iperf3 -c) ── proxy (TPROXY → tcp-pep) ── server (iperf3 -s)
// Per round, each mode carries one iperf3 TCP stream for --seconds in each
// direction: `route` (the kernel forwards, no proxy: the ceiling of this
// machine), `splice` and `copy` (tcp-pep with splice(2), and with
// --no-splice). Prints per mode and direction, as medians over --runs
// rounds: throughput, the proxy's CPU (utime + stime from /proc, in cores)
// and Mbit/s per core of proxy CPU. Modes are interleaved within a round so
// that other load on the machine spreads over all of them.
// Softirq work the kernel does while another process runs is charged to
// that process, not to the proxy: the per-core figure is the proxy's own.
// Usage: node benchmarks/pep-forwarding-tcp.js [--runs 5] [--seconds 5] [--pipe-bytes N] [--json]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { run, binPath, spawnReady, requireNetAdmin } from '../harness/core/sys.js';
import { nftRuleset, TPROXY } from '../harness/pep/tcp-chain.js';
import { median, round } from '../harness/core/stats.js';

const { values: opts } = parseArgs({
  options: {
    runs: { type: 'string', default: '5' },
    seconds: { type: 'string', default: '5' },
    'pipe-bytes': { type: 'string', default: '262144' },
    json: { type: 'boolean' },
  },
});
const runs = Number(opts.runs);
const seconds = Number(opts.seconds);
const CLK_TCK = 100; // USER_HZ: /proc/PID/stat counts CPU time in these
const PORT = 5201;
const PREFIX = 'tpep-bench-';
const ns = {
  client: `${PREFIX}${process.pid}-client`,
  proxy: `${PREFIX}${process.pid}-proxy`,
  server: `${PREFIX}${process.pid}-server`,
};
const ADDR = { client: '198.18.1.2', proxyLan: '198.18.1.1', proxyInet: '198.18.3.1', server: '198.18.3.2' };
const MODES = { route: null, splice: { port: 9480, args: [] }, copy: { port: 9481, args: ['--no-splice'] } };
const children = [];

const inNs = (n, cmd, args, o) => run('ip', ['netns', 'exec', n, cmd, ...args], o);

function cpuSeconds(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / CLK_TCK;
}

const alive = (pid) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

// Namespaces a killed earlier run of this script left behind.
async function removeStale() {
  const list = (await run('ip', ['netns', 'list'])).stdout.split('\n').map((l) => l.split(' ')[0]);
  for (const n of list) {
    const m = new RegExp(`^${PREFIX}(\\d+)-`).exec(n);
    if (m && !alive(Number(m[1]))) await run('ip', ['netns', 'del', n], { allowFail: true });
  }
}

async function teardown() {
  for (const c of children) {
    try {
      process.kill(c.pid, 'SIGTERM');
    } catch {
      /* gone */
    }
  }
  for (const n of Object.values(ns)) await run('ip', ['netns', 'del', n], { allowFail: true });
}

async function build(dir) {
  for (const n of Object.values(ns)) await run('ip', ['netns', 'add', n]);
  await run('ip', [
    'link',
    'add',
    'lan0',
    'netns',
    ns.client,
    'type',
    'veth',
    'peer',
    'name',
    'lan0',
    'netns',
    ns.proxy,
  ]);
  await run('ip', [
    'link',
    'add',
    'inet0',
    'netns',
    ns.proxy,
    'type',
    'veth',
    'peer',
    'name',
    'inet0',
    'netns',
    ns.server,
  ]);
  for (const [n, dev, addr] of [
    [ns.client, 'lan0', `${ADDR.client}/24`],
    [ns.proxy, 'lan0', `${ADDR.proxyLan}/24`],
    [ns.proxy, 'inet0', `${ADDR.proxyInet}/30`],
    [ns.server, 'inet0', `${ADDR.server}/30`],
  ]) {
    await run('ip', ['-n', n, 'addr', 'add', addr, 'dev', dev]);
    await run('ip', ['-n', n, 'link', 'set', dev, 'up']);
  }
  for (const n of Object.values(ns)) await run('ip', ['-n', n, 'link', 'set', 'lo', 'up']);
  await run('ip', ['-n', ns.client, 'route', 'add', 'default', 'via', ADDR.proxyLan]);
  await run('ip', ['-n', ns.server, 'route', 'add', 'default', 'via', ADDR.proxyInet]);
  await inNs(ns.proxy, 'sysctl', ['-qw', 'net.ipv4.ip_forward=1']);
  await run('ip', [
    '-n',
    ns.proxy,
    'rule',
    'add',
    'fwmark',
    `0x${TPROXY.mark.toString(16)}`,
    'lookup',
    String(TPROXY.table),
  ]);
  await run('ip', ['-n', ns.proxy, 'route', 'add', 'local', '0.0.0.0/0', 'dev', 'lo', 'table', String(TPROXY.table)]);
  const pids = {};
  for (const [mode, m] of Object.entries(MODES)) {
    if (!m) continue;
    const child = await spawnReady(
      'ip',
      [
        'netns',
        'exec',
        ns.proxy,
        binPath('tcp-pep'),
        '--listen',
        `127.0.0.1:${m.port}`,
        '--name',
        mode,
        '--quiet',
        '--pipe-bytes',
        opts['pipe-bytes'],
        ...m.args,
      ],
      { logPath: path.join(dir, `${mode}.log`), what: `tcp-pep (${mode})` },
    );
    children.push(child);
    pids[mode] = child.pid;
  }
  const server = await spawnReady(
    'ip',
    ['netns', 'exec', ns.server, 'sh', '-c', `echo ready; exec iperf3 -s -B ${ADDR.server} -p ${PORT}`],
    { logPath: path.join(dir, 'iperf3-server.log'), what: 'iperf3 -s' },
  );
  children.push(server);
  await new Promise((r) => setTimeout(r, 300)); // iperf3 -s binds after the echo
  return pids;
}

// Steers the iperf3 port to a proxy, or (null) lets the kernel route it.
async function steer(port) {
  await inNs(ns.proxy, 'nft', ['delete', 'table', 'ip', TPROXY.nftTable], { allowFail: true });
  if (port === null) return;
  const text = nftRuleset({ iface: 'lan0', ports: [PORT], port });
  await inNs(ns.proxy, 'nft', ['-f', '-'], { input: text });
}

async function once(mode, reverse, pid) {
  const before = pid ? cpuSeconds(pid) : 0;
  const t0 = process.hrtime.bigint();
  const r = await inNs(
    ns.client,
    'iperf3',
    ['-c', ADDR.server, '-p', String(PORT), '-t', String(seconds), '-J', ...(reverse ? ['-R'] : [])],
    { timeoutMs: (seconds + 30) * 1000 },
  );
  const wall = Number(process.hrtime.bigint() - t0) / 1e9;
  const j = JSON.parse(r.stdout);
  const mbps = j.end.sum_received.bits_per_second / 1e6;
  const cores = pid ? (cpuSeconds(pid) - before) / wall : null;
  return { mode, dir: reverse ? 'down' : 'up', mbps, cores, per_core: cores ? mbps / cores : null };
}

async function main() {
  requireNetAdmin('benchmarks/pep-forwarding-tcp.js');
  await removeStale();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tpep-bench-'));
  const stop = () => teardown().finally(() => process.exit(130));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const samples = [];
  try {
    const pids = await build(dir);
    for (let i = 0; i < runs; i++) {
      for (const [mode, m] of Object.entries(MODES)) {
        await steer(m ? m.port : null);
        for (const reverse of [false, true]) {
          const s = await once(mode, reverse, pids[mode]);
          samples.push(s);
          if (!opts.json)
            process.stderr.write(
              `round ${i + 1}/${runs} ${mode} ${s.dir}: ${round(s.mbps, 0)} Mbit/s${s.cores ? `, proxy ${round(s.cores, 2)} cores` : ''}\n`,
            );
        }
      }
    }
  } finally {
    await teardown();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const rows = [];
  for (const mode of Object.keys(MODES)) {
    for (const d of ['up', 'down']) {
      const s = samples.filter((x) => x.mode === mode && x.dir === d);
      rows.push({
        mode,
        dir: d,
        runs: s.length,
        mbps: round(median(s.map((x) => x.mbps)), 0),
        proxy_cores: MODES[mode] ? round(median(s.map((x) => x.cores)), 3) : null,
        mbps_per_core: MODES[mode] ? round(median(s.map((x) => x.per_core)), 0) : null,
      });
    }
  }
  const result = {
    what: 'tcp-pep forwarding over veth, no emulated delay, one iperf3 TCP stream',
    seconds,
    pipe_bytes: Number(opts['pipe-bytes']),
    cpus: os.cpus().length,
    rows,
  };
  if (opts.json) {
    console.log(JSON.stringify(result, null, 2));
    return;
  }
  console.log(`${result.what}; medians of ${runs} runs of ${seconds} s (${result.cpus} CPUs)`);
  console.log('mode    dir    Mbit/s  proxy CPU (cores)  Mbit/s per core of proxy CPU');
  for (const r of rows) {
    console.log(
      `${r.mode.padEnd(7)} ${r.dir.padEnd(5)} ${String(r.mbps).padStart(7)}  ${String(r.proxy_cores ?? '-').padStart(17)}  ${String(r.mbps_per_core ?? '-').padStart(10)}`,
    );
  }
}

main().catch((e) => {
  console.error(`bench-forwarding-tcp: ${e.message}`);
  process.exit(2);
});
