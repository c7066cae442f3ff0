// The MASQUE chain (h3-masque, bulk's quic-masque): a PEP that never
// decrypts. nftables TPROXY in st hands the client's QUIC (UDP to the
// origin's port, or satbulk's, at any address) to Proxy-ST
// (quic-pep --masque-via), which carries each client flow, packet by packet,
// in its own CONNECT-UDP request (RFC 9298) over one HTTP/3 connection
// across the satellite to Proxy-GW's --masque-listen, as HTTP Datagrams or,
// with --pep-sat masque=stream, as capsules on the request stream; Proxy-GW
// sends the packets to the origin from its own address and carries the
// answers back, and Proxy-ST sends them to the client from the origin's
// address. Chromium talks to the origin and verifies the origin's own
// certificate: neither proxy is given a key or certificate for its name
// (Proxy-ST has none at all, Proxy-GW only its own for pep-gw).
//
// The plain functions (the proxies' command lines, the record's `masque`,
// whether a run went through the tunnel) are unit-tested;
// `startMasqueChain` starts the two proxies.
import fs from 'node:fs';
import path from 'node:path';
import { binPath } from '../core/sys.js';
import { makeCertificate } from '../core/certificates.js';
import { quicSideText } from '../core/quic-options.js';
import { startProcess } from '../testbed/testbed.js';
import { ADDRESSES, ORIGINS_SUBNET } from '../testbed/addressing.js';
import { applyTproxy, tproxyRules } from './tcp-chain.js';
import {
  GW_NAME,
  PEP_ADDRESSES,
  PEP_QUIC_PORT,
  QUIC_TPROXY,
  TUNNEL_UP_MS,
  fecArgs,
  fecPlan,
  proxyStats,
  resolveHops,
  transparentNftRuleset,
} from './quic-chain.js';

// Proxy-GW's CONNECT-UDP listener, beside its QUIC PEP port.
export const MASQUE_PORT = 4433;

// Chromium's QUIC packets are up to about 1350 bytes; each crosses inside
// one QUIC DATAGRAM frame of the satellite hop's connection, whose packets
// must hold it with their own headers.
export const MASQUE_MIN_MTU = 1400;

// How the inner packets cross unless --pep-sat masque=MODE says (quic-pep's default).
export const DEFAULT_MASQUE_MODE = 'datagram';

// The origins Proxy-GW may send to: the testbed's origin and an archive's.
export const MASQUE_ALLOW = [`${ADDRESSES.server}/32`, ORIGINS_SUBNET];

/**
 * Pure: the satellite hop's QUIC options for the MASQUE connection: the
 * hop as resolveHops gives it, with packets of at least MASQUE_MIN_MTU
 * bytes. Careful Resume is not carried over (the CONNECT-UDP listener
 * keeps no saved path).
 */
export function masqueSatellite(hop = {}) {
  const { 'careful-resume': _, ...rest } = hop;
  return { ...rest, 'initial-mtu': Math.max(rest['initial-mtu'] ?? 0, MASQUE_MIN_MTU) };
}

/**
 * Pure: the two proxies' command lines (without the binary). `hops` as
 * resolveHops returns them (only the satellite hop's matter: no proxy
 * terminates the client's or the origin's QUIC); files: { st: {log,
 * stats}, gw: {cert, key, log, stats} } — no certificate for Proxy-ST;
 * fec: fecPlan's result (--pep-sat fec=K/N), or null; mode: how the
 * inner packets cross (--pep-sat masque=MODE, Proxy-ST's --masque-mode;
 * Proxy-GW answers in kind).
 */
export function masqueArgs({ hops, files, qlogDir = null, fec = null, mode = DEFAULT_MASQUE_MODE }) {
  const common = (role) => {
    const a = ['--role', role, '--label', role, '--log', files[role].log, '--stats', files[role].stats];
    if (qlogDir) a.push('--qlog-dir', qlogDir);
    // the tunnel's packets coded between Proxy-ST and Proxy-GW (fecPlan)
    a.push(...fecArgs(fec));
    return a;
  };
  const gwSide = quicSideText(masqueSatellite(hops.satellite), 'MASQUE satellite hop');
  const stSide = quicSideText(masqueSatellite(hops.satelliteReturn ?? hops.satellite), 'MASQUE satellite hop');
  const via = `${PEP_ADDRESSES.gw}:${MASQUE_PORT}`;
  return {
    gw: [
      ...common('gw'),
      // its QUIC PEP listener stays unused: --tunnel --transparent need no next hop
      ...['--listen', `${PEP_ADDRESSES.gw}:${PEP_QUIC_PORT}`, '--cert', files.gw.cert, '--key', files.gw.key],
      ...['--tunnel', '--transparent', '--masque-listen', via, '--masque-allow', MASQUE_ALLOW.join(',')],
      ...['--accept-side', gwSide],
    ],
    st: [
      ...common('st'),
      ...['--listen', `${PEP_ADDRESSES.st}:${PEP_QUIC_PORT}`, '--masque-via', via, '--masque-mode', mode],
      ...['--next-hop-name', GW_NAME, '--next-hop-ca', files.gw.cert],
      ...['--connect-side', stSide],
    ],
  };
}

/**
 * Pure: the run record's `masque`, from the proxies' counters: how the
 * inner packets crossed as Proxy-ST says it carried them (`datagram`:
 * HTTP Datagrams, `stream`: capsules on the request streams; null when it
 * said nothing), the proxying requests Proxy-ST opened (sent), Proxy-GW
 * accepted and refused, the UDP payloads (as datagrams, as capsules)
 * and bytes each way (up: from the client), and the datagrams lost inside
 * the tunnel to its own full queue (`displaced`).
 */
export function masqueRecord(stats) {
  const m = stats?.st?.masque;
  if (!m) return { mode: null, requests_opened: 0 };
  return {
    mode: m.mode ?? null,
    requests_opened: m.requests ?? 0,
    requests_accepted: m.proxied ?? 0,
    refused: m.refused ?? {},
    failed: m.failed ?? 0,
    datagrams: m.datagrams ?? { up: 0, down: 0 },
    capsules: m.capsules ?? { up: 0, down: 0 },
    bytes: m.bytes ?? { up: 0, down: 0 },
    dropped: m.dropped ?? 0,
    // datagrams sent into a full queue of the tunnel's connection, each at
    // least one older datagram quinn discarded (up: at Proxy-ST, down: at Proxy-GW)
    displaced: { up: m.displaced ?? 0, down: stats?.gw?.masque?.displaced ?? 0 },
    connections: m.connections ?? 0,
    gw_proxied: stats?.gw?.masque?.proxied ?? 0,
  };
}

/**
 * Pure: whether an h3-masque run went through the tunnel: every proxying
 * request it opened accepted and packets carried both ways. A page that
 * went around it, or a request the tunnel could not carry, fails the run
 * with the reason (never a silent fall-back to plain h3).
 */
export function checkMasqueCarried(masque) {
  const refused = Object.entries(masque?.refused ?? {});
  if (refused.length)
    return {
      ok: false,
      error: `Proxy-GW refused proxying requests: ${refused.map(([s, n]) => `${n} × ${s}`).join(', ')}`,
    };
  if (masque?.failed > 0) return { ok: false, error: `${masque.failed} proxying requests failed at Proxy-ST` };
  if (!(masque?.requests_opened > 0)) return { ok: false, error: 'not through the MASQUE tunnel: no proxying request' };
  // as datagrams or capsules, whichever the mode
  const carried = (way) => (masque.datagrams?.[way] ?? 0) + (masque.capsules?.[way] ?? 0) > 0;
  if (!(carried('up') && carried('down')))
    return { ok: false, error: 'not through the MASQUE tunnel: no packets carried both ways' };
  return { ok: true, error: null };
}

/**
 * Starts the MASQUE chain in testbed `tb` (Proxy-GW in gw, then TPROXY and
 * Proxy-ST in st; teardown ends both and removes st's nft table with its
 * namespace). `ports`: the UDP ports st intercepts (the origin's; bulk
 * gives satbulk's). `sat` (its `masque` the mode, the rest the hop's),
 * `ground` (unused: there is no ground hop to set) and
 * `profile` as for the QUIC PEP chain (resolveHops, with the satellite
 * hop's window from the profile as the standing tunnel's). Returns once
 * Proxy-ST's HTTP/3 connection to Proxy-GW is up: {settings, logs,
 * stats(), spki: null (Chromium pins the origin's key), serverAddr: null
 * (it reaches the origin's own address)}.
 */
export async function startMasqueChain(
  tb,
  { dir = path.join(tb.dir, 'masque'), ports = [PEP_QUIC_PORT], sat = {}, profile = tb.profile, qlogDir = null } = {},
) {
  fs.mkdirSync(dir, { recursive: true });
  const gwTls = await makeCertificate({ name: GW_NAME, ip: PEP_ADDRESSES.gw, dir: path.join(dir, 'gw-tls') });
  const files = {
    st: { log: path.join(dir, 'quic-pep-st.log'), stats: path.join(dir, 'quic-pep-st.stats.json') },
    gw: {
      cert: gwTls.cert,
      key: gwTls.key,
      log: path.join(dir, 'quic-pep-gw.log'),
      stats: path.join(dir, 'quic-pep-gw.stats.json'),
    },
  };
  if (qlogDir) fs.mkdirSync(qlogDir, { recursive: true });
  // the mode is Proxy-ST's own setting, not the hop's transport
  const { masque: mode = DEFAULT_MASQUE_MODE, ...hop } = sat;
  const hops = resolveHops({}, profile, { sat: hop, tunnel: 'warm' });
  const fec = fecPlan(hop, profile);
  const args = masqueArgs({ hops, files, qlogDir, fec, mode });
  const listen = `${PEP_ADDRESSES.st}:${PEP_QUIC_PORT}`;
  const bin = binPath('quic-pep');
  const start = (role) =>
    startProcess(tb.state, `quic-pep-${role}`, ['ip', 'netns', 'exec', tb.ns[role], bin, ...args[role]], {
      logPath: path.join(dir, `quic-pep-${role}.stderr.log`),
      what: `the MASQUE ${role === 'st' ? 'client' : 'proxy'} in ${role}`,
    });
  await start('gw');
  // before Proxy-ST listens: from here on the client's QUIC reaches it or nothing
  await applyTproxy(tb.ns.st, { nft: transparentNftRuleset({ listen, ports }), rules: tproxyRules(QUIC_TPROXY) });
  await start('st');
  const stats = proxyStats(tb, files);
  const end = Date.now() + TUNNEL_UP_MS;
  while (!((await stats()).st?.masque?.connections > 0)) {
    if (Date.now() > end)
      throw new Error(`Proxy-ST's MASQUE connection to Proxy-GW did not come up within ${TUNNEL_UP_MS / 1000} s`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return {
    serverAddr: null,
    spki: null,
    settings: {
      mode,
      via: `${PEP_ADDRESSES.gw}:${MASQUE_PORT}`,
      satellite: masqueSatellite(hops.satellite),
      nft_table: QUIC_TPROXY.nftTable,
      listen,
      ports,
      ...(fec ? { fec: { setting: fec.value, hop_rtt_ms: fec.hopRttMs } } : {}),
    },
    qlogDir,
    logs: { st: files.st.log, gw: files.gw.log },
    stats,
  };
}
