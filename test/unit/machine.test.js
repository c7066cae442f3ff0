// record.machine: the machine's CPU during a load, from /proc, the share
// of it the run's own browser used, and the rule that marks a run
// measured on a busy machine.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import machine, {
  parseProcStat,
  parseLoadavg,
  treeTicks,
  cpuShares,
  isBusy,
  machineRecord,
  MAX_OTHER_CORES,
} from '../../harness/pageload/gather/machine.js';

// /proc/stat of a 2-core machine: user nice system idle iowait irq softirq steal guest guest_nice
const stat = (user, idle, { iowait = 0, steal = 0, guest = 0 } = {}) =>
  [
    `cpu  ${user} 0 0 ${idle} ${iowait} 0 0 ${steal} ${guest} 0`,
    'cpu0 1 0 0 1 0 0 0 0 0 0',
    'cpu1 1 0 0 1 0 0 0 0 0 0',
    'intr 12345',
    'ctxt 999',
  ].join('\n');

describe('the machine during a load (record.machine)', () => {
  it('reads the CPU ticks, idle with iowait, and the cores of /proc/stat', () => {
    assert.deepEqual(parseProcStat(stat(100, 300, { iowait: 20, steal: 5, guest: 40 })), {
      total: 425, // guest time is in user already
      idle: 320,
      cores: 2,
    });
    assert.equal(parseProcStat('intr 1\n'), null);
    assert.equal(parseProcStat('cpu  a b c d\n'), null);
    // this machine's own file reads
    const here = parseProcStat(fs.readFileSync('/proc/stat', 'utf8'));
    assert.ok(here.total > here.idle && here.cores >= 1, JSON.stringify(here));
  });

  it('reads the 1-minute load average', () => {
    assert.equal(parseLoadavg('1.25 0.80 0.50 2/345 6789\n'), 1.25);
    assert.equal(parseLoadavg(''), null);
    assert.equal(parseLoadavg('x y'), null);
  });

  it('the browser’s ticks: its process tree at the end, less what each had at the start', () => {
    const before = { 10: { ppid: 1, cpuTicks: 50 }, 11: { ppid: 10, cpuTicks: 20 }, 12: { ppid: 10, cpuTicks: 5 } };
    const after = {
      1: { ppid: 0, cpuTicks: 9999 }, // not the browser's
      10: { ppid: 1, cpuTicks: 60 },
      11: { ppid: 10, cpuTicks: 50 },
      // 12 ended: what it used since the start is lost
      13: { ppid: 11, cpuTicks: 40 }, // a renderer started for the navigation
      14: { ppid: 2, cpuTicks: 70 }, // another program's
    };
    assert.equal(treeTicks(10, before, after), 10 + 30 + 40);
    assert.equal(treeTicks(99, before, after), null);
    // a pid whose ticks went down belongs to another process now: nothing rather than less than nothing
    assert.equal(treeTicks(10, { 10: { ppid: 1, cpuTicks: 100 } }, { 10: { ppid: 1, cpuTicks: 60 } }), 0);
  });

  it('the share of all cores in use between two samples, and the browser’s; none without a tick between', () => {
    const before = parseProcStat(stat(100, 300));
    assert.deepEqual(cpuShares(before, parseProcStat(stat(130, 370)), 10), { cpu_busy_pct: 30, browser_cpu_pct: 10 });
    assert.deepEqual(cpuShares(before, parseProcStat(stat(200, 300))), { cpu_busy_pct: 100, browser_cpu_pct: null });
    assert.equal(cpuShares(before, parseProcStat(stat(101, 302))).cpu_busy_pct, 33.3);
    // iowait is idle: nothing to run
    assert.equal(cpuShares(before, parseProcStat(stat(110, 340, { iowait: 50 }))).cpu_busy_pct, 10);
    // the browser's ticks never exceed the machine's (the samples are not at the same instant)
    assert.deepEqual(cpuShares(before, parseProcStat(stat(120, 380)), 25), { cpu_busy_pct: 20, browser_cpu_pct: 20 });
    assert.deepEqual(cpuShares(before, before, 1), { cpu_busy_pct: null, browser_cpu_pct: null });
    assert.deepEqual(cpuShares(null, before), { cpu_busy_pct: null, browser_cpu_pct: null });
  });

  it('busy: processes other than the browser used more than half a core on average', () => {
    assert.equal(MAX_OTHER_CORES, 0.5);
    assert.equal(isBusy(75, 50, 2), false, 'others: exactly half a core');
    assert.equal(isBusy(75.5, 50, 2), true);
    assert.equal(isBusy(100, 80, 2), false, 'a CPU-bound browser on a quiet machine');
    assert.equal(isBusy(100, 20, 2), true, 'a build beside a load waiting on the link');
    assert.equal(isBusy(30, 0, 2), true);
    assert.equal(isBusy(10, 0, 4), false, '0.4 of a core');
    assert.equal(isBusy(20, 0, 4), true, '0.8 of a core');
    assert.equal(isBusy(60, 0, 1), true);
    assert.equal(isBusy(null, 10, 2), null);
    assert.equal(isBusy(90, null, 2), null);
    assert.equal(isBusy(90, 10, null), null);
  });

  it('the record: load average at the start, CPU use over the load and the browser’s, cores, busy', () => {
    assert.deepEqual(
      machineRecord({
        statBefore: stat(100, 300),
        statAfter: stat(190, 310),
        loadavg: '2.50 1 1 1/1 1',
        browserTicks: 30,
      }),
      { load_1m: 2.5, cpu_busy_pct: 90, browser_cpu_pct: 30, cores: 2, busy: true },
    );
    assert.deepEqual(machineRecord({ statBefore: '', statAfter: '', loadavg: '' }), {
      load_1m: null,
      cpu_busy_pct: null,
      browser_cpu_pct: null,
      cores: null,
      busy: null,
    });
  });

  it('the gatherer samples /proc as the navigation starts and after the load, the browser’s tree too', async () => {
    const files = { '/proc/loadavg': ['0.40 0.3 0.2 1/2 3'], '/proc/stat': [stat(100, 300), stat(120, 360)] };
    const tables = [{ 7: { ppid: 1, cpuTicks: 100 } }, { 7: { ppid: 1, cpuTicks: 105 }, 8: { ppid: 7, cpuTicks: 5 } }];
    const g = machine({ read: (f) => files[f].shift(), processes: () => tables.shift() });
    const page = { browser: () => ({ process: () => ({ pid: 7 }) }) };
    assert.equal(g.key, 'machine');
    await g.start({ page });
    assert.deepEqual(files['/proc/stat'].length, 1, 'one sample at the start');
    assert.deepEqual(await g.stop({ page }), {
      load_1m: 0.4,
      cpu_busy_pct: 25,
      browser_cpu_pct: 12.5,
      cores: 2,
      busy: false,
    });
    // on this machine, for real: this process as the browser
    const real = machine();
    const self = { browser: () => ({ process: () => ({ pid: process.pid }) }) };
    await real.start({ page: self });
    const end = Date.now() + 200;
    while (Date.now() < end); // CPU of "the browser"
    const m = await real.stop({ page: self });
    assert.ok(m.cpu_busy_pct > 0 && m.cpu_busy_pct <= 100, JSON.stringify(m));
    assert.ok(m.browser_cpu_pct > 0 && m.browser_cpu_pct <= m.cpu_busy_pct, JSON.stringify(m));
    assert.equal(typeof m.busy, 'boolean');
  });
});
