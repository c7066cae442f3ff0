// What the user saw, from a real load: Chromium's screenshots traced during
// the load (pageload/gather/visual.js), the visual metrics, the progress
// curve and the filmstrip of each run with bench --visual; none without it.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { satbench, SHORT, records, tinySite, writeProfile, leftBehind } from './helpers.js';
import { VISUAL_METRICS, scenarioKey } from '../../harness/kinds/pageload.js';
import { runFolder } from '../../harness/campaign/results-dir.js';
import { frameName } from '../../harness/pageload/visual-metrics.js';

// tinySite, and a block its script paints 400 ms after the load event: the
// run must wait for it to see it.
function lateSite() {
  const dir = tinySite();
  const late =
    "<script>addEventListener('load', () => setTimeout(() => document.body.insertAdjacentHTML('beforeend', " +
    '\'<div style="width:600px;height:200px;background:#246">late</div>\'), 400));</script>';
  const file = path.join(dir, 'index.html');
  fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('</body>', `${late}</body>`));
  return dir;
}

describe('visual metrics (integration, real Chromium)', function () {
  it('each run records the visual metrics, in order, with its progress curve and filmstrip with --visual; none without', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-visual-'));
    const args = ['--profile', writeProfile(SHORT), '--site', lateSite(), '-n', '1'];
    const out = path.join(root, 'on');
    const r = await satbench(['bench', ...args, '--protocol', 'h1,h3', '--visual', '--out', out, '--json'], {
      timeoutMs: 240000,
    });
    assert.equal(r.code, 0, r.stderr);
    const recs = records(out);
    assert.equal(recs.length, 2);
    for (const rec of recs) {
      const p = rec.scenario.protocol;
      assert.equal(rec.ok, true, `${p}: ${rec.error}`);
      assert.equal(rec.not_captured, undefined, `${p}: ${JSON.stringify(rec.not_captured)}`);
      const m = rec.metrics;
      for (const k of VISUAL_METRICS) assert.equal(typeof m[k], 'number', `${p}: ${k} ${m[k]}`);
      assert.ok(m.first_visual_change_ms > 0, `${p}: first visual change ${m.first_visual_change_ms}`);
      assert.ok(
        m.first_visual_change_ms <= m.speed_index_ms,
        `${p}: FVC ${m.first_visual_change_ms} > SI ${m.speed_index_ms}`,
      );
      assert.ok(
        m.speed_index_ms <= m.last_visual_change_ms,
        `${p}: SI ${m.speed_index_ms} > LVC ${m.last_visual_change_ms}`,
      );
      assert.ok(m.visual_complete_85_ms <= m.visual_complete_95_ms, p);
      assert.ok(m.visual_complete_95_ms <= m.visual_complete_99_ms, p);
      assert.ok(m.visual_complete_99_ms <= m.last_visual_change_ms, p);
      // the block painted 400 ms after the load is the last change, seen because the run waited
      assert.ok(m.last_visual_change_ms >= m.plt_ms + 400, `${p}: LVC ${m.last_visual_change_ms}, PLT ${m.plt_ms}`);
      assert.ok(rec.visual.waited_ms >= 400 && rec.visual.waited_ms < 6000, `${p}: waited ${rec.visual.waited_ms} ms`);
      assert.ok(m.cls >= 0 && m.tbt_ms >= 0, p);
      assert.ok(Array.isArray(rec.visual.layout_shifts) && Array.isArray(rec.visual.long_tasks), p);
      assert.deepEqual(rec.visual.progress[0], [0, 0], p);
      assert.equal(rec.visual.progress.at(-1)[1], 100, p);
      // the filmstrip: small JPEGs named by their ms, the last visual change among them
      assert.equal(rec.visual.frames, path.relative(out, runFolder(out, 'filmstrip', scenarioKey(rec.scenario), 1)));
      assert.match(rec.visual.frames, /^filmstrip\/[^/]+-run1$/);
      const dir = path.join(out, rec.visual.frames);
      const files = fs.readdirSync(dir).sort();
      assert.ok(files.length >= 2, `${p}: ${files.length} frames`);
      assert.ok(
        files.every((f) => /^\d{6}\.jpg$/.test(f)),
        files.join(' '),
      );
      assert.ok(files.includes(frameName(m.last_visual_change_ms)), `${p}: ${files.join(' ')}`);
      for (const f of files) {
        const jpg = fs.readFileSync(path.join(dir, f));
        assert.deepEqual([...jpg.subarray(0, 2)], [0xff, 0xd8], `${f} is a JPEG`);
        assert.ok(jpg.length < 25_000, `${f}: ${jpg.length} bytes, expected a small frame`);
      }
    }
    const summary = JSON.parse(r.stdout);
    assert.ok(summary.groups.every((g) => g.metrics.speed_index_ms?.n === 1));
    assert.equal(summary.meta.settings.visual, true);

    const off = path.join(root, 'off');
    const r2 = await satbench(['bench', ...args, '--protocol', 'h1', '--out', off, '--json']);
    assert.equal(r2.code, 0, r2.stderr);
    const [rec] = records(off);
    assert.equal(rec.ok, true, rec.error);
    assert.equal(rec.visual, undefined);
    for (const k of VISUAL_METRICS) assert.equal(rec.metrics[k], undefined, k);
    assert.equal(fs.existsSync(path.join(off, 'filmstrip')), false);
    assert.equal(JSON.parse(r2.stdout).meta.settings.visual, false);
    assert.deepEqual(await leftBehind(r.made), [], 'a run left these behind');
  });
});
