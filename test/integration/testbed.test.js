// Builds real testbeds (namespaces, veth, tun, linkem) with short delays and
// checks what they do: delays, rates, losses measured; TCP, UDP and ICMP
// forwarded; TCP settings applied; nothing left behind.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createTestbed, listTestbeds, cleanup, listNamespaces, STATE_DIR } from '../../harness/testbed/testbed.js';
import { loadProfile } from '../../harness/testbed/profiles.js';
import { run } from '../../harness/core/sys.js';
import { wilsonInterval } from '../../harness/core/stats.js';
import { ADDRESSES } from '../../harness/testbed/addressing.js';
import { HOST_SETTINGS_FILE } from '../../harness/testbed/state.js';
import {
  satbench,
  unprivilegedSatbench,
  spawnSatbench,
  exited,
  watchSatbench,
  leftBehind,
  writeProfile,
  namespacesOfTestbed,
  alive,
  until,
} from './helpers.js';

// 10 ms one way over the satellite, 5 ms over the internet: 30 ms RTT.
const SHORT = {
  description: 'integration test: short delays',
  satellite: { forward: { delay: '10ms', rate: '20mbit' }, return: { delay: '10ms', rate: '10mbit' } },
  internet: { forward: { delay: '5ms' }, return: { delay: '5ms' } },
};

// What a busy machine's scheduling may add to one burst through linkem
// (4.25 ms seen on 2 cores); a grant would add 60, and the ideal link's
// serialization is already taken out.
const BURST_NOISE_MS = 10;

// SHORT with the satellite access model on the return link: a 5 ms
// superframe, demand assignment with a 1 Mbit/s CRA, the link rate granted
// 60 ms after a request, released after 50 ms of silence.
const SHORT_ACCESS = {
  description: 'integration test: short delays, return access with demand assignment',
  satellite: {
    forward: SHORT.satellite.forward,
    return: {
      ...SHORT.satellite.return,
      access: { frame: '5ms', dama: { cra: '1mbit', request_grant: '60ms', idle_release: '50ms' } },
    },
  },
  internet: SHORT.internet,
};

// `testbed probe --json` of a profile over linkem, with `args`.
async function probeJson(profile, ...args) {
  const r = await satbench([
    'testbed',
    'probe',
    '--profile',
    writeProfile(profile),
    ...args,
    '--link',
    'linkem',
    '--json',
  ]);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout);
}

// The quantiles of a measured distribution are in order.
function assertSpread(d, what) {
  const q = [d.min, d.p10, d.median, d.p90, d.p99, d.max];
  assert.ok(
    q.every((x, i) => typeof x === 'number' && (i === 0 || q[i - 1] <= x)),
    `${what}: ${JSON.stringify(d)}`,
  );
}

describe('testbed (integration, real namespaces)', function () {
  it('probe measures the configured delays and rates', async () => {
    const p = await probeJson(SHORT);
    assert.equal(p.link, 'linkem');
    assert.equal(p.configured.rtt_ms, 30);
    assert.ok(p.measured.rtt_ms.n >= 20);
    assert.ok(Math.abs(p.measured.rtt_ms.median - 30) < 1, `RTT median ${p.measured.rtt_ms.median}`);
    assert.ok(
      Math.abs(p.measured.one_way_ms.forward.median - 15) < 0.5,
      `forward ${p.measured.one_way_ms.forward.median}`,
    );
    assert.ok(
      Math.abs(p.measured.one_way_ms.return.median - 15) < 0.5,
      `return ${p.measured.one_way_ms.return.median}`,
    );
    assert.ok(Math.abs(p.measured.forward_mbps / 20 - 1) < 0.05, `forward ${p.measured.forward_mbps} Mbit/s`);
    assert.ok(Math.abs(p.measured.return_mbps / 10 - 1) < 0.05, `return ${p.measured.return_mbps} Mbit/s`);
    assert.equal(p.measured.loss_pct, 0);
    assert.ok(p.link_stats.sat.forward.packets_out > 0, 'linkem counted the satellite link');
    for (const dir of ['forward', 'return']) assertSpread(p.measured.one_way_ms[dir], `one-way ${dir}`);
    // A TCP handshake is one round trip.
    const c = p.measured.connect_ms;
    assert.equal(p.configured.connect_ms, 30);
    assert.equal(c.connected, c.sent);
    assertSpread(c, 'connect');
    assert.ok(Math.abs(c.median - 30) < 2, `connect median ${c.median}`);
    // No access model: a burst after idle arrives as over an ideal link.
    assert.equal(p.configured.access_adds_ms, null);
    for (const dir of ['forward', 'return']) {
      const b = p.measured.burst[dir];
      assert.equal(b.received, b.sent, `burst ${dir}: ${JSON.stringify(b)}`);
      assert.ok(Math.abs(b.added_ms) < BURST_NOISE_MS, `burst ${dir} added ${b.added_ms} ms`);
    }
  });

  it('probe --duration finds a slot process: its period, and the loss and spike at its boundaries', async () => {
    // starlink's process shortened: a 2 s slot, a fixed phase, a loss
    // window long enough to show in a 12 s probe (about 6 boundaries).
    const slots = {
      period: '2s',
      phase: '0.5s',
      delay_min: '5ms',
      delay_max: '15ms',
      spike: '15ms',
      spike_for: '300ms',
      loss: 0.5,
      loss_for: '150ms',
    };
    const p = await probeJson(
      {
        description: 'integration test: a short slot process',
        satellite: { forward: { slots, jitter: '1ms' }, return: { slots, jitter: '1ms' } },
        internet: SHORT.internet,
      },
      '--duration',
      '12',
    );
    const s = p.measured.rtt_series;
    assert.deepEqual(p.configured.slots, {
      period_s: 2,
      slot_rtt_ms: [20, 40],
      spike_ms: 30,
      boundary_loss_pct: 22.75,
      peak_loss_pct: 75,
      window_ms: 500,
    });
    assert.ok(Math.abs(s.period_s - 2) <= 0.06, JSON.stringify(s));
    assert.ok(s.boundary_loss_pct > 8 && s.boundary_loss_pct < 40, JSON.stringify(s));
    assert.ok(s.other_loss_pct < 2, JSON.stringify(s));
    assert.ok(Math.abs(s.spike_ms - 30) < 10, JSON.stringify(s));
    assert.equal(p.link_stats.sat.slot_phase_s, 0.5, JSON.stringify(p.link_stats));
  });

  it('probe shows what the access model adds: frame waits, and the grant a burst after idle waits for', async () => {
    const p = await probeJson(SHORT_ACCESS);
    const adds = p.configured.access_adds_ms;
    // The grant comes 60 ms after the request; the CRA carries 7 of the 15
    // datagrams meanwhile, the rest follow at 10 Mbit/s: about 60 ms more
    // than an ideal link, plus up to a 5 ms superframe's wait.
    assert.deepEqual(adds.burst.return, { min: 60.48, max: 65.48 });
    assert.equal(adds.burst.forward, null);
    const ret = p.measured.burst.return;
    assert.equal(p.configured.burst.return.packets, 15);
    assert.equal(p.configured.burst.return.idle_ms, 300, 'longer than idle_release');
    assert.equal(ret.received, ret.sent, JSON.stringify(ret));
    assert.ok(ret.added_ms >= 58 && ret.added_ms <= 70, `burst return added ${ret.added_ms} ms`);
    const fwd = p.measured.burst.forward;
    assert.ok(Math.abs(fwd.added_ms) < BURST_NOISE_MS, `burst forward added ${fwd.added_ms} ms: no access model there`);
    // The handshake and the return one-way delay wait for the superframe.
    assert.deepEqual(adds.connect, { min: 0, max: 5 });
    const c = p.measured.connect_ms;
    assert.ok(c.median >= 29.5 && c.median < 37, `connect median ${c.median}`);
    const owd = p.measured.one_way_ms.return;
    assert.ok(owd.median >= 14.9 && owd.median < 21, `return one-way median ${owd.median}`);
  });

  it('--loss drops packets on the satellite link at the configured rate', async () => {
    const p = await probeJson(SHORT, '--loss', '10');
    assert.equal(p.configured.loss_pct, 10);
    const n = p.measured.loss_samples.forward;
    const lost = Math.round((p.measured.loss_pct / 100) * n);
    const [lo, hi] = wilsonInterval(lost, n, 3.29); // 99.9 %: a correct emulator fails this 1 time in 1000
    assert.ok(lo <= 0.1 && 0.1 <= hi, `measured ${lost}/${n}, interval [${lo}, ${hi}] excludes 10 %`);
    assert.ok(p.link_stats.sat.forward.drops.loss > 0);
  });

  it('--loss with frame_loss drops whole link-layer frames, several packets each', async () => {
    // 6000-byte frames on the forward link: the probe's rate stream fills
    // them back to back, so a lost frame takes about four of its datagrams.
    const framed = {
      ...SHORT,
      satellite: {
        ...SHORT.satellite,
        forward: { ...SHORT.satellite.forward, access: { frame_loss: { bytes: 6000 } } },
      },
    };
    const p = await probeJson(framed, '--loss', '10');
    assert.deepEqual(p.configured.loss_unit, { forward: 'frame of 6000 B in 1 datagram', return: 'packet' });
    const fwd = p.link_stats.sat.forward;
    const { frames, frames_lost: lost } = fwd.access;
    const [lo, hi] = wilsonInterval(lost, frames, 3.29);
    assert.ok(lo <= 0.1 && 0.1 <= hi, `${lost} of ${frames} frames lost, interval [${lo}, ${hi}] excludes 10 %`);
    assert.ok(fwd.drops.loss >= 2 * lost, `${fwd.drops.loss} packets lost with ${lost} frames: not whole frames`);
    assert.equal(p.link_stats.sat.return.access, undefined, 'no access model on the return link');
    assert.ok(p.link_stats.sat.return.drops.loss > 0, 'the return link still loses packets, one by one');
  });

  it('loss_on: return keeps --loss off the forward link; hold delays the frames behind a lost one', async () => {
    // As in Kosek et al.'s testbed, whose netem dropped only what entered
    // the gateway. Each one-way probe is a frame of its own (the link idles
    // between them): after a lost one, the next two wait for a third.
    const returnOnly = {
      ...SHORT,
      satellite: {
        loss_on: 'return',
        forward: SHORT.satellite.forward,
        return: { ...SHORT.satellite.return, access: { frame_loss: { bytes: 6000, hold: 2 } } },
      },
    };
    const p = await probeJson(returnOnly, '--loss', '10');
    assert.equal(p.configured.loss_on, 'return');
    assert.equal(p.configured.loss_pct, 0);
    assert.equal(p.configured.return_loss_pct, 10);
    assert.equal(p.link_stats.sat.forward.drops.loss, 0, 'nothing lost on the forward link');
    assert.equal(p.measured.loss_pct, 0);
    const ret = p.link_stats.sat.return;
    const [lo, hi] = wilsonInterval(ret.access.frames_lost, ret.access.frames, 3.29);
    assert.ok(lo <= 0.1 && 0.1 <= hi, `${ret.access.frames_lost} of ${ret.access.frames} frames lost: not 10 %`);
    // About a fifth of the return probes wait one or two probe intervals
    // (10 ms or more) behind a lost one; the forward ones never wait.
    const back = p.measured.one_way_ms.return;
    assert.ok(back.p90 - back.min >= 5 && back.max - back.min >= 15, `return one-way ${JSON.stringify(back)}`);
    const fwd = p.measured.one_way_ms.forward;
    assert.ok(fwd.p90 - fwd.min < 5, `forward one-way ${JSON.stringify(fwd)}`);
  });

  describe('a running testbed', () => {
    let tb;
    const started = [];
    const pcapDir = fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-pcap-'));

    before(async () => {
      tb = await createTestbed({ profile: loadProfile(writeProfile(SHORT)), link: 'linkem', seed: 3, pcapDir });
    });
    after(async () => {
      for (const child of started) if (alive(child.pid)) child.kill('SIGKILL');
      await tb?.destroy();
    });

    it('forwards ICMP with the configured round trip', async () => {
      const r = await run('ip', [
        'netns',
        'exec',
        tb.ns.client,
        'ping',
        '-c',
        '5',
        '-i',
        '0.2',
        '-q',
        ADDRESSES.server,
      ]);
      const m = /= [\d.]+\/([\d.]+)\//.exec(r.stdout);
      assert.ok(m, r.stdout);
      assert.ok(Math.abs(Number(m[1]) - 30) < 2, `ping avg ${m[1]} ms`);
    });

    it('carries TCP at the link rate (iperf3, server to client)', async () => {
      const server = spawn('ip', ['netns', 'exec', tb.ns.server, 'iperf3', '-s', '-1', '-B', ADDRESSES.server], {
        stdio: 'ignore',
      });
      started.push(server);
      await until(async () =>
        (await run('ip', ['netns', 'exec', tb.ns.server, 'ss', '-ltn'])).stdout.includes(':5201'),
      );
      const r = await run(
        'ip',
        ['netns', 'exec', tb.ns.client, 'iperf3', '-c', ADDRESSES.server, '-R', '-t', '3', '-J'],
        { timeoutMs: 30000 },
      );
      const mbps = JSON.parse(r.stdout).end.sum_received.bits_per_second / 1e6;
      assert.ok(mbps > 15 && mbps <= 20.2, `TCP goodput ${mbps} Mbit/s over a 20 Mbit/s link`);
    });

    it('applies the TCP settings to every namespace', async () => {
      for (const ns of Object.values(tb.ns)) {
        const cc = await run('ip', ['netns', 'exec', ns, 'sysctl', '-n', 'net.ipv4.tcp_congestion_control']);
        assert.equal(cc.stdout.trim(), 'cubic', ns);
      }
      for (const node of ['client', 'server']) {
        const routes = await run('ip', ['-n', tb.ns[node], 'route', 'show', 'default']);
        assert.match(routes.stdout, /initcwnd 10 initrwnd 10/, node);
      }
      for (const node of ['st', 'gw']) {
        const fwd = await run('ip', ['netns', 'exec', tb.ns[node], 'sysctl', '-n', 'net.ipv4.ip_forward']);
        assert.equal(fwd.stdout.trim(), '1', node);
      }
    });

    it('writes a pcap of each side of each emulated link', async () => {
      await tb.linkStats();
      for (const link of ['sat', 'inet']) {
        for (const side of ['a', 'b']) {
          const f = path.join(pcapDir, link, `${side}.pcap`);
          assert.ok(fs.existsSync(f), `${f} missing`);
          const head = fs.readFileSync(f).subarray(0, 4).readUInt32LE(0);
          assert.ok([0xa1b2c3d4, 0xa1b23c4d].includes(head), `${f}: not a pcap`);
        }
      }
    });

    it('coexists with a second testbed', async () => {
      const other = await createTestbed({ profile: loadProfile(writeProfile(SHORT)), link: 'linkem' });
      try {
        assert.notEqual(other.id, tb.id);
        const r = await run('ip', [
          'netns',
          'exec',
          other.ns.client,
          'ping',
          '-c',
          '2',
          '-i',
          '0.2',
          '-q',
          ADDRESSES.server,
        ]);
        assert.match(r.stdout, /2 received/);
      } finally {
        await other.destroy();
      }
      assert.equal((await namespacesOfTestbed(other.id)).length, 0);
      assert.equal((await namespacesOfTestbed(tb.id)).length, 4);
    });

    it('cleanup keeps a testbed whose owner is still running', async () => {
      const r = await cleanup();
      assert.ok(r.kept.some((t) => t.id === tb.id));
      assert.equal((await namespacesOfTestbed(tb.id)).length, 4);
    });
  });

  it('`testbed up` leaves a testbed that `testbed down` removes', async () => {
    const up = await satbench(['testbed', 'up', '--profile', writeProfile(SHORT), '--name', 'itup', '--json']);
    assert.equal(up.code, 0, up.stderr);
    assert.equal((await namespacesOfTestbed('itup')).length, 4);
    const status = JSON.parse((await satbench(['testbed', 'status', '--json'])).stdout);
    const mine = status.find((t) => t.id === 'itup');
    assert.equal(mine.processes.length, 2);
    assert.ok(mine.processes.every((p) => p.alive));
    const down = await satbench(['testbed', 'down', 'itup']);
    assert.equal(down.code, 0, down.stderr);
    assert.equal((await namespacesOfTestbed('itup')).length, 0);
    assert.ok(
      mine.processes.every((p) => !alive(p.pid)),
      'linkem still running',
    );
  });

  it('cleanup removes a testbed whose run was killed', async () => {
    // A run that builds a testbed and is then killed with SIGKILL: no
    // teardown can run, so the namespaces and linkem processes stay behind.
    const script = `
      import { createTestbed } from ${JSON.stringify(new URL('../../harness/testbed/testbed.js', import.meta.url).href)};
      import { loadProfile } from ${JSON.stringify(new URL('../../harness/testbed/profiles.js', import.meta.url).href)};
      await createTestbed({ profile: loadProfile(${JSON.stringify(writeProfile(SHORT))}), link: 'linkem', id: 'itkill' });
      console.log('built');
      setInterval(() => {}, 1000);`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await until(() => new Promise((r) => child.stdout.once('data', (d) => r(String(d).includes('built')))), 20000);
    const before = (await listTestbeds()).find((t) => t.id === 'itkill');
    child.kill('SIGKILL');
    await exited(child);
    assert.equal(before.namespaces.length, 4);
    const r = await satbench(['cleanup', '--json']);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(JSON.parse(r.stdout).removed.includes('itkill'));
    assert.equal((await namespacesOfTestbed('itkill')).length, 0);
    assert.ok(
      before.processes.every((p) => !alive(p.pid)),
      'linkem of the killed run still running',
    );
  });

  it('Ctrl-C during a probe tears down what it built', async () => {
    const slow = {
      ...SHORT,
      satellite: { forward: { delay: '200ms', rate: '20mbit' }, return: { delay: '200ms', rate: '20mbit' } },
    };
    const child = spawnSatbench(['testbed', 'probe', '--profile', writeProfile(slow), '--name', 'itint']);
    let stderr = '';
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    await until(() => stderr.includes('probe'), 30000); // built and measuring
    const pids = (await listTestbeds()).find((t) => t.id === 'itint').processes.map((p) => p.pid);
    assert.equal(pids.length, 2);
    child.kill('SIGINT');
    const { code } = await exited(child);
    assert.equal(code, 130, stderr);
    assert.equal((await namespacesOfTestbed('itint')).length, 0);
    assert.ok(
      pids.every((pid) => !alive(pid)),
      'linkem left running',
    );
    assert.ok(!(await listTestbeds()).some((t) => t.id === 'itint'));
  });
});

describe('testbed lifecycle (integration)', function () {
  it('a signal at any moment of building a testbed leaves nothing behind', async () => {
    // spread over the build: namespaces, sysctls, links, linkem starting, routes
    // (the build takes about half a second here, after node's start)
    // Unless this process changed them itself (an earlier test), a run's
    // host settings must be put back whatever moment the signal came at.
    const settingsOurs = fs.existsSync(HOST_SETTINGS_FILE);
    for (const [i, delayMs] of [250, 300, 350, 400, 450, 500, 550, 650].entries()) {
      const name = `itsig${i}`;
      const child = spawnSatbench(['testbed', 'up', '--profile', writeProfile(SHORT), '--name', name]);
      const watch = watchSatbench(child.pid);
      const end = exited(child);
      let stderr = '';
      let stdout = '';
      child.stderr.on('data', (d) => (stderr += d));
      child.stdout.on('data', (d) => (stdout += d));
      await new Promise((r) => setTimeout(r, delayMs));
      child.kill(i % 2 ? 'SIGTERM' : 'SIGINT');
      const { code, signal } = await end;
      assert.doesNotMatch(stderr, /internal error/);
      // before the build began node ends on the signal itself, and after it `up` is done
      assert.ok([0, 130, 143].includes(code) || signal, `exit ${code} ${signal}`);
      // once `up` has said the testbed is up it is the user's, even if a signal then ends the process
      if (code === 0 || stdout.includes(`testbed ${name} is up`)) await satbench(['testbed', 'down', name]);
      // its own (up's testbed is owned by no process: named here), and the throwaway one that
      // asks whether the kernel has netem
      const made = watch.stop();
      made.ids.add(name);
      const left = await leftBehind(made);
      assert.deepEqual(left, [], `${name} after ${delayMs} ms (exit ${code} ${signal}): ${stderr}`);
      const state = fs.existsSync(path.join(STATE_DIR, name)) && fs.readdirSync(path.join(STATE_DIR, name));
      assert.ok(!state, `${name}: state left after ${delayMs} ms (${state}; exit ${code} ${signal}): ${stderr}`);
      assert.ok(
        settingsOurs || !fs.existsSync(HOST_SETTINGS_FILE),
        `${name}: host settings not put back after ${delayMs} ms: ${stderr}`,
      );
    }
  });

  it('a helper that is a zombie counts as gone in `testbed status`', async () => {
    // the subshell exits once its parent has exec'd sleep, which never reaps it (a subshell that
    // ended before the exec could be reaped by the shell itself)
    const parent = spawn('sh', ['-c', 'sh -c "sleep 0.5; exit 3" & echo $!; exec sleep 30'], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    try {
      const zombie = Number(await new Promise((r) => parent.stdout.once('data', r)));
      await until(() => fs.readFileSync(`/proc/${zombie}/stat`, 'utf8').includes(') Z '));
      const dir = path.join(STATE_DIR, 'itzombie');
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(
        path.join(dir, 'state.json'),
        JSON.stringify({ id: 'itzombie', owner_pid: null, processes: [{ role: 'linkem-sat', pid: zombie }] }),
      );
      const r = await satbench(['testbed', 'status', '--json']);
      assert.equal(r.code, 0, r.stderr);
      const mine = JSON.parse(r.stdout).find((t) => t.id === 'itzombie');
      assert.deepEqual(mine.processes, [{ role: 'linkem-sat', pid: zombie, alive: false }]);
      assert.match((await satbench(['testbed', 'status'])).stdout, new RegExp(`linkem-sat:${zombie}\\(gone\\)`));
    } finally {
      parent.kill('SIGKILL');
      await satbench(['testbed', 'down', 'itzombie']);
    }
  });

  it('a stray entry in the state folder breaks neither `testbed status` nor `cleanup`, which removes it', async () => {
    const stray = ['Stray Folder', '..hidden', 'UPPER'].map((n) => path.join(STATE_DIR, n));
    for (const d of stray) fs.mkdirSync(d, { recursive: true });
    fs.writeFileSync(path.join(STATE_DIR, 'not-a-dir.txt'), 'x');
    stray.push(path.join(STATE_DIR, 'not-a-dir.txt'));
    const status = await satbench(['testbed', 'status', '--json']);
    assert.equal(status.code, 0, status.stderr);
    assert.ok(Array.isArray(JSON.parse(status.stdout)));
    assert.match(status.stderr, /Stray Folder is no testbed's \(a stray entry\); `satbench cleanup` removes it/);
    const c = await satbench(['cleanup', '--json']);
    assert.equal(c.code, 0, c.stderr);
    for (const d of stray) {
      assert.ok(JSON.parse(c.stdout).stray.includes(path.basename(d)), d);
      assert.ok(!fs.existsSync(d), `${d} left`);
    }
  });

  it('puts back the congestion control it allowed on the host when it ends, and says so meanwhile', async () => {
    const file = '/proc/sys/net/ipv4/tcp_allowed_congestion_control';
    const words = (f) => fs.readFileSync(f, 'utf8').trim().split(/\s+/);
    const hasBbr = () => words('/proc/sys/net/ipv4/tcp_available_congestion_control').includes('bbr');
    if (!hasBbr()) {
      const loaded = await run('modprobe', ['tcp_bbr']).catch((e) => e);
      assert.ok(
        hasBbr(),
        `the kernel has no bbr and \`modprobe tcp_bbr\` did not add it (${loaded.message ?? 'it ran'})`,
      );
    }
    const original = words(file);
    const without = original.filter((c) => c !== 'bbr').join(' ');
    fs.writeFileSync(file, without);
    try {
      // SIGKILLed while it has bbr allowed: nothing can put it back but cleanup
      const child = spawnSatbench([
        'testbed',
        'probe',
        '--profile',
        writeProfile(SHORT),
        '--cc',
        'bbr',
        '--name',
        'ithost',
      ]);
      const end = exited(child);
      await until(() => words(file).includes('bbr'), 20000);
      child.kill('SIGKILL');
      await end;
      const doctor = JSON.parse((await satbench(['doctor', '--json'])).stdout).find((c) => c.name === 'host settings');
      assert.equal(doctor.ok, false);
      assert.match(doctor.detail, new RegExp(`satbench added bbr \\(was: ${without}\\)`));
      const c = await satbench(['cleanup', '--json']);
      assert.deepEqual(JSON.parse(c.stdout).host_settings, { 'net.ipv4.tcp_allowed_congestion_control': without });
      assert.equal(words(file).join(' '), without);
      // a command that ends on its own puts it back itself
      const up = await satbench(['testbed', 'up', '--profile', writeProfile(SHORT), '--cc', 'bbr', '--name', 'ithost']);
      assert.equal(up.code, 0, up.stderr);
      assert.match(up.stderr, /adding bbr to net\.ipv4\.tcp_allowed_congestion_control \(was: /);
      assert.equal(words(file).join(' '), without);
      assert.ok(!fs.existsSync(HOST_SETTINGS_FILE));
    } finally {
      await satbench(['testbed', 'down', 'ithost']);
      fs.writeFileSync(file, original.join(' '));
    }
  });

  for (const name of ['a b', '../x', 'Capital', 'abcdefghijklm']) {
    it(`testbed up --name ${JSON.stringify(name)}: one line, exit 2, nothing created`, async () => {
      const r = await satbench(['testbed', 'up', '--profile', writeProfile(SHORT), '--name', name]);
      assert.equal(r.code, 2, r.stderr);
      assert.equal(
        r.stderr,
        `satbench: --name: testbed id ${JSON.stringify(name)}: expected 1 to 12 characters, each a-z or 0-9\n`,
      );
      assert.ok(!(await listNamespaces()).some((n) => n.includes(name)));
      assert.ok(!fs.existsSync(path.join(STATE_DIR, name)));
    });
  }
});

describe('satbench command (integration)', () => {
  it('says in one line that it needs root, and how to run it', async () => {
    const r = await unprivilegedSatbench(['testbed', 'up', '--profile', 'geo']);
    assert.equal(r.code, 2);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, /needs root \(or CAP_NET_ADMIN\): run it as root, e\.g\. `sudo npx satbench testbed up/);
  });

  it('rejects an unknown profile and bad options with exit 2 and one line', async () => {
    for (const [args, pattern] of [
      [['testbed', 'probe', '--profile', 'mars'], /unknown profile "mars"; built-in profiles: geo/],
      [
        ['testbed', 'up', '--profile', 'geo', '--loss', '120'],
        /--loss: expected a percentage between 0 and 100, got 120/,
      ],
      [['testbed', 'up', '--profile', 'geo', '--link', 'dummynet'], /--link: expected one of auto, linkem, netem/],
      [['testbed', 'up', '--profile', 'geo', '--bogus'], /Unknown option '--bogus'/],
      [['frobnicate'], /unknown command "frobnicate"/],
    ]) {
      const r = await satbench(args);
      assert.equal(r.code, 2, args.join(' '));
      assert.match(r.stderr, pattern);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    }
  });

  it('doctor lists every prerequisite', async () => {
    const r = await satbench(['doctor', '--json']);
    const names = JSON.parse(r.stdout).map((c) => c.name);
    for (const n of [
      'privileges',
      'ip netns',
      '/dev/net/tun',
      'nftables',
      'chromium',
      'binary linkem',
      'kernel netem',
      'node',
    ]) {
      assert.ok(names.includes(n), `doctor does not check ${n}`);
    }
  });
});
