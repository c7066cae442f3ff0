// Gatherer: the machine's own state during the load (record.machine): the
// load average as it started, the share of all cores' time in use from the
// navigation to the load, and how much of it the run's own Chromium used,
// from /proc. On a machine of few cores the browser's work after the last
// byte is CPU-bound, so a run measured while something else held the CPUs
// is slower for a reason of the machine, not of the link: such a run is
// marked busy and the report flags it.
import fs from 'node:fs';
import { parseStat } from '../../testbed/processes.js';

// A run is busy when processes other than its browser used more than this
// many cores, on average, during its load (see isBusy).
export const MAX_OTHER_CORES = 0.5;

/**
 * Pure: the CPU time of /proc/stat's text, in its clock ticks: `total`
 * (user, nice, system, idle, iowait, irq, softirq, steal; guest time is
 * already in user), `idle` (idle and iowait: nothing to run) and `cores`
 * (its cpuN lines). Null for a text without the "cpu" line.
 */
export function parseProcStat(text) {
  const line = /^cpu\s+(.*)$/m.exec(text);
  if (!line) return null;
  const [user, nice, system, idle, iowait = 0, irq = 0, softirq = 0, steal = 0] = line[1]
    .trim()
    .split(/\s+/)
    .map(Number);
  if (![user, nice, system, idle].every(Number.isFinite)) return null;
  return {
    total: user + nice + system + idle + iowait + irq + softirq + steal,
    idle: idle + iowait,
    cores: (text.match(/^cpu\d+\s/gm) ?? []).length,
  };
}

/** Pure: the 1-minute load average of /proc/loadavg's text, or null. */
export function parseLoadavg(text) {
  const first = /^\s*(\d+(\.\d+)?)(\s|$)/.exec(String(text))?.[1];
  return first === undefined ? null : Number(first);
}

/**
 * Pure: the CPU ticks the process tree of `root` used between two process
 * tables ({pid: {ppid, cpuTicks}}): each process of the tree at `after`,
 * less its ticks at `before` (none for one started since). Null without
 * `root` in `after`.
 */
export function treeTicks(root, before, after) {
  if (!after[root]) return null;
  const children = new Map();
  for (const [pid, p] of Object.entries(after)) {
    if (!children.has(p.ppid)) children.set(p.ppid, []);
    children.get(p.ppid).push(Number(pid));
  }
  let ticks = 0;
  const todo = [root];
  const seen = new Set();
  while (todo.length) {
    const pid = todo.pop();
    if (seen.has(pid)) continue;
    seen.add(pid);
    ticks += Math.max(0, after[pid].cpuTicks - (before[pid]?.cpuTicks ?? 0));
    todo.push(...(children.get(pid) ?? []));
  }
  return ticks;
}

// Pure: ticks as a share of `total` ticks of all cores, in percent, one decimal.
const pct = (ticks, total) => Math.round((1000 * ticks) / total) / 10;

/**
 * Pure: the share of all cores' time in use between two parseProcStat
 * samples (cpu_busy_pct) and of it the browser's `browserTicks`
 * (browser_cpu_pct), in percent; null where no tick passed or a sample is
 * missing.
 */
export function cpuShares(before, after, browserTicks = null) {
  const total = (after?.total ?? 0) - (before?.total ?? 0);
  if (!before || !after || total <= 0) return { cpu_busy_pct: null, browser_cpu_pct: null };
  const busy = total - (after.idle - before.idle);
  return {
    cpu_busy_pct: pct(busy, total),
    browser_cpu_pct: browserTicks === null ? null : pct(Math.min(browserTicks, busy), total),
  };
}

/**
 * Pure: whether a load ran on a busy machine: processes other than its
 * browser (other programs, and the run's own origin, link emulation and
 * harness) used more than MAX_OTHER_CORES cores on average during it
 * (`cpuBusyPct` of all `cores` in use, `browserPct` of them the browser's).
 * The browser's own work is left out: it is what a CPU-bound load is, not
 * a disturbance. Null when a share is unknown.
 */
export function isBusy(cpuBusyPct, browserPct, cores) {
  if (cpuBusyPct == null || browserPct == null || !(cores > 0)) return null;
  return ((cpuBusyPct - browserPct) * cores) / 100 > MAX_OTHER_CORES;
}

/** Pure: record.machine from the samples at the load's start and end. */
export function machineRecord({ statBefore, statAfter, loadavg, browserTicks = null }) {
  const before = parseProcStat(statBefore);
  const after = parseProcStat(statAfter);
  const shares = cpuShares(before, after, browserTicks);
  const cores = after?.cores || null;
  return {
    load_1m: parseLoadavg(loadavg),
    ...shares,
    cores,
    busy: isBusy(shares.cpu_busy_pct, shares.browser_cpu_pct, cores),
  };
}

// Every process's parent and CPU ticks, from /proc (one that ends while it is read is left out).
function processTable() {
  const table = {};
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const s = parseStat(fs.readFileSync(`/proc/${name}/stat`, 'utf8'));
      if (s) table[name] = { ppid: s.ppid, cpuTicks: s.cpuTicks };
    } catch {
      /* ended meanwhile */
    }
  }
  return table;
}

export default function machine({ read = (file) => fs.readFileSync(file, 'utf8'), processes = processTable } = {}) {
  let statBefore, loadavg, procsBefore, root;
  return {
    key: 'machine',
    start({ page }) {
      root = page?.browser().process()?.pid ?? null;
      loadavg = read('/proc/loadavg');
      procsBefore = root ? processes() : {};
      statBefore = read('/proc/stat');
    },
    stop() {
      const statAfter = read('/proc/stat');
      const browserTicks = root ? treeTicks(root, procsBefore, processes()) : null;
      return machineRecord({ statBefore, statAfter, loadavg, browserTicks });
    },
  };
}
