// Building and tearing down a testbed: four namespaces joined by a veth
// (client–st) and two emulated links (st–gw satellite, gw–server internet).
// State lives under /run/satbench/testbeds/ID so that `testbed down`,
// `testbed status` and `cleanup` work from another process, and so that
// what a killed run left behind can be found.
import fs from 'node:fs';
import path from 'node:path';
import { UsageError } from '../core/errors.js';
import { run, binPath } from '../core/sys.js';
import { onTeardown, interruption } from './teardown.js';
import { STATE_DIR, readState, writeState, stateEntries, removeStray } from './state.js';
import { alive, startTicks, spawnHelper, cpuMs } from './processes.js';
import { allowCongestionControl } from './host-settings.js';
import { availableCongestionControls, checkCongestionControl, linuxCc } from './congestion-control.js';
import {
  LINK_PLAN,
  ROUTES,
  FORWARDING,
  NODES,
  namespacesOf,
  parseNamespace,
  randomId,
  validateId,
} from './addressing.js';
import { pathBdpBytes } from './profiles.js';
import { setResolver, removeResolver, leftoverResolvers } from './resolver.js';
import { resolveLinkBackend, kernelHasNetem, hasTun, netemArgs, linkemConfig, linkemOnly } from './link-backends.js';

export { STATE_DIR, readState } from './state.js';
export { alive } from './processes.js';

export const DEFAULT_TCP = { cc: 'cubic', initcwnd: 10, initrwnd: 10 };

// Pure: the TCP settings of every node, from the scenario's end-host
// settings (st and gw only route, so only their congestion control is set).
export function tcpPlan(tcp = {}) {
  const t = { ...DEFAULT_TCP, ...tcp };
  for (const k of ['initcwnd', 'initrwnd']) {
    if (!Number.isInteger(t[k]) || t[k] < 1 || t[k] > 1000) {
      throw new UsageError(
        `tcp ${k}: expected a whole number of packets between 1 and 1000, got ${JSON.stringify(t[k])}`,
      );
    }
  }
  const cc = linuxCc(t.cc);
  return Object.fromEntries(NODES.map((n) => [n, { cc, initcwnd: t.initcwnd, initrwnd: t.initrwnd }]));
}

// A missing algorithm is added to the host's allowed list (host-settings.js
// puts it back when satbench ends).
function allowedCongestionControl(cc) {
  checkCongestionControl(cc, availableCongestionControls());
  allowCongestionControl(cc, (msg) => process.stderr.write(`satbench: ${msg}\n`));
}

export async function listNamespaces() {
  const r = await run('ip', ['netns', 'list']);
  return r.stdout
    .split('\n')
    .map((l) => l.split(' ')[0])
    .filter(Boolean);
}

const ipn = (ns, ...args) => run('ip', ['-n', ns, ...args]);
/** Runs `cmd args` in namespace `ns` (run()'s options: input, allowFail, …). */
export const inNs = (ns, cmd, args = [], opts) => run('ip', ['netns', 'exec', ns, cmd, ...args], opts);

// Starts linkem for one link inside the namespace of its first end and
// waits for its "ready" line.
async function startLinkem({ state, ns, link, profile, seed, pcapDir }) {
  const dir = path.join(STATE_DIR, state.id);
  const cfgPath = path.join(dir, `${link.name}.linkem.json`);
  const statsPath = path.join(dir, `${link.name}.stats.json`);
  const logPath = path.join(dir, `${link.name}.linkem.log`);
  const imps = profile.links[link.emulated];
  const cfg = linkemConfig({
    name: link.name,
    seed,
    a: { netns: ns[link.a], dev: link.dev },
    b: { netns: ns[link.b], dev: link.dev },
    forward: imps.forward,
    ret: imps.return,
    statsPath,
    pcapDir: pcapDir ? path.resolve(pcapDir, link.name) : null,
  });
  if (cfg.pcap_dir) fs.mkdirSync(cfg.pcap_dir, { recursive: true });
  fs.writeFileSync(cfgPath, JSON.stringify(cfg, null, 2));
  await startProcess(
    state,
    `linkem-${link.name}`,
    ['ip', 'netns', 'exec', ns[link.a], binPath('linkem'), '--config', cfgPath],
    { logPath, what: `linkem for the ${link.name} link`, stats: statsPath },
  );
}

// The abort signal of the run each testbed belongs to (createTestbed's
// `signal`), so that a helper's wait for "ready" ends when the run does.
const runSignals = new WeakMap();

/**
 * Starts a helper process that belongs to testbed `state.id` and waits for
 * its "ready". It is recorded (with what it is and its log, for the reason
 * of a run it ends by dying) before the wait, so teardown and cleanup end
 * it whatever happens next.
 */
export async function startProcess(state, role, [cmd, ...args], { logPath, what, stats, readyInLog, timeoutMs }) {
  await spawnHelper(cmd, args, {
    logPath,
    what,
    readyInLog,
    timeoutMs,
    signal: runSignals.get(state) ?? interruption,
    onSpawn: (child) => {
      state.processes.push({ role, pid: child.pid, what, log: logPath, ...(stats ? { stats } : {}) });
      writeState(state);
    },
  });
}

async function buildLinks(state, ns, profile, backend, { seed, pcapDir }) {
  for (const link of LINK_PLAN) {
    if (link.emulated && backend === 'linkem') {
      for (const end of [link.a, link.b]) await ipn(ns[end], 'tuntap', 'add', 'dev', link.dev, 'mode', 'tun');
    } else {
      await run('ip', [
        'link',
        'add',
        link.dev,
        'netns',
        ns[link.a],
        'type',
        'veth',
        'peer',
        'name',
        link.dev,
        'netns',
        ns[link.b],
      ]);
    }
    for (const [end, addr] of [
      [link.a, link.aAddr],
      [link.b, link.bAddr],
    ]) {
      await ipn(ns[end], 'addr', 'add', `${addr}/${link.prefix}`, 'dev', link.dev);
      await ipn(ns[end], 'link', 'set', link.dev, 'up');
    }
    if (link.emulated && backend === 'netem') {
      const imps = profile.links[link.emulated];
      // forward = gateway to terminal: the qdisc sits on the sender's side.
      for (const [end, dir] of [
        [link.b, 'forward'],
        [link.a, 'return'],
      ]) {
        // Offloads would hand netem 64 kB super-packets; the link must see real ones.
        await inNs(ns[end], 'ethtool', ['-K', link.dev, 'tso', 'off', 'gso', 'off', 'gro', 'off']);
        await inNs(ns[end], 'tc', [
          'qdisc',
          'add',
          'dev',
          link.dev,
          'root',
          'netem',
          ...netemArgs(imps[dir], `${profile.file}: ${link.emulated}.${dir}`),
        ]);
      }
    }
  }
  if (backend === 'linkem') {
    for (const link of LINK_PLAN.filter((l) => l.emulated)) {
      await startLinkem({ state, ns, link, profile, seed: seed + (link.name === 'sat' ? 0 : 1), pcapDir });
    }
  }
}

/**
 * Changes the rates of emulated link `emulated` ('satellite' or
 * 'internet') of a running testbed to those of `imps` ({forward, return},
 * as a profile's links give them), packets in flight and the queue kept: a
 * path whose capacity changes between two visits. netem takes the whole
 * direction again (tc qdisc change); linkem re-reads its config file's
 * rates on SIGUSR2 and says so by rewriting its stats file.
 */
export async function changeLink({ state, ns, backend, profile }, emulated, imps) {
  const link = LINK_PLAN.find((l) => l.emulated === emulated);
  if (backend === 'linkem') {
    const cfgPath = path.join(STATE_DIR, state.id, `${link.name}.linkem.json`);
    const old = JSON.parse(fs.readFileSync(cfgPath, 'utf8'));
    const cfg = linkemConfig({
      ...{ name: old.name, seed: old.seed, a: old.a, b: old.b, forward: imps.forward, ret: imps.return },
      ...{ statsPath: old.stats_path, pcapDir: old.pcap_dir },
    });
    fs.writeFileSync(cfgPath, JSON.stringify(cfg, null, 2));
    const helper = state.processes.find((p) => p.role === `linkem-${link.name}`);
    if (!(await requestStats(helper?.pid, old.stats_path, 'SIGUSR2')))
      throw new Error(`linkem for the ${link.name} link did not take its new rates`);
    return;
  }
  for (const [end, dir] of [
    [link.b, 'forward'],
    [link.a, 'return'],
  ])
    await inNs(ns[end], 'tc', [
      'qdisc',
      'change',
      'dev',
      link.dev,
      'root',
      'netem',
      ...netemArgs(imps[dir], `${profile.file}: ${emulated}.${dir}`),
    ]);
}

// Linux's default socket buffer ceilings (tcp_rmem 6 MB, tcp_wmem 4 MB)
// would cap a transfer below the rate of a large-BDP path: every node (the
// end hosts, and st and gw where a split-TCP PEP terminates connections)
// may grow its buffers to twice the path's BDP.
export function tcpBufferSysctls(profile) {
  const want = 2 * (pathBdpBytes(profile) ?? 0);
  if (want <= 4 * 1024 * 1024) return [];
  return [`net.ipv4.tcp_rmem=4096 131072 ${Math.max(want, 6291456)}`, `net.ipv4.tcp_wmem=4096 16384 ${want}`];
}

async function configureNodes(ns, plan, profile) {
  for (const node of NODES) {
    await ipn(ns[node], 'link', 'set', 'lo', 'up');
    // IPv4 only. With IPv6 on, an interface's link-local address finishes
    // duplicate address detection a second or two after link up; Chromium
    // takes that for a network change and aborts its requests
    // (net::ERR_NETWORK_CHANGED).
    await inNs(ns[node], 'sysctl', ['-qw', 'net.ipv6.conf.all.disable_ipv6=1', 'net.ipv6.conf.default.disable_ipv6=1']);
    await inNs(ns[node], 'sysctl', ['-qw', `net.ipv4.tcp_congestion_control=${plan[node].cc}`]);
    if (FORWARDING.includes(node)) await inNs(ns[node], 'sysctl', ['-qw', 'net.ipv4.ip_forward=1']);
    for (const kv of tcpBufferSysctls(profile)) await inNs(ns[node], 'sysctl', ['-qw', kv]);
  }
}

async function addRoutes(ns, plan) {
  for (const node of NODES) {
    for (const r of ROUTES[node]) {
      const extra =
        r.to === 'default' ? ['initcwnd', String(plan[node].initcwnd), 'initrwnd', String(plan[node].initrwnd)] : [];
      await ipn(ns[node], 'route', 'add', r.to, 'via', r.via, 'dev', r.dev, ...extra);
    }
  }
}

/**
 * Builds a testbed. `profile` is a loaded profile (profiles.js). The
 * testbed is torn down if this process is interrupted (once its command
 * installed the signal handlers, teardown.js, before any testbed is built:
 * without them a signal would kill the process between a change and its
 * teardown); `detached` ones
 * stop being so once their `detach()` is called (after `testbed up` has
 * told the user the testbed is up: a signal before that leaves nothing).
 * `signal` (default: the process's interruption) ends the build between
 * steps and any helper's wait for "ready"; a teardown waits for the step
 * in flight, so it sees everything the build made.
 * `serverAddresses` are added to the server (an archive's origins).
 * Returns {id, ns, backend, profile, state, dir, linkStats(),
 * setResolver(node, nameserver) (removed with the testbed), destroy(),
 * detach()}.
 */
export async function createTestbed({
  profile,
  link = 'auto',
  seed = 1,
  id,
  tcp,
  pcapDir,
  serverAddresses = [],
  detached = false,
  signal = interruption,
}) {
  id = validateId(id ?? randomId());
  const plan = tcpPlan(tcp);
  for (const n of Object.values(plan)) allowedCongestionControl(n.cc);
  const needsLinkem = linkemOnly(profile);
  const backend = resolveLinkBackend(link, {
    kernelNetem: link === 'linkem' || (link === 'auto' && needsLinkem) ? false : await kernelHasNetem(),
    tun: hasTun(),
    needsLinkem,
  });
  const ns = namespacesOf(id);
  const existing = await listNamespaces();
  if (readState(id) || Object.values(ns).some((n) => existing.includes(n))) {
    throw new UsageError(`testbed ${id} already exists; take it down with \`satbench testbed down ${id}\``);
  }
  const state = {
    id,
    owner_pid: detached ? null : process.pid,
    owner_start: detached ? null : startTicks(process.pid),
    created: new Date().toISOString(),
    profile: profile.name,
    profile_file: profile.file,
    backend,
    seed,
    tcp: plan.client,
    namespaces: ns,
    processes: [],
  };
  signal.throwIfAborted();
  writeState(state);
  runSignals.set(state, signal);
  const steps = [
    async () => {
      for (const node of NODES) await run('ip', ['netns', 'add', ns[node]]);
    },
    () => configureNodes(ns, plan, profile),
    () => buildLinks(state, ns, profile, backend, { seed, pcapDir }),
    () => addRoutes(ns, plan),
    // a replayed archive's origins (addressing.js originAddress)
    async () => {
      for (const a of serverAddresses) await ipn(ns.server, 'addr', 'add', `${a}/32`, 'dev', 'inet0');
    },
  ];
  // Registered before the build starts, even for a detached testbed: a
  // signal then must not leave half of one behind.
  let build;
  const unregister = onTeardown(async () => {
    await build.catch(() => {});
    await destroyTestbed(id);
  });
  build = (async () => {
    for (const step of steps) {
      signal.throwIfAborted();
      await step();
    }
  })();
  try {
    await build;
  } catch (e) {
    unregister();
    await destroyTestbed(id);
    throw e;
  }
  return {
    id,
    ns,
    backend,
    profile,
    state,
    dir: path.join(STATE_DIR, id),
    linkStats: () => linkStats(id),
    changeLink: (emulated, imps) => changeLink({ state, ns, backend, profile }, emulated, imps),
    setResolver: (node, nameserver) => setResolver(ns[node], nameserver),
    cpuTimes: () => cpuTimes(state),
    destroy: async () => {
      unregister();
      await destroyTestbed(id);
    },
    detach: () => {
      if (detached) unregister();
    },
  };
}

const ownerAlive = (state) =>
  state?.owner_pid != null && alive(state.owner_pid) && startTicks(state.owner_pid) === state.owner_start;

async function waitGone(pids, ms) {
  const end = Date.now() + ms;
  while (pids.some(alive) && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
  return pids.filter(alive);
}

/**
 * Fresh counters of a helper that rewrites its stats file on SIGUSR1
 * (linkem, the PEPs), or on another `signal` it answers so (linkem's
 * SIGUSR2): waits up to 2 s for the new file. null when the
 * process is gone or the file cannot be read.
 */
export async function requestStats(pid, file, signal = 'SIGUSR1') {
  if (pid == null || !alive(pid)) return null;
  const before = fs.existsSync(file) ? fs.statSync(file).mtimeMs : 0;
  process.kill(pid, signal);
  const end = Date.now() + 2000;
  while (Date.now() < end && !(fs.existsSync(file) && fs.statSync(file).mtimeMs > before)) {
    await new Promise((r) => setTimeout(r, 10));
  }
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    return null; // a half-written file: skip it rather than fail the run
  }
}

// Current counters of every linkem of a testbed (SIGUSR1 makes it write them).
export async function linkStats(id) {
  const state = readState(id);
  const out = {};
  for (const p of state?.processes ?? []) {
    if (!p.stats) continue;
    const s = await requestStats(p.pid, p.stats);
    if (s) out[p.role.replace(/^linkem-/, '')] = s;
  }
  return out;
}

/**
 * CPU time each running helper of a testbed has used so far, in ms, by
 * its role (linkem-sat, quic-pep-st, satbulk, …): a run whose helper used
 * close to the run's length in CPU was CPU-bound. The kernel's netem has
 * no process; its work is not counted.
 */
export function cpuTimes(state) {
  const out = {};
  for (const p of state?.processes ?? []) {
    const ms = cpuMs(p.pid);
    if (ms !== null) out[p.role] = ms;
  }
  return out;
}

const destroying = new Map();

/**
 * Removes everything of testbed `id`: the processes running in its
 * namespaces (linkem and anything a run started there), then the
 * namespaces, then its state. Safe to call on a half-built or already
 * removed testbed, and several times at once (a signal's teardown racing
 * the command's own): each call makes a full pass after the one before
 * it, so the last sees whatever was made meanwhile.
 */
export function destroyTestbed(id) {
  const pass = (destroying.get(id) ?? Promise.resolve()).catch(() => {}).then(() => removeTestbed(id));
  destroying.set(id, pass);
  pass.finally(() => destroying.get(id) === pass && destroying.delete(id)).catch(() => {});
  return pass;
}

const signalAll = (pids, sig) => {
  for (const pid of pids) {
    try {
      process.kill(pid, sig);
    } catch {
      /* already gone */
    }
  }
};

async function pidsOf(id, present) {
  const pids = new Set((readState(id)?.processes ?? []).map((p) => p.pid).filter(alive));
  for (const n of Object.values(namespacesOf(id))) {
    if (!present.has(n)) continue;
    const r = await run('ip', ['netns', 'pids', n], { allowFail: true });
    for (const pid of r.stdout.split(/\s+/).filter(Boolean).map(Number)) if (alive(pid)) pids.add(pid);
  }
  return [...pids];
}

async function removeTestbed(id) {
  const ns = namespacesOf(id);
  const present = new Set(await listNamespaces());
  // Listed again until none is left: a process may have entered a
  // namespace (Chromium starting) while the first ones were ending.
  for (let round = 0; round < 3; round++) {
    const pids = await pidsOf(id, present);
    if (!pids.length) break;
    signalAll(pids, 'SIGTERM');
    signalAll(await waitGone(pids, 2000), 'SIGKILL');
    await waitGone(pids, 2000);
  }
  for (const n of Object.values(ns)) {
    if (present.has(n)) await run('ip', ['netns', 'del', n], { allowFail: true });
    removeResolver(n);
  }
  fs.rmSync(path.join(STATE_DIR, id), { recursive: true, force: true });
}

// Every testbed on this machine: from state files and from namespaces
// named like ours (a killed run may have left namespaces without state).
// Entries of the state folder that cannot be testbeds are not listed
// (strayStateEntries names them).
export async function listTestbeds() {
  const namespaces = await listNamespaces();
  const ids = new Set(stateEntries().ids);
  for (const n of namespaces) {
    const parsed = parseNamespace(n);
    if (parsed) ids.add(parsed.id);
  }
  return [...ids].sort().map((id) => {
    const state = readState(id);
    const ns = namespacesOf(id);
    return {
      id,
      profile: state?.profile ?? null,
      backend: state?.backend ?? null,
      created: state?.created ?? null,
      owner_pid: state?.owner_pid ?? null,
      owner_alive: ownerAlive(state),
      namespaces: Object.values(ns).filter((n) => namespaces.includes(n)),
      processes: (state?.processes ?? []).map((p) => ({ ...p, alive: alive(p.pid) })),
    };
  });
}

/** Names in the state folder that are no testbed's (see state.js). */
export const strayStateEntries = () => stateEntries().stray;

// Removes testbeds no live satbench process owns (those of `testbed up`
// and those of killed runs), and stray entries of the state folder; with
// `all`, every testbed.
export async function cleanup({ all = false } = {}) {
  const removed = [];
  const kept = [];
  for (const tb of await listTestbeds()) {
    if (tb.owner_alive && !all) {
      kept.push(tb);
      continue;
    }
    await destroyTestbed(tb.id);
    removed.push(tb.id);
  }
  const stray = strayStateEntries();
  for (const name of stray) removeStray(name);
  // resolv.conf folders of testbeds that are gone (a SIGKILL between the
  // namespaces' removal and theirs)
  const live = new Set(kept.flatMap((tb) => Object.values(namespacesOf(tb.id))));
  for (const n of leftoverResolvers()) if (!live.has(n)) removeResolver(n);
  return { removed, kept, stray };
}
