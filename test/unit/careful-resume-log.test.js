import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  carefulResumeOn,
  parseCarefulResumeLog,
  readCarefulResumeLog,
  carefulResumeLogBytes,
} from '../../harness/servers/careful-resume-log.js';

// a line as transport/src/careful_resume/log.rs writes it
const event = (old, nu, trigger) => ({
  time_ms: 1.5,
  name: 'recovery:careful_resume_phase_updated',
  data: { old, new: nu, trigger, state_data: { pipesize: 12000, congestion_window: 725000 } },
});
const JUMPED = {
  time: '2026-11-28T12:00:00.000Z',
  endpoint: '198.18.0.2>198.18.3.2',
  phase_reached: 'normal',
  jump_bytes: 725000,
  saved_cwnd_bytes: 1450000,
  saved_capacity_bps: 20000000,
  saved_rtt_ms: 580,
  rtt_ms: 581.2,
  retreated: false,
  events: [
    event('reconnaissance', 'unvalidated', 'cwnd_limited'),
    event('unvalidated', 'validating', 'first_unvalidated_packet_acknowledged'),
    event('validating', 'normal', 'last_unvalidated_packet_acknowledged'),
  ],
};

describe('Careful Resume log', () => {
  it('gives each connection its phase, jump, saved path and phases, in order', () => {
    const retreated = { ...JUMPED, retreated: true, events: [event('unvalidated', 'safe_retreat', 'packet_loss')] };
    const text = `${JSON.stringify(JUMPED)}\n${JSON.stringify(retreated)}\n`;
    const [a, b] = parseCarefulResumeLog(text);
    assert.deepEqual(a, {
      phase_reached: 'normal',
      jump_bytes: 725000,
      saved_capacity_bps: 20000000,
      saved_rtt_ms: 580,
      rtt_ms: 581.2,
      retreated: false,
      phases: [
        'reconnaissance>unvalidated:cwnd_limited',
        'unvalidated>validating:first_unvalidated_packet_acknowledged',
        'validating>normal:last_unvalidated_packet_acknowledged',
      ],
    });
    assert.equal(b.retreated, true);
    assert.deepEqual(b.phases, ['unvalidated>safe_retreat:packet_loss']);
  });

  it('leaves out what is not a line of it: a cut line, blank lines, other JSON', () => {
    const text = `\n${JSON.stringify(JUMPED).slice(0, 40)}\n{"other":1}\n${JSON.stringify({ ...JUMPED, rtt_ms: null })}\n`;
    const out = parseCarefulResumeLog(text);
    assert.equal(out.length, 1);
    assert.equal(out[0].rtt_ms, null, 'a path never checked has no RTT');
    assert.deepEqual(parseCarefulResumeLog(''), []);
  });

  it("reads one load's lines of each server's log by byte offsets, none without a log", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cr-log-'));
    const tb = { dir };
    const line = (n) => `${JSON.stringify({ ...JUMPED, jump_bytes: n })}\n`;
    assert.deepEqual(readCarefulResumeLog(tb), []);
    assert.deepEqual(carefulResumeLogBytes(tb), { origin: 0, satbulk: 0, gw: 0 });
    fs.writeFileSync(path.join(dir, 'careful-resume-origin.log'), line(1));
    const mid = carefulResumeLogBytes(tb);
    fs.appendFileSync(path.join(dir, 'careful-resume-origin.log'), line(2));
    fs.writeFileSync(path.join(dir, 'careful-resume-gw.log'), line(3));
    const end = carefulResumeLogBytes(tb);
    const got = (range) => readCarefulResumeLog(tb, range).map((e) => [e.server, e.jump_bytes]);
    assert.deepEqual(got({ to: mid }), [['origin', 1]]);
    assert.deepEqual(got({ from: mid, to: end }), [
      ['origin', 2],
      ['gw', 3],
    ]);
    fs.rmSync(dir, { recursive: true });
  });

  it('is on when --quic or --pep-sat says careful-resume=on', () => {
    assert.equal(carefulResumeOn({ quic: { 'careful-resume': 'on' } }), true);
    assert.equal(carefulResumeOn({ quic: {}, pepSides: { sat: { 'careful-resume': 'on' } } }), true);
    assert.equal(carefulResumeOn({ quic: { 'careful-resume': 'off' }, pepSides: null }), false);
    assert.equal(carefulResumeOn({}), false);
  });
});
