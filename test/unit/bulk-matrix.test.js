// The bulk matrix: expanded, named, checked, its transfer timeout, and the quic4sat preset.
import assert from 'node:assert/strict';
import { bulkInput } from '../../harness/cli/bulk.js';
import { expandBulkMatrix, transferTimeoutS, transfersOf } from '../../harness/bulk/matrix.js';
import { validateBulkMatrix } from '../../harness/cli/bulk-plan.js';
import { scenarioName } from '../../harness/bulk/run.js';

describe('bulk: matrix', () => {
  const m = {
    profiles: ['geo'],
    losses: [0, 1],
    protocols: ['quic', 'tcp'],
    runs: 2,
    duration_s: 10,
    size_bytes: null,
  };

  it('expands run-major, the amount in the scenario', () => {
    const items = expandBulkMatrix(m);
    assert.equal(items.length, 8);
    assert.deepEqual(items[0], { scenario: { profile: 'geo', loss_pct: 0, protocol: 'quic', duration_s: 10 }, run: 1 });
    assert.equal(items[4].run, 2);
    const sized = expandBulkMatrix({ ...m, losses: [null], duration_s: null, size_bytes: 100e6, runs: 1 });
    assert.deepEqual(sized[0].scenario, { profile: 'geo', loss_pct: null, protocol: 'quic', size_bytes: 100e6 });
  });

  it('an upload is a scenario of its own, named so', () => {
    const items = expandBulkMatrix({ ...m, losses: [0], runs: 1, directions: ['down', 'up'] });
    assert.deepEqual(
      items.map((i) => i.scenario.direction ?? 'down'),
      ['down', 'down', 'up', 'up'],
    );
    assert.equal(scenarioName(items[2].scenario), 'geo loss 0 % quic 10 s up');
    assert.equal(scenarioName(items[0].scenario), 'geo loss 0 % quic 10 s');
  });

  it('a revisit is a scenario of its own, named so; bulk --view reads the list', () => {
    const items = expandBulkMatrix({ ...m, losses: [0], protocols: ['quic'], runs: 1, views: ['first', 'revisit'] });
    assert.deepEqual(
      items.map((i) => i.scenario.view ?? 'first'),
      ['first', 'revisit'],
    );
    assert.equal(items[0].scenario.view, undefined, "a first view's key is the one earlier campaigns have");
    assert.equal(scenarioName(items[1].scenario), 'geo loss 0 % quic 10 s revisit');
    const input = (v) => bulkInput({ link: 'auto', seed: '1', 'bin-ms': '100', protocol: 'quic', ...v });
    assert.deepEqual(input({ view: 'first,revisit' }).matrix.views, ['first', 'revisit']);
    assert.equal(input({}).matrix.views, undefined);
  });

  it('a revisit over a changed path names its capacity; bulk --revisit-capacity reads a factor', () => {
    const items = expandBulkMatrix({
      ...m,
      losses: [0],
      protocols: ['quic'],
      runs: 1,
      views: ['first', 'revisit'],
      revisit_capacity: 0.5,
    });
    assert.equal(items[0].scenario.revisit_capacity, undefined, 'a first view has one path');
    assert.equal(items[1].scenario.revisit_capacity, 0.5);
    assert.equal(scenarioName(items[1].scenario), 'geo loss 0 % quic 10 s revisit at 0.5 × rate');
    const input = (v) => bulkInput({ link: 'auto', seed: '1', 'bin-ms': '100', protocol: 'quic', ...v });
    assert.equal(input({ view: 'revisit', 'revisit-capacity': '0.5' }).matrix.revisit_capacity, 0.5);
    for (const bad of ['0', 'half', '11', '-1'])
      assert.throws(
        () => input({ view: 'revisit', 'revisit-capacity': bad }),
        /--revisit-capacity: expected a factor of the satellite link's rate above 0 and at most 10/,
      );
  });

  it('validates before anything runs', () => {
    assert.doesNotThrow(() => validateBulkMatrix(m));
    assert.throws(() => validateBulkMatrix({ ...m, directions: ['sideways'] }), /--direction: expected down or up/);
    assert.throws(() => validateBulkMatrix({ ...m, directions: [] }), /--direction: name down, up or both/);
    assert.throws(
      () => validateBulkMatrix({ ...m, protocols: ['browser-h2'], directions: ['up'] }),
      /--direction up: browser-h2 only downloads/,
    );
    assert.throws(() => validateBulkMatrix({ ...m, protocols: ['h3'] }), /unknown bulk protocol "h3"/);
    assert.throws(() => validateBulkMatrix({ ...m, size_bytes: 5 }), /--duration or --size/);
    assert.throws(() => validateBulkMatrix({ ...m, duration_s: null }), /--duration or --size/);
    assert.throws(() => validateBulkMatrix({ ...m, losses: [101] }), /--loss/);
    assert.throws(() => validateBulkMatrix({ ...m, profiles: ['nowhere'] }), /unknown profile/);
    assert.throws(() => validateBulkMatrix({ ...m, runs: 0 }), /-n/);
  });

  it('gives a sized download four times its time at the link rate, a revisit two of them', () => {
    assert.equal(transfersOf({ size_bytes: 1 }), 1);
    assert.equal(transfersOf({ size_bytes: 1, view: 'revisit' }), 2);
    assert.equal(transferTimeoutS({ duration_s: 15 }, 20), 45);
    assert.equal(transferTimeoutS({ size_bytes: 100e6 }, 10), 380);
    assert.equal(transferTimeoutS({ size_bytes: 100e6 }, null), 600);
  });
});

describe('bulk: the quic4sat preset', () => {
  it('the quic4sat preset uploads where the draft has upload objectives, --direction where it says', () => {
    const input = (v) => bulkInput({ link: 'auto', seed: '1', 'bin-ms': '100', ...v });
    const preset = expandBulkMatrix(input({ preset: 'quic4sat', protocol: 'quic-pep', n: '1' }).matrix);
    const ups = preset.filter((i) => i.scenario.direction === 'up').map((i) => i.scenario.profile);
    assert.deepEqual(ups, ['quic4sat-small']);
    assert.equal(preset.length, 7);
    // a download's scenario has no direction (records from before uploads keep their keys)
    assert.ok(preset.filter((i) => i.scenario.direction !== 'up').every((i) => !('direction' in i.scenario)));
    const both = expandBulkMatrix(
      input({ preset: 'quic4sat', protocol: 'quic-pep', n: '1', direction: 'up,down' }).matrix,
    );
    assert.equal(both.length, 12);
    assert.deepEqual(input({}).matrix.directions, ['down']);
  });

  it('the quic4sat preset names its satellite hop per chain, and --pep-sat replaces it', () => {
    // what parseArgs gives bulkInput when the command line is silent
    const input = (v) => bulkInput({ link: 'auto', seed: '1', 'bin-ms': '100', ...v });
    const { settings } = input({ preset: 'quic4sat' });
    assert.deepEqual(settings.pep.sat_by_chain, {
      quic: { cc: 'sat', 'ack-eliciting-threshold': '20' },
      tcp: { cc: 'bbr' },
    });
    assert.equal(input({ preset: 'quic4sat', 'pep-sat': 'cc=newreno' }).settings.pep.sat_by_chain, undefined);
    assert.equal(input({}).settings.pep.sat_by_chain, undefined);
  });
});
