// record.machine: the machine's CPU during a load, from /proc, and the
// rule that marks a run measured on a busy machine.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import machine, {
  parseProcStat,
  parseLoadavg,
  cpuBusyPct,
  isBusy,
  machineRecord,
  MIN_IDLE_CORES,
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

  it('the share of CPU time in use between two samples, one decimal; none without a tick between', () => {
    const before = parseProcStat(stat(100, 300));
    assert.equal(cpuBusyPct(before, parseProcStat(stat(130, 370))), 30);
    assert.equal(cpuBusyPct(before, parseProcStat(stat(200, 300))), 100);
    assert.equal(cpuBusyPct(before, parseProcStat(stat(101, 302))), 33.3);
    // iowait is idle: nothing to run
    assert.equal(cpuBusyPct(before, parseProcStat(stat(110, 340, { iowait: 50 }))), 10);
    assert.equal(cpuBusyPct(before, before), null);
    assert.equal(cpuBusyPct(null, before), null);
  });

  it('busy: less than half a core idle on average (2 cores: more than 75 % in use)', () => {
    assert.equal(MIN_IDLE_CORES, 0.5);
    assert.equal(isBusy(75, 2), false);
    assert.equal(isBusy(75.1, 2), true);
    assert.equal(isBusy(100, 2), true);
    assert.equal(isBusy(50, 2), false, 'the browser on one core, the other idle');
    assert.equal(isBusy(87.5, 4), false);
    assert.equal(isBusy(90, 4), true);
    assert.equal(isBusy(40, 1), false);
    assert.equal(isBusy(60, 1), true);
    assert.equal(isBusy(null, 2), null);
    assert.equal(isBusy(90, null), null);
  });

  it('the record: load average at the start, CPU use over the load, cores, busy', () => {
    assert.deepEqual(
      machineRecord({ statBefore: stat(100, 300), statAfter: stat(190, 310), loadavg: '2.50 1 1 1/1 1' }),
      { load_1m: 2.5, cpu_busy_pct: 90, cores: 2, busy: true },
    );
    assert.deepEqual(machineRecord({ statBefore: '', statAfter: '', loadavg: '' }), {
      load_1m: null,
      cpu_busy_pct: null,
      cores: null,
      busy: null,
    });
  });

  it('the gatherer samples /proc as the navigation starts and after the load', async () => {
    const files = { '/proc/loadavg': ['0.40 0.3 0.2 1/2 3'], '/proc/stat': [stat(100, 300), stat(120, 360)] };
    const read = (f) => files[f].shift();
    const g = machine({ read });
    assert.equal(g.key, 'machine');
    await g.start({});
    assert.deepEqual(files['/proc/stat'].length, 1, 'one sample at the start');
    assert.deepEqual(await g.stop({}), { load_1m: 0.4, cpu_busy_pct: 25, cores: 2, busy: false });
    // on this machine, for real
    const real = machine();
    await real.start({});
    const end = Date.now() + 60;
    while (Date.now() < end); // a little CPU so that ticks pass
    const m = await real.stop({});
    assert.ok(m.cpu_busy_pct > 0 && m.cpu_busy_pct <= 100, JSON.stringify(m));
    assert.equal(typeof m.busy, 'boolean');
  });
});
