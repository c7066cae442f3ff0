// What the harness asks of satbulk get, and when the sender's trace is whole.
import assert from 'node:assert/strict';
import { satbulkGetArgs, everyConnectionEnded } from '../../harness/bulk/satbulk.js';

describe('bulk: satbulk get', () => {
  it('waits until every connection has its final line', () => {
    assert.equal(everyConnectionEnded([]), false);
    assert.equal(
      everyConnectionEnded([
        { conn: 1, final: false },
        { conn: 1, final: true },
      ]),
      true,
    );
    assert.equal(
      everyConnectionEnded([
        { conn: 1, final: true },
        { conn: 2, final: false },
      ]),
      false,
    );
  });

  it('satbulk get arguments', () => {
    const q = satbulkGetArgs(
      { protocol: 'quic-pep', duration_s: 15 },
      { addr: '198.18.1.1:443', ca: '/c.pem', timeoutS: 45, quicArgs: ['--bdp-bytes', '1450000'] },
    );
    assert.deepEqual(q, [
      'get',
      'quic',
      '--addr',
      '198.18.1.1:443',
      '--json',
      '--bin-ms',
      '100',
      '--duration',
      '15',
      '--timeout',
      '45',
      '--ca',
      '/c.pem',
      '--name',
      'satbench.test',
      '--bdp-bytes',
      '1450000',
    ]);
    const t = satbulkGetArgs({ protocol: 'tcp-pep', size_bytes: 2e6 }, { addr: '198.18.3.2:5201', binMs: 50 });
    assert.deepEqual(t, ['get', 'tcp', '--addr', '198.18.3.2:5201', '--json', '--bin-ms', '50', '--bytes', '2000000']);
    const up = satbulkGetArgs({ protocol: 'tcp', size_bytes: 2e6, direction: 'up' }, { addr: 'a:1' });
    assert.deepEqual(up.slice(6, 10), ['100', '--direction', 'up', '--bytes']);
  });

  it('a revisit asks satbulk get for a second connection', () => {
    const args = (view) =>
      satbulkGetArgs({ protocol: 'quic', size_bytes: 1e6, ...(view ? { view } : {}) }, { addr: 'a:1', ca: '/c' });
    assert.ok(args('revisit').includes('--revisit'));
    assert.ok(!args(null).includes('--revisit'));
    assert.ok(!args('revisit').includes('--revisit-pause'), 'a revisit over one path does not wait');
    const changed = satbulkGetArgs(
      { protocol: 'quic', size_bytes: 1e6, view: 'revisit', revisit_capacity: 0.5 },
      { addr: 'a:1', ca: '/c' },
    );
    assert.ok(
      changed.includes('--revisit') && changed.includes('--revisit-pause'),
      'the harness changes the link meanwhile',
    );
  });
});
