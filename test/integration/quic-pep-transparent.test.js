// The QUIC PEP chain in transparent mode on a real testbed: two origins on
// addresses of their own on the server (an archive's, originAddress(0) and
// (1)), each presenting a certificate for its own name made with one key;
// nftables TPROXY in st hands Proxy-ST the client's QUIC to both, and a real
// Chromium loads a page from one that pulls from the other, over HTTP/3,
// from both at once. Counters in the client namespace show every reply
// came from the address the client sent to, never from st's own.
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SHORT, writeProfile, until, alive } from './helpers.js';
import {
  createTestbed,
  destroyTestbed,
  listNamespaces,
  listTestbeds,
  startProcess,
} from '../../harness/testbed/testbed.js';
import { loadProfile } from '../../harness/testbed/profiles.js';
import { ORIGIN_PORT, originAddress } from '../../harness/testbed/addressing.js';
import { binPath, run, ROOT } from '../../harness/core/sys.js';
import { makeCertificate } from '../../harness/core/certificates.js';
import { summarizeOriginLog, parseOriginLogLine } from '../../harness/servers/origin-log.js';
import { baseChromiumArgs, withChromium } from '../../harness/browser/chromium.js';
import { QUIC_TPROXY, startQuicPepChain } from '../../harness/pep/quic-chain.js';

const NAMES = ['a.test', 'b.test'];
const ADDRS = [originAddress(0), originAddress(1)];

// A certificate for `name` with the key in `keyPath` (openssl: `origin
// gen-cert` makes a new key each time): every origin's certificate then
// has the one SPKI pin.
function certificateWithKey(dir, name, keyPath) {
  fs.mkdirSync(dir, { recursive: true });
  const cert = path.join(dir, 'cert.pem');
  const key = path.join(dir, 'key.pem');
  fs.copyFileSync(keyPath, key);
  execFileSync('openssl', [
    'req',
    '-x509',
    '-new',
    '-key',
    key,
    '-subj',
    `/CN=${name}`,
    '-addext',
    `subjectAltName=DNS:${name}`,
    '-days',
    '7',
    '-out',
    cert,
  ]);
  return { cert, key };
}

// Origin a.test: a page, its stylesheet and a 300 kB script, and a 300 kB
// script and an image from b.test; origin b.test serves those two.
function sites() {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-origins-'));
  const [a, b] = NAMES.map((n) => path.join(root, n));
  for (const d of [a, b]) fs.mkdirSync(d);
  fs.writeFileSync(
    path.join(a, 'index.html'),
    '<!doctype html><html><head><link rel="stylesheet" href="s.css"></head><body><h1>Two origins</h1>' +
      '<img src="https://b.test/p.gif" width="1" height="1"><script src="a.js"></script>' +
      '<script src="https://b.test/b.js"></script></body></html>',
  );
  fs.writeFileSync(path.join(a, 's.css'), 'h1 { color: #123; }');
  fs.writeFileSync(path.join(a, 'a.js'), `window.a = "${'a'.repeat(300000)}";`);
  fs.writeFileSync(path.join(b, 'b.js'), `window.b = "${'b'.repeat(300000)}";`);
  fs.writeFileSync(
    path.join(b, 'p.gif'),
    Buffer.from('R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==', 'base64'),
  );
  return { root, dirs: [a, b] };
}

async function startOrigins(tb, dirs) {
  const first = await makeCertificate({ name: NAMES[0], ip: ADDRS[0], dir: path.join(tb.dir, 'origin-0') });
  const tls = [first, certificateWithKey(path.join(tb.dir, 'origin-1'), NAMES[1], first.key)];
  const logs = [];
  for (const i of [0, 1]) {
    const log = path.join(tb.dir, `origin-${i}.requests.log`);
    logs.push(log);
    const flags = { root: dirs[i], addr: ADDRS[i], 'https-port': ORIGIN_PORT, cert: tls[i].cert, key: tls[i].key, log };
    const serve = ['serve', ...Object.entries(flags).flatMap(([k, v]) => [`--${k}`, v])];
    await startProcess(tb.state, `origin-${i}`, ['ip', 'netns', 'exec', tb.ns.server, binPath('origin'), ...serve], {
      logPath: path.join(tb.dir, `origin-${i}.log`),
      what: `origin ${NAMES[i]}`,
    });
  }
  return { spki: first.spki, logs };
}

// nftables counters in the client namespace: the QUIC it receives by
// source address (each origin's, and all of it) and sends by destination.
const COUNTERS = 'satbench_test_quic_peers';

async function countQuic(ns) {
  const each = (dir, field) => ADDRS.map((a) => `udp ${dir} ${ORIGIN_PORT} ip ${field} ${a} counter`).join('\n      ');
  const nft = `table ip ${COUNTERS} {
    chain input {
      type filter hook input priority 0; policy accept;
      ${each('sport', 'saddr')}
      udp sport ${ORIGIN_PORT} counter
    }
    chain output {
      type filter hook output priority 0; policy accept;
      ${each('dport', 'daddr')}
      udp dport ${ORIGIN_PORT} counter
    }
  }`;
  await run('ip', ['netns', 'exec', ns, 'nft', '-f', '-'], { input: nft });
  // {input: [per origin…, all], output: [per origin…, all]}, in packets
  return async () => {
    const text = (await run('ip', ['netns', 'exec', ns, 'nft', 'list', 'table', 'ip', COUNTERS])).stdout;
    const chains = text.split(/chain /).slice(1);
    return Object.fromEntries(
      chains.map((c) => [c.split(' ')[0], [...c.matchAll(/counter packets (\d+)/g)].map((m) => Number(m[1]))]),
    );
  };
}

// Chromium in the client namespace with each name mapped to its origin's
// address and Proxy-ST's key pinned: HTTP/3 forced for both names.
function loadTwoOrigins(tb, spki) {
  const rules = NAMES.map((n, i) => `MAP ${n} ${ADDRS[i]}`).join(', ');
  const args = (dir) => [
    ...baseChromiumArgs(dir),
    `--host-resolver-rules=${rules}`,
    `--ignore-certificate-errors-spki-list=${spki}`,
    '--enable-quic',
    `--origin-to-force-quic-on=${NAMES.map((n) => `${n}:${ORIGIN_PORT}`).join(',')}`,
  ];
  return withChromium({ clientNs: tb.ns.client, args, timeoutMs: 60000 }, async (browser) => {
    const page = await browser.newPage();
    const cdp = await page.createCDPSession();
    await cdp.send('Network.enable');
    const responses = [];
    cdp.on('Network.responseReceived', (e) =>
      responses.push({ url: e.response.url, protocol: e.response.protocol, ip: e.response.remoteIPAddress }),
    );
    await page.goto(`https://${NAMES[0]}/`, { waitUntil: 'load', timeout: 60000 });
    const timing = await page.evaluate(() =>
      performance.getEntriesByType('resource').map((e) => ({ name: e.name, start: e.startTime, end: e.responseEnd })),
    );
    return { responses, timing };
  });
}

describe('QUIC PEP chain, transparent (integration, real Chromium, two origins)', function () {
  it('carries connections to two origins at once: TPROXY in st, a certificate per name, each reaching its origin', async function () {
    this.timeout(180000);
    const tb = await createTestbed({
      profile: loadProfile(writeProfile(SHORT)),
      link: 'linkem',
      serverAddresses: ADDRS,
    });
    const { root, dirs } = sites();
    try {
      const origins = await startOrigins(tb, dirs);
      const chain = await startQuicPepChain(tb, { transparent: true, originSpki: origins.spki });
      assert.equal(chain.serverAddr, null, 'the client goes to the origins themselves');
      assert.equal(chain.settings.transparent.nft_table, QUIC_TPROXY.nftTable);
      assert.equal(chain.settings.spare, false);
      // st's TPROXY: its table and its policy routing
      const table = await run('ip', ['netns', 'exec', tb.ns.st, 'nft', 'list', 'table', 'ip', QUIC_TPROXY.nftTable]);
      assert.match(table.stdout, /udp dport 443 meta mark set 0x0*3 tproxy (ip )?to 198\.18\.1\.1:443 accept/);
      assert.match(table.stdout, /udp dport 443 drop/);
      const rules = await run('ip', ['-n', tb.ns.st, 'rule']);
      assert.match(rules.stdout, /fwmark 0x3 lookup 102/);

      const counted = await countQuic(tb.ns.client);
      const { responses, timing } = await loadTwoOrigins(tb, chain.spki);

      // every response over h3, each name from its own address as the client saw it
      const byHost = Object.groupBy(responses, (r) => new URL(r.url).hostname);
      assert.deepEqual(Object.keys(byHost).sort(), NAMES, JSON.stringify(responses));
      for (const [i, n] of NAMES.entries()) {
        for (const r of byHost[n]) {
          assert.equal(r.protocol, 'h3', JSON.stringify(r));
          assert.equal(r.ip, ADDRS[i], JSON.stringify(r));
        }
      }
      // the two 300 kB scripts, one from each origin, were on their way at once
      const [ja, jb] = ['https://a.test/a.js', 'https://b.test/b.js'].map((u) => timing.find((t) => t.name === u));
      assert.ok(ja && jb, JSON.stringify(timing));
      assert.ok(ja.start < jb.end && jb.start < ja.end, `not at once: ${JSON.stringify([ja, jb])}`);

      // replies came from the addresses the client sent to, the origins', and
      // from nowhere else (st's own, 198.18.1.1, included)
      const c = await counted();
      for (const dir of ['input', 'output']) {
        const [a, b, all] = c[dir];
        assert.ok(a > 10 && b > 10, `${dir}: ${JSON.stringify(c)}`);
        assert.equal(all, a + b, `${dir}: QUIC with another address: ${JSON.stringify(c)}`);
      }
      assert.ok(c.input[0] + c.input[1] > 200, JSON.stringify(c));

      // both proxies relayed both, each to its own destination under its name
      const stats = await chain.stats();
      for (const role of ['st', 'gw']) {
        const s = stats[role];
        assert.equal(s.failed, 0, `${role}: ${JSON.stringify(s)}`);
        assert.ok(s.connections >= 2, `${role}: ${JSON.stringify(s)}`);
        assert.equal(s.stream_id_mismatches, 0);
        assert.ok(s.bytes.down > 600000, `${role}: ${JSON.stringify(s.bytes)}`);
        for (const [i, n] of NAMES.entries()) {
          const d = s.destinations[`${ADDRS[i]}:${ORIGIN_PORT}`];
          assert.ok(d?.connections >= 1, `${role} ${n}: ${JSON.stringify(s.destinations)}`);
          assert.deepEqual(d.names, [n], `${role}: ${JSON.stringify(s.destinations)}`);
        }
        assert.equal(Object.keys(s.destinations).length, 2, `${role}: ${JSON.stringify(s.destinations)}`);
      }
      assert.match(
        fs.readFileSync(chain.logs.st, 'utf8'),
        /carried over the tunnel from 198\.18\.1\.2:\d+ to 198\.19\.1\.2:443 name=b\.test alpn=h3/,
      );
      assert.match(fs.readFileSync(chain.logs.gw, 'utf8'), /relayed over the tunnel to 198\.19\.1\.1:443 name=a\.test/);

      // each origin saw its own requests, over h3, and only those
      const want = [
        ['/', '/s.css', '/a.js'],
        ['/b.js', '/p.gif'],
      ];
      for (const i of [0, 1]) {
        const text = fs.readFileSync(origins.logs[i], 'utf8');
        const lines = text.split('\n').map(parseOriginLogLine).filter(Boolean);
        const paths = lines.filter((l) => l.path !== '/favicon.ico').map((l) => l.path);
        assert.deepEqual(paths.sort(), [...want[i]].sort(), `${NAMES[i]}: ${text}`);
        const sum = summarizeOriginLog(text);
        assert.deepEqual(Object.keys(sum.protocols), ['h3'], `${NAMES[i]}: ${text}`);
        assert.ok(
          lines.filter((l) => l.path !== '/favicon.ico').every((l) => l.status === 200),
          text,
        );
      }
    } finally {
      await tb.destroy();
      fs.rmSync(root, { recursive: true, force: true });
    }
    // st's namespace, and so its nft table and rules, is gone
    assert.ok(!(await listNamespaces()).some((n) => n.startsWith(`sbt-${tb.id}-`)), 'namespaces left behind');
  });

  it('leaves its nft table to the namespace: after a SIGKILL, what cleanup removes takes it along', async function () {
    this.timeout(120000);
    const profile = writeProfile(SHORT);
    const pin = '47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=';
    const script = `
      import { createTestbed } from './harness/testbed/testbed.js';
      import { loadProfile } from './harness/testbed/profiles.js';
      import { startQuicPepChain } from './harness/pep/quic-chain.js';
      const tb = await createTestbed({ profile: loadProfile(${JSON.stringify(profile)}) });
      await startQuicPepChain(tb, { transparent: true, originSpki: ${JSON.stringify(pin)} });
      console.log(JSON.stringify({ id: tb.id }));
      setInterval(() => {}, 1000);`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    let id;
    try {
      id = (
        await until(() => /\{"id":"\w+"\}/.exec(out)?.[0], 60000).catch(() => {
          throw new Error(`the chain did not start: ${err}`);
        })
      ).match(/"id":"(\w+)"/)[1];
    } finally {
      child.kill('SIGKILL');
      await new Promise((r) => (child.exitCode !== null || child.signalCode ? r() : child.once('exit', r)));
    }
    const ns = `sbt-${id}-st`;
    try {
      // what the SIGKILL left: the proxies, the table
      const tb = (await listTestbeds()).find((t) => t.id === id);
      assert.equal(tb.owner_alive, false, 'cleanup takes it: no live owner');
      const peps = tb.processes.filter((p) => p.role.startsWith('quic-pep-'));
      assert.equal(peps.length, 2);
      assert.ok(peps.every((p) => p.alive));
      await run('ip', ['netns', 'exec', ns, 'nft', 'list', 'table', 'ip', QUIC_TPROXY.nftTable]);
      // what `satbench cleanup` does with a testbed no live process owns
      await destroyTestbed(id);
      assert.ok(!(await listNamespaces()).includes(ns), 'st left behind');
      assert.ok(!peps.some((p) => alive(p.pid)), 'a proxy survived');
    } finally {
      await destroyTestbed(id);
    }
  });
});
