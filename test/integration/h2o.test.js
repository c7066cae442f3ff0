// H2O as the origin: the one harness/setup.sh builds with HTTP/3 (quicly),
// and Debian's 2.2.5, the fallback where it cannot be built. Real page
// loads over a short-delay testbed; the protocol of every resource, as
// Chromium saw it and as H2O's own request log has it.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from '../../harness/core/sys.js';
import { H2O_BUILT, H2O_DEBIAN, H2O_PATCHED } from '../../harness/servers/origin.js';
import { satbench, SHORT, records, tinySite, writeProfile } from './helpers.js';

const outDir = (what) => path.join(fs.mkdtempSync(path.join(os.tmpdir(), `satbench-h2o-${what}-`)), 'r');
const args = () => ['bench', '--profile', writeProfile(SHORT), '--site', tinySite(), '-n', '1', '--origin', 'h2o'];

// Chromium's name for the protocol of the document and every resource; the
// origin sees h3 for h3-pep too (Proxy-GW speaks HTTP/3 to it).
const WANT = { h1: 'http/1.1', h2: 'h2', h3: 'h3', 'h3-pep': 'h3' };

function checkLoads(out, protocols) {
  const lines = records(out);
  assert.deepEqual(
    lines.map((l) => l.scenario.protocol),
    protocols,
  );
  for (const rec of lines) {
    const p = rec.scenario.protocol;
    assert.equal(rec.ok, true, `${p}: ${rec.error}`);
    assert.ok(rec.origin.startsWith('h2o'), rec.origin);
    assert.equal(rec.metrics.resource_count, 2, p);
    assert.equal(rec.navigation.nextHopProtocol, WANT[p], p);
    assert.deepEqual(Object.keys(rec.protocol_seen.resources), [WANT[p]], p);
    // H2O's log: the page and its resource, each over the protocol asked for
    // (Chromium's favicon request may add one more).
    assert.deepEqual(Object.keys(rec.origin_log.protocols), [WANT[p]], `${p}: ${JSON.stringify(rec.origin_log)}`);
    assert.ok(rec.origin_log.statuses[200] >= 2, `${p}: ${JSON.stringify(rec.origin_log)}`);
  }
  return lines;
}

describe('H2O as the origin (integration, real Chromium)', function () {
  it('serves h1, h2, h3 and h3-pep from the H2O built with HTTP/3, and h3 from the patched one', async function () {
    if (!fs.existsSync(H2O_BUILT)) {
      // Only where the set-up said it had no source (no GitHub, no SATBENCH_H2O_SOURCE).
      assert.ok(fs.existsSync(path.join(ROOT, '.tools/h2o-quic.unavailable')), `${H2O_BUILT} is missing`);
      this.skip();
    }
    const out = outDir('h3');
    const protocols = ['h1', 'h2', 'h3', 'h3-pep'];
    const r = await satbench([...args(), '--protocol', protocols.join(','), '--out', out], {
      timeoutMs: 240000,
      env: { SATBENCH_H2O: '' },
    });
    assert.equal(r.code, 0, r.stderr);
    const pep = checkLoads(out, protocols).find((l) => l.scenario.protocol === 'h3-pep').pep;
    assert.ok(pep.relayed.st > 0 && pep.relayed.gw > 0, 'both proxies relayed the h3-pep load');
    const env = JSON.parse(fs.readFileSync(path.join(out, 'summary.json'), 'utf8')).meta.environment;
    assert.equal(env.origin.path, H2O_BUILT);
    assert.match(env.origin.version, /^h2o version 2\.3\.0-DEV$/);

    const patched = outDir('patched');
    const p = await satbench(
      ['bench', '--profile', writeProfile(SHORT), '--site', tinySite(), '-n', '1', '--origin', 'h2o-patched'].concat([
        '--protocol',
        'h3',
        '--out',
        patched,
      ]),
      { timeoutMs: 120000 },
    );
    assert.equal(p.code, 0, p.stderr);
    assert.equal(checkLoads(patched, ['h3'])[0].origin, 'h2o-patched');
    const penv = JSON.parse(fs.readFileSync(path.join(patched, 'summary.json'), 'utf8')).meta.environment;
    assert.equal(penv.origin.path, H2O_PATCHED);
    assert.match(penv.origin.version, /^h2o version 2\.3\.0-DEV with h2o-accept-hashkey-iv\.patch$/);
  });

  it("serves h1 and h2 from Debian's 2.2.5, and says it has no h3", async () => {
    const env = { SATBENCH_H2O: H2O_DEBIAN };
    const out = outDir('debian');
    const r = await satbench([...args(), '--protocol', 'h1,h2', '--out', out], { timeoutMs: 180000, env });
    assert.equal(r.code, 0, r.stderr);
    checkLoads(out, ['h1', 'h2']);
    const h3 = await satbench([...args(), '--protocol', 'h3', '--out', `${out}-h3`], { env });
    assert.equal(h3.code, 2);
    assert.match(h3.stderr, /--origin h2o: the installed H2O \(h2o version 2\.2\.5\) has no HTTP\/3/);
    assert.ok(!fs.existsSync(`${out}-h3`), 'nothing may start before the error');
  });
});
