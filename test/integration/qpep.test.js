// QPEP over real namespaces: page loads (h1-qpep, h2-qpep) and a bulk
// download (tcp-qpep) whose TCP connections Proxy-ST takes by TPROXY and
// carries over the QUIC PEP's standing tunnel to Proxy-GW, with short
// delays; the proxies' qpep counters in the record show the TCP traffic
// crossed the tunnel, and nothing is left behind.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runShort, satbench } from './helpers.js';

// Both proxies carried TCP over the tunnel, which was up as the load began;
// `down`: at least this many bytes went from the server to the client.
function checkQpep(rec, down) {
  const p = rec.scenario.protocol;
  const { pep } = rec;
  assert.equal(pep.kind, 'qpep', p);
  assert.equal(pep.settings.tunnel, 'warm', p);
  assert.equal(pep.settings.qpep.nft_table, 'satbench_qpep', p);
  assert.equal(pep.tunnel.mode, 'warm', p);
  assert.equal(pep.tunnel.up, true, `${p}: ${JSON.stringify(pep.tunnel)}`);
  assert.ok(pep.tunnel.handshake_ms >= 20, `${p}: one satellite round trip at least: ${JSON.stringify(pep.tunnel)}`);
  for (const role of ['st', 'gw']) {
    const q = pep.stats[role].qpep;
    assert.ok(q, `${p}: ${role} has no qpep counters: ${JSON.stringify(pep.stats[role])}`);
    assert.ok(q.relayed > 0 && q.accepted >= q.relayed, `${p}: ${role} ${JSON.stringify(q)}`);
    assert.equal(pep.relayed[role], q.relayed, p);
    assert.equal(q.failed, 0, `${p}: ${role} ${JSON.stringify(q)}`);
    assert.equal(q.refused, 0, `${p}: ${role} ${JSON.stringify(q)}`);
    assert.ok(q.bytes.up > 0, `${p}: ${role} ${JSON.stringify(q.bytes)}`);
    assert.ok(q.bytes.down > down, `${p}: ${role} carried ${q.bytes.down} bytes down, not more than ${down}`);
    assert.ok(pep.stats[role].tunnel.up, `${p}: ${role}'s tunnel`);
    // no QUIC client came through: the browser spoke TCP only
    assert.equal(pep.stats[role].connections ?? 0, 0, `${p}: ${role} relayed QUIC connections`);
  }
  // every TCP connection st carried reached the server from gw
  assert.equal(pep.stats.gw.qpep.relayed, pep.stats.st.qpep.relayed, p);
}

const runOverQpep = (cmd, args) => runShort(cmd, args, 'qpep');

// One line on stderr, exit 2, nothing on stdout and nothing written.
async function refused(args, message) {
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-qpep-')), 'r');
  const r = await satbench([...args, '-n', '1', '--out', out]);
  assert.equal(r.code, 2, r.stderr);
  const lines = r.stderr.trim().split('\n');
  assert.equal(lines.length, 1, r.stderr);
  assert.match(lines[0], message);
  assert.equal(r.stdout, '');
  assert.ok(!fs.existsSync(out), 'nothing may be written');
}

describe('QPEP (integration, TCP over the QUIC PEP tunnel between st and gw)', function () {
  this.timeout(300000);

  it('loads a page over h1-qpep and h2-qpep, every TCP connection carried over the tunnel', async () => {
    const recs = await runOverQpep('bench', ['--protocol', 'h1-qpep,h2-qpep', '--site', 'kepler']);
    assert.deepEqual(
      recs.map((x) => x.scenario.protocol),
      ['h1-qpep', 'h2-qpep'],
    );
    const want = { 'h1-qpep': 'http/1.1', 'h2-qpep': 'h2' };
    for (const rec of recs) {
      const p = rec.scenario.protocol;
      assert.equal(rec.ok, true, `${p}: ${rec.error}`);
      assert.equal(rec.navigation.nextHopProtocol, want[p], p);
      assert.deepEqual(Object.keys(rec.protocol_seen.resources), [want[p]], p);
      // the page's bytes went down the tunnel (TLS and headers only add to them)
      const page = rec.metrics.body_bytes;
      assert.ok(page > 100000, `${p}: page of ${page} bytes`);
      checkQpep(rec, page);
    }
    // HTTP/1.1 opens several connections, HTTP/2 one to the origin
    assert.ok(recs[0].pep.relayed.st >= 2, JSON.stringify(recs[0].pep.relayed));
  });

  it('downloads over tcp-qpep for 2 s through the tunnel', async () => {
    const [rec] = await runOverQpep('bulk', ['--protocol', 'tcp-qpep', '--duration', '2']);
    assert.equal(rec.ok, true, rec.error);
    assert.equal(rec.protocol_seen, 'tcp');
    assert.ok(rec.metrics.bytes > 100000, `${rec.metrics.bytes} bytes`);
    // the download's bytes crossed both proxies towards the client
    checkQpep(rec, rec.metrics.bytes - 1);
  });

  it('refuses h3-qpep, quic-qpep and --pep-tunnel per-connection in one line, before anything starts', async () => {
    await refused(
      ['bench', '--profile', 'geo', '--protocol', 'h3-qpep'],
      /^satbench: --protocol: h3-qpep: QPEP carries TCP; HTTP\/3 through the QUIC PEP is h3-pep$/,
    );
    await refused(
      ['bulk', '--protocol', 'quic-qpep'],
      /quic-qpep: QPEP carries TCP; QUIC through the QUIC PEP is quic-pep$/,
    );
    await refused(
      ['bench', '--protocol', 'h1-qpep', '--pep-tunnel', 'per-connection'],
      /--pep-tunnel per-connection: QPEP \(the -qpep protocols\) carries TCP over the standing tunnel; use --pep-tunnel warm$/,
    );
  });
});
