import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  satelliteAtCapacity,
  listBuiltinProfiles,
  loadProfile,
  parseProfile,
  parseScheduleCsv,
  configuredSummary,
  slotLossPct,
  stationaryLossPct,
  withSatelliteLoss,
} from '../../harness/testbed/profiles.js';
import { profileLine } from '../../harness/cli/profiles.js';
import { UsageError } from '../../harness/core/errors.js';

const FILE = 'p.yaml';
const parse = (
  doc,
  readRelative = () => {
    throw new Error('no files');
  },
) => parseProfile(doc, { file: FILE, name: 'p', readRelative });

function tempProfile(text, ext = '.yaml', extra = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-profile-'));
  for (const [name, body] of Object.entries(extra)) fs.writeFileSync(path.join(dir, name), body);
  const file = path.join(dir, `t${ext}`);
  fs.writeFileSync(file, text);
  return file;
}

function rejects(fn, ...patterns) {
  assert.throws(fn, (e) => {
    assert.ok(e instanceof UsageError, `expected a UsageError, got ${e}`);
    for (const p of patterns) assert.match(e.message, p);
    return true;
  });
}

describe('link profiles', () => {
  it('every built-in profile loads', () => {
    const names = listBuiltinProfiles();
    for (const n of [
      'geo',
      'leo',
      'geo-jitter',
      'geo-gilbert',
      'iridium',
      'quic4sat-small',
      'quic4sat-medium',
      'quic4sat-congested-medium',
      'quic4sat-variable-medium',
      'quic4sat-large',
      'quic4sat-lossy-large',
      'geo-dvb',
      'leo-dvb',
    ]) {
      assert.ok(names.includes(n), `missing built-in profile ${n}`);
    }
    for (const n of names) loadProfile(n);
  });

  it('geo-dvb and leo-dvb are geo and leo with an access model and the loss where the paper had it; no other profile has either', () => {
    for (const [dvb, plain] of [
      ['geo-dvb', 'geo'],
      ['leo-dvb', 'leo'],
    ]) {
      const a = loadProfile(dvb);
      const b = loadProfile(plain);
      const { loss_on: on, loss_unit: unit, ...summary } = configuredSummary(a);
      const { loss_on: plainOn, loss_unit: plainUnit, ...plainSummary } = configuredSummary(b);
      assert.deepEqual(summary, plainSummary);
      assert.equal(on, 'return');
      assert.equal(plainOn, 'both');
      assert.deepEqual(unit, {
        forward: 'packet',
        return: 'frame of 100 B in 1 datagram; after a loss, held until 6 frames wait',
      });
      assert.deepEqual(plainUnit, { forward: 'packet', return: 'packet' });
      // --loss 1 reaches the return link only
      const lossy = loadProfile(dvb, { lossPct: 1 }).links.satellite;
      assert.equal(lossy.forward.loss, null);
      assert.deepEqual(lossy.return.loss, { model: 'random', pct: 1 });
      for (const dir of ['forward', 'return']) {
        const { access, ...rest } = a.links.satellite[dir];
        assert.deepEqual(rest, b.links.satellite[dir]);
        assert.ok(access.frame_ms > 0 && access.header_bytes > 0, `${dvb} ${dir}`);
      }
      assert.deepEqual(a.links.internet, b.links.internet);
      assert.ok(a.links.satellite.return.access.dama.cra_mbit > 0);
      assert.equal(a.links.satellite.forward.access.dama, undefined);
    }
    assert.equal(loadProfile('geo-dvb').links.satellite.return.access.dama.request_grant_ms, 540);
    assert.equal(loadProfile('leo-dvb').links.satellite.return.access.dama.request_grant_ms, 72);
    for (const n of listBuiltinProfiles().filter((n) => !n.endsWith('-dvb'))) {
      const p = loadProfile(n);
      assert.equal(p.loss_on, 'both', n);
      for (const link of ['satellite', 'internet'])
        for (const dir of ['forward', 'return']) assert.ok(!('access' in p.links[link][dir]), `${n} ${link}.${dir}`);
    }
  });

  it('reads a slot process and rejects bad values, naming the file and the key', () => {
    const slots = { period: '15s', boundary_at: '12s', delay_min: '10ms', delay_max: 22, spike: '15ms' };
    const imp = parse({
      satellite: { forward: { slots: { ...slots, spike_for: '300ms', loss: 0.3, loss_for: '100ms' } } },
    }).links.satellite.forward;
    assert.deepEqual(imp.slots, {
      period_s: 15,
      boundary_at_s: 12,
      delay_min_ms: 10,
      delay_max_ms: 22,
      spike_ms: 15,
      spike_s: 0.3,
      loss_p: 0.3,
      loss_s: 0.1,
    });
    const fixed = parse({
      satellite: { forward: { slots: { period: '2s', phase: '0.5s', delay_min: 1, delay_max: 1 } } },
    });
    assert.equal(fixed.links.satellite.forward.slots.phase_s, 0.5);
    assert.ok(!('boundary_at_s' in fixed.links.satellite.forward.slots));
    // no slot process: the key is absent, so the direction is what it was
    assert.ok(!('slots' in parse({ satellite: { forward: { delay: 5 } } }).links.satellite.forward));
    const bad = (extra) => () => parse({ satellite: { return: { slots: { ...slots, ...extra } } } });
    rejects(bad({ period: 0 }), /p\.yaml: satellite\.return\.slots\.period: a duration must be > 0, got 0/);
    rejects(bad({ delay_min: '-1ms' }), /p\.yaml: satellite\.return\.slots\.delay_min: a duration must be >= 0/);
    rejects(
      bad({ loss: 1.5 }),
      /p\.yaml: satellite\.return\.slots\.loss: a probability must be between 0 and 1, got 1\.5/,
    );
    rejects(bad({ loss: -0.1 }), /satellite\.return\.slots\.loss: a probability/);
    rejects(bad({ loss: '30%' }), /satellite\.return\.slots\.loss: expected a probability between 0 and 1/);
    rejects(bad({ delay_max: '5ms' }), /satellite\.return\.slots\.delay_max: must be >= delay_min/);
    rejects(bad({ phase: '1s' }), /satellite\.return\.slots: give phase .* or boundary_at/);
    rejects(bad({ perod: '1s' }), /unknown key "perod" in satellite\.return\.slots/);
    rejects(
      () => parse({ satellite: { return: { slots: { period: '1s' } } } }),
      /satellite\.return\.slots\.delay_min is required/,
    );
  });

  it("reads a slot process's outages and rejects bad values, naming the file and the key", () => {
    const slots = { period: '15s', phase: 0, delay_min: 10, delay_max: 22 };
    const outages = { mean_gap: '30s', min: '200ms', max: '2s' };
    const imp = parse({ satellite: { return: { slots: { ...slots, outages } } } }).links.satellite.return;
    assert.deepEqual(imp.slots.outages, { mean_gap_s: 30, min_s: 0.2, max_s: 2 });
    assert.ok(!('outages' in parse({ satellite: { return: { slots } } }).links.satellite.return.slots));
    const bad = (extra) => () =>
      parse({ satellite: { return: { slots: { ...slots, outages: { ...outages, ...extra } } } } });
    const at = 'p\\.yaml: satellite\\.return\\.slots\\.outages';
    rejects(bad({ mean_gap: 0 }), new RegExp(`${at}\\.mean_gap: a duration must be > 0, got 0`));
    rejects(bad({ min: '-1s' }), new RegExp(`${at}\\.min: a duration must be >= 0, got -1000`));
    rejects(bad({ max: 0, min: 0 }), new RegExp(`${at}\\.max: a duration must be > 0, got 0`));
    rejects(bad({ max: '100ms' }), new RegExp(`${at}\\.max: must be >= min \\(0\\.2 s\\), got 0\\.1 s`));
    rejects(bad({ every: '1s' }), /p\.yaml: unknown key "every" in satellite\.return\.slots\.outages; allowed/);
    rejects(bad({ min: null }), new RegExp(`${at}\\.min is required`));
  });

  it('starlink-motion is starlink with outages from the in-motion figures, the same in both directions', () => {
    const still = loadProfile('starlink');
    const motion = loadProfile('starlink-motion');
    const ref = JSON.parse(fs.readFileSync(new URL('../../reference/starlink-measurements.json', import.meta.url)));
    const m = ref.in_motion.profile;
    for (const dir of ['forward', 'return']) {
      const { outages, ...slots } = motion.links.satellite[dir].slots;
      assert.deepEqual(slots, still.links.satellite[dir].slots, dir);
      assert.deepEqual(outages, { mean_gap_s: m.outage_mean_gap_s.value, min_s: 0.2, max_s: 2 }, dir);
      assert.deepEqual([outages.min_s, outages.max_s], m.outage_length_s.range);
      assert.equal(motion.links.satellite[dir].rate_mbit, m.rates_mbit[dir]);
    }
    assert.deepEqual(motion.links.internet, still.links.internet);
    const c = configuredSummary(motion);
    assert.equal(c.rtt_ms, configuredSummary(still).rtt_ms);
    assert.ok(Math.abs(c.slot_loss_pct.forward.outages - m.time_out_pct.value) < 0.005);
    assert.ok(Math.abs(c.loss_pct - m.expected_loss_pct.value) < 0.005, `${c.loss_pct}`);
  });

  it('geo-hts is the sourced round trip and plan rate of a current GEO service, its PEP left to the variants', () => {
    const p = loadProfile('geo-hts');
    const ref = JSON.parse(fs.readFileSync(new URL('../../reference/geo-hts-measurements.json', import.meta.url)));
    const c = configuredSummary(p);
    assert.equal(c.rtt_ms, ref.profile.rtt_ms.value);
    const { hughesnet, viasat } = ref.figures.median_latency_ms_2025;
    for (const measured of [hughesnet, viasat])
      assert.ok(Math.abs(c.rtt_ms - measured) / measured < 0.01, `${c.rtt_ms} against ${measured}`);
    assert.equal(p.links.satellite.forward.delay_ms, ref.profile.one_way_ms.satellite);
    assert.equal(p.links.internet.forward.delay_ms, ref.profile.one_way_ms.internet);
    assert.equal(c.forward_mbps, ref.profile.rates_mbit.forward);
    assert.ok(ref.figures.plan_mbit_hughesnet.jupiter3_down.includes(c.forward_mbps));
    assert.equal(c.return_mbps, ref.profile.rates_mbit.return);
    assert.equal(c.loss_pct, ref.profile.loss_pct.value);
    assert.match(p.description, /PEP/);
  });

  it("a slot process's loss is in the configured loss: its handover bursts and a moving terminal's outages", () => {
    // starlink: p 0.3 for 0.1 s every 15 s in each direction
    const c = configuredSummary(loadProfile('starlink'));
    // exactly, as the report's profile table prints it (not 0.20000000000000018)
    assert.equal(c.loss_pct, 0.2);
    assert.equal(c.return_loss_pct, 0.2);
    const h = slotLossPct({ period_s: 10, loss_p: 0.5, loss_s: 0.2 });
    assert.ok(Math.abs(h.handovers - 1) < 1e-9 && h.outages === 0, JSON.stringify(h));
    // an outage of 1 s every 9 s + 1 s: 10 % out, and a handover after each
    const o = slotLossPct({
      period_s: 10,
      loss_p: 0.5,
      loss_s: 0.2,
      outages: { mean_gap_s: 9, min_s: 0.5, max_s: 1.5 },
    });
    assert.ok(Math.abs(o.outages - 10) < 1e-9 && Math.abs(o.handovers - 2) < 1e-9, JSON.stringify(o));
    assert.equal(slotLossPct(undefined), null);
    assert.ok(!('slot_loss_pct' in configuredSummary(loadProfile('geo'))));
  });

  it('`satbench profiles` shows the loss of a slot process, by cause', () => {
    const line = (name) => profileLine({ name, configured: configuredSummary(loadProfile(name)) });
    assert.match(line('starlink'), /^starlink +RTT +42 ms {2}100\/15 Mbit\/s {2}loss 0\.2 % \(handovers 0\.2\)$/);
    assert.match(line('starlink-motion'), /loss 3\.823 % \(handovers 0\.296, outages 3\.537\)$/);
    assert.match(line('geo-gilbert'), /^geo-gilbert +RTT +580 ms {2}20\/20 Mbit\/s {2}loss 1\.786 %$/);
  });

  it("starlink is a slot process from the cited figures, its typical RTT the slot range's middle", () => {
    const p = loadProfile('starlink');
    const ref = JSON.parse(fs.readFileSync(new URL('../../reference/starlink-measurements.json', import.meta.url)));
    for (const dir of ['forward', 'return']) {
      const sl = p.links.satellite[dir].slots;
      assert.equal(sl.period_s, ref.figures.slot_period_s.value);
      assert.equal(sl.boundary_at_s, ref.figures.boundary_offsets_in_minute_s.value[0]);
      assert.deepEqual([sl.delay_min_ms, sl.delay_max_ms], ref.profile.satellite_slot_one_way_ms.value);
      assert.equal(sl.spike_ms * 2, ref.figures.handover_spike_rtt_ms.value);
      assert.equal(sl.loss_p, ref.profile.handover_loss_p.value);
    }
    assert.equal(configuredSummary(p).rtt_ms, 2 * 16 + 10);
    assert.equal(p.links.satellite.forward.rate_mbit, ref.profile.rates_mbit.forward);
    assert.equal(p.links.satellite.return.rate_mbit, ref.profile.rates_mbit.return);
  });

  it('reads the access model and rejects bad values, naming the file and the key', () => {
    const imp = parse({
      satellite: {
        return: {
          rate: '20mbit',
          access: {
            frame: '26.5ms',
            header: 4,
            pad: '60B',
            dama: { cra: '256kbit', request_grant: '0.5s', idle_release: 640 },
          },
        },
      },
    }).links.satellite.return;
    assert.deepEqual(imp.access, {
      frame_ms: 26.5,
      header_bytes: 4,
      pad_to_bytes: 60,
      dama: { cra_mbit: 0.256, request_grant_ms: 500, idle_release_ms: 640 },
    });
    assert.deepEqual(parse({ satellite: { forward: { access: {} } } }).links.satellite.forward.access, {});
    const bad =
      (access, rate = '20mbit') =>
      () =>
        parse({ satellite: { return: { rate, access } } });
    rejects(bad({ frames: '10ms' }), /p\.yaml: unknown key "frames" in satellite\.return\.access/, /frame, header/);
    rejects(bad({ frame: 0 }), /p\.yaml: satellite\.return\.access\.frame: a frame duration must be > 0/);
    rejects(bad({ header: 2.5 }), /satellite\.return\.access\.header: expected a whole number of bytes/);
    rejects(bad({ pad: 0 }), /satellite\.return\.access\.pad: expected a whole number of bytes >= 1/);
    rejects(bad({ dama: { cra: '1mbit' } }), /satellite\.return\.access\.dama\.request_grant is required/);
    rejects(
      bad({ dama: { cra: '1mbit', request_grant: 5, idle_release: 5, rbdc: 1 } }),
      /unknown key "rbdc" in satellite\.return\.access\.dama/,
    );
    rejects(
      bad({ dama: { cra: -1, request_grant: 5, idle_release: 5 } }),
      /satellite\.return\.access\.dama\.cra: a rate must be >= 0/,
    );
    rejects(
      bad({ dama: { cra: 1, request_grant: 5, idle_release: 5 } }, null),
      /satellite\.return\.access\.dama: demand assignment needs the direction's rate/,
    );
    rejects(bad({ frame_loss: { datagrams: 2 } }), /satellite\.return\.access\.frame_loss\.bytes is required/);
    rejects(
      bad({ frame_loss: { bytes: 5000, datagrams: 0 } }),
      /satellite\.return\.access\.frame_loss\.datagrams: expected a whole number >= 1, got 0/,
    );
    rejects(
      bad({ frame_loss: { bytes: 5000, datagrams: 2, datagram: 1472 } }),
      /satellite\.return\.access\.frame_loss: give datagrams .* or datagram .*, not both/,
    );
    rejects(
      bad({ frame_loss: { bytes: 5000, datagram: 0 } }),
      /satellite\.return\.access\.frame_loss\.datagram: expected a whole number of bytes >= 1/,
    );
    rejects(
      bad({ frame_loss: { bytes: 5000, hold: 0 } }),
      /satellite\.return\.access\.frame_loss\.hold: expected a whole number of frames >= 1, got 0/,
    );
    rejects(bad({ frame_loss: { bytes: 5000, per: 1 } }), /unknown key "per" in satellite\.return\.access\.frame_loss/);
    rejects(bad({ frame_loss: { bytes: 5000 } }, null), /frame_loss: frames are filled at the direction's rate/);
  });

  it('loss is drawn per packet unless the access model draws it per frame; the summary says which', () => {
    const p = parse({
      satellite: {
        forward: { rate: '20mbit', access: { frame_loss: { bytes: '5000B', datagrams: 4 } } },
        return: { rate: '20mbit', access: { frame_loss: { bytes: 600 } } },
      },
    });
    const unpadded = parse({
      satellite: { forward: { rate: '20mbit', access: { frame_loss: { bytes: 6041, datagram: 1472 } } } },
    });
    assert.deepEqual(unpadded.links.satellite.forward.access.frame_loss, { frame_bytes: 6041, datagram_bytes: 1472 });
    assert.equal(configuredSummary(unpadded).loss_unit.forward, 'frame of 6041 B, unpadded, a datagram per 1472 B');
    const held = parse({
      satellite: { forward: { rate: '20mbit', access: { frame_loss: { bytes: 6041, datagram: 1472, hold: 5 } } } },
    });
    assert.equal(held.links.satellite.forward.access.frame_loss.hold_frames, 5);
    assert.equal(
      configuredSummary(held).loss_unit.forward,
      'frame of 6041 B, unpadded, a datagram per 1472 B; after a loss, held until 6 frames wait',
    );
    assert.deepEqual(p.links.satellite.forward.access.frame_loss, { frame_bytes: 5000, datagrams: 4 });
    assert.deepEqual(p.links.satellite.return.access.frame_loss, { frame_bytes: 600, datagrams: 1 });
    assert.deepEqual(configuredSummary(p).loss_unit, {
      forward: 'frame of 5000 B in 4 datagrams',
      return: 'frame of 600 B in 1 datagram',
    });
    assert.deepEqual(configuredSummary(loadProfile('geo')).loss_unit, { forward: 'packet', return: 'packet' });
  });

  it('scales the satellite rate both ways for a changed path, and refuses a link without one fixed rate', () => {
    const geo = loadProfile('geo');
    const half = satelliteAtCapacity(geo, 0.5);
    assert.deepEqual([half.forward.rate_mbit, half.return.rate_mbit], [10, 10]);
    assert.equal(half.forward.delay_ms, geo.links.satellite.forward.delay_ms);
    assert.equal(geo.links.satellite.forward.rate_mbit, 20, 'the profile itself is unchanged');
    assert.throws(
      () => satelliteAtCapacity(loadProfile('iridium'), 0.5),
      /--revisit-capacity: iridium's satellite forward link has/,
    );
  });

  it("geo and leo configure the paper's round trips and rate", () => {
    const geo = configuredSummary(loadProfile('geo'));
    assert.equal(geo.rtt_ms, 580);
    assert.equal(geo.forward_mbps, 20);
    assert.equal(geo.loss_pct, 0);
    assert.deepEqual(geo.one_way_ms, { forward: 290, return: 290 });
    assert.equal(configuredSummary(loadProfile('leo')).rtt_ms, 112);
  });

  it("the quic4sat profiles follow the draft's table", () => {
    const ref = JSON.parse(fs.readFileSync(new URL('../../reference/quic4sat-scenarios.json', import.meta.url)));
    for (const s of ref.scenarios) {
      const c = configuredSummary(loadProfile(`quic4sat-${s.name}`));
      assert.equal(c.rtt_ms, ref.common.rtt_ms, s.name);
      assert.equal(c.return_mbps, s.up_mbps, s.name);
      assert.ok(Math.abs(c.loss_pct - s.loss_pct) < 1e-9, s.name);
      if (typeof s.down_mbps === 'number') assert.equal(c.forward_mbps, s.down_mbps, s.name);
    }
    const variable = loadProfile('quic4sat-variable-medium').links.satellite.forward;
    assert.deepEqual(
      variable.schedule.points.map((p) => [p.t_s, p.rate_mbit]),
      [
        [0, 50],
        [5, 10],
      ],
    );
  });

  it('the Gilbert–Elliott profile uses the measured parameters', () => {
    const ref = JSON.parse(fs.readFileSync(new URL('../../reference/loss-and-delay-models.json', import.meta.url)));
    const loss = loadProfile('geo-gilbert').links.satellite.forward.loss;
    assert.equal(loss.model, 'gemodel');
    assert.ok(Math.abs(loss.p_pct - ref.wired.p_b_given_g * 100) < 1e-9);
    assert.ok(Math.abs(loss.r_pct - ref.wired.p_g_given_b * 100) < 1e-9);
  });

  it('the iridium profile moves its delay between 25 and 140 ms', () => {
    const pts = loadProfile('iridium').links.satellite.forward.schedule.points.map((p) => p.delay_ms);
    assert.equal(Math.min(...pts), 25);
    assert.equal(Math.max(...pts), 140);
  });

  it("reads netem's units and plain numbers", () => {
    const p = parse({
      satellite: {
        forward: { delay: '0.25s', jitter: 2, distribution: 'normal', rate: '500kbit', loss: '0.5%', limit: 100 },
      },
    });
    assert.deepEqual(p.links.satellite.forward, {
      delay_ms: 250,
      jitter_ms: 2,
      jitter_distribution: 'normal',
      loss: { model: 'random', pct: 0.5 },
      rate_mbit: 0.5,
      limit: { packets: 100 },
      schedule: null,
    });
    assert.deepEqual(parse({ satellite: { forward: { rate: 10, limit: '1.5MB' } } }).links.satellite.forward.limit, {
      bytes: 1500000,
    });
    const ge = parse({ satellite: { return: { loss: { gemodel: { p: '1%', r: '10%' } } } } }).links.satellite.return
      .loss;
    assert.deepEqual(ge, { model: 'gemodel', p_pct: 1, r_pct: 10, h_loss_pct: 100, k_loss_pct: 0 });
  });

  it('rejects an unknown key, naming the file, the key and what is allowed', () => {
    rejects(
      () => parse({ satellite: { forward: { dealy: '10ms' } } }),
      /^p\.yaml: /,
      /"dealy"/,
      /satellite\.forward/,
      /allowed: delay, jitter/,
    );
    rejects(() => parse({ satelite: {} }), /"satelite"/, /allowed: description, satellite, internet/);
    rejects(() => parse({ internet: { up: {} } }), /"up" in internet/, /forward, return/);
  });

  it('rejects a negative delay, a loss above 100 %, a rate of zero, a bad distribution', () => {
    rejects(
      () => parse({ satellite: { forward: { delay: '-5ms' } } }),
      /p\.yaml: satellite\.forward\.delay: a delay must be >= 0, got -5/,
    );
    rejects(
      () => parse({ satellite: { return: { loss: '101%' } } }),
      /satellite\.return\.loss: a percentage must be between 0 and 100, got 101/,
    );
    rejects(() => parse({ internet: { forward: { rate: 0 } } }), /internet\.forward\.rate: a rate must be > 0, got 0/);
    rejects(
      () => parse({ satellite: { forward: { rate: '20 furlongs' } } }),
      /satellite\.forward\.rate: expected a rate/,
      /mbit/,
    );
    rejects(
      () => parse({ satellite: { forward: { jitter: 1, distribution: 'cauchy' } } }),
      /distribution: expected one of uniform, normal, pareto, paretonormal/,
    );
    rejects(() => parse({ satellite: { forward: { limit: 10 } } }), /limit: a queue limit needs a rate/);
  });

  it('rejects an unknown profile name, listing the built-in ones', () => {
    rejects(() => loadProfile('mars'), /unknown profile "mars"/, /geo, geo-dvb, geo-gilbert/);
  });

  it('loads YAML and JSON files and names the file in errors', () => {
    const json = tempProfile(JSON.stringify({ satellite: { forward: { delay: 5 } } }), '.json');
    assert.equal(loadProfile(json).links.satellite.forward.delay_ms, 5);
    const bad = tempProfile('satellite:\n  forward:\n    delay: -1ms\n');
    rejects(() => loadProfile(bad), new RegExp(`^${bad.replace(/[.]/g, '\\.')}: satellite\\.forward\\.delay`));
    const broken = tempProfile('satellite: [unclosed');
    rejects(() => loadProfile(broken), /not valid YAML/);
    // a folder where a file is expected: one line, no EISDIR
    const dir = path.dirname(broken);
    rejects(() => loadProfile(dir), new RegExp(`^${dir}: a folder, expected a profile file$`));
    fs.mkdirSync(path.join(dir, 'd.yaml'));
    rejects(() => loadProfile(path.join(dir, 'd.yaml')), /d\.yaml: a folder, expected a profile file$/);
    const folderSchedule = tempProfile('satellite:\n  forward:\n    schedule: { file: . }\n');
    rejects(() => loadProfile(folderSchedule), /: a folder, expected a schedule file \(named by .*t\.yaml\)$/);
  });

  it('reads a schedule CSV next to the profile and rejects a bad one', () => {
    const file = tempProfile('satellite:\n  forward:\n    schedule: { file: s.csv, loop: true }\n', '.yaml', {
      's.csv': 'time_s,delay_ms\n0,25\n10,140\n',
    });
    const f = loadProfile(file).links.satellite.forward;
    assert.equal(f.delay_ms, 25);
    assert.deepEqual(f.schedule, {
      loop: true,
      points: [
        { t_s: 0, delay_ms: 25 },
        { t_s: 10, delay_ms: 140 },
      ],
    });
    rejects(() => parseScheduleCsv('time_s,delay\n0,1\n', 'x.csv'), /x\.csv: unknown column "delay"/);
    // a file that is no schedule is not quoted
    const secret = tempProfile('satellite:\n  forward:\n    schedule: { file: passwd }\n', '.yaml', {
      passwd: 'root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1::/:/bin/sh\n',
    });
    assert.throws(
      () => loadProfile(secret),
      (e) =>
        e instanceof UsageError &&
        /passwd: not a schedule: its first line is not a header naming time_s/.test(e.message) &&
        !e.message.includes('root'),
    );
    rejects(
      () => parseScheduleCsv('time_s,delay_ms\n5,1\n2,1\n', 'x.csv'),
      /line 3: time_s must be >= 0 and increasing/,
    );
    rejects(() => parseScheduleCsv('time_s,delay_ms\n0,-1\n', 'x.csv'), /delay_ms must be >= 0/);
  });

  it('a rate-limited direction queues one bandwidth-delay product by default', () => {
    const geo = loadProfile('geo').links.satellite.forward;
    assert.deepEqual(geo.limit, { bytes: (20e6 / 8) * 0.58 });
    assert.equal(loadProfile('geo').links.internet.forward.limit, null);
  });

  it("--loss replaces the satellite link's loss in both directions only", () => {
    const p = loadProfile('geo-gilbert', { lossPct: 0.1 });
    assert.deepEqual(p.links.satellite.forward.loss, { model: 'random', pct: 0.1 });
    assert.deepEqual(p.links.satellite.return.loss, { model: 'random', pct: 0.1 });
    assert.equal(p.links.internet.forward.loss, null);
    assert.equal(loadProfile('quic4sat-lossy-large', { lossPct: 0 }).links.satellite.forward.loss, null);
    rejects(() => withSatelliteLoss(loadProfile('geo'), 150), /--loss: expected a percentage between 0 and 100/);
  });

  it('satellite.loss_on limits --loss to the directions it names, and says so', () => {
    const doc = { satellite: { loss_on: 'return', forward: { loss: '0.5%' }, return: {} } };
    const p = parse(doc);
    assert.equal(p.loss_on, 'return');
    const lossy = withSatelliteLoss(p, 1);
    assert.deepEqual(lossy.links.satellite.return.loss, { model: 'random', pct: 1 });
    // the other direction keeps the profile's own loss
    assert.deepEqual(lossy.links.satellite.forward.loss, { model: 'random', pct: 0.5 });
    assert.equal(configuredSummary(lossy).loss_on, 'return');
    assert.equal(withSatelliteLoss(parse({ satellite: { loss_on: 'forward' } }), 2).links.satellite.return.loss, null);
    assert.equal(parse({}).loss_on, 'both');
    rejects(
      () => parse({ satellite: { loss_on: 'uplink' } }),
      /p\.yaml: satellite\.loss_on: expected both, forward, return .*got "uplink"/,
    );
    rejects(() => parse({ internet: { loss_on: 'return' } }), /p\.yaml: unknown key "loss_on" in internet/);
  });

  it('computes the long-run loss of Gilbert–Elliott and of a whole path', () => {
    assert.equal(stationaryLossPct(null), 0);
    assert.equal(stationaryLossPct({ model: 'random', pct: 1 }), 1);
    // pi_bad = p / (p + r) = 1 / 11; all lost in bad, none in good.
    assert.ok(
      Math.abs(
        stationaryLossPct({ model: 'gemodel', p_pct: 1, r_pct: 10, h_loss_pct: 100, k_loss_pct: 0 }) - 100 / 11,
      ) < 1e-9,
    );
    const p = parse({ satellite: { forward: { loss: 10 } }, internet: { forward: { loss: 10 } } });
    assert.ok(Math.abs(configuredSummary(p).loss_pct - 19) < 1e-9);
  });
});
