import assert from 'node:assert/strict';
import fs from 'node:fs';
import {
  QUIC_KEYS,
  QUIC_OPTIONS_FILE,
  parseQuicOptions,
  originQuicArgs,
  quicSideText,
  checkQuicOption,
  oneOf,
} from '../../harness/core/quic-options.js';
import { PEP_KEYS } from '../../harness/pep/options.js';
import { loadProfile, pathBdpBytes } from '../../harness/testbed/profiles.js';
import { HELP as BENCH_HELP } from '../../harness/cli/bench.js';
import { HELP as BULK_HELP } from '../../harness/cli/bulk.js';

describe('QUIC options (transport/quic-options.json)', () => {
  it('takes its keys from the table the Rust tools read', () => {
    const table = JSON.parse(fs.readFileSync(QUIC_OPTIONS_FILE, 'utf8'));
    assert.deepEqual(
      QUIC_KEYS,
      table.options.map((o) => o.key),
    );
    assert.ok(QUIC_KEYS.includes('initial-window') && QUIC_KEYS.includes('bdp-bytes'));
    for (const k of QUIC_KEYS) assert.ok(PEP_KEYS.includes(k), `--pep-sat takes ${k}`);
  });

  it('bench --help and bulk --help name every key of the table', () => {
    for (const [cmd, help] of [
      ['bench', BENCH_HELP],
      ['bulk', BULK_HELP],
    ]) {
      for (const k of QUIC_KEYS) assert.ok(help.includes(k), `${cmd} --help does not name ${k}`);
    }
  });

  it('reads --quic options and refuses unknown ones by name', () => {
    assert.deepEqual(parseQuicOptions('cc=bbr, initial-window=32,ack-frequency', '--quic'), {
      cc: 'bbr',
      'initial-window': '32',
      'ack-frequency': true,
    });
    assert.throws(() => parseQuicOptions('cwnd=3', '--quic'), /--quic: unknown QUIC option "cwnd"; expected cc, /);
    assert.throws(
      () => parseQuicOptions('cc=vegas', '--quic'),
      /--quic: cc must be cubic, newreno, bbr or sat, got "vegas"/,
    );
    assert.throws(
      () => parseQuicOptions('initial-window=ten', '--quic'),
      /--quic: initial-window expects a whole number/,
    );
    assert.throws(() => parseQuicOptions('ack-frequency=2', '--quic'), /--quic: ack-frequency takes no value/);
  });

  it('checks a value by its kind, numbers as numbers or digits', () => {
    assert.equal(checkQuicOption('bdp-bytes', 5, 'x'), 5);
    assert.equal(checkQuicOption('bdp-bytes', '5', 'x'), '5');
    assert.throws(() => checkQuicOption('bdp-bytes', 1.5, 'hop'), /hop: bdp-bytes expects a whole number, got 1.5/);
    assert.throws(() => checkQuicOption('bdp-bytes', -1, 'hop'), /whole number/);
    // the bounds the Rust tools apply, from the same table: refused before a run, not by every run's origin
    assert.throws(
      () => checkQuicOption('initial-mtu', '100', '--quic'),
      /^UsageError: --quic: initial-mtu must be between 1200 and 65527, got "100"$/,
    );
    assert.throws(() => checkQuicOption('initial-mtu', 70000, '--quic'), /between 1200 and 65527/);
    assert.equal(checkQuicOption('initial-mtu', '1400', '--quic'), '1400');
    assert.throws(
      () => checkQuicOption('initial-window', '1', '--pep-sat'),
      /initial-window must be at least 2, got "1"/,
    );
    assert.throws(
      () => checkQuicOption('bdp-bytes', '99999999999999999999', 'x'),
      /bdp-bytes must be at most 9007199254740991/,
    );
    const table = JSON.parse(fs.readFileSync(QUIC_OPTIONS_FILE, 'utf8')).options;
    assert.deepEqual(
      table.filter((o) => 'min' in o || 'max' in o).map((o) => [o.key, o.min, o.max]),
      [
        ['initial-window', 2, undefined],
        ['initial-mtu', 1200, 65527],
      ],
    );
    assert.equal(oneOf(['a', 'b', 'c']), 'a, b or c');
    assert.equal(oneOf(['a']), 'a');
  });

  it('sizes the flow-control windows to the path and lets the user override', () => {
    const geo = loadProfile('geo');
    const bdpBytes = pathBdpBytes(geo);
    assert.equal(bdpBytes, (20e6 / 8) * 0.58); // 20 Mbit/s × 580 ms
    assert.deepEqual(originQuicArgs({}, { bdpBytes }), ['--quic-bdp-bytes', '1450000']);
    assert.deepEqual(originQuicArgs({}, { bdpBytes: null }), []);
    assert.deepEqual(
      originQuicArgs({ cc: 'newreno', 'initial-window': '100', 'ack-frequency': true, 'bdp-bytes': '9' }, { bdpBytes }),
      ['--quic-bdp-bytes', '9', '--quic-cc', 'newreno', '--quic-initial-window', '100', '--quic-ack-frequency'],
    );
  });

  it("writes a side of quic-pep's --accept-side/--connect-side", () => {
    assert.equal(quicSideText({}), '');
    assert.equal(quicSideText({ cc: 'newreno', 'initial-window': 100 }), 'cc=newreno,initial-window=100');
    assert.equal(
      quicSideText({ 'ack-frequency': true, 'max-ack-delay-ms': '25' }),
      'ack-frequency,max-ack-delay-ms=25',
    );
    assert.equal(quicSideText({ 'ack-frequency': false, cc: undefined }), '');
    assert.throws(() => quicSideText({ cc: 'vegas' }, 'QUIC PEP satellite hop'), /QUIC PEP satellite hop: cc must be/);
    assert.throws(() => quicSideText({ window: 3 }, 'hop'), /hop: unknown QUIC option "window"/);
  });
});
