// bench --cc-axis cubic,bbr, for real: each run's end hosts' TCP connections
// run the congestion control of its scenario, as the kernel reports them
// (ss -ti in the client's and the server's namespaces, record.tcp_cc).
// Both values ran, so a run whose kernel kept its namespace's default
// (Linux's cubic, or the host's own) fails one of them.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { satbench, SHORT, records, tinySite, writeProfile, leftBehind } from './helpers.js';
import { scenarioKey } from '../../harness/kinds/pageload.js';

describe('the end hosts’ congestion control as a matrix axis (integration, real namespaces)', function () {
  this.timeout(320000);
  it('each run’s client and server TCP connections run its scenario’s cc; the report sets bbr beside cubic', async () => {
    const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-cc-axis-')), 'r');
    const r = await satbench(
      [
        ...['bench', '--profile', writeProfile(SHORT), '--site', tinySite()],
        ...['--protocol', 'h1,h2,h3', '--cc-axis', 'cubic,bbr', '-n', '1', '--out', out],
      ],
      { timeoutMs: 300000 },
    );
    assert.equal(r.code, 0, r.stderr);
    const recs = records(out);
    // a scenario's two congestion controls one after the other
    assert.deepEqual(
      recs.map((x) => `${x.scenario.protocol} ${x.scenario.cc}`),
      ['h1 cubic', 'h1 bbr', 'h2 cubic', 'h2 bbr', 'h3 cubic', 'h3 bbr'],
    );
    for (const rec of recs) {
      const what = scenarioKey(rec.scenario);
      assert.equal(rec.ok, true, `${what}: ${rec.error}`);
      assert.ok(rec.tcp_cc, `${what}: no tcp_cc (${JSON.stringify(rec.not_captured)})`);
      if (rec.scenario.protocol === 'h3') continue; // QUIC: no TCP connection to read
      assert.deepEqual(rec.tcp_cc, { client: [rec.scenario.cc], server: [rec.scenario.cc] }, what);
    }
    const summary = JSON.parse(fs.readFileSync(path.join(out, 'summary.json'), 'utf8'));
    assert.deepEqual(summary.meta.matrix.ccs, ['cubic', 'bbr']);
    assert.equal(summary.groups.length, 6);
    assert.match(r.stdout, /^profile +loss +protocol +site +cc +Response Start/m);
    assert.match(fs.readFileSync(path.join(out, 'index.html'), 'utf8'), /bbr vs cubic \(end hosts\)/);
    assert.deepEqual(await leftBehind(r.made), [], 'a run left these behind');
  });
});
