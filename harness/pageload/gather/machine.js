// Gatherer: the machine's own state during the load (record.machine): the
// load average as it started and the share of all CPUs' time in use from
// the navigation to the load, from /proc. On a machine of few cores the
// browser's work after the last byte is CPU-bound, so a run measured while
// something else held the CPUs is slower for a reason of the machine, not
// of the link: such a run is marked busy and the report flags it.
import fs from 'node:fs';

// A run is busy when less than this many cores sat idle, on average,
// during its load (see isBusy).
export const MIN_IDLE_CORES = 0.5;

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
 * Pure: the share of CPU time in use between two parseProcStat samples, in
 * percent of all cores (one decimal), or null when no tick passed between
 * them or one is missing.
 */
export function cpuBusyPct(before, after) {
  const total = (after?.total ?? 0) - (before?.total ?? 0);
  if (!before || !after || total <= 0) return null;
  const busy = total - (after.idle - before.idle);
  return Math.round((1000 * busy) / total) / 10;
}

/**
 * Pure: whether a load of `cpuBusyPct` on `cores` cores ran on a busy
 * machine: less than MIN_IDLE_CORES of a core idle on average (on 2 cores:
 * more than 75 % in use). The load's own work (one renderer main thread
 * when CPU-bound, the network and the helpers mostly waiting on the link)
 * leaves half a core idle; when even that was taken, another process
 * competed with the browser. Null when either is unknown.
 */
export function isBusy(pct, cores) {
  if (pct === null || pct === undefined || !(cores > 0)) return null;
  return (cores * (100 - pct)) / 100 < MIN_IDLE_CORES;
}

/** Pure: record.machine from the samples at the load's start and end. */
export function machineRecord({ statBefore, statAfter, loadavg }) {
  const before = parseProcStat(statBefore);
  const after = parseProcStat(statAfter);
  const pct = cpuBusyPct(before, after);
  const cores = after?.cores || null;
  return { load_1m: parseLoadavg(loadavg), cpu_busy_pct: pct, cores, busy: isBusy(pct, cores) };
}

export default function machine({ read = (file) => fs.readFileSync(file, 'utf8') } = {}) {
  let statBefore, loadavg;
  return {
    key: 'machine',
    start() {
      loadavg = read('/proc/loadavg');
      statBefore = read('/proc/stat');
    },
    stop: () => machineRecord({ statBefore, statAfter: read('/proc/stat'), loadavg }),
  };
}
