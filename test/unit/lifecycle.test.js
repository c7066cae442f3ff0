// A run's lifecycle without a testbed: telling a dead helper (a zombie too)
// from a live one and saying why it died, waiting for a helper's "ready",
// exit statuses of signals, the reason of a failed run, the host setting
// put back, Chromium profile folders and stray state entries told apart.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  parseStat,
  cpuMs,
  runningState,
  alive,
  fromWaitStatus,
  exitWords,
  tailText,
  helperDeath,
  spawnHelper,
  watchHelpers,
} from '../../harness/testbed/processes.js';
import {
  exitCodeOf,
  Interrupted,
  onTeardown,
  endOnItsOwn,
  installSignalHandlers,
} from '../../harness/testbed/teardown.js';
import { runCampaign } from '../../harness/campaign/loop.js';
import { recordAddition, restoredList, ALLOWED_CC } from '../../harness/testbed/host-settings.js';
import { splitEntries } from '../../harness/testbed/state.js';
import { failureReason, logsToKeep, guardedRun } from '../../harness/campaign/run-guard.js';
import {
  profileOwner,
  removeStaleProfiles,
  PROFILE_PREFIX,
  withChromium,
  baseChromiumArgs,
  chromePath,
} from '../../harness/browser/chromium.js';
import { hostSettingsCheck } from '../../harness/cli/doctor.js';

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-life-'));
const wait = (ms) => new Promise((r) => setTimeout(r, ms));
// A /proc/PID/stat line: comm may hold spaces and parentheses; 30 and 12
// ticks of user and system time.
const stat = (state, exitCode = 0) =>
  `4242 (linkem (x) y) ${state} 1 4242 4242 0 -1 4194560 0 0 0 0 30 12 ${Array(6).fill('0').join(' ')} 777 ${Array(29).fill('0').join(' ')} ${exitCode}`;

describe('run lifecycle', () => {
  it('reads /proc/PID/stat: state, parent, CPU time, start time and a zombie’s exit status', () => {
    assert.deepEqual(parseStat(stat('S')), { state: 'S', ppid: 1, cpuTicks: 42, startTicks: 777, exitStatus: 0 });
    // spinning moves this process's CPU time, counted in ms (ticks are 10 ms)
    const t0 = cpuMs(process.pid);
    const end = Date.now() + 2000;
    while (cpuMs(process.pid) < t0 + 50 && Date.now() < end);
    assert.ok(cpuMs(process.pid) >= t0 + 50, `${t0} -> ${cpuMs(process.pid)}`);
    assert.equal(cpuMs(2 ** 22 + 1), null);
    assert.equal(parseStat(stat('Z', 9)).exitStatus, 9);
    assert.equal(parseStat('garbage'), null);
    for (const s of ['R', 'S', 'D', 'T']) assert.equal(runningState(s), true, s);
    for (const s of ['Z', 'X', null, undefined]) assert.equal(runningState(s), false, String(s));
    assert.equal(alive(process.pid), true);
    assert.equal(alive(undefined), false);
  });

  it("keeps every log of a failed run's testbed folder, and helper logs kept elsewhere, each once", () => {
    const files = ['sat.linkem.log', 'quic-pep/quic-pep-st.log', 'quic-pep/st-tls/cert.pem', 'pcap/sat.pcap'];
    const processes = [
      { role: 'linkem-sat', log: '/tb/sat.linkem.log' },
      { role: 'origin', log: '/tmp/satbench-h2o-x/error.log' },
      { role: 'netns' },
    ];
    assert.deepEqual(logsToKeep('/tb', files, processes), [
      ['/tb/sat.linkem.log', 'sat.linkem.log'],
      ['/tb/quic-pep/quic-pep-st.log', 'quic-pep_quic-pep-st.log'],
      ['/tmp/satbench-h2o-x/error.log', 'origin-error.log'],
    ]);
  });

  it('words how a helper ended, from node or from waitpid’s status', () => {
    assert.deepEqual(fromWaitStatus(9), { code: null, signal: 'SIGKILL' });
    assert.deepEqual(fromWaitStatus(3 << 8), { code: 3, signal: null });
    assert.equal(exitWords({ code: null, signal: 'SIGKILL' }), 'was killed by SIGKILL');
    assert.equal(exitWords({ code: 1, signal: null }), 'exited with status 1');
    assert.equal(exitWords(null), 'is gone (exit status unknown)');
    assert.equal(tailText('a\n\nb\nc\nd\n'), 'b | c | d');
    assert.equal(tailText('x'.repeat(400), 3, 10), `…${'x'.repeat(10)}`);
  });

  it('counts a zombie as dead, with the status it exited with', async () => {
    // the child exits 3 and its parent never waits for it (a shell may reap
    // a child that ends before it execs, so perl, essential on Debian)
    const parent = spawn('perl', ['-e', '$| = 1; my $p = fork; exit 3 unless $p; print "$p\n"; sleep 5'], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    try {
      const pid = Number(await new Promise((r) => parent.stdout.once('data', r)));
      let why = null;
      for (let i = 0; i < 100 && !why; i++, await wait(20)) why = helperDeath({ pid, role: 'x', what: 'the zombie' });
      assert.equal(why, `the zombie (pid ${pid}) exited with status 3`);
      assert.equal(alive(pid), false);
      assert.equal(helperDeath({ pid: parent.pid, role: 'sleep' }), null);
    } finally {
      parent.kill('SIGKILL');
    }
  });

  it('waits for a helper’s ready, and names its exit status and log when it dies first', async () => {
    const dir = tmp();
    const log = path.join(dir, 'h.log');
    let spawned;
    const child = await spawnHelper('sh', ['-c', 'echo starting >&2; echo ready; exec sleep 5'], {
      logPath: log,
      what: 'the test helper',
      onSpawn: (c) => (spawned = c.pid),
    });
    assert.equal(child.pid, spawned);
    assert.equal(alive(child.pid), true);
    const deaths = [];
    const stop = watchHelpers(
      { processes: [{ pid: child.pid, what: 'the test helper', log }] },
      (w) => deaths.push(w),
      {
        intervalMs: 20,
      },
    );
    process.kill(child.pid, 'SIGKILL');
    for (let i = 0; i < 100 && !deaths.length; i++) await wait(20);
    stop();
    assert.deepEqual(deaths, [`the test helper (pid ${child.pid}) was killed by SIGKILL; log: starting`]);

    await assert.rejects(
      spawnHelper('sh', ['-c', 'echo "bad flag --x" >&2; exit 2'], {
        logPath: path.join(dir, 'b.log'),
        what: 'linkem',
      }),
      { message: 'linkem exited with status 2 before it was ready; log: bad flag --x' },
    );
  });

  it('stops waiting for ready when the run is aborted, leaving the helper to the teardown', async () => {
    const ac = new AbortController();
    let pid;
    const p = spawnHelper('sleep', ['5'], {
      logPath: path.join(tmp(), 's.log'),
      what: 'slow',
      signal: ac.signal,
      onSpawn: (c) => (pid = c.pid),
    });
    ac.abort(new Interrupted('SIGINT'));
    await assert.rejects(p, { message: 'interrupted by SIGINT' });
    assert.equal(alive(pid), true);
    process.kill(pid, 'SIGKILL');
  });

  it('installs its signal handlers only for a command, never by a module being imported or called', async () => {
    const count = () => ['SIGINT', 'SIGTERM', 'SIGHUP'].map((s) => process.listenerCount(s));
    const before = count();
    const unregister = onTeardown(async () => {});
    endOnItsOwn();
    await runCampaign({ kind: 'pageload', items: [], resultsFile: '/nonexistent', runOne: () => null });
    unregister();
    assert.deepEqual(count(), before, 'a signal to this process would run satbench’s teardown');
    const uninstall = installSignalHandlers();
    assert.deepEqual(
      count(),
      before.map((n) => n + 1),
    );
    uninstall();
    assert.deepEqual(count(), before);
  });

  it('gives the exit status of an interrupted command and the reason of a failed run', () => {
    assert.equal(exitCodeOf('SIGINT'), 130);
    assert.equal(exitCodeOf('SIGTERM'), 143);
    assert.equal(exitCodeOf('SIGHUP'), 129);
    const ac = new AbortController();
    assert.equal(
      failureReason(new Error('`ip netns add x` failed: busy\nmore'), ac.signal),
      '`ip netns add x` failed: busy',
    );
    ac.abort(new Error('linkem for the sat link (pid 7) was killed by SIGKILL'));
    assert.equal(
      failureReason(new Error('Target closed'), ac.signal),
      'linkem for the sat link (pid 7) was killed by SIGKILL',
    );
    const intr = new AbortController();
    intr.abort(new Interrupted('SIGTERM'));
    assert.equal(failureReason(new Error('Target closed'), intr.signal), 'interrupted by SIGTERM');
  });

  it('puts back only what satbench added to the allowed congestion controls', () => {
    const first = recordAddition(null, ['reno', 'cubic'], 'bbr');
    assert.deepEqual(first.added, ['bbr']);
    assert.equal(first.was, 'reno cubic');
    const second = recordAddition(first, ['reno', 'cubic', 'bbr'], 'bbr');
    assert.deepEqual(second, first);
    assert.deepEqual(restoredList(['reno', 'cubic', 'bbr', 'vegas'], ['bbr']), ['reno', 'cubic', 'vegas']);
    const check = hostSettingsCheck({ [ALLOWED_CC]: first });
    assert.equal(check.ok, false);
    assert.equal(check.required, false);
    assert.match(check.detail, /satbench added bbr \(was: reno cubic\) because testbed namespaces may only default/);
    assert.match(check.fix, /satbench cleanup/);
    assert.equal(hostSettingsCheck(null).ok, true);
  });

  it('tells testbed ids from stray entries of the state folder', () => {
    assert.deepEqual(splitEntries(['ab12', 'a b', 'UP', 'abcdefghijklm', 'x']), {
      ids: ['ab12', 'x'],
      stray: ['UP', 'a b', 'abcdefghijklm'],
    });
  });

  it('removes the Chromium profiles of satbench processes that are gone, not those in use', () => {
    assert.equal(profileOwner(`${PROFILE_PREFIX}123-AbC`), 123);
    assert.equal(profileOwner(`${PROFILE_PREFIX}AbC`), null);
    const dir = tmp();
    const mine = path.join(dir, `${PROFILE_PREFIX}${process.pid}-aaaaaa`);
    // a PID above pid_max's default belongs to no process
    const gone = path.join(dir, `${PROFILE_PREFIX}99999999-bbbbbb`);
    const old = path.join(dir, `${PROFILE_PREFIX}cccccc`);
    for (const d of [mine, gone, old]) fs.mkdirSync(path.join(d, 'Default'), { recursive: true });
    assert.deepEqual(removeStaleProfiles({ dir }).sort(), [gone, old].sort());
    assert.ok(fs.existsSync(mine));
    assert.deepEqual(removeStaleProfiles({ dir, all: true }), [mine]);
    assert.deepEqual(fs.readdirSync(dir), []);
  });
});

// What a run waits on cannot hold it: a step or browser call that ignores
// the abort, a run past its deadline, a teardown that never ends.
describe('a run always ends', () => {
  // a testbed that is only its list of helpers; `destroy` as given
  const fakeTestbed = (processes, destroy = async () => {}) => ({ id: 'fake', state: { processes }, destroy });
  const failed = (error) => ({ ok: false, error });
  const never = () => new Promise(() => {});
  const deadPid = async () => {
    const child = spawn('true');
    await new Promise((r) => child.once('exit', r));
    return child.pid;
  };

  it('a helper that dies ends a run whose step never settles, naming it', async () => {
    const linkem = { pid: await deadPid(), role: 'linkem-sat', what: 'linkem for the sat link' };
    const t0 = Date.now();
    const rec = await guardedRun({
      testbed: {},
      create: async () => fakeTestbed([linkem]),
      steps: never,
      failed,
      deadlineMs: 60000,
      watchMs: 20,
    });
    assert.equal(rec.ok, false);
    assert.match(rec.error, new RegExp(`^linkem for the sat link \\(pid ${linkem.pid}\\) is gone`));
    assert.ok(Date.now() - t0 < 1000, `ended ${Date.now() - t0} ms after the helper died`);
  });

  it('a run past its deadline ends, and a teardown that never ends is not waited for past its bound', async () => {
    const t0 = Date.now();
    const rec = await guardedRun({
      testbed: {},
      create: async () => fakeTestbed([], never),
      steps: never,
      failed,
      deadlineMs: 200,
      teardownMs: 300,
    });
    assert.deepEqual(rec, { ok: false, error: 'the run did not end within 0.2 s' });
    assert.ok(Date.now() - t0 < 200 + 300 + 400, `ended after ${Date.now() - t0} ms`);
  });

  it('an abort ends a browser call at once, whatever it waits on, and Chromium goes', async function () {
    if (!fs.existsSync(chromePath())) this.skip();
    this.timeout(40000);
    const stop = new AbortController();
    let pid;
    let killedAt;
    const call = withChromium({ timeoutMs: 60000, args: baseChromiumArgs, signal: stop.signal }, (browser) => {
      pid = browser.process().pid;
      killedAt = Date.now();
      stop.abort(new Error('linkem died'));
      return never();
    });
    await assert.rejects(call, /linkem died/);
    assert.ok(Date.now() - killedAt < 3000, `ended ${Date.now() - killedAt} ms after the abort`);
    assert.equal(alive(pid), false);
  });
});
