// Real downloads per bulk protocol over a short-delay testbed: satbulk
// (QUIC and TCP) and Chromium (h1, h2, h3), linkem at 20 Mbit/s between.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { records, satbench, SHORT, writeProfile, leftBehind } from './helpers.js';

const RATE_BYTES_PER_S = 20e6 / 8;

// What every timed download must look like: the bins cover the duration
// and sum to the bytes, no bin beyond what the link can carry (twice, for
// bytes bunched behind a stall), and the total below the link's capacity
// but well above nothing.
function checkTimed(rec, seconds) {
  const p = rec.scenario.protocol;
  assert.equal(rec.ok, true, `${p}: ${rec.error}`);
  assert.equal(rec.kind, 'bulk');
  const { bins, bin_ms: binMs } = rec.goodput;
  assert.equal(binMs, 100);
  assert.equal(bins.length, seconds * 10, p);
  assert.equal(
    bins.reduce((a, b) => a + b, 0),
    rec.metrics.bytes,
    p,
  );
  const cap = RATE_BYTES_PER_S * seconds;
  assert.ok(
    rec.metrics.bytes <= cap * 1.02,
    `${p}: ${rec.metrics.bytes} bytes in ${seconds} s is more than 20 Mbit/s carries`,
  );
  assert.ok(rec.metrics.bytes >= cap * 0.5, `${p}: only ${rec.metrics.bytes} bytes in ${seconds} s`);
  assert.ok(Math.max(...bins) <= RATE_BYTES_PER_S * 0.1 * 2, `${p}: a bin of ${Math.max(...bins)} bytes`);
  // RTT 30 ms: at least one round trip to connect (a PEP in st answers at
  // once), another end to end to the first byte
  if (p.endsWith('-pep'))
    assert.ok(rec.metrics.connect_ms < 25, `${p}: connect ${rec.metrics.connect_ms} ms: not answered by the PEP?`);
  else assert.ok(rec.metrics.connect_ms >= 25, `${p}: connect ${rec.metrics.connect_ms} ms`);
  assert.ok(rec.metrics.ttfb_ms >= rec.metrics.connect_ms + 25, `${p}: first byte ${rec.metrics.ttfb_ms} ms`);
  assert.ok(rec.metrics.bytes_at_1s > 0 && rec.metrics.bytes_at_1s < rec.metrics.bytes, p);
  assert.equal(rec.metrics.duration_ms, seconds * 1000);
  // Chromium's own transfer, HTTP/3 above all, is CPU-bound at this rate on
  // 2 cores: on a busy machine it may not reach 90 % in 2 s, which says
  // nothing of the measurement (it failed so on fresh clones beside other
  // work); satbulk's must, and a browser's, when it gets there, in time
  const upToSpeed = rec.metrics.time_to_90pct_rate_ms;
  if (!p.startsWith('browser-') || upToSpeed !== undefined)
    assert.ok(upToSpeed >= 0 && upToSpeed < seconds * 1000, `${p}: never up to speed`);
}

// `satbench bulk` over the short profile into a fresh folder: {r, out}.
async function bulkRun(args, opts) {
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-bulk-')), 'r');
  const r = await satbench(['bulk', '--profile', writeProfile(SHORT), ...args, '-n', '1', '--out', out], opts);
  return { r, out };
}

// 4 MB over `protocol` with 2 % loss on the satellite link and
// --pep-sat fec=8/10: Proxy-GW sends two repairs after every eight
// datagrams and Proxy-ST rebuilds what the link lost. The record.
async function codedDownload(protocol) {
  const { r, out } = await bulkRun(['--protocol', protocol, '--size', '4MB', '--loss', '2', '--pep-sat', 'fec=8/10']);
  assert.equal(r.code, 0, r.stderr);
  const [rec] = records(out);
  assert.equal(rec.ok, true, rec.error);
  assert.equal(rec.metrics.bytes, 4e6);
  assert.deepEqual(rec.pep.settings.fec, { setting: '8/10', hop_rtt_ms: 20 });
  assert.equal(rec.pep.fec.setting, '8/10');
  // 4 MB is over 2500 datagrams: about 2 % of them lost, most rebuilt
  const down = rec.pep.fec.down;
  assert.ok(down.source_packets > 2500, JSON.stringify(down));
  assert.ok(down.repair_packets >= down.source_packets / 4 - 1, JSON.stringify(down));
  assert.ok(down.repaired > 10, JSON.stringify(down));
  assert.ok(down.lost < down.repaired, JSON.stringify(down));
  return rec;
}

describe('bulk downloads (integration)', function () {
  it('downloads for 2 s over quic, tcp, browser-h1, browser-h2 and browser-h3', async () => {
    const { r, out } = await bulkRun(
      ['--protocol', 'quic,tcp,browser-h1,browser-h2,browser-h3', '--duration', '2', '--json'],
      { timeoutMs: 240000 },
    );
    assert.equal(r.code, 0, r.stderr);
    const recs = records(out);
    assert.deepEqual(
      recs.map((x) => x.scenario.protocol),
      ['quic', 'tcp', 'browser-h1', 'browser-h2', 'browser-h3'],
    );
    for (const rec of recs) checkTimed(rec, 2);
    const seen = Object.fromEntries(recs.map((x) => [x.scenario.protocol, x.protocol_seen]));
    assert.deepEqual(seen, {
      quic: 'satbulk',
      tcp: 'tcp',
      'browser-h1': 'http/1.1',
      'browser-h2': 'h2',
      'browser-h3': 'h3',
    });
    // the sender's trace: QUIC and TCP windows over time, on the client's clock
    for (const rec of recs.slice(0, 2)) {
      assert.equal(rec.sender.time_base, 'client_t0');
      assert.ok(rec.sender.cwnd.length >= 15, `${rec.scenario.protocol}: ${rec.sender.cwnd.length} samples`);
      assert.ok(rec.sender.max_cwnd > 12000, rec.scenario.protocol);
    }
    const summary = JSON.parse(r.stdout);
    assert.equal(summary.groups.length, 5);
    for (const g of summary.groups) {
      assert.equal(g.kind, 'bulk');
      assert.equal(g.failed, 0);
      assert.equal(g.curve.t_ms.length, 20);
      assert.equal(g.metrics.bytes_at_1s.n, 1);
      assert.equal(g.link_rate_mbps, 20);
    }
    assert.ok(fs.existsSync(path.join(out, 'index.html')));
    assert.deepEqual(await leftBehind(r.made), [], 'a run left these behind');
  });

  it('downloads a size over quic and tcp and stops at its last byte', async () => {
    const { r, out } = await bulkRun(['--protocol', 'quic,tcp', '--size', '2MB']);
    assert.equal(r.code, 0, r.stderr);
    for (const rec of records(out)) {
      assert.equal(rec.ok, true, rec.error);
      assert.equal(rec.metrics.bytes, 2e6);
      assert.equal(rec.metrics.time_to_2mb_ms, rec.metrics.duration_ms);
      // 2 MB at 20 Mbit/s take at least 0.8 s, plus slow start
      assert.ok(rec.metrics.duration_ms > 800 && rec.metrics.duration_ms < 5000, `${rec.metrics.duration_ms} ms`);
      assert.equal(rec.goodput.bins.length, Math.ceil(rec.metrics.duration_ms / 100));
    }
    assert.match(r.stdout, /MB@1s/); // the table without --json
  });

  it('runs each -pep protocol through both proxies of its chain', async () => {
    for (const protocol of ['quic-pep', 'tcp-pep']) {
      const { r, out } = await bulkRun(['--protocol', protocol, '--duration', '2']);
      assert.equal(r.code, 0, r.stderr);
      const [rec] = records(out);
      checkTimed(rec, 2);
      // each proxy relayed the download's connection (stats per role: st, gw)
      for (const role of ['st', 'gw']) {
        assert.ok(
          rec.pep.stats[role].connections >= 1,
          `${protocol}: ${role} relayed ${JSON.stringify(rec.pep.stats[role])}`,
        );
      }
    }
  });

  it("repairs the satellite hop's losses between the QUIC PEPs with --pep-sat fec=K/N, and records what it cost", async () => {
    const rec = await codedDownload('quic-pep');
    const down = rec.pep.fec.down;
    // two repairs per eight (per fewer, for a window flushed before it
    // filled), each a datagram long, and the headers
    assert.ok(down.overhead > 0.25 && down.overhead < 0.4, JSON.stringify(down));
    assert.ok(rec.pep.fec.up.repair_packets > 0, 'the acks going up are coded too');
  });

  // satbulk's QUIC to the server's own address, caught by TPROXY in st on
  // satbulk's port and carried end to end in CONNECT-UDP to Proxy-GW
  it("carries quic-masque's download through the MASQUE tunnel, end to end", async () => {
    const { r, out } = await bulkRun(['--protocol', 'quic-masque', '--duration', '2']);
    assert.equal(r.code, 0, r.stderr);
    const [rec] = records(out);
    checkTimed(rec, 2);
    assert.equal(rec.protocol_seen, 'satbulk');
    assert.equal(rec.download.addr, '198.18.3.2:4434', "satbulk get went to the server's own address");
    assert.equal(rec.pep.kind, 'masque');
    assert.deepEqual(rec.pep.settings.ports, [4434]);
    const m = rec.pep.masque;
    assert.ok(m.requests_opened >= 1 && m.requests_accepted === m.requests_opened, JSON.stringify(m));
    assert.equal(m.connections, 1, JSON.stringify(m));
    // the download's bytes came down inside the tunnel, its ACKs went up
    assert.ok(m.bytes.down > rec.metrics.bytes && m.datagrams.up > 10, JSON.stringify(m));
  });

  // the second connection leaves from the first's endpoint: the same flow,
  // carried in the same proxying request
  it('makes a quic-masque revisit through the tunnel', async () => {
    const { r, out } = await bulkRun(['--protocol', 'quic-masque', '--size', '2MB', '--view', 'revisit']);
    assert.equal(r.code, 0, r.stderr);
    const [rec] = records(out);
    assert.equal(rec.ok, true, rec.error);
    assert.equal(rec.scenario.view, 'revisit');
    assert.deepEqual(
      [rec.first_connection.ok, rec.first_connection.metrics.bytes, rec.metrics.bytes],
      [true, 2e6, 2e6],
    );
    const m = rec.pep.masque;
    assert.equal(m.requests_opened, 1, JSON.stringify(m));
    assert.ok(m.bytes.down > 4e6, `both connections' bytes crossed the tunnel: ${JSON.stringify(m)}`);
  });

  it("codes quic-masque's tunnel with --pep-sat fec=K/N and rebuilds its losses", async () => {
    const rec = await codedDownload('quic-masque');
    assert.ok(rec.pep.masque.bytes.down > 4e6, JSON.stringify(rec.pep.masque));
  });

  // An asymmetric link (20 Mbit/s down, 5 up): an upload goes at the return
  // link's rate, counted where it arrives (the server), from the client's t0.
  it('uploads over quic, tcp and both PEP chains at the return link rate, counted at the server', async () => {
    const asym = {
      satellite: { forward: { delay: '10ms', rate: '20mbit' }, return: { delay: '10ms', rate: '5mbit' } },
      internet: { forward: { delay: '5ms' }, return: { delay: '5ms' } },
    };
    const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-bulk-')), 'r');
    const r = await satbench([
      'bulk',
      '--profile',
      writeProfile(asym),
      '--protocol',
      'quic,tcp,quic-pep,tcp-pep',
      '--direction',
      'up',
      '--duration',
      '2',
      '-n',
      '1',
      '--out',
      out,
    ]);
    assert.equal(r.code, 0, r.stderr);
    const recs = records(out);
    assert.equal(recs.length, 4);
    const cap = (5e6 / 8) * 2;
    for (const rec of recs) {
      const p = rec.scenario.protocol;
      assert.equal(rec.ok, true, `${p}: ${rec.error}`);
      assert.equal(rec.scenario.direction, 'up');
      assert.equal(rec.link_rate_mbps, 5);
      assert.equal(rec.goodput.bins.length, 20, p);
      assert.equal(
        rec.goodput.bins.reduce((a, b) => a + b, 0),
        rec.metrics.bytes,
        p,
      );
      // the return link's 5 Mbit/s, not the forward link's 20
      assert.ok(rec.metrics.bytes <= cap * 1.02, `${p}: ${rec.metrics.bytes} bytes up in 2 s`);
      assert.ok(rec.metrics.bytes >= cap * 0.4, `${p}: only ${rec.metrics.bytes} bytes up in 2 s`);
      // the server's first byte comes after the client connected, on one clock
      assert.ok(rec.metrics.ttfb_ms > rec.metrics.connect_ms, `${p}: ${JSON.stringify(rec.metrics)}`);
      assert.equal(rec.sender, null, 'an upload has no server-side sender trace');
      if (p.endsWith('-pep'))
        for (const role of ['st', 'gw']) assert.ok(rec.pep.stats[role].connections >= 1, `${p}: ${role}`);
    }
    assert.match(fs.readFileSync(path.join(out, 'index.html'), 'utf8'), /2 s upload/);
  });

  // quic4sat-medium's bandwidth-delay product (50 Mbit/s × 650 ms, 4 MB) at
  // half the delay and twice the rate, so that CI can afford it: cc=sat, the
  // warm tunnel's default, carries 40 MB whole.
  const fat = {
    satellite: { forward: { delay: '150ms', rate: '100mbit' }, return: { delay: '150ms', rate: '20mbit' } },
    internet: { forward: { delay: '5ms' }, return: { delay: '5ms' } },
  };
  const download = async (profile, extra) => {
    const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-bulk-')), 'r');
    const args = ['bulk', '--profile', profile, '--protocol', 'quic-pep', '--size', '40MB', '-n', '1'];
    const r = await satbench([...args, ...extra, '--out', out]);
    assert.equal(r.code, 0, r.stderr);
    return records(out)[0];
  };

  it('carries 40 MB over a 4 MB bandwidth-delay product through quic-pep', async () => {
    const sat = await download(writeProfile(fat), []);
    assert.equal(sat.ok, true, sat.error);
    assert.equal(sat.metrics.bytes, 40e6);
    assert.equal(sat.pep.settings.hops.satellite.cc, 'sat');
    assert.equal(sat.logs_dir, undefined, 'an ok run keeps no logs');
    for (const role of ['quic-pep-st', 'quic-pep-gw', 'satbulk', 'satbulk-get'])
      assert.ok(sat.cpu_ms[role] > 0, `${role}: ${JSON.stringify(sat.cpu_ms)}`);
  });

  // The forward link all but stops 8 s after it starts (1 kbit/s, a packet
  // every 10 s) for longer than the run: 40 MB at 20 Mbit/s take 16 s, so
  // the outage falls inside the download however long the set-up took, and
  // the tunnel, idle for more than its 1 s timeout, dies of it.
  it('a tunnel lost in a link outage fails the run; both proxies logs are kept and name the cause', async () => {
    const profile = writeProfile({
      ...fat,
      satellite: { ...fat.satellite, forward: { delay: '150ms', rate: '20mbit', schedule: { file: 'outage.csv' } } },
    });
    fs.writeFileSync(path.join(path.dirname(profile), 'outage.csv'), 'time_s,rate_mbit\n0,20\n8,0.001\n600,20\n');
    const lost = await download(profile, ['--pep-sat', 'idle-timeout-ms=1000']);
    assert.equal(lost.ok, false, 'the download outlived the outage');
    assert.ok(lost.metrics.bytes > 0 && lost.metrics.bytes < 40e6, `${lost.metrics.bytes}`);
    // the evidence stays in the output folder under the run's name
    assert.match(lost.logs_dir, /logs\/.*quic-pep_40_MB-run1$/);
    // Proxy-ST's log names how its tunnel ended, Proxy-GW's passes the loss
    // on to its client connection (that a later close by the proxy keeps
    // the cause is tests/tunnel.rs's closing_a_dead_tunnel_…)
    const log = (role) => fs.readFileSync(path.join(lost.logs_dir, `quic-pep_quic-pep-${role}.log`), 'utf8');
    assert.match(log('st'), /tunnel to .* lost \(timeout\)/, log('st'));
    assert.match(log('gw'), /tunnel lost: timeout/, log('gw'));
  });
});
