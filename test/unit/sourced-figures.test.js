import assert from 'node:assert/strict';
import fs from 'node:fs';
import { loadSourcedFigures, sourcedFigures, PROFILE_REFERENCES } from '../../harness/testbed/sourced-figures.js';
import { listBuiltinProfiles } from '../../harness/testbed/profiles.js';

describe('sourced figures beside the probe', () => {
  it("reads starlink's from the repository's reference/ folder, each with the source it was read from", () => {
    const s = loadSourcedFigures('starlink');
    const ref = JSON.parse(fs.readFileSync(new URL('../../reference/starlink-measurements.json', import.meta.url)));
    assert.equal(s.file, 'reference/starlink-measurements.json');
    // every figure of the file has a probe row
    assert.deepEqual(
      Object.values(s.figures)
        .map((f) => f.figure)
        .sort(),
      Object.keys(ref.figures).sort(),
    );
    for (const f of Object.values(s.figures)) {
      assert.equal(f.source, ref.figures[f.figure].read_from);
      assert.ok(s.sources[f.source].startsWith(ref.sources[f.source].cite), f.source);
    }
    assert.equal(s.figures.period_s.text, '15');
    assert.equal(s.figures.spike_ms.text, '≥ 30');
    assert.equal(s.figures.peak_loss_pct.text, '≤ 50');
    assert.equal(s.figures.slot_step_ms.text, '30 → 80 worst');
    assert.equal(s.figures.forward_mbps.text, '10–370');
    assert.match(s.figures.boundary.status, /not confirmed/);
  });

  it('names only built-in profiles and their files; a profile without one has none', () => {
    for (const [name, file] of Object.entries(PROFILE_REFERENCES)) {
      assert.ok(listBuiltinProfiles().includes(name), name);
      assert.ok(fs.existsSync(new URL(`../../reference/${file}`, import.meta.url)), file);
    }
    assert.equal(loadSourcedFigures('leo'), null);
  });

  it('leaves out figures no probe row measures and cites a source without a URL by its citation', () => {
    const s = sourcedFigures(
      {
        sources: { a: { cite: 'A. Author, 2020' } },
        figures: { slot_period_s: { value: 10, read_from: 'a' }, something_else: { value: 1, read_from: 'b' } },
      },
      'reference/x.json',
    );
    assert.deepEqual(Object.keys(s.figures), ['period_s']);
    assert.deepEqual(s.sources, { a: 'A. Author, 2020' });
  });
});
