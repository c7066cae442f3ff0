import assert from 'node:assert/strict';
import { handshakesRecord, parseConnectionLine, summarizeConnectionLog } from '../../harness/servers/connection-log.js';

// Lines as our origin writes them (transport/src/conn_log.rs).
const line = (protocol, { resumed = false, offered = false, accepted = false, early = 0 } = {}) =>
  JSON.stringify({
    time: '2026-11-28T12:00:00.000Z',
    remote: '198.18.1.2:40000',
    handshake: resumed ? 'resumed' : 'full',
    protocol,
    psk_offered: resumed,
    resumed,
    early_offered: offered,
    early_accepted: accepted,
    early_requests: early,
  });

const zeros = { connections: 0, full: 0, resumed: 0, early_offered: 0, early_accepted: 0, early_requests: 0 };

describe('connection log', () => {
  it('reads a line, and no other text', () => {
    assert.deepEqual(parseConnectionLine(line('h3', { resumed: true, offered: true, accepted: true, early: 3 })), {
      protocol: 'h3',
      resumed: true,
      early_offered: true,
      early_accepted: true,
      early_requests: 3,
    });
    for (const bad of ['', 'not json', '{"protocol":"h3"}', '[1]', 'null', '{"resumed":true}'])
      assert.equal(parseConnectionLine(bad), null, bad);
  });

  it('counts a load’s connections, in all and per protocol', () => {
    const text = [
      line('h3', { resumed: true, offered: true, accepted: true, early: 3 }),
      line('h3'),
      line('h2', { resumed: true }),
      'garbage',
      line('http/1.1'),
      '',
    ].join('\n');
    assert.deepEqual(summarizeConnectionLog(text), {
      connections: 4,
      full: 2,
      resumed: 2,
      early_offered: 1,
      early_accepted: 1,
      early_requests: 3,
      by_protocol: {
        h3: { connections: 2, full: 1, resumed: 1, early_offered: 1, early_accepted: 1, early_requests: 3 },
        h2: { ...zeros, connections: 1, resumed: 1 },
        'http/1.1': { ...zeros, connections: 1, full: 1 },
      },
    });
    // offered but refused: offered counts, accepted and early requests do not
    assert.deepEqual(summarizeConnectionLog(line('h3', { resumed: true, offered: true })).by_protocol.h3, {
      ...zeros,
      connections: 1,
      resumed: 1,
      early_offered: 1,
    });
  });

  it('an empty slice is zero connections; a server without a log is absent, not zeros', () => {
    assert.deepEqual(summarizeConnectionLog(''), { ...zeros, by_protocol: {} });
    assert.deepEqual(handshakesRecord({ origin: '' }), { origin: { ...zeros, by_protocol: {} } });
    // H2O keeps no connection log: no counts for it
    assert.equal(handshakesRecord({ origin: null }), null);
    assert.deepEqual(Object.keys(handshakesRecord({ origin: null, proxySt: line('h3') })), ['proxy_st']);
    assert.deepEqual(Object.keys(handshakesRecord({ origin: line('h2'), proxySt: line('h3') })), [
      'origin',
      'proxy_st',
    ]);
  });
});
