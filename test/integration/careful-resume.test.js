// Careful Resume for real, on a short-delay link with a rate: Chromium
// loads kepler over h3 twice in one run (bench --view revisit) from our
// origin, and satbulk makes a second connection (bulk --view revisit). The
// first connection is measured; the second starts from it, jumps, and
// validates the jump. --cache none makes the page's revisit fetch every
// object again, so its sender fills its window and the jump has something
// to carry.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { satbench, SHORT, records, writeProfile, leftBehind } from './helpers.js';
import { scenarioKey } from '../../harness/kinds/pageload.js';

describe('Careful Resume (integration, real Chromium)', function () {
  it("bench --view revisit --quic careful-resume=on: the revisit's h3 connection jumps and validates", async () => {
    const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-cr-')), 'r');
    const r = await satbench(
      [
        ...['bench', '--profile', writeProfile(SHORT), '--site', 'kepler', '--protocol', 'h3'],
        ...['--view', 'revisit', '--cache', 'none', '--quic', 'careful-resume=on', '-n', '1', '--out', out],
      ],
      { timeoutMs: 240000 },
    );
    assert.equal(r.code, 0, r.stderr);
    const [first, second] = records(out);
    for (const rec of [first, second]) assert.equal(rec.ok, true, `${scenarioKey(rec.scenario)}: ${rec.error}`);
    assert.deepEqual(first.careful_resume, [], 'the first load has no saved path');
    const jumped = second.careful_resume.filter((c) => c.jump_bytes > 0);
    assert.ok(jumped.length >= 1, JSON.stringify(second.careful_resume));
    for (const c of jumped) {
      assert.equal(c.server, 'origin');
      assert.equal(c.phase_reached, 'normal', JSON.stringify(c));
      assert.equal(c.retreated, false, JSON.stringify(c));
      // at most half the saved capacity × RTT (the log's rates are whole bits per second)
      const half = ((c.saved_capacity_bps / 8) * (c.saved_rtt_ms / 1000)) / 2;
      assert.ok(c.jump_bytes <= half + 8, JSON.stringify(c));
      assert.equal(c.phases[0], 'reconnaissance>unvalidated:cwnd_limited', JSON.stringify(c));
    }
    assert.deepEqual(await leftBehind(r.made), [], 'a run left these behind');
  });

  it("bulk --view revisit --quic careful-resume=on: satbulk's second connection resumes the first and jumps", async () => {
    const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-cr-bulk-')), 'r');
    const r = await satbench(
      [
        ...['bulk', '--profile', writeProfile(SHORT), '--protocol', 'quic', '--size', '5MB'],
        ...['--view', 'revisit', '--quic', 'careful-resume=on', '-n', '1', '--out', out],
      ],
      { timeoutMs: 240000 },
    );
    assert.equal(r.code, 0, r.stderr);
    const [rec] = records(out);
    assert.equal(rec.ok, true, rec.error);
    assert.equal(rec.scenario.view, 'revisit');
    assert.equal(rec.metrics.bytes, 5e6);
    assert.equal(rec.first_connection.ok, true);
    assert.equal(rec.first_connection.metrics.bytes, 5e6);
    const [c, ...more] = rec.careful_resume;
    assert.deepEqual(more, [], 'one connection had a saved path: the second');
    assert.equal(c.server, 'satbulk');
    assert.ok(c.jump_bytes > 0, JSON.stringify(c));
    assert.equal(c.retreated, false, JSON.stringify(c));
    assert.equal(c.phase_reached, 'normal', JSON.stringify(c));
    assert.deepEqual(await leftBehind(r.made), [], 'a run left these behind');
  });

  it("bulk --pep-sat careful-resume=on: Proxy-GW's re-dialled satellite connection starts from the first's path", async () => {
    const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-cr-gw-')), 'r');
    const r = await satbench(
      [
        ...['bulk', '--profile', writeProfile(SHORT), '--protocol', 'quic-pep', '--size', '4MB', '--view', 'revisit'],
        ...['--pep-tunnel', 'per-connection', '--pep-sat', 'careful-resume=on', '-n', '1', '--out', out],
      ],
      { timeoutMs: 240000 },
    );
    assert.equal(r.code, 0, r.stderr);
    const [rec] = records(out);
    assert.equal(rec.ok, true, rec.error);
    assert.equal(rec.first_connection.metrics.bytes, 4e6);
    // one satellite connection had a saved path: the revisit's, at Proxy-GW
    // (on this short link its initial window of 100 packets is already
    // past half the path, so the RFC's "no gain" ends it; geo jumps)
    const [c, ...more] = rec.careful_resume;
    assert.deepEqual(more, [], JSON.stringify(rec.careful_resume));
    assert.equal(c.server, 'gw');
    assert.ok(c.saved_capacity_bps > 10e6 && c.saved_capacity_bps < 30e6, JSON.stringify(c));
    assert.ok(c.saved_rtt_ms >= 19, JSON.stringify(c)); // the satellite hop: 2 × 10 ms
    assert.equal(c.phase_reached, 'normal', JSON.stringify(c));
    assert.deepEqual(await leftBehind(r.made), [], 'a run left these behind');
  });

  it('bulk --revisit-capacity: a path at a fifth of its rate for the revisit; the jump overflows, Careful Resume retreats, the transfer completes', async () => {
    // a shallow buffer (30 kB) so that the jump, half of what the first
    // connection measured (about 125 kB), overflows the new pipe (50 kB) and it
    const shallow = {
      satellite: {
        forward: { delay: '20ms', rate: '40mbit', limit: '30KB' },
        return: { delay: '20ms', rate: '40mbit', limit: '30KB' },
      },
      internet: SHORT.internet,
    };
    const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-cr-safety-')), 'r');
    const r = await satbench(
      [
        ...['bulk', '--profile', writeProfile(shallow), '--protocol', 'quic', '--size', '6MB', '--view', 'revisit'],
        ...['--revisit-capacity', '0.2', '--quic', 'careful-resume=on', '--qlog', '-n', '1', '--out', out],
      ],
      { timeoutMs: 240000 },
    );
    assert.equal(r.code, 0, r.stderr);
    const [rec] = records(out);
    assert.equal(rec.ok, true, rec.error);
    assert.equal(rec.scenario.revisit_capacity, 0.2);
    assert.deepEqual(rec.revisit_link.satellite_rate_mbit, { forward: 8, return: 8 });
    // both transfers complete; the second over the slower link
    assert.equal(rec.first_connection.metrics.bytes, 6e6);
    assert.equal(rec.metrics.bytes, 6e6, "the jump's losses were recovered");
    assert.ok(rec.first_connection.metrics.mean_goodput_mbps > 16, JSON.stringify(rec.first_connection.metrics));
    assert.ok(rec.metrics.mean_goodput_mbps < 8.4, JSON.stringify(rec.metrics));
    const [c] = rec.careful_resume;
    assert.ok(c.jump_bytes > 0, JSON.stringify(c));
    assert.equal(c.retreated, true, JSON.stringify(c));
    assert.ok(
      c.phases.some((p) => /^(unvalidated|validating)>safe_retreat:packet_loss$/.test(p)),
      JSON.stringify(c.phases),
    );
    assert.equal(c.phases.at(-1), 'safe_retreat>normal:exit_recovery');
    // the qlog events themselves, kept with --qlog
    const [dir] = fs.readdirSync(path.join(out, 'qlog'));
    const lines = fs
      .readFileSync(path.join(out, 'qlog', dir, 'careful-resume-satbulk.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const retreat = lines
      .flatMap((l) => l.events)
      .find((e) => e.name === 'recovery:careful_resume_phase_updated' && e.data.new === 'safe_retreat');
    assert.ok(retreat, JSON.stringify(lines));
    assert.equal(retreat.data.trigger, 'packet_loss');
    assert.deepEqual(await leftBehind(r.made), [], 'a run left these behind');
  });

  it('refuses careful-resume on a first view only, and on the PEP ground hops, before anything runs', async () => {
    const first = await satbench(['bench', '--profile', 'geo', '--protocol', 'h3', '--quic', 'careful-resume=on']);
    assert.equal(first.code, 2);
    assert.match(first.stderr.trim(), /^satbench: --quic careful-resume=on: a first view finds no saved path/);
    assert.equal(first.stderr.trim().split('\n').length, 1);
    const ground = await satbench(['bench', '--protocol', 'h3-pep', '--pep-ground', 'careful-resume=on']);
    assert.equal(ground.code, 2);
    assert.match(
      ground.stderr.trim(),
      /^satbench: --pep-ground careful-resume=on: Careful Resume is for the satellite hop/,
    );
  });
});
