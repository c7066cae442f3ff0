// bench --cpu-slowdown N and --device NAME: parsed and checked once,
// recorded in the plan (a resume refuses another value), applied to the
// page before its navigation and given to Lighthouse as its own settings.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFile } from 'node:child_process';
import {
  screenEmulationMetrics,
  userAgents as lighthouseUserAgents,
} from '../../node_modules/lighthouse/core/config/constants.js';
import { DEVICES } from '../../harness/browser/devices.js';
import {
  cpuSlowdown,
  deviceNamed,
  checkEmulation,
  emulate,
  emulationRecord,
  emulationSettings,
  userAgentOf,
} from '../../harness/browser/emulation.js';
import { baseChromiumArgs } from '../../harness/browser/chromium.js';
import { DEFAULTS } from '../../harness/core/defaults.js';
import { lighthouseFlags } from '../../harness/pageload/lighthouse.js';
import { benchInput } from '../../harness/cli/bench.js';
import { checkBench } from '../../harness/cli/bench-plan.js';
import { contradictions } from '../../harness/campaign/manifest.js';
import { CLI } from '../integration/helpers.js';

const BENCH = { profiles: ['geo'], losses: [0], protocols: ['h1'], sites: ['kepler'], runs: 1 };
const VALUES = { preset: 'quick', seed: '1', link: 'auto', timeout: '120', origin: 'rust' };

function satbench(args) {
  return new Promise((resolve) =>
    execFile(process.execPath, [CLI, ...args], { timeout: 30000 }, (err, stdout, stderr) =>
      resolve({ code: err ? err.code : 0, stdout, stderr }),
    ),
  );
}

describe('CPU and device emulation (bench --cpu-slowdown, --device)', function () {
  this.timeout(30000);

  it('--cpu-slowdown takes a number from 1 to 100, fractions too', () => {
    assert.equal(cpuSlowdown('4'), 4);
    assert.equal(cpuSlowdown('1'), 1);
    assert.equal(cpuSlowdown('2.5'), 2.5);
    assert.equal(cpuSlowdown(6), 6, 'as a saved campaign holds it');
    for (const bad of ['0', '-1', '0.5', 'abc', '4x', '1e1', '0x4', '101', '', 0, -2, NaN, null, '∞'])
      assert.throws(
        () => cpuSlowdown(bad),
        (e) =>
          e.name === 'UsageError' &&
          e.message.startsWith('--cpu-slowdown: expected a number from 1 (no slowdown) to 100') &&
          e.message.endsWith(`got ${JSON.stringify(bad)}`),
        String(bad),
      );
  });

  it('--device names a device of the table; an unknown one is one line naming the known ones', () => {
    assert.equal(deviceNamed('mobile'), DEVICES.mobile);
    for (const bad of ['tablet', 'Mobile', 'toString', '__proto__', ''])
      assert.throws(() => deviceNamed(bad), {
        name: 'UsageError',
        message: `--device: unknown device ${JSON.stringify(bad)}; known devices: desktop, mobile`,
      });
  });

  it('the device table: desktop is Chromium’s window, mobile is Lighthouse’s', () => {
    assert.ok(DEVICES[DEFAULTS.device], 'the default device is in the table');
    const window = baseChromiumArgs('x').find((a) => a.startsWith('--window-size='));
    assert.equal(window, `--window-size=${DEVICES.desktop.width},${DEVICES.desktop.height}`);
    assert.equal(DEVICES.desktop.deviceScaleFactor, 1);
    assert.equal(DEVICES.desktop.userAgent, null, "Chromium's own user agent");
    const m = screenEmulationMetrics.mobile;
    assert.deepEqual(
      [DEVICES.mobile.width, DEVICES.mobile.height, DEVICES.mobile.deviceScaleFactor, DEVICES.mobile.mobile],
      [m.width, m.height, m.deviceScaleFactor, m.mobile],
    );
    assert.equal(DEVICES.mobile.userAgent, lighthouseUserAgents.mobile);
    for (const [name, d] of Object.entries(DEVICES)) {
      // Lighthouse emulates touch exactly on mobile screens: ours must agree for both loads to match
      assert.equal(d.touch, d.mobile, name);
      assert.ok(d.width > 0 && d.height > 0 && d.deviceScaleFactor > 0, name);
      assert.equal(d.clientHints === null, d.userAgent === null, `${name}: client hints go with a user agent`);
    }
  });

  it('a device’s user agent names the running Chromium’s major version, as Lighthouse’s does', () => {
    assert.equal(userAgentOf(DEVICES.desktop, 'HeadlessChrome/142.0.7444.59'), null);
    const ua = userAgentOf(DEVICES.mobile, 'HeadlessChrome/142.0.7444.59');
    assert.equal(ua.userAgent, lighthouseUserAgents.mobile.replace('Chrome/136.0.0.0', 'Chrome/142.0.0.0'));
    assert.equal(ua.userAgentMetadata.mobile, true);
    assert.equal(ua.userAgentMetadata.platform, 'Android');
    assert.equal(ua.userAgentMetadata.fullVersion, '142.0.0.0');
    assert.deepEqual(
      ua.userAgentMetadata.brands.map((b) => b.version),
      ['142', '142'],
    );
    assert.throws(() => userAgentOf(DEVICES.mobile, 'Chrome'), /cannot read Chromium's version/);
  });

  it('applies viewport, touch, user agent and CPU throttling to the page, only what is asked', async () => {
    const fakePage = () => {
      const calls = [];
      return {
        calls,
        setViewport: async (v) => calls.push(['viewport', v]),
        setUserAgent: async (u) => calls.push(['userAgent', u.userAgent]),
        emulateCPUThrottling: async (f) => calls.push(['cpu', f]),
        browser: () => ({ version: async () => 'HeadlessChrome/142.0.7444.59' }),
      };
    };
    const desktop = fakePage();
    await emulate(desktop, {});
    assert.deepEqual(desktop.calls, [
      ['viewport', { width: 1280, height: 1024, deviceScaleFactor: 1, isMobile: false, hasTouch: false }],
    ]);
    const mobile = fakePage();
    await emulate(mobile, { cpuSlowdown: 4, device: 'mobile' });
    assert.deepEqual(mobile.calls, [
      ['viewport', { width: 412, height: 823, deviceScaleFactor: 1.75, isMobile: true, hasTouch: true }],
      ['userAgent', userAgentOf(DEVICES.mobile, '142.0.7444.59').userAgent],
      ['cpu', 4],
    ]);
    // DevTools refusing fails the load (load.js records its error): no silent unemulated run
    const refusing = { ...fakePage(), emulateCPUThrottling: async () => Promise.reject(new Error('refused')) };
    await assert.rejects(emulate(refusing, { cpuSlowdown: 2 }), /refused/);
  });

  it('Lighthouse loads with the runs’ screen, user agent and CPU slowdown, and no network throttling', () => {
    const def = lighthouseFlags(90000);
    assert.equal(def.formFactor, 'desktop');
    assert.deepEqual(def.screenEmulation, {
      mobile: false,
      width: 1280,
      height: 1024,
      deviceScaleFactor: 1,
      disabled: false,
    });
    assert.equal(def.emulatedUserAgent, false, "Chromium's own, as the runs'");
    assert.equal(def.throttling.cpuSlowdownMultiplier, 1);
    const f = lighthouseFlags(90000, { cpuSlowdown: 4, device: 'mobile' });
    assert.equal(f.formFactor, 'mobile');
    assert.deepEqual(f.screenEmulation, { ...screenEmulationMetrics.mobile });
    assert.equal(f.emulatedUserAgent, DEVICES.mobile.userAgent);
    // 'devtools' applies the CPU multiplier ('provided' would not); 0 latency and throughput throttle nothing
    assert.equal(f.throttlingMethod, 'devtools');
    assert.equal(f.throttling.cpuSlowdownMultiplier, 4);
    for (const k of ['rttMs', 'throughputKbps', 'requestLatencyMs', 'downloadThroughputKbps', 'uploadThroughputKbps'])
      assert.equal(f.throttling[k], 0, k);
  });

  it('the plan carries the emulation (defaults: no slowdown, desktop); the record and summary say it', async () => {
    assert.deepEqual(checkEmulation(), { cpuSlowdown: DEFAULTS.cpuSlowdown, device: DEFAULTS.device });
    assert.deepEqual(benchInput(VALUES).settings.emulation, { cpuSlowdown: 1, device: 'desktop' });
    const typed = benchInput({ ...VALUES, 'cpu-slowdown': '4', device: 'mobile' }).settings.emulation;
    assert.deepEqual(typed, { cpuSlowdown: 4, device: 'mobile' });
    const plan = await checkBench(BENCH, { emulation: typed }, { congestionControls: ['cubic'] });
    assert.deepEqual(plan.settings.emulation, typed);
    const old = await checkBench(BENCH, {}, { congestionControls: ['cubic'] });
    assert.deepEqual(old.settings.emulation, { cpuSlowdown: 1, device: 'desktop' }, 'a campaign saved before');
    // a campaign.json edited by hand is checked as the command line is
    await assert.rejects(checkBench(BENCH, { emulation: { cpuSlowdown: 0 } }, { congestionControls: ['cubic'] }), {
      message: /^--cpu-slowdown: expected a number/,
    });
    await assert.rejects(checkBench(BENCH, { emulation: { device: 'tablet' } }, { congestionControls: ['cubic'] }), {
      message: /^--device: unknown device "tablet"/,
    });
    assert.deepEqual(emulationRecord(typed), { cpu_slowdown: 4, device: 'mobile' });
    assert.deepEqual(emulationSettings(typed), {
      cpu_slowdown: 4,
      device: 'mobile',
      width: 412,
      height: 823,
      device_scale_factor: 1.75,
      mobile: true,
      touch: true,
      user_agent: DEVICES.mobile.userAgent,
    });
  });

  it('bench warns when a site archive was recorded as another device than it emulates', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-device-'));
    const archive = (name, device) => {
      const dir = path.join(root, name);
      fs.mkdirSync(path.join(dir, 'bodies'), { recursive: true });
      fs.writeFileSync(path.join(dir, 'bodies/0001'), '<p>a</p>');
      const source = { tool: 'record', from: 'https://a.test/', ...(device ? { device } : {}) };
      const entry = { method: 'GET', url: 'https://a.test/', status: 200, headers: [], body: 'bodies/0001' };
      const doc = { format: 'satbench-archive', version: 1, page: 'https://a.test/', created: '2026-11-24T00:00:00Z' };
      fs.writeFileSync(
        path.join(dir, 'archive.json'),
        JSON.stringify({ ...doc, source, entries: [entry], missing: [] }),
      );
      return dir;
    };
    try {
      const [phone, unsaid] = [archive('phone', 'mobile'), archive('unsaid', null)];
      const plan = (device) =>
        checkBench(
          { ...BENCH, protocols: ['h1s'], sites: [phone, unsaid] },
          { emulation: { device } },
          { congestionControls: ['cubic'] },
        );
      const { warnings } = await plan('desktop');
      assert.equal(warnings.length, 1, 'an archive that does not say its device is not warned about');
      assert.match(warnings[0], new RegExp(`^--site ${phone}: recorded as device mobile, replayed as desktop: `));
      assert.match(warnings[0], /satbench record --device desktop` or run with --device mobile$/);
      assert.deepEqual((await plan('mobile')).warnings, []);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  it('--resume refuses another CPU slowdown or device, not the same one written otherwise', () => {
    const saved = { ...VALUES, 'cpu-slowdown': '1', device: 'desktop' };
    const ran = benchInput(saved);
    const refused = (given) => contradictions({ saved, given, input: benchInput, ran }).map((c) => c.option);
    assert.deepEqual(refused({ 'cpu-slowdown': '4' }), ['cpu-slowdown']);
    assert.deepEqual(refused({ device: 'mobile' }), ['device']);
    assert.deepEqual(refused({ 'cpu-slowdown': '1.0', device: 'desktop' }), []);
    // a campaign saved before these options existed ran with the defaults
    const before = { ...VALUES };
    const ranBefore = { ...benchInput(before), settings: { ...benchInput(before).settings, emulation: undefined } };
    const given = { device: 'mobile' };
    assert.deepEqual(
      contradictions({ saved: before, given, input: benchInput, ran: ranBefore }).map((c) => c.option),
      ['device'],
    );
  });

  it('bad input on the command line: one line, exit 2, before anything runs', async () => {
    for (const [args, message] of [
      [['--cpu-slowdown', '0'], /^satbench: --cpu-slowdown: expected a number from 1 .* got "0"$/],
      [['--cpu-slowdown=-4'], /^satbench: --cpu-slowdown: expected a number from 1 .* got "-4"$/],
      [['--cpu-slowdown', 'fast'], /^satbench: --cpu-slowdown: expected a number from 1 .* got "fast"$/],
      [['--device', 'tablet'], /^satbench: --device: unknown device "tablet"; known devices: desktop, mobile$/],
    ]) {
      const r = await satbench(['bench', '--out', '/nonexistent/never-made', ...args]);
      assert.equal(r.code, 2, r.stderr);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      assert.match(r.stderr.trim(), message);
      assert.equal(r.stdout, '');
    }
  });
});
