// The split-TCP PEP chain over a real short-delay testbed: bytes intact
// both ways through st's and gw's proxies, the satellite hop's congestion
// control and initial window as configured, a real Chromium h1 page load
// through the chain, and garbage, half-open and over-the-cap connections
// that leave the proxies running with nothing leaked.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createTestbed, startProcess } from '../../harness/testbed/testbed.js';
import { loadProfile } from '../../harness/testbed/profiles.js';
import { run, binPath } from '../../harness/core/sys.js';
import { ADDRESSES } from '../../harness/testbed/addressing.js';
import { loadPage } from '../../harness/pageload/load.js';
import { startOrigin } from '../../harness/servers/origin.js';
import { startTcpPepChain } from '../../harness/pep/tcp-chain.js';
import { alive, SHORT, until, writeProfile } from './helpers.js';

const SINK_PORT = 5001; // a hashing sink in the server namespace
const CLOSED_PORT = 5002; // intercepted, but nothing listens at the server
const IDLE_MS = 3000;
const MAX_CONNS = 16;

function site() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-tpep-site-'));
  fs.writeFileSync(
    path.join(dir, 'index.html'),
    '<!doctype html><html><head><link rel="stylesheet" href="s.css"></head><body><h1>Split</h1><img src="p.gif" width="1" height="1"><script src="a.js"></script></body></html>',
  );
  fs.writeFileSync(path.join(dir, 's.css'), 'h1 { color: #123; }');
  fs.writeFileSync(path.join(dir, 'a.js'), 'document.title = "split";');
  fs.writeFileSync(
    path.join(dir, 'p.gif'),
    Buffer.from('R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==', 'base64'),
  );
  fs.writeFileSync(path.join(dir, 'big.bin'), crypto.randomBytes(3_000_000));
  return dir;
}

// Runs a Node script inside a namespace; resolves with its stdout.
function nodeIn(ns, script, args = [], { timeoutMs = 60000 } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn('ip', ['netns', 'exec', ns, process.execPath, '--input-type=module', '-e', script, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d) => {
      err += d;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(out);
      else reject(new Error(`node in ${ns} exited ${code}: ${err.trim()}`));
    });
  });
}

// Answers every connection, once the sender half-closed, with
// "<bytes> <sha256>" and closes: an upload check that needs the FIN passed on.
const SINK = `
import net from 'node:net';
import crypto from 'node:crypto';
const [addr, port] = process.argv.slice(-2);
net.createServer((s) => {
  const h = crypto.createHash('sha256');
  let n = 0;
  s.on('data', (d) => { n += d.length; h.update(d); });
  s.on('end', () => s.end(n + ' ' + h.digest('hex') + '\\n'));
  s.on('error', () => {});
}).listen(Number(port), addr, () => console.log('ready'));
`;

const UPLOAD = `
import net from 'node:net';
import crypto from 'node:crypto';
const [addr, port, bytes] = process.argv.slice(-3);
const data = crypto.randomBytes(Number(bytes));
const want = data.length + ' ' + crypto.createHash('sha256').update(data).digest('hex');
const s = net.connect(Number(port), addr, () => s.end(data));
let got = '';
s.on('data', (d) => { got += d; });
s.on('end', () => { console.log(JSON.stringify({ want, got: got.trim() })); });
s.on('error', (e) => { console.error(e.message); process.exit(1); });
`;

// Garbage and half-open connections; prints what each saw.
const GARBAGE = `
import net from 'node:net';
import crypto from 'node:crypto';
const [addr, closedPort, holdMs] = process.argv.slice(-3);
const results = [];
const open = (port, fn) => new Promise((resolve) => {
  const s = net.connect({ port: Number(port), host: addr });
  const r = { port: Number(port), connected: false, error: null, bytes: 0 };
  results.push(r);
  s.on('connect', () => { r.connected = true; fn(s); });
  s.on('data', (d) => { r.bytes += d.length; });
  s.on('error', (e) => { r.error = e.code; resolve(); });
  s.on('close', () => resolve());
  setTimeout(() => { s.destroy(); resolve(); }, Number(holdMs));
});
const all = [];
for (let i = 0; i < 2; i++) all.push(open(closedPort, () => {}));                        // nobody at the server
for (let i = 0; i < 5; i++) all.push(open(80, () => {}));                                  // connect, say nothing
for (let i = 0; i < 5; i++) all.push(open(80, (s) => s.write(crypto.randomBytes(3000))));  // random bytes, stay
for (let i = 0; i < 5; i++) all.push(open(443, (s) => s.end(crypto.randomBytes(700))));   // random bytes into TLS, half-close
for (let i = 0; i < 3; i++) all.push(open(80, (s) => s.resetAndDestroy()));              // connect, reset at once
await Promise.all(all);
console.log(JSON.stringify(results));
`;

const HOLD = `
import net from 'node:net';
const [addr, port] = process.argv.slice(-2);
const s = net.connect(Number(port), addr, () => console.log('connected'));
s.on('error', () => {});
setTimeout(() => s.destroy(), 20000);
`;

const sha256 = (buf) => crypto.createHash('sha256').update(buf).digest('hex');
const pidOf = (tb, role) => tb.state.processes.find((p) => p.role === role).pid;
const fdCount = (pid) => fs.readdirSync(`/proc/${pid}/fd`).length;

// The established TCP sockets of a namespace as `ss -tin` shows them:
// [{local, peer, info}] (info: the line of TCP details under each socket).
async function sockets(ns) {
  const r = await run('ip', ['netns', 'exec', ns, 'ss', '-tinH', 'state', 'established']);
  const lines = r.stdout.split('\n');
  const out = [];
  for (let i = 0; i < lines.length; i++) {
    if (/^\s/.test(lines[i])) continue;
    const addrs = lines[i].split(/\s+/).filter((t) => /^\d+\.\d+\.\d+\.\d+:\d+$/.test(t));
    if (addrs.length === 2)
      out.push({ local: addrs[0], peer: addrs[1], info: /^\s/.test(lines[i + 1] ?? '') ? lines[i + 1].trim() : '' });
  }
  return out;
}

describe('split-TCP PEP chain (integration, real namespaces)', function () {
  this.timeout(180000);
  let tb;
  let chain;
  let siteDir;
  let spki;

  before(async function () {
    siteDir = site();
    tb = await createTestbed({ profile: loadProfile(writeProfile(SHORT)), link: 'linkem', seed: 7 });
    ({ spki } = await startOrigin(tb, { siteDir }));
    await startProcess(
      tb.state,
      'sink',
      [
        'ip',
        'netns',
        'exec',
        tb.ns.server,
        process.execPath,
        '--input-type=module',
        '-e',
        SINK,
        ADDRESSES.server,
        String(SINK_PORT),
      ],
      { logPath: path.join(tb.dir, 'sink.log'), what: 'the upload sink' },
    );
    chain = await startTcpPepChain(tb, {
      preset: 'paper',
      ports: [80, 443, SINK_PORT, CLOSED_PORT],
      idleTimeoutMs: IDLE_MS,
      maxConns: MAX_CONNS,
    });
  });

  after(async () => {
    await tb?.destroy();
    if (siteDir) fs.rmSync(siteDir, { recursive: true, force: true });
  });

  it('carries a download and an upload intact through both proxies, which count them', async () => {
    const before = await chain.stats();
    const out = path.join(tb.dir, 'big.out');
    const r = await run(
      'ip',
      ['netns', 'exec', tb.ns.client, 'curl', '-sS', '--fail', '-o', out, `http://${ADDRESSES.server}/big.bin`],
      { timeoutMs: 60000 },
    );
    assert.ok(r.ok);
    assert.equal(
      sha256(fs.readFileSync(out)),
      sha256(fs.readFileSync(path.join(siteDir, 'big.bin'))),
      'download corrupted',
    );
    const up = JSON.parse(await nodeIn(tb.ns.client, UPLOAD, [ADDRESSES.server, String(SINK_PORT), String(2_000_000)]));
    assert.equal(up.got, up.want, 'upload corrupted or the FIN was not passed on');
    const s = await until(async () => {
      const x = await chain.stats();
      return x.st.active === 0 && x.gw.active === 0 ? x : null;
    });
    for (const role of ['st', 'gw']) {
      assert.equal(s[role].error, undefined, `${role}: ${s[role].error}`);
      assert.equal(s[role].connections - before[role].connections, 2, `${role} relayed ${JSON.stringify(s[role])}`);
      assert.ok(s[role].bytes.down - before[role].bytes.down >= 3_000_000, `${role} down ${s[role].bytes.down}`);
      assert.ok(s[role].bytes.up - before[role].bytes.up >= 2_000_000, `${role} up ${s[role].bytes.up}`);
      assert.equal(s[role].ended.fin - before[role].ended.fin, 2, role);
      assert.equal(s[role].splice_fallbacks, 0, role);
    }
    const log = fs.readFileSync(chain.logs.gw, 'utf8');
    assert.match(log, /conn src=198\.18\.2\.1:\d+ dst=198\.18\.3\.2:80 up=\d+ down=3000\d{3} ms=\d+ end=fin/);
  });

  it('runs the satellite hop with NewReno and an initial window of 100, the ground hops with Cubic and 10', async () => {
    const holder = spawn(
      'ip',
      ['netns', 'exec', tb.ns.client, process.execPath, '--input-type=module', '-e', HOLD, ADDRESSES.server, '80'],
      { stdio: ['ignore', 'pipe', 'ignore'] },
    );
    try {
      const server = `${ADDRESSES.server}:80`;
      const find = async (ns, pred) => until(async () => (await sockets(ns)).find(pred), 5000);
      // st: accepted from the client (ground), onward over the satellite
      const stIn = await find(tb.ns.st, (s) => s.local === server && s.peer.startsWith(`${ADDRESSES.client}:`));
      const stOut = await find(tb.ns.st, (s) => s.peer === server && s.local.startsWith(`${ADDRESSES.st}:`));
      // gw: accepted from st (satellite), onward to the server (ground)
      const gwIn = await find(tb.ns.gw, (s) => s.local === server && s.peer.startsWith(`${ADDRESSES.st}:`));
      const gwOut = await find(tb.ns.gw, (s) => s.peer === server && s.local.startsWith('198.18.3.1:'));
      for (const [name, s, cc, cwnd] of [
        ['st onward (satellite)', stOut, 'reno', 100],
        ['gw accepted (satellite)', gwIn, 'reno', 100],
        ['st accepted (client side)', stIn, 'cubic', 10],
        ['gw onward (server side)', gwOut, 'cubic', 10],
      ]) {
        assert.match(s.info, new RegExp(`^${cc} `), `${name}: ${s.info}`);
        assert.match(s.info, new RegExp(`\\bcwnd:${cwnd}\\b`), `${name}: ${s.info}`);
      }
      // The satellite hop's receivers offer room for the 100-segment window.
      for (const s of [stOut, gwIn]) assert.ok(Number(/rcv_ssthresh:(\d+)/.exec(s.info)[1]) >= 100 * 1448, s.info);
    } finally {
      holder.kill();
    }
  });

  it('loads a page in Chromium over h1 through the chain', async () => {
    const before = await chain.stats();
    const rec = await loadPage({ clientNs: tb.ns.client, protocol: 'h1', spki, timeoutMs: 60000 });
    assert.equal(rec.ok, true, rec.error);
    assert.equal(rec.protocol_seen.document, 'http/1.1');
    assert.deepEqual(Object.keys(rec.protocol_seen.resources), ['http/1.1']);
    assert.equal(rec.metrics.resource_count, 3);
    const s = await chain.stats();
    for (const role of ['st', 'gw']) {
      assert.ok(s[role].connections > before[role].connections, `${role} relayed nothing of the page load`);
    }
    assert.match(fs.readFileSync(chain.logs.st, 'utf8'), /conn src=198\.18\.1\.2:\d+ dst=198\.18\.3\.2:80 /);
  });

  it('survives garbage, half-open, reset and over-the-cap connections and frees them all', async () => {
    const pids = { st: pidOf(tb, 'tcp-pep-st'), gw: pidOf(tb, 'tcp-pep-gw') };
    await until(async () => {
      const x = await chain.stats();
      return x.st.active === 0 && x.gw.active === 0;
    }, IDLE_MS + 5000);
    const fdsBefore = { st: fdCount(pids.st), gw: fdCount(pids.gw) };
    const before = await chain.stats();
    // SYN only: the client's packets after its SYN never leave its namespace.
    await run('ip', ['netns', 'exec', tb.ns.client, 'nft', '-f', '-'], {
      input:
        'table ip tpep_test {\n  chain out {\n    type filter hook output priority 0;\n    tcp sport 40999 tcp flags != syn drop\n  }\n}\n',
    });
    const synOnly = spawn(
      'ip',
      [
        'netns',
        'exec',
        tb.ns.client,
        process.execPath,
        '-e',
        `require('net').connect({ port: 80, host: '${ADDRESSES.server}', localPort: 40999 }).on('error', () => {}); setTimeout(() => {}, 8000)`,
      ],
      { stdio: 'ignore' },
    );
    try {
      // 20 connections at once against a cap of 16: some are refused.
      const results = JSON.parse(
        await nodeIn(tb.ns.client, GARBAGE, [ADDRESSES.server, String(CLOSED_PORT), String(IDLE_MS + 3000)]),
      );
      assert.equal(results.length, 20);
      const closed = results.filter((r) => r.port === CLOSED_PORT);
      assert.ok(
        closed.every((r) => r.error === 'ECONNRESET' || r.bytes === 0),
        JSON.stringify(closed),
      );
      for (const role of ['st', 'gw']) assert.ok(alive(pids[role]), `${role} proxy died`);
      const s = await until(async () => {
        const x = await chain.stats();
        return x.st.active === 0 && x.gw.active === 0 ? x : null;
      }, IDLE_MS + 5000);
      const d = (role, f) => f(s[role]) - f(before[role]);
      assert.ok(d('st', (x) => x.accepted) >= 20, `st accepted ${d('st', (x) => x.accepted)}`);
      assert.ok(d('st', (x) => x.refused.cap) >= 1, 'the cap was never hit');
      assert.match(fs.readFileSync(chain.logs.st, 'utf8'), /connection cap reached: 16 connections are being relayed/);
      assert.ok(d('gw', (x) => x.connect_failed) >= 1, 'gw never reported a failed onward connection');
      assert.ok(d('st', (x) => x.ended.idle) >= 1, 'nothing ended by the idle timeout');
      for (const role of ['st', 'gw']) {
        assert.ok(alive(pids[role]), `${role} proxy died`);
        assert.equal(fdCount(pids[role]), fdsBefore[role], `${role} holds more descriptors than before`);
      }
    } finally {
      synOnly.kill();
      await run('ip', ['netns', 'exec', tb.ns.client, 'nft', 'delete', 'table', 'ip', 'tpep_test'], {
        allowFail: true,
      });
    }
    // Still relaying afterwards.
    const r = await run('ip', [
      'netns',
      'exec',
      tb.ns.client,
      'curl',
      '-sS',
      '--fail',
      '-o',
      '/dev/null',
      '-w',
      '%{http_code}',
      `http://${ADDRESSES.server}/index.html`,
    ]);
    assert.equal(r.stdout, '200');
  });

  it('exits 0 on SIGTERM after writing its stats, and 2 with one line on bad arguments', async () => {
    const bad = await run(binPath('tcp-pep'), ['--max-conns', '0'], { allowFail: true });
    assert.equal(bad.code, 2);
    assert.equal(bad.stderr.trim().split('\n').length, 1);
    assert.match(bad.stderr, /--max-conns: 0 is out of range/);
    const statsPath = path.join(tb.dir, 'extra.stats.json');
    const child = spawn(
      'ip',
      ['netns', 'exec', tb.ns.st, binPath('tcp-pep'), '--listen', '127.0.0.1:9481', '--stats', statsPath],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    await new Promise((resolve, reject) => {
      child.stdout.on('data', (d) => {
        if (String(d).includes('ready')) resolve();
      });
      child.on('exit', (c) => reject(new Error(`exited ${c}`)));
    });
    child.removeAllListeners('exit');
    const code = new Promise((resolve) => child.on('exit', (c) => resolve(c)));
    child.kill('SIGTERM');
    assert.equal(await code, 0);
    assert.equal(JSON.parse(fs.readFileSync(statsPath, 'utf8')).connections, 0);
    const taken = await run('ip', ['netns', 'exec', tb.ns.st, binPath('tcp-pep'), '--listen', `127.0.0.1:9480`], {
      allowFail: true,
    });
    assert.equal(taken.code, 2);
    assert.match(taken.stderr, /cannot listen on 127\.0\.0\.1:9480: .*in use/i);
  });
});
