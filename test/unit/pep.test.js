import assert from 'node:assert/strict';
import { isPep, pepKind } from '../../harness/core/protocols.js';
import { relayedCounts, checkRelayed } from '../../harness/pep/chain.js';

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
