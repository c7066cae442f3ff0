// The VPN chain, the baseline a PEP is compared against (the -vpn
// protocols): an OpenVPN tunnel over the satellite hop, as Deutschmann et
// al. (NetSys 2019) used to keep operators' PEPs out of their page loads.
// gw listens on its satellite-side address, st connects to it; each has a
// TUN device, and the routes send the client's traffic for the server's
// subnet into the tunnel in st and the replies back into it in gw. The
// satellite link carries only OpenVPN's encrypted UDP packets; nothing
// splits or proxies the connections.
//
// TLS with a certificate per side made for each run, each pinning the
// other's by fingerprint (no CA): OpenVPN 2.6 warns that static keys go
// away in 2.7, and TLS gives the AEAD data channel (AES-256-GCM). MTU and
// MSS are OpenVPN's defaults (tun-mtu 1500, mssfix 1492: TCP segments are
// clamped so that the encrypted packet fits the link; QUIC's fit anyway).
//
// The plain functions (settings → command lines, routes; counters → the
// verdict) are unit-tested; `startVpnChain` applies them.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { run } from '../core/sys.js';
import { makeCertificate } from '../core/certificates.js';
import { startProcess } from '../testbed/testbed.js';
import { LINK_PLAN, ADDRESSES, ORIGINS_SUBNET } from '../testbed/addressing.js';

const satLink = LINK_PLAN.find((l) => l.name === 'sat');
const lanLink = LINK_PLAN.find((l) => l.name === 'lan');
const inetLink = LINK_PLAN.find((l) => l.name === 'inet');

// The tunnel's point-to-point addresses: inside 198.18.0.0/15, outside
// every link of the testbed (198.18.1–3.x).
export const VPN_ADDRESSES = { st: '198.18.9.1', gw: '198.18.9.2' };

export const VPN_SETTINGS = {
  program: 'openvpn',
  proto: 'udp',
  port: 1194,
  auth: 'TLS, per-run self-signed certificates pinned by fingerprint',
  cipher: 'AES-256-GCM',
  compression: 'none',
  mtu: "OpenVPN's defaults (tun-mtu 1500, mssfix 1492)",
  tunnel: VPN_ADDRESSES,
};

// The TLS handshake crosses the satellite link a few times; with loss its
// control packets are resent every 2 s (OpenVPN's default).
const READY_TIMEOUT_MS = 30000;

// Pure: the network of an address with a prefix ("198.18.3.2", 30 → "198.18.3.0/30").
export function subnetOf(addr, prefix) {
  const n = addr.split('.').reduce((a, x) => a * 256 + Number(x), 0);
  const net = prefix === 0 ? 0 : Math.floor(n / 2 ** (32 - prefix)) * 2 ** (32 - prefix);
  return `${[24, 16, 8, 0].map((s) => Math.floor(net / 2 ** s) % 256).join('.')}/${prefix}`;
}

// Pure: the TUN device's name, one per testbed (at most 15 characters).
export const tunName = (id) => `vpn${id}`.slice(0, 15);

/**
 * Pure: openvpn's command line in `role` (st or gw). files: {cert, key,
 * peerFingerprint, pidPath, logPath}.
 */
export function openvpnArgs(role, { dev, files, settings = VPN_SETTINGS }) {
  if (role !== 'st' && role !== 'gw') throw new Error(`openvpnArgs: role must be st or gw, got ${role}`);
  const peer = role === 'st' ? 'gw' : 'st';
  const a = ['--dev', dev, '--dev-type', 'tun', '--proto', settings.proto];
  if (role === 'gw') a.push('--local', satLink.bAddr, '--lport', String(settings.port), '--tls-server', '--dh', 'none');
  else a.push('--remote', satLink.bAddr, String(settings.port), '--nobind', '--tls-client');
  a.push(
    '--ifconfig',
    settings.tunnel[role],
    settings.tunnel[peer],
    '--cert',
    files.cert,
    '--key',
    files.key,
    '--peer-fingerprint',
    files.peerFingerprint,
    '--data-ciphers',
    settings.cipher,
    '--allow-compression',
    'no',
    '--verb',
    '1',
    '--writepid',
    files.pidPath,
    '--log-append',
    files.logPath,
  );
  return a;
}

/**
 * Pure: the routes of `role` through the tunnel (ip -n NS route …): st
 * sends the server's subnets into it, gw sends the client's subnet back.
 * They replace the satellite routes for those subnets only, so that
 * OpenVPN's own packets (st ↔ gw's satellite addresses) still take sat0.
 */
export function vpnRoutes(role, dev, settings = VPN_SETTINGS) {
  // st: the server's subnet and a replayed archive's origins (ORIGINS_SUBNET)
  const [subnets, peer] =
    role === 'st'
      ? [[subnetOf(inetLink.bAddr, inetLink.prefix), ORIGINS_SUBNET], settings.tunnel.gw]
      : [[subnetOf(lanLink.aAddr, lanLink.prefix)], settings.tunnel.st];
  return subnets.map((subnet) => ['route', 'replace', subnet, 'via', peer, 'dev', dev]);
}

/** Pure: `ip -s -j link show DEV`'s JSON → the device's packet and byte counters. */
export function tunCounters(json) {
  const s = (Array.isArray(json) ? json[0] : json)?.stats64 ?? {};
  return {
    rx_packets: s.rx?.packets ?? 0,
    rx_bytes: s.rx?.bytes ?? 0,
    tx_packets: s.tx?.packets ?? 0,
    tx_bytes: s.tx?.bytes ?? 0,
  };
}

// Pure: a -vpn run counts only if both tunnel ends carried packets both
// ways; otherwise the page went around the tunnel.
export function checkTunnelled(counters) {
  const idle = ['st', 'gw'].filter((role) => !(counters?.[role]?.rx_packets > 0 && counters?.[role]?.tx_packets > 0));
  return idle.length
    ? { ok: false, error: `not through the VPN tunnel: ${idle.join(' and ')} carried no packets both ways` }
    : { ok: true, error: null };
}

async function waitForLog(file, pattern, ms, what) {
  const end = Date.now() + ms;
  for (;;) {
    const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
    if (pattern.test(text)) return;
    if (Date.now() > end) {
      const tail = text.trim().split('\n').slice(-3).join(' | ');
      throw new Error(`${what} did not complete its set-up within ${ms / 1000} s${tail ? `: ${tail}` : ''}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

const fingerprint = (certPath) => new crypto.X509Certificate(fs.readFileSync(certPath)).fingerprint256;

/**
 * Starts OpenVPN in tb.ns.gw (listening) and tb.ns.st (connecting), waits
 * until both have completed the handshake, and routes the client's traffic
 * through the tunnel. The processes are recorded in the testbed's state:
 * teardown ends them, and the TUN devices go with the namespaces.
 * Returns {settings, logs, stats()}; stats() reads both TUN devices'
 * counters: {st: {rx_packets, rx_bytes, tx_packets, tx_bytes}, gw: …}.
 */
export async function startVpnChain(tb, { dir = path.join(tb.dir, 'vpn') } = {}) {
  fs.mkdirSync(dir, { recursive: true });
  const dev = tunName(tb.id);
  const certs = {};
  for (const role of ['st', 'gw']) {
    certs[role] = await makeCertificate({
      name: `vpn-${role}.satbench.test`,
      ip: ADDRESSES[role],
      dir: path.join(dir, `${role}-tls`),
    });
  }
  const logs = {};
  for (const role of ['gw', 'st']) {
    const ns = tb.ns[role];
    logs[role] = path.join(dir, `openvpn-${role}.log`);
    const files = {
      cert: certs[role].cert,
      key: certs[role].key,
      peerFingerprint: fingerprint(certs[role === 'st' ? 'gw' : 'st'].cert),
      pidPath: path.join(dir, `openvpn-${role}.pid`),
      logPath: logs[role],
    };
    await startProcess(
      tb.state,
      `openvpn-${role}`,
      ['ip', 'netns', 'exec', ns, 'openvpn', ...openvpnArgs(role, { dev, files })],
      {
        logPath: logs[role],
        what: `OpenVPN in ${role}`,
        // gw is ready once it listens; st once the handshake with gw is done
        readyInLog: role === 'gw' ? /link local \(bound\)/ : /Initialization Sequence Completed/,
        timeoutMs: READY_TIMEOUT_MS,
      },
    );
  }
  await waitForLog(logs.gw, /Initialization Sequence Completed/, READY_TIMEOUT_MS, 'OpenVPN in gw');
  for (const role of ['st', 'gw']) for (const r of vpnRoutes(role, dev)) await run('ip', ['-n', tb.ns[role], ...r]);
  return {
    settings: { ...VPN_SETTINGS, dev },
    logs,
    stats: async () => {
      const out = {};
      for (const role of ['st', 'gw']) {
        const r = await run('ip', ['-n', tb.ns[role], '-s', '-j', 'link', 'show', dev], { allowFail: true });
        out[role] = r.ok ? tunCounters(JSON.parse(r.stdout)) : { error: `no ${dev} in ${role}` };
      }
      return out;
    },
  };
}
