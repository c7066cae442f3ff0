import assert from 'node:assert/strict';
import { resolveLinkBackend, netemArgs, linkemConfig, linkemOnly } from '../../harness/testbed/link-backends.js';
import { loadProfile } from '../../harness/testbed/profiles.js';

// linkem's config for one link of a loaded profile.
const configOf = (link, { ret = link.return } = {}) =>
  linkemConfig({
    name: 'sat',
    seed: 7,
    a: { netns: 'st', dev: 'sat0' },
    b: { netns: 'gw', dev: 'sat0' },
    forward: link.forward,
    ret,
    statsPath: '/s.json',
  });

describe('link backends', () => {
  it('auto picks kernel netem when present, else linkem; forcing fails clearly', () => {
    assert.equal(resolveLinkBackend('auto', { kernelNetem: true, tun: true }), 'netem');
    assert.equal(resolveLinkBackend('auto', { kernelNetem: false, tun: true }), 'linkem');
    assert.equal(resolveLinkBackend('linkem', { kernelNetem: true, tun: true }), 'linkem');
    assert.throws(
      () => resolveLinkBackend('netem', { kernelNetem: false, tun: true }),
      /no sch_netem.*use --link linkem/,
    );
    assert.throws(() => resolveLinkBackend('linkem', { kernelNetem: true, tun: false }), /\/dev\/net\/tun is missing/);
    assert.throws(() => resolveLinkBackend('auto', { kernelNetem: false, tun: false }), /no link backend/);
    assert.throws(
      () => resolveLinkBackend('dummynet', { kernelNetem: true, tun: true }),
      /expected one of auto, linkem, netem/,
    );
  });

  it('auto picks linkem for a profile netem cannot emulate, even where the kernel has netem', () => {
    for (const name of ['starlink', 'starlink-motion', 'iridium', 'geo-dvb']) {
      const why = linkemOnly(loadProfile(name));
      assert.match(why, new RegExp(`^${name}'s satellite (forward|return) link has `), name);
      assert.equal(resolveLinkBackend('auto', { kernelNetem: true, tun: true, needsLinkem: why }), 'linkem');
      assert.throws(
        () => resolveLinkBackend('auto', { kernelNetem: true, tun: false, needsLinkem: why }),
        new RegExp(`^UsageError: ${name}'s .*needs linkem, and /dev/net/tun is missing`),
      );
    }
    for (const name of ['geo', 'leo', 'geo-hts', 'geo-jitter']) assert.equal(linkemOnly(loadProfile(name)), null, name);
  });

  it('writes netem arguments from the same profiles', () => {
    const geo = loadProfile('geo').links.satellite.forward;
    assert.deepEqual(netemArgs(geo, 'w'), [
      'delay',
      '250ms',
      'rate',
      '20000kbit',
      'limit',
      String(Math.ceil(1450000 / 1500)),
    ]);
    const jitter = loadProfile('geo-jitter').links.satellite.forward;
    assert.deepEqual(netemArgs(jitter, 'w').slice(0, 5), ['delay', '300ms', '20ms', 'distribution', 'normal']);
    const ge = loadProfile('geo-gilbert').links.satellite.return;
    assert.deepEqual(netemArgs(ge, 'w').slice(2, 8), ['loss', 'gemodel', '1.7%', '93.5%', '100%', '0%']);
    const lossy = loadProfile('geo', { lossPct: 0.01 }).links.satellite.forward;
    assert.deepEqual(netemArgs(lossy, 'w').slice(2, 5), ['loss', 'random', '0.01%']);
    assert.throws(
      () => netemArgs(loadProfile('iridium').links.satellite.forward, 'iridium.yaml: satellite.forward'),
      /iridium\.yaml: satellite\.forward: a delay or rate schedule: kernel netem cannot emulate it; use --link linkem or auto/,
    );
  });

  it("writes linkem's config: forward is gateway to terminal", () => {
    const p = loadProfile('geo');
    const cfg = configOf(p.links.satellite, { ret: { ...p.links.satellite.return, delay_ms: 1 } });
    assert.deepEqual(Object.keys(cfg), ['name', 'seed', 'a', 'b', 'forward', 'return', 'stats_path', 'pcap_dir']);
    assert.equal(cfg.forward.delay_ms, 250);
    assert.equal(cfg.return.delay_ms, 1);
    assert.deepEqual(Object.keys(cfg.forward), [
      'delay_ms',
      'jitter_ms',
      'jitter_distribution',
      'loss',
      'rate_mbit',
      'limit',
      'schedule',
    ]);
  });

  it('passes a slot process to linkem only where the profile has one; netem refuses it', () => {
    const p = loadProfile('starlink');
    const cfg = configOf(p.links.satellite);
    assert.equal(cfg.forward.slots.period_s, 15);
    assert.equal(cfg.return.slots.loss_p, 0.3);
    const internet = configOf(p.links.internet);
    assert.ok(!('slots' in internet.forward) && !('slots' in internet.return));
    assert.ok(!('slots' in configOf(loadProfile('leo').links.satellite).forward));
    assert.throws(() => netemArgs(p.links.satellite.forward, 'w'), /slot process .*: kernel netem cannot emulate it/);
  });

  it('passes an access model to linkem only where the profile has one; netem refuses it', () => {
    const p = loadProfile('geo-dvb');
    const cfg = configOf(p.links.satellite);
    assert.deepEqual(cfg.forward.access, { frame_ms: 10, header_bytes: 10 });
    assert.deepEqual(cfg.return.access.dama, { cra_mbit: 1, request_grant_ms: 540, idle_release_ms: 640 });
    const internet = configOf(p.links.internet);
    assert.ok(!('access' in internet.forward) && !('access' in internet.return));
    assert.throws(() => netemArgs(p.links.satellite.forward, 'w'), /access model .*: kernel netem cannot emulate it/);
  });
});
