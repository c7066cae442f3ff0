// The QUIC-for-SATCOM objectives: which profiles have them, and that they are the reference file's.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { BULK_PRESETS } from '../../harness/bulk/presets.js';
import {
  objectivesFor,
  QUIC4SAT_DOWNLOAD_OBJECTIVES_S,
  QUIC4SAT_UPLOAD_OBJECTIVES_S,
} from '../../harness/results/objectives.js';

describe('objectives', () => {
  it('knows the quic4sat profiles, and only those with objectives', () => {
    assert.deepEqual(objectivesFor('quic4sat-large').limits_s, [3, 5, 8]);
    assert.equal(objectivesFor('quic4sat-large').direction, 'down');
    assert.equal(objectivesFor('quic4sat-variable-medium'), null);
    assert.equal(objectivesFor('geo'), null);
    // uploads: the draft sets them for small alone
    assert.deepEqual(objectivesFor('quic4sat-small', 'up').limits_s, [10, 50, 420]);
    assert.equal(objectivesFor('quic4sat-small', 'up').direction, 'up');
    assert.equal(objectivesFor('quic4sat-medium', 'up'), null);
    assert.equal(objectivesFor('geo', 'up'), null);
  });

  it('the objectives are those of reference/quic4sat-scenarios.json', () => {
    const file = new URL('../../reference/quic4sat-scenarios.json', import.meta.url);
    const ref = JSON.parse(fs.readFileSync(file, 'utf8'));
    for (const s of ref.scenarios) {
      assert.deepEqual(QUIC4SAT_DOWNLOAD_OBJECTIVES_S[s.name], s.objectives_s?.download ?? null, s.name);
      assert.deepEqual(QUIC4SAT_UPLOAD_OBJECTIVES_S[s.name] ?? null, s.objectives_s?.upload ?? null, s.name);
      assert.ok(BULK_PRESETS.quic4sat.profiles.includes(`quic4sat-${s.name}`), s.name);
    }
  });
});
