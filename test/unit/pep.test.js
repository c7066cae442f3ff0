import assert from 'node:assert/strict';
import { isPep, pepKind } from '../../harness/core/protocols.js';
import { relayedCounts, checkRelayed } from '../../harness/pep/chain.js';
import { PEP_KEYS, parsePepSide, takesNumber, tcpPepSide, quicPepSide } from '../../harness/pep/options.js';
import { QUIC_OPTIONS } from '../../harness/core/quic-options.js';

describe('PEP chain choice and the through-the-chain check', () => {
  it('sends h3-pep through the QUIC chain and the TCP protocols through the split-TCP chain', () => {
    assert.deepEqual(['h1', 'h1-pep', 'h1s-pep', 'h2-pep', 'h3-pep', 'h3'].map(pepKind), [
      null,
      'tcp',
      'tcp',
      'tcp',
      'quic',
      null,
    ]);
    assert.equal(isPep('h3'), false);
  });

  it('fails a -pep run that a proxy did not relay', () => {
    const relayed = relayedCounts({ st: { connections: 6, bytes: {} }, gw: { connections: 0 } });
    assert.deepEqual(relayed, { st: 6, gw: 0 });
    assert.deepEqual(checkRelayed('h1-pep', relayed), {
      ok: false,
      error: 'not through the PEP chain: gw relayed no connection',
    });
    assert.equal(checkRelayed('h3-pep', {}).error, 'not through the PEP chain: st and gw relayed no connection');
    assert.equal(checkRelayed('h3-pep', { st: 1, gw: 1 }).ok, true);
    assert.equal(checkRelayed('h1', {}).ok, true, 'no chain, nothing to check');
  });
});

describe('PEP sides (--pep-sat, --pep-ground)', () => {
  it('takes a whole number for each QUIC count option and TCP-only key, and none for a choice, a flag, fec (K/N) or masque', () => {
    // the QUIC options' kinds say it: no list of keys of its own
    const kinds = Object.fromEntries(QUIC_OPTIONS.map((o) => [o.key, o.kind]));
    assert.deepEqual(
      QUIC_OPTIONS.filter((o) => o.kind !== 'count').map((o) => o.key),
      PEP_KEYS.filter((k) => kinds[k] && !takesNumber(k)),
    );
    assert.deepEqual(
      PEP_KEYS.filter((k) => !takesNumber(k)),
      ['cc', 'ack-frequency', 'careful-resume', 'fec', 'masque'],
    );
    for (const key of PEP_KEYS.filter(takesNumber))
      assert.throws(
        () => parsePepSide(`${key}=lots`, '--pep-sat'),
        new RegExp(`^UsageError: --pep-sat: ${key} expects a whole number, got "lots"$`),
      );
    assert.deepEqual(parsePepSide('cc=newreno,ack-frequency,sndbuf=4096', '--pep-ground'), {
      cc: 'newreno',
      'ack-frequency': true,
      sndbuf: '4096',
    });
    assert.deepEqual(tcpPepSide({ cc: 'reno', 'initial-window': '100', rcvbuf: '65536' }), {
      cc: 'reno',
      'initial-window': 100,
      rcvbuf: 65536,
    });
  });

  it('PEP hop settings', () => {
    const side = parsePepSide('cc=newreno,initial-window=100', '--pep-sat');
    assert.deepEqual(side, { cc: 'newreno', 'initial-window': '100' });
    assert.deepEqual(tcpPepSide(side), { cc: 'newreno', 'initial-window': 100 });
    assert.deepEqual(quicPepSide(side), side);
    assert.throws(() => parsePepSide('window=3', '--pep-sat'), /unknown option "window"/);
    assert.throws(() => parsePepSide('initial-window=lots', '--pep-sat'), /whole number/);
    assert.throws(() => tcpPepSide({ 'ack-frequency': true }), /QUIC option/);
    assert.throws(() => quicPepSide({ sndbuf: '1' }), /TCP option/);
  });
});
