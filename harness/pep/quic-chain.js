// The QUIC PEP chain of a testbed: Proxy-ST in st, listening where the
// client's Chromium is told the site is (198.18.1.1:443/udp), relays each
// connection to Proxy-GW in gw (198.18.2.2:443/udp), which relays it to
// the origin (198.18.3.2:443/udp). Every hop's QUIC transport is set
// separately: client hop (st's accept side), satellite hop (st's connect
// side and gw's accept side), server hop (gw's connect side).
//
// With `transparent`, the chain carries client connections to many origins
// at once: nftables TPROXY in st hands Proxy-ST the client's QUIC to any
// address (UDP ORIGIN_PORT), Proxy-ST answers from that address with a
// certificate for the name asked for (made from its one key, so one SPKI
// pin covers every origin), and Proxy-GW dials each connection's own
// destination, trusting the origins by their shared key.
//
// The plain functions (hop settings → CLI, the transparent nft ruleset)
// are unit-tested; `startQuicPepChain` makes the certificates and starts
// the two proxies.
import fs from 'node:fs';
import path from 'node:path';
import { UsageError } from '../core/errors.js';
import { bdpBytes } from '../core/units.js';
import { binPath } from '../core/sys.js';
import { makeCertificate } from '../core/certificates.js';
import { QUIC_KEYS, quicSideText } from '../core/quic-options.js';
import { alive, requestStats, startProcess } from '../testbed/testbed.js';
import { ADDRESSES, LINK_PLAN, ORIGIN_PORT, SITE_HOST } from '../testbed/addressing.js';
import { applyTproxy, tproxyRules } from './tcp-chain.js';
import { carefulResumeLogPath } from '../core/careful-resume-files.js';
import { parseFec } from './options.js';

const lan = LINK_PLAN.find((l) => l.name === 'lan');
const sat = LINK_PLAN.find((l) => l.name === 'sat');

// Both proxies and the origin listen on the HTTPS port (satbulk has its own).
export const PEP_QUIC_PORT = ORIGIN_PORT;
// Proxy-ST on st's client-facing address, Proxy-GW on gw's satellite address.
export const PEP_ADDRESSES = { st: lan.bAddr, gw: sat.bAddr };
export const GW_NAME = 'pep-gw.satbench.test';

// The paper's PEP setting (Kosek et al.): satellite hop NewReno with an
// initial window of 100; client and server hops unchanged (Cubic, 10).
// Hop settings are the QUIC options by their keys (transport/quic-options.json).
export const DEFAULT_HOPS = {
  client: {},
  satellite: { cc: 'newreno', 'initial-window': 100 },
  server: {},
};

// The largest rate and delay a link direction ever has (schedules too),
// and its queue in bytes (packets counted at 1500 bytes).
function extremes(imp) {
  const points = imp.schedule?.points ?? [];
  return {
    rate: Math.max(imp.rate_mbit ?? 0, ...points.map((p) => p.rate_mbit ?? 0)),
    delay: Math.max(imp.delay_ms, ...points.map((p) => p.delay_ms ?? 0)),
    queue: imp.limit?.bytes ?? (imp.limit?.packets ?? 0) * 1500,
  };
}

/**
 * Pure: the most bytes one emulated link of a loaded profile ('satellite'
 * or 'internet') can hold in one direction: its highest rate over its
 * worst round trip, plus its queue (a loss-based sender fills the queue,
 * and windows smaller than pipe + queue would then cap it). null when
 * the link has no rate (the proxy keeps its default windows).
 */
export function linkBdpBytes(profile, link) {
  const f = extremes(profile.links[link].forward);
  const r = extremes(profile.links[link].return);
  const rttMs = linkRttMs(profile, link);
  const hold = (d) => (d.rate ? bdpBytes(d.rate, rttMs) + d.queue : 0);
  const bytes = Math.max(hold(f), hold(r));
  return bytes ? Math.round(bytes) : null;
}

/**
 * Pure: the worst round trip in ms of one emulated link of a loaded
 * profile ('satellite' or 'internet'): its two directions' largest delays.
 */
export function linkRttMs(profile, link) {
  return extremes(profile.links[link].forward).delay + extremes(profile.links[link].return).delay;
}

/**
 * Pure: what --pep-sat fec=K/N makes of a `profile`'s chain: {value,
 * hopRttMs} (the satellite link's round trip), or null without it.
 */
export function fecPlan(sat, profile) {
  // the satellite link's round trip is what --fec's timers follow
  return sat?.fec ? { value: sat.fec, hopRttMs: profile ? linkRttMs(profile, 'satellite') : null } : null;
}

/** Pure: a proxy's arguments for `fec` (fecPlan's), none for null. */
export function fecArgs(fec) {
  if (!fec) return [];
  return ['--fec', fec.value, ...(fec.hopRttMs == null ? [] : ['--fec-hop-rtt-ms', String(Math.round(fec.hopRttMs))])];
}

/**
 * Pure: the initial window, in packets, of a standing tunnel's sender over
 * a loaded profile's satellite link, `direction` 'forward' (Proxy-GW's, the
 * default) or 'return' (Proxy-ST's, which uploads go over): that
 * direction's pipe (base rate × round trip, no queue) in QUIC's 1200-byte
 * packets, never below DEFAULT_HOPS' 100. null when the link has no rate
 * that way. The tunnel is the operator's, who knows
 * the link: shared by every client connection and mostly app-limited
 * (quinn grows no window it does not fill), it would otherwise stay near
 * 100 packets where six split-TCP connections start at 600 together.
 * Pacing at 1.25 × window / RTT then sends about at the link's rate.
 * `share`: the part of the link the tunnel's own packets may take (K/N
 * with fec=K/N, whose repairs take the rest).
 */
export function tunnelInitialWindow(profile, direction = 'forward', share = 1) {
  const { forward: f, return: r } = profile.links.satellite;
  const rate = (direction === 'return' ? r : f).rate_mbit ?? 0;
  if (!rate) return null;
  const pipe = bdpBytes(rate, f.delay_ms + r.delay_ms);
  const packets = Math.max(DEFAULT_HOPS.satellite['initial-window'], Math.ceil(pipe / QUIC_PACKET_BYTES));
  return share === 1 ? packets : Math.ceil(packets * share);
}

// What quinn counts an initial-window packet as (transport/src/quic.rs).
const QUIC_PACKET_BYTES = 1200;

/**
 * Pure: the hops' settings: DEFAULT_HOPS, then what the profile's links
 * give (when they have rates: the windows, and with the standing tunnel,
 * `tunnel` 'warm', its initial window and cc=sat), then `hops` on top. `sat` and
 * `ground` (the --pep-sat / --pep-ground shape: one side for the satellite
 * hop, one for both ground hops) are laid over those. When the satellite
 * link's return rate gives Proxy-ST's sender another initial window than
 * Proxy-GW's (an asymmetric link), and nobody set one, the result also has
 * `satelliteReturn`: the satellite hop as Proxy-ST sends on it.
 */
export function resolveHops(hops = {}, profile = null, { sat: satGiven = {}, ground = {}, tunnel = null } = {}) {
  // fec is the proxies' own (chainArgs' --fec), not the hop's transport;
  // its repairs take (N − K) / N of the link from the tunnel's window
  const { fec = null, ...sat } = satGiven;
  const share = fec ? (({ k, n }) => k / n)(parseFec(fec, '--pep-sat')) : 1;
  const { satelliteReturn = null, ...given } = hops;
  hops = given;
  for (const k of Object.keys(hops)) {
    if (!(k in DEFAULT_HOPS))
      throw new UsageError(`QUIC PEP hops: unknown hop ${JSON.stringify(k)}; expected client, satellite, server`);
  }
  const fromProfile = { client: {}, satellite: {}, server: {} };
  if (profile) {
    const satBdp = linkBdpBytes(profile, 'satellite');
    const netBdp = linkBdpBytes(profile, 'internet');
    if (satBdp) fromProfile.satellite['bdp-bytes'] = satBdp;
    if (netBdp) fromProfile.server['bdp-bytes'] = netBdp;
    const iw = tunnel === 'warm' ? tunnelInitialWindow(profile, 'forward', share) : null;
    // A tunnel that starts at the link's pipe has nothing to slow-start
    // towards: NewReno would double into the queue and, on a long fat
    // link, lose thousands of packets of one stream at once (proxy/README.md).
    if (iw) Object.assign(fromProfile.satellite, { 'initial-window': iw, cc: 'sat' });
    const iwReturn = iw ? tunnelInitialWindow(profile, 'return', share) : null;
    const chosen = 'initial-window' in (hops.satellite ?? {}) || 'initial-window' in sat;
    // Proxy-ST sends uploads over the return link: pacing them at the
    // forward link's pipe would overflow a narrower return link's queue
    if (iwReturn && iwReturn !== iw && !chosen) fromProfile.satelliteReturn = { 'initial-window': iwReturn };
  }
  const extra = { client: ground, satellite: sat, server: ground };
  const out = {};
  for (const h of Object.keys(DEFAULT_HOPS)) {
    out[h] = Object.assign({}, DEFAULT_HOPS[h], fromProfile[h], hops[h] ?? {}, extra[h]);
    for (const k of Object.keys(out[h]))
      if (!QUIC_KEYS.includes(k))
        throw new UsageError(
          `QUIC PEP ${h} hop: unknown option ${JSON.stringify(k)}; expected ${QUIC_KEYS.join(', ')}`,
        );
  }
  const stSends = satelliteReturn ?? fromProfile.satelliteReturn;
  if (stSends) out.satelliteReturn = { ...out.satellite, ...stSends };
  return out;
}

/**
 * Pure: the two proxies' command lines (without the binary).
 * files: { st: {cert, key, log, stats, connLog?}, gw: {cert, key, log, stats} }
 * (connLog: the connection log, servers/connection-log.js);
 * next: Proxy-GW's next hop {addr, port, name, ca} (the origin by default);
 * extra: more arguments per role, {st: [...], gw: [...]} (QPEP's);
 * transparent: transparentPlan's result (many origins: Proxy-GW then has
 * no next hop of its own and no spare), or null;
 * fec: {value: 'K/N', hopRttMs} (--pep-sat fec=K/N: both proxies code the
 * satellite hop), or null.
 */
export function chainArgs({
  hops,
  h3 = true,
  files,
  originCertPath,
  siteHost,
  next = {},
  qlogDir = null,
  alpn = ['h3'],
  tunnel = 'warm',
  spare = h3,
  extra = {},
  transparent = null,
  fec = null,
}) {
  const h = resolveHops(hops);
  if (transparent && tunnel !== 'warm')
    throw new UsageError(
      `QUIC PEP transparent: needs the standing tunnel (tunnel 'warm'), which carries each client connection's destination to Proxy-GW; got ${JSON.stringify(tunnel)}`,
    );
  const common = (role, acceptHop, connectHop) => {
    const f = files[role];
    const a = [
      '--role',
      role,
      '--label',
      role,
      '--listen',
      `${PEP_ADDRESSES[role]}:${PEP_QUIC_PORT}`,
      '--cert',
      f.cert,
      '--key',
      f.key,
      '--log',
      f.log,
      '--stats',
      f.stats,
      '--alpn',
      alpn.join(','),
    ];
    if (f.connLog) a.push('--conn-log', f.connLog);
    if (h3) a.push('--h3');
    if (tunnel === 'warm') a.push('--tunnel');
    // Careful Resume is the accepting end's (Proxy-GW's, for the
    // satellite hop): the dialling end's side leaves it out
    const dialled = Object.fromEntries(Object.entries(h[connectHop] ?? {}).filter(([k]) => k !== 'careful-resume'));
    const accept = quicSideText(h[acceptHop], `QUIC PEP ${acceptHop} hop`);
    const connect = quicSideText(dialled, `QUIC PEP ${connectHop.replace('Return', '')} hop`);
    if (accept) a.push('--accept-side', accept);
    if (connect) a.push('--connect-side', connect);
    if (h[acceptHop]?.['careful-resume'] === 'on' && f.carefulResumeLog)
      a.push('--careful-resume-log', f.carefulResumeLog);
    if (qlogDir) a.push('--qlog-dir', qlogDir);
    a.push(...fecArgs(fec));
    return a;
  };
  const gwNext = { addr: ADDRESSES.server, port: ORIGIN_PORT, name: siteHost, ca: originCertPath, ...next };
  // transparent: Proxy-GW dials each connection's own destination, and no
  // destination is known ahead for a spare
  const gwTo = transparent
    ? transparent.args.gw
    : [
        ...(tunnel === 'warm' && spare ? ['--spare'] : []),
        '--next-hop',
        `${gwNext.addr}:${gwNext.port}`,
        '--next-hop-name',
        gwNext.name,
        '--next-hop-ca',
        gwNext.ca,
      ];
  return {
    gw: [...common('gw', 'satellite', 'server'), ...gwTo, ...(extra.gw ?? [])],
    st: [
      ...common('st', 'client', h.satelliteReturn ? 'satelliteReturn' : 'satellite'),
      '--next-hop',
      `${PEP_ADDRESSES.gw}:${PEP_QUIC_PORT}`,
      '--next-hop-name',
      GW_NAME,
      '--next-hop-ca',
      files.gw.cert,
      ...(transparent?.args.st ?? []),
      ...(extra.st ?? []),
    ],
  };
}

// TPROXY of the transparent chain's QUIC in st: its own mark, routing
// table and nft table (the split-TCP PEP has 0x1/100, QPEP 0x2/101).
export const QUIC_TPROXY = { mark: 0x3, table: 102, nftTable: 'satbench_quic_pep' };

// An SPKI pin as Chromium takes it (origin gen-cert's spki.txt).
const SPKI_PIN = /^[A-Za-z0-9+/]{43}=$/;

/**
 * Pure: st's nftables table for the transparent chain. QUIC from the
 * client (UDP to one of `ports` arriving on lan0, for an address that is
 * not st's) is marked for local delivery and handed to Proxy-ST's
 * transparent socket at `listen` (IP:PORT; the QUIC PEP takes its own port
 * as the original one, the MASQUE client reads the original destination
 * of each datagram); what TPROXY cannot hand over (Proxy-ST not listening)
 * is dropped rather than routed past the PEP.
 */
export function transparentNftRuleset({ listen, ports = [PEP_QUIC_PORT], tproxy = QUIC_TPROXY }) {
  const mark = `0x${tproxy.mark.toString(16)}`;
  const match = `iifname "${lan.dev}" meta l4proto udp fib daddr type != local udp dport { ${ports.join(', ')} }`;
  return `table ip ${tproxy.nftTable} {
  chain prerouting {
    type filter hook prerouting priority mangle; policy accept;
    ${match} meta mark set ${mark} tproxy ip to ${listen} accept
    ${match} drop
  }
}
`;
}

/**
 * Pure: what `transparent` adds to the chain: the proxies' arguments
 * (Proxy-ST's transparent listener; Proxy-GW's trust in the origins' key
 * `originSpki` and the networks it may dial, `allowDst`) and st's TPROXY
 * (nft ruleset and policy routing).
 */
export function transparentPlan({ originSpki, allowDst = null }) {
  if (typeof originSpki !== 'string' || !SPKI_PIN.test(originSpki))
    throw new UsageError(
      `QUIC PEP transparent: originSpki must be the origins' SPKI pin (base64 of a SHA-256, as spki.txt), got ${JSON.stringify(originSpki)}`,
    );
  const listen = `${PEP_ADDRESSES.st}:${PEP_QUIC_PORT}`;
  const allow = allowDst ? ['--allow-dst', [allowDst].flat().join(',')] : [];
  return {
    args: {
      st: ['--transparent'],
      gw: ['--transparent', '--next-hop-spki', originSpki, ...allow],
    },
    st: { nft: transparentNftRuleset({ listen }), rules: tproxyRules(QUIC_TPROXY) },
    settings: { nft_table: QUIC_TPROXY.nftTable, listen, port: PEP_QUIC_PORT, origin_spki: originSpki },
  };
}

/** Pure: whether both proxies report the standing tunnel up. */
export function tunnelUp(stats) {
  return Boolean(stats?.st?.tunnel?.up && stats?.gw?.tunnel?.up);
}

/**
 * Pure: the run record's `pep.tunnel`, from the proxies' stats taken just
 * before the load: the mode, the tunnel's handshake (outside the load), and
 * each end's congestion window (bytes) and RTT when the load began.
 */
export function tunnelAtLoad(mode, stats) {
  if (mode !== 'warm') return { mode };
  const end = (role) => {
    const t = stats?.[role]?.tunnel;
    return { cwnd: t?.cwnd ?? null, rtt_ms: t?.rtt_ms ?? null };
  };
  return {
    mode,
    up: tunnelUp(stats),
    handshake_ms: stats?.st?.tunnel?.handshake_ms ?? null,
    clients_before: stats?.st?.tunnel?.clients ?? null,
    st: end('st'),
    gw: end('gw'),
  };
}

/**
 * Both proxies' counters, {st, gw}, from the quic-pep processes of the
 * testbed's state (`files[role].stats`): fresh while they run, their last
 * file after teardown.
 */
export function proxyStats(tb, files) {
  const readFile = (f) => {
    try {
      return JSON.parse(fs.readFileSync(f, 'utf8'));
    } catch {
      return null;
    }
  };
  return async () => {
    const out = {};
    for (const role of ['st', 'gw']) {
      const pid = tb.state.processes.find((p) => p.role === `quic-pep-${role}`)?.pid;
      out[role] =
        (pid && alive(pid) ? await requestStats(pid, files[role].stats) : null) ?? readFile(files[role].stats);
    }
    return out;
  };
}

// How long the chain's start may wait for the tunnel (a GEO handshake
// takes a second or two).
export const TUNNEL_UP_MS = 20000;

/**
 * Makes the proxies' certificates (Proxy-ST's for `siteHost`, whose SPKI
 * pin Chromium gets) and starts Proxy-GW in gw, then Proxy-ST in st; both
 * are recorded in the testbed's state, so teardown ends them.
 *
 * The origin must already run: by default on 198.18.3.2:443/udp with the
 * certificate `startOrigin` makes (tb.dir/tls/cert.pem); `next` {addr,
 * port, name, ca} names another one (satbulk on its own port). `alpn` is
 * what the chain offers (h3; satbulk for bulk downloads); `h3` picks the
 * handshake mode (next hop first, default) over the parallel one. Each
 * hop's transport is `hops` {client, satellite, server} (QUIC options)
 * over DEFAULT_HOPS and what `profile` gives (resolveHops); `sat` and
 * `ground` (as --pep-sat and --pep-ground give them)
 * go on top. `tunnel`: 'warm' (default; the proxies keep one standing
 * connection over the satellite, up before this returns) or
 * 'per-connection' (one per client connection). `spare` (default: `h3`,
 * an HTTP/3 origin): with the tunnel, Proxy-GW keeps an origin connection
 * dialled ahead (satbulk would trace the idle one). `extra`: more
 * arguments per role, {st: [...], gw: [...]} (QPEP's, pep/qpep-chain.js).
 *
 * `transparent` (default false): many origins at once, each client
 * connection going to its own (a replayed archive's, on addressing.js
 * originAddress(i)): TPROXY in st (transparentPlan; its table goes with
 * st's namespace at teardown and `satbench cleanup`) hands Proxy-ST the
 * client's QUIC to any address; Proxy-ST presents, for each name asked
 * for, a certificate made from its key (pin: `spki`); Proxy-GW dials each
 * destination, trusting the origins' shared key `originSpki` (required),
 * within `allowDst` (networks; default quic-pep's, 198.18.0.0/15, which
 * holds the origins' 198.19.0.0/16). Needs `tunnel` 'warm'; no spare.
 * The origin certificate `next` and `originCertPath` are then unused.
 *
 * Returns { serverAddr (= addr), port, ca, spki, settings, logs, connLog (Proxy-ST's), qlogDir,
 * stats(), beforeLoad(), tunnelAtLoad() }: point the client at serverAddr:port and have it trust ca (or
 * Chromium the spki pin); with `transparent`, serverAddr and addr are
 * null (the client uses each origin's own address) and `settings.transparent`
 * says how it intercepts. stats() returns both proxies' counters,
 * {st: {connections (relayed), accepted, failed, active, streams, bytes,
 * destinations (transparent: by address, with the names asked for), …},
 * gw: {…}}, fresh while they run, their last file after teardown.
 */
export async function startQuicPepChain(
  tb,
  {
    siteHost = SITE_HOST,
    originCertPath = path.join(tb.dir, 'tls', 'cert.pem'),
    next = {},
    dir = path.join(tb.dir, 'quic-pep'),
    h3 = true,
    alpn = ['h3'],
    hops = {},
    sat = {},
    ground = {},
    qlogDir = null,
    profile = tb.profile,
    tunnel = 'warm',
    spare = h3,
    extra = {},
    transparent = false,
    originSpki = null,
    allowDst = null,
  } = {},
) {
  const through = transparent ? transparentPlan({ originSpki, allowDst }) : null;
  if (through) spare = false;
  fs.mkdirSync(dir, { recursive: true });
  const bin = binPath('quic-pep');
  const files = {};
  for (const [role, name] of [
    ['st', siteHost],
    ['gw', GW_NAME],
  ]) {
    const tls = await makeCertificate({ name, ip: PEP_ADDRESSES[role], dir: path.join(dir, `${role}-tls`) });
    files[role] = {
      cert: tls.cert,
      key: tls.key,
      spki: tls.spki,
      log: path.join(dir, `quic-pep-${role}.log`),
      stats: path.join(dir, `quic-pep-${role}.stats.json`),
      // Proxy-ST's clients are the browser's connections: their handshakes go into the record
      ...(role === 'st' ? { connLog: path.join(dir, 'quic-pep-st.connections.log') } : {}),
      carefulResumeLog: carefulResumeLogPath(tb, role),
    };
  }
  if (qlogDir) fs.mkdirSync(qlogDir, { recursive: true });
  const fec = fecPlan(sat, profile);
  const resolved = resolveHops(hops, profile, { sat, ground, tunnel });
  const args = chainArgs({
    hops: resolved,
    h3,
    files,
    originCertPath,
    siteHost,
    next,
    qlogDir,
    alpn,
    tunnel,
    spare,
    extra,
    transparent: through,
    fec,
  });
  // Before Proxy-ST listens: from here on the client's QUIC reaches it or nothing.
  if (through) await applyTproxy(tb.ns.st, through.st);
  // gw first, so st's first connection finds it
  for (const role of ['gw', 'st']) {
    await startProcess(tb.state, `quic-pep-${role}`, ['ip', 'netns', 'exec', tb.ns[role], bin, ...args[role]], {
      logPath: path.join(dir, `quic-pep-${role}.stderr.log`),
      what: `the QUIC PEP in ${role}`,
    });
  }
  const stats = proxyStats(tb, files);
  // The standing tunnel comes up now, before any load is measured.
  if (tunnel === 'warm') {
    const end = Date.now() + TUNNEL_UP_MS;
    while (!tunnelUp(await stats())) {
      if (Date.now() > end) throw new Error(`the QUIC PEP's tunnel did not come up within ${TUNNEL_UP_MS / 1000} s`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }
  let atLoad = { mode: tunnel };
  return {
    serverAddr: through ? null : PEP_ADDRESSES.st,
    addr: through ? null : PEP_ADDRESSES.st,
    port: PEP_QUIC_PORT,
    ca: files.st.cert,
    spki: files.st.spki,
    settings: {
      hops: resolved,
      h3,
      alpn,
      tunnel,
      spare: tunnel === 'warm' && spare,
      ...(through ? { transparent: through.settings } : {}),
      ...(fec ? { fec: { setting: fec.value, hop_rtt_ms: fec.hopRttMs } } : {}),
    },
    qlogDir,
    logs: { st: files.st.log, gw: files.gw.log },
    connLog: files.st.connLog,
    stats,
    // Right before the load: the tunnel's state as the load begins.
    beforeLoad: async () => {
      atLoad = tunnelAtLoad(tunnel, await stats());
    },
    tunnelAtLoad: () => atLoad,
  };
}
