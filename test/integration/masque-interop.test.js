// RFC 9298 for real (issue 31 item 4): an HTTP/3 client we did not write,
// aioquic from PyPI (pinned; the venv harness/setup.sh makes in
// .tools/aioquic), driven by test/interop/connect_udp_client.py, against a
// real quic-pep Proxy-GW with --masque-listen over loopback. Proxy-GW is
// given no origin key (no --next-hop-ca or --next-hop-spki). The client
// relays UDP to an echo target here through two proxying requests on one
// connection and checks every echo and each refusal's status; this test
// checks the client's verdicts, what the target saw and Proxy-GW's counters.
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { makeCertificate } from '../../harness/core/certificates.js';
import { binPath, ROOT, run, spawnReady } from '../../harness/core/sys.js';

const PYTHON = path.join(ROOT, '.tools/aioquic/bin/python');
const CLIENT = path.join(ROOT, 'test/interop/connect_udp_client.py');
const NAME = 'pep-gw.satbench.test';

// A UDP echo server on loopback that remembers who sent to it.
async function echoServer() {
  const socket = dgram.createSocket('udp4');
  const peers = [];
  socket.on('message', (msg, from) => {
    peers.push(`${from.address}:${from.port}`);
    socket.send(msg, from.port, from.address);
  });
  await new Promise((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return { socket, peers, port: socket.address().port };
}

// The address a start-up line names (`masque listening on ADDR/udp`).
function bound(log, what) {
  const line = log.split('\n').find((l) => l.includes(what));
  assert.ok(line, `no '${what}' line in the log: ${log}`);
  return line.split(what)[1].split('/')[0];
}

describe('CONNECT-UDP interop (integration: aioquic against Proxy-GW --masque-listen)', function () {
  this.timeout(120000);
  let dir;
  let gw;
  let echo;

  before(async () => {
    assert.ok(fs.existsSync(PYTHON), `${PYTHON} is missing: harness/setup.sh installs aioquic (npm test runs it)`);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-masque-'));
    const tls = await makeCertificate({ name: NAME, ip: '127.0.0.1', dir: path.join(dir, 'tls') });
    echo = await echoServer();
    // Proxy-GW as h3-masque would run it: the tunnel's listener (unused
    // here) and the CONNECT-UDP one, no origin trusted
    gw = {
      log: path.join(dir, 'gw.log'),
      stats: path.join(dir, 'gw.stats.json'),
      cert: tls.cert,
    };
    gw.child = await spawnReady(
      binPath('quic-pep'),
      [
        ...['--listen', '127.0.0.1:0', '--cert', tls.cert, '--key', tls.key],
        ...['--role', 'gw', '--tunnel', '--transparent', '--label', 'gw'],
        ...['--masque-listen', '127.0.0.1:0', '--masque-allow', '127.0.0.1'],
        ...['--log', gw.log, '--stats', gw.stats],
      ],
      { logPath: path.join(dir, 'gw.stderr.log'), what: 'Proxy-GW' },
    );
    gw.masque = bound(fs.readFileSync(gw.log, 'utf8'), 'masque listening on ');
  });

  after(async () => {
    if (gw?.child && gw.child.exitCode === null) gw.child.kill('SIGKILL');
    echo?.socket.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('relays UDP both ways for aioquic and refuses what RFC 9298 and RFC 9220 say to refuse', async () => {
    const r = await run(
      PYTHON,
      [
        CLIENT,
        ...['--proxy', gw.masque, '--name', NAME, '--ca', gw.cert],
        ...['--echo', `127.0.0.1:${echo.port}`, '--forbidden', '192.0.2.1:53'],
      ],
      { allowFail: true, timeoutMs: 60000 },
    );
    assert.notEqual(r.code, 2, `the client could not run: ${r.stderr}`);
    const { checks } = JSON.parse(r.stdout);
    const failed = checks.filter((c) => !c.ok);
    assert.deepEqual(failed, [], JSON.stringify(failed, null, 1));
    assert.equal(r.code, 0, r.stderr);
    const names = checks.map((c) => c.name);
    for (const want of [
      'request 1 to the echo target answered 200 with Capsule-Protocol ?1',
      'request 2 to the echo target answered 200 with Capsule-Protocol ?1',
      'every UDP payload sent on stream 0 came back on stream 0',
      'every UDP payload sent on stream 4 came back on stream 4',
      "a DATAGRAM capsule's payload was relayed and its echo came back as a datagram",
      "the proxy closed request 1 after the client's FIN",
      'request 2 still relays after request 1 ended',
    ]) {
      assert.ok(names.includes(want), `no check '${want}' among ${JSON.stringify(names)}`);
    }
    const refused = checks.filter((c) => c.name.startsWith('refused: '));
    assert.equal(refused.length, 14, JSON.stringify(names));
    const status = (n) => checks.find((c) => c.name === `refused: ${n}`).got.status;
    assert.equal(status('a target the proxy does not allow'), 403);
    assert.equal(status('an unsupported :protocol (webtransport)'), 501);
    assert.equal(status('target_port 0'), 400);

    // the target saw Proxy-GW's sockets only: one per proxying request
    const sources = [...new Set(echo.peers)];
    assert.equal(sources.length, 2, JSON.stringify(sources));
    assert.ok(echo.peers.length >= 22, `${echo.peers.length} packets reached the target`);

    // Proxy-GW's counters, written as it stops
    gw.child.kill('SIGTERM');
    await new Promise((resolve) => gw.child.once('exit', resolve));
    const m = JSON.parse(fs.readFileSync(gw.stats, 'utf8')).masque;
    assert.equal(m.connections, 1, JSON.stringify(m));
    assert.equal(m.proxied, 2, JSON.stringify(m));
    assert.equal(m.active, 0, JSON.stringify(m));
    // 20 datagrams and one more on request 2, one capsule; each echoed as a datagram
    assert.deepEqual([m.datagrams.up, m.capsules.up, m.datagrams.down, m.capsules.down], [21, 1, 22, 0]);
    assert.equal(m.refused['400'], 8, JSON.stringify(m.refused));
    assert.equal(m.refused['403'], 1, JSON.stringify(m.refused));
    assert.equal(m.refused['404'], 1, JSON.stringify(m.refused));
    assert.equal(m.refused['405'], 1, JSON.stringify(m.refused));
    // connect-ip: 501 from us, or reset by h3 before we see it (malformed)
    assert.equal((m.refused['501'] ?? 0) + m.malformed, 3, JSON.stringify(m));
    const log = fs.readFileSync(gw.log, 'utf8');
    assert.match(log, /masque req \d+ from 127\.0\.0\.1:\d+ proxying stream 0 to 127\.0\.0\.1:\d+/);
    assert.match(log, /refused 403: 192\.0\.2\.1:53 is not within --masque-allow 127\.0\.0\.1\/32/);
  });
});
