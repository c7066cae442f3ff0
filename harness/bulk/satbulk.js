// A satbulk transfer (quic, tcp, quic-pep, quic-masque, tcp-pep, tcp-qpep,
// quic-vpn, tcp-vpn): `satbulk serve` in the server namespace (bulk/),
// `satbulk get` in the client namespace, directly, through the VPN tunnel or
// through a PEP chain: quic-pep connects to Proxy-ST, whose Proxy-GW
// connects to satbulk; the split-TCP PEPs, and QPEP's Proxy-ST, intercept
// the connection to satbulk's TCP port on its way, the MASQUE chain's
// Proxy-ST the QUIC to satbulk's QUIC port (end to end, carried in
// CONNECT-UDP). The receiver counts bytes
// per bin from t0, just before the client connects: `satbulk get` for a
// download, `satbulk serve` for an upload (it hands its count back). A
// download's sender traces its congestion window; an upload's sender is
// `satbulk get`, whose final view of the connection is in its report.
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { spawn } from 'node:child_process';
import { binPath, run } from '../core/sys.js';
import { originQuicArgs } from '../core/quic-options.js';
import { ADDRESSES, SITE_HOST } from '../testbed/addressing.js';
import { startProcess } from '../testbed/testbed.js';
import { originCertificate } from '../servers/origin.js';
import { satelliteAtCapacity } from '../testbed/profiles.js';
import { startPepChain, pepRecord } from '../pep/chain.js';
import { condenseTrace } from '../results/goodput.js';
import { transferTimeoutS, transfersOf } from './matrix.js';
import { carefulResumeLogPath } from '../core/careful-resume-files.js';
import { DEFAULTS } from '../core/defaults.js';

// satbulk's ports (the QUIC PEPs and our origin have 443). The split-TCP
// PEP is told to intercept SATBULK_TCP_PORT.
export const SATBULK_QUIC_PORT = 4434;
export const SATBULK_TCP_PORT = 5201;

/** Pure: `satbulk get` arguments for a scenario. */
export function satbulkGetArgs(scenario, { addr, ca, binMs = DEFAULTS.binMs, quicArgs = [], timeoutS }) {
  const proto = scenario.protocol.startsWith('quic') ? 'quic' : 'tcp';
  const a = ['get', proto, '--addr', addr, '--json', '--bin-ms', String(binMs)];
  if (scenario.direction === 'up') a.push('--direction', 'up');
  // a second connection resuming the first, measured (the first's in its `first`)
  if (scenario.view === 'revisit') a.push('--revisit');
  // the path changes between the two: satbulk waits for the harness's word
  if (scenario.revisit_capacity != null) a.push('--revisit-pause');
  a.push(
    ...(scenario.size_bytes ? ['--bytes', String(scenario.size_bytes)] : ['--duration', String(scenario.duration_s)]),
  );
  if (timeoutS) a.push('--timeout', String(timeoutS));
  if (proto === 'quic') a.push('--ca', ca, '--name', SITE_HOST, ...quicArgs);
  return a;
}

const wait = (ms) => new Promise((r) => setTimeout(r, ms));

// What `satbulk get --revisit-pause` says on stderr once the first
// connection has closed (bulk/src/client.rs REVISIT_PAUSED).
export const REVISIT_PAUSED = 'satbulk: first connection closed; waiting for a line on stdin';

/**
 * Runs `satbulk get … --revisit-pause`: when it says the first connection
 * has closed, awaits `between()` (the path changed) and lets it go on.
 * Resolves as run() does with allowFail; `between`'s error ends the child
 * and rejects.
 */
function runPaused(cmd, args, { between, timeoutMs }) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    const out = { stdout: '', stderr: '' };
    let failed = null;
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.stdout.on('data', (d) => (out.stdout += d));
    child.stderr.on('data', (d) => (out.stderr += d));
    readline.createInterface({ input: child.stderr }).on('line', (line) => {
      if (line !== REVISIT_PAUSED) return;
      between().then(
        () => child.stdin.end('go\n'),
        (e) => {
          failed = e;
          child.kill('SIGKILL');
        },
      );
    });
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      if (failed) reject(failed);
      else resolve({ ok: code === 0, code, ...out });
    });
  });
}

function readTrace(file) {
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .flatMap((l) => {
      try {
        return [JSON.parse(l)];
      } catch {
        return []; // a line cut by teardown
      }
    });
}

// The sender writes a connection's last trace line once the client has
// gone; through a PEP that news crosses the satellite first.
export function everyConnectionEnded(lines) {
  const ended = new Set(lines.filter((l) => l.final).map((l) => l.conn));
  return lines.length > 0 && lines.every((l) => ended.has(l.conn));
}

async function traceWhenFinal(file, ms) {
  const end = Date.now() + ms;
  let lines = readTrace(file);
  while (Date.now() < end && !everyConnectionEnded(lines)) {
    await wait(50);
    lines = readTrace(file);
  }
  return lines;
}

// Where the chain of `kind` relays to: satbulk, not an HTTPS origin (the
// split-TCP PEP and QPEP intercept its TCP port, the MASQUE chain its QUIC port).
function chainToSatbulk(kind, cert) {
  if (kind === 'quic')
    return {
      next: { addr: ADDRESSES.server, port: SATBULK_QUIC_PORT, name: SITE_HOST, ca: cert },
      // satbulk is not HTTP/3: the chain's parallel handshakes
      alpn: ['satbulk'],
      h3: false,
    };
  return { ports: [kind === 'masque' ? SATBULK_QUIC_PORT : SATBULK_TCP_PORT] };
}

/**
 * Starts `satbulk serve` in the server namespace of `tb` with the
 * certificate `tls` ({cert, key}); `tracePath`: the sender's trace;
 * `quicArgs`: its QUIC transport flags; `carefulResumeLog`: where it logs
 * Careful Resume (with careful-resume=on).
 */
export async function startSatbulkServer(
  tb,
  {
    tls,
    quicPort = SATBULK_QUIC_PORT,
    tcpPort = SATBULK_TCP_PORT,
    tracePath = null,
    quicArgs = [],
    carefulResumeLog = null,
  },
) {
  const args = ['--addr', ADDRESSES.server, '--quic-port', String(quicPort), '--tcp-port', String(tcpPort)];
  args.push('--cert', tls.cert, '--key', tls.key, ...(tracePath ? ['--trace', tracePath] : []), ...quicArgs);
  if (carefulResumeLog) args.push('--careful-resume-log', carefulResumeLog);
  await startProcess(tb.state, 'satbulk', ['ip', 'netns', 'exec', tb.ns.server, binPath('satbulk'), 'serve', ...args], {
    logPath: path.join(tb.dir, 'satbulk.log'),
    what: 'the satbulk server',
  });
}

/**
 * One satbulk transfer in testbed `tb` for `plan` (a resolved bulk
 * scenario). Returns {dl (satbulk get's JSON), sender, protocol_seen, pep,
 * revisit_link (--revisit-capacity's rates, or null)}.
 */
export async function satbulkRun(tb, plan, { qlogDir = null } = {}) {
  const { scenario } = plan;
  const tls = await originCertificate(tb);
  const upload = scenario.direction === 'up';
  // the server sends only downloads: an upload's trace would hold nothing
  const tracePath = upload ? null : path.join(tb.dir, 'satbulk.trace.jsonl');
  await startSatbulkServer(tb, {
    tls,
    tracePath,
    quicArgs: originQuicArgs(plan.quic, plan),
    carefulResumeLog: plan.quic?.['careful-resume'] === 'on' ? carefulResumeLogPath(tb, 'satbulk') : null,
  });

  let addr = `${ADDRESSES.server}:${scenario.protocol.startsWith('quic') ? SATBULK_QUIC_PORT : SATBULK_TCP_PORT}`;
  let ca = tls.cert;
  const chain = await startPepChain(tb, plan.pepKind, {
    sides: plan.pepSides,
    qlogDir,
    via: chainToSatbulk(plan.pepKind, tls.cert),
  });
  if (chain?.kind === 'quic') {
    addr = `${chain.serverAddr}:${chain.port}`;
    ca = chain.ca;
  }
  const timeoutS = transferTimeoutS(scenario, plan.linkMbps);
  const clientQuic = originQuicArgs(plan.quicClient, plan);
  await chain?.beforeLoad?.();
  const get = [
    'netns',
    'exec',
    tb.ns.client,
    binPath('satbulk'),
    ...satbulkGetArgs(scenario, { addr, ca, binMs: plan.binMs, quicArgs: clientQuic, timeoutS }),
  ];
  const timeoutMs = (timeoutS * transfersOf(scenario) + 30) * 1000;
  // the satellite link for the second connection (--revisit-capacity)
  const revisitLink =
    scenario.revisit_capacity != null
      ? { capacity: scenario.revisit_capacity, satellite: satelliteAtCapacity(tb.profile, scenario.revisit_capacity) }
      : null;
  const r = revisitLink
    ? await runPaused('ip', get, { between: () => tb.changeLink('satellite', revisitLink.satellite), timeoutMs })
    : await run('ip', get, { allowFail: true, timeoutMs });
  let dl;
  try {
    dl = JSON.parse(r.stdout);
  } catch {
    throw new Error(
      `satbulk get failed: ${(r.stderr || r.stdout).trim().split('\n').slice(-3).join(' | ') || `exit ${r.code}`}`,
    );
  }
  const all = upload ? [] : await traceWhenFinal(tracePath, chain ? 5000 : 2000);
  // a revisit's sender is its second connection's (the last one the server accepted)
  const lines = scenario.view === 'revisit' ? all.filter((l) => l.conn === all.at(-1)?.conn) : all;
  return {
    dl,
    sender: upload ? null : condenseTrace(lines, dl.t0_unix_ms || null),
    protocol_seen: dl.protocol === 'quic' ? (dl.alpn ?? null) : 'tcp',
    pep: chain ? pepRecord(chain, await chain.stats()) : null,
    // the rates the second connection met
    revisit_link: revisitLink && {
      capacity: revisitLink.capacity,
      satellite_rate_mbit: {
        forward: revisitLink.satellite.forward.rate_mbit,
        return: revisitLink.satellite.return.rate_mbit,
      },
    },
  };
}
