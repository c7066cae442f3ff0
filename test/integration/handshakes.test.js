// bench --view revisit, for real, seen from the servers: each load's record
// counts the handshakes of the connections our origin accepted (its
// connection log, servers/connection-log.js). Chromium keeps its TLS
// session cache across closeConnections(), so the revisit resumes: over h2
// a resumed TLS 1.3 handshake (no early data: our TCP tickets allow none),
// over h3 a resumed QUIC handshake in which Chromium sends 0-RTT and the
// origin accepts it. On a 200 ms round trip the document's request is
// issued during that handshake, so it rides in 0-RTT.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { satbench, records, tinySite, writeProfile, leftBehind } from './helpers.js';

// A round trip of about 210 ms: long enough that the revisit's navigation
// request goes out before its resumed handshake completes (on 30 ms it
// comes just after, in 1-RTT).
const MID = {
  satellite: { forward: { delay: '100ms', rate: '20mbit' }, return: { delay: '100ms', rate: '20mbit' } },
  internet: { forward: { delay: '2ms' }, return: { delay: '2ms' } },
};

const counts = (c) => [c.connections, c.full, c.resumed, c.early_offered, c.early_accepted];

describe('handshakes (integration, real Chromium)', function () {
  it('revisit: the origin logs full handshakes first, then a resumed TLS and a 0-RTT QUIC handshake', async () => {
    const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-handshakes-')), 'r');
    const r = await satbench(
      [
        ...['bench', '--profile', writeProfile(MID), '--site', tinySite()],
        ...['--protocol', 'h2,h3', '--view', 'revisit', '-n', '1', '--out', out],
      ],
      { timeoutMs: 240000 },
    );
    assert.equal(r.code, 0, r.stderr);
    const recs = records(out);
    assert.equal(recs.length, 4);
    for (const rec of recs) assert.equal(rec.ok, true, rec.error);
    const [h2First, h2Second, h3First, h3Second] = recs.map((rec) => rec.handshakes?.origin);
    for (const h of [h2First, h2Second, h3First, h3Second]) assert.ok(h, 'the record has the origin’s handshakes');
    // first views: full handshakes only (Chromium may open a spare TCP connection)
    assert.ok(h2First.by_protocol.h2.connections >= 1, JSON.stringify(h2First));
    assert.equal(h2First.resumed, 0, JSON.stringify(h2First));
    assert.deepEqual(counts(h3First.by_protocol.h3), [1, 1, 0, 0, 0]);
    // h2 revisit: resumed with a ticket, no early data
    assert.deepEqual(counts(h2Second.by_protocol.h2), [1, 0, 1, 0, 0]);
    assert.equal(h2Second.early_requests, 0);
    // h3 revisit: resumed, 0-RTT offered and accepted, the document's request in it
    assert.deepEqual(counts(h3Second.by_protocol.h3), [1, 0, 1, 1, 1]);
    assert.ok(h3Second.early_requests >= 1, JSON.stringify(h3Second));
    // which saves a round trip: the document's response starts sooner than the first view's
    const [first, second] = [recs[2], recs[3]].map((rec) => rec.navigation.responseStart);
    assert.ok(second < first, `revisit ${second} ms, first view ${first} ms`);
    assert.deepEqual(await leftBehind(r.made), [], 'a run left these behind');
  });
});
