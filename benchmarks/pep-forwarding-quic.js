#!/usr/bin/env node
// How fast the QUIC PEP forwards, per core of proxy CPU. Over loopback,
// with no emulated delay: a download client → Proxy-ST → Proxy-GW → a
// download server, all on 127.0.0.1, each run one download of --bytes on
// one stream. For each proxy it reads utime + stime from
// /proc/PID/stat before and after, and prints, as medians over --runs runs:
//   chain        the download's rate through both proxies (Mbit/s)
//   direct       the same download without the proxies (Mbit/s), for scale
//   st, gw       bits the proxy forwarded per second of its own CPU
//                (Mbit/s per core) and the cores it used meanwhile
// The load is satbulk (bulk/): `satbulk serve` and `satbulk get quic`.
// --fec K/N codes the hop between the proxies (quic-pep --fec, as
// `--pep-sat fec=K/N` does over the satellite): each proxy then encodes
// what it sends and decodes what it receives there; the rows say so.
// Usage: node benchmarks/pep-forwarding-quic.js [--runs 5] [--bytes 500000000]
//                                           [--fec K/N] [--json]
import dgram from 'node:dgram';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { run, binPath, spawnReady } from '../harness/core/sys.js';
import { makeCertificate } from '../harness/core/certificates.js';
import { median, round } from '../harness/core/stats.js';

const { values: opts } = parseArgs({
  options: {
    runs: { type: 'string', default: '5' },
    bytes: { type: 'string', default: '500000000' },
    fec: { type: 'string' },
    json: { type: 'boolean' },
  },
});
const runs = Number(opts.runs);
const bytes = Number(opts.bytes);
const CLK_TCK = 100; // USER_HZ: /proc/PID/stat counts CPU time in these
const HOST = '127.0.0.1';

function cpuSeconds(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / CLK_TCK; // utime + stime
}

function freeUdpPort() {
  return new Promise((resolve, reject) => {
    const s = dgram.createSocket('udp4');
    s.on('error', reject);
    s.bind(0, HOST, () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function download(port, name, certDir) {
  const r = await run(
    binPath('satbulk'),
    [
      'get',
      'quic',
      '--addr',
      `${HOST}:${port}`,
      '--name',
      name,
      '--ca',
      path.join(certDir, 'cert.pem'),
      '--bytes',
      String(bytes),
      '--json',
    ],
    { timeoutMs: 300000 },
  );
  const j = JSON.parse(r.stdout);
  if (!j.ok || j.bytes !== bytes) throw new Error(`satbulk get: ${j.error ?? `${j.bytes} of ${bytes} bytes`}`);
  // rate from the first byte to the last, without the handshake
  return { bytes: j.bytes, mbps: (j.bytes * 8) / 1e6 / ((j.duration_ms - j.ttfb_ms) / 1000) };
}

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-quic-pep-'));
  const started = [];
  const start = async (what, args) => {
    const child = await spawnReady(args[0], args.slice(1), { logPath: path.join(dir, `${what}.log`), what });
    started.push(child.pid);
    return child.pid;
  };
  try {
    for (const n of ['origin', 'gw', 'st']) {
      await makeCertificate({ name: `${n}.test`, ip: HOST, dir: path.join(dir, n) });
    }
    const cert = (n, f) => path.join(dir, n, f);
    const [pServer, pGw, pSt] = [await freeUdpPort(), await freeUdpPort(), await freeUdpPort()];
    const pTcp = await freeUdpPort(); // satbulk also listens on TCP; any free port will do
    await start('server', [
      binPath('satbulk'),
      'serve',
      '--addr',
      HOST,
      '--quic-port',
      String(pServer),
      '--tcp-port',
      String(pTcp),
      '--cert',
      cert('origin', 'cert.pem'),
      '--key',
      cert('origin', 'key.pem'),
    ]);
    const pep = (role, listen, next, nextName) => [
      binPath('quic-pep'),
      '--role',
      role,
      '--h3',
      '--alpn',
      'satbulk',
      '--listen',
      `${HOST}:${listen}`,
      '--cert',
      cert(role, 'cert.pem'),
      '--key',
      cert(role, 'key.pem'),
      '--next-hop',
      `${HOST}:${next}`,
      '--next-hop-name',
      `${nextName}.test`,
      '--next-hop-ca',
      cert(nextName, 'cert.pem'),
      '--log',
      path.join(dir, `${role}.conn.log`),
      // the hop between them; its round trip sets the timers (1 ms flush)
      ...(opts.fec ? ['--fec', opts.fec, '--fec-hop-rtt-ms', '8'] : []),
    ];
    const gw = await start('gw', pep('gw', pGw, pServer, 'origin'));
    const st = await start('st', pep('st', pSt, pGw, 'gw'));

    const rows = [];
    for (let i = 1; i <= runs; i++) {
      const direct = await download(pServer, 'origin.test', path.join(dir, 'origin'));
      const c0 = { st: cpuSeconds(st), gw: cpuSeconds(gw) };
      const t0 = process.hrtime.bigint();
      const chain = await download(pSt, 'st.test', path.join(dir, 'st'));
      const wall = Number(process.hrtime.bigint() - t0) / 1e9;
      const row = { run: i, direct_mbps: direct.mbps, chain_mbps: chain.mbps };
      for (const p of ['st', 'gw']) {
        const cpu = cpuSeconds(p === 'st' ? st : gw) - c0[p];
        row[`${p}_cpu_s`] = cpu;
        row[`${p}_mbps_per_core`] = cpu > 0 ? (chain.bytes * 8) / 1e6 / cpu : null;
        row[`${p}_cores`] = cpu / wall;
      }
      rows.push(row);
      if (!opts.json) {
        console.error(
          `run ${i}/${runs}: chain ${round(row.chain_mbps, 0)} Mbit/s (direct ${round(row.direct_mbps, 0)}); ` +
            `st ${round(row.st_mbps_per_core, 0)}, gw ${round(row.gw_mbps_per_core, 0)} Mbit/s per core`,
        );
      }
    }
    const med = (k) => round(median(rows.map((r) => r[k])), 1);
    const summary = {
      bytes,
      runs,
      fec: opts.fec ?? null,
      cpus: os.cpus().length,
      median: {
        direct_mbps: med('direct_mbps'),
        chain_mbps: med('chain_mbps'),
        st_mbps_per_core: med('st_mbps_per_core'),
        gw_mbps_per_core: med('gw_mbps_per_core'),
        st_cores: round(median(rows.map((r) => r.st_cores)), 2),
        gw_cores: round(median(rows.map((r) => r.gw_cores)), 2),
      },
      runs_detail: rows,
    };
    if (opts.json) {
      console.log(JSON.stringify(summary, null, 2));
    } else {
      const m = summary.median;
      const coded = opts.fec ? `, the hop between the proxies coded with fec=${opts.fec}` : '';
      console.log(
        `QUIC PEP forwarding over loopback${coded}, ${bytes} bytes, median of ${runs} runs (${summary.cpus} CPUs):`,
      );
      console.log(`  direct (no proxy)   ${m.direct_mbps} Mbit/s`);
      console.log(`  through ST and GW   ${m.chain_mbps} Mbit/s`);
      console.log(`  Proxy-ST            ${m.st_mbps_per_core} Mbit/s per core (${m.st_cores} cores busy)`);
      console.log(`  Proxy-GW            ${m.gw_mbps_per_core} Mbit/s per core (${m.gw_cores} cores busy)`);
    }
  } finally {
    for (const pid of started) {
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        /* gone */
      }
    }
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e.message);
  process.exit(2);
});
