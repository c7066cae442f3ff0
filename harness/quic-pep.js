// The QUIC PEP chain of a testbed: Proxy-ST in st, listening where the
// client's Chromium is told the site is (198.18.1.1:443/udp), relays each
// connection to Proxy-GW in gw (198.18.2.2:443/udp), which relays it to
// the origin (198.18.3.2:443/udp). Every hop's QUIC transport is set
// separately: client hop (st's accept side), satellite hop (st's connect
// side and gw's accept side), server hop (gw's connect side).
//
// The plain functions (hop settings → CLI) are unit-tested;
// `startQuicPepChain` makes the certificates and starts the two proxies.
import fs from 'node:fs';
import path from 'node:path';
import { UsageError } from './errors.js';
import { run, binPath } from './sys.js';
import { alive, requestStats, startProcess } from './testbed.js';
import { ADDRESSES, LINK_PLAN } from './addressing.js';

const lan = LINK_PLAN.find((l) => l.name === 'lan');
const sat = LINK_PLAN.find((l) => l.name === 'sat');

export const QUIC_PORT = 443;
// Proxy-ST on st's client-facing address, Proxy-GW on gw's satellite address.
export const PEP_ADDRESSES = { st: lan.bAddr, gw: sat.bAddr };
export const GW_NAME = 'pep-gw.satbench.test';

// The paper's PEP setting (Kosek et al.): satellite hop NewReno with an
// initial window of 100; client and server hops unchanged (Cubic, 10).
export const DEFAULT_HOPS = {
  client: {},
  satellite: { cc: 'newreno', initialWindow: 100 },
  server: {},
};

// Hop option (camelCase) → quic-pep's KEY (QuicOptions::set in sites/origin).
const KEYS = {
  cc: 'cc',
  initialWindow: 'initial-window',
  initialMtu: 'initial-mtu',
  ackFrequency: 'ack-frequency',
  ackElicitingThreshold: 'ack-eliciting-threshold',
  maxAckDelayMs: 'max-ack-delay-ms',
  bdpBytes: 'bdp-bytes',
  idleTimeoutMs: 'idle-timeout-ms',
};
const CCS = ['cubic', 'newreno', 'bbr'];

/**
 * Pure: one hop's settings → the value of --accept-side / --connect-side,
 * e.g. {cc: 'newreno', initialWindow: 100} → 'cc=newreno,initial-window=100'.
 * Empty string when nothing is set (the proxy's defaults: Cubic, 10).
 */
export function sideFlag(hop = {}, what = 'hop') {
  const parts = [];
  for (const [k, v] of Object.entries(hop)) {
    const key = KEYS[k];
    if (!key) throw new UsageError(`QUIC PEP ${what}: unknown option ${JSON.stringify(k)}; expected ${Object.keys(KEYS).join(', ')}`);
    if (v === undefined || v === null) continue;
    if (key === 'ack-frequency') {
      if (typeof v !== 'boolean') throw new UsageError(`QUIC PEP ${what}: ackFrequency: expected true or false, got ${JSON.stringify(v)}`);
      if (v) parts.push(key);
    } else if (key === 'cc') {
      if (!CCS.includes(v)) throw new UsageError(`QUIC PEP ${what}: cc: expected ${CCS.join(', ')}, got ${JSON.stringify(v)}`);
      parts.push(`cc=${v}`);
    } else {
      if (!Number.isInteger(v) || v < 0) throw new UsageError(`QUIC PEP ${what}: ${k}: expected a whole number, got ${JSON.stringify(v)}`);
      parts.push(`${key}=${v}`);
    }
  }
  return parts.join(',');
}

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
  const rtt = (f.delay + r.delay) / 1000;
  const hold = (d) => (d.rate ? (d.rate * 1e6 / 8) * rtt + d.queue : 0);
  const bytes = Math.max(hold(f), hold(r));
  return bytes ? Math.round(bytes) : null;
}

/**
 * Pure: the hops' settings: DEFAULT_HOPS, then the windows sized from the
 * profile's links (when it has rates), then `hops` on top.
 */
export function resolveHops(hops = {}, profile = null) {
  for (const k of Object.keys(hops)) {
    if (!(k in DEFAULT_HOPS)) throw new UsageError(`QUIC PEP hops: unknown hop ${JSON.stringify(k)}; expected client, satellite, server`);
  }
  const fromProfile = { client: {}, satellite: {}, server: {} };
  if (profile) {
    const satBdp = linkBdpBytes(profile, 'satellite');
    const netBdp = linkBdpBytes(profile, 'internet');
    if (satBdp) fromProfile.satellite.bdpBytes = satBdp;
    if (netBdp) fromProfile.server.bdpBytes = netBdp;
  }
  const out = {};
  for (const h of Object.keys(DEFAULT_HOPS)) out[h] = { ...DEFAULT_HOPS[h], ...fromProfile[h], ...(hops[h] ?? {}) };
  return out;
}

/**
 * Pure: the two proxies' command lines (without the binary).
 * files: { st: {cert, key, log, stats}, gw: {cert, key, log, stats} }.
 */
export function chainArgs({ hops, h3 = true, files, originCertPath, siteHost, qlogDir = null, alpn = ['h3'] }) {
  const h = resolveHops(hops);
  const common = (role, acceptHop, connectHop) => {
    const f = files[role];
    const a = ['--label', role, '--listen', `${PEP_ADDRESSES[role]}:${QUIC_PORT}`, '--cert', f.cert, '--key', f.key,
      '--log', f.log, '--stats', f.stats, '--alpn', alpn.join(',')];
    if (h3) a.push('--h3');
    const accept = sideFlag(h[acceptHop], `${acceptHop} hop`);
    const connect = sideFlag(h[connectHop], `${connectHop} hop`);
    if (accept) a.push('--accept-side', accept);
    if (connect) a.push('--connect-side', connect);
    if (qlogDir) a.push('--qlog-dir', qlogDir);
    return a;
  };
  return {
    gw: [...common('gw', 'satellite', 'server'),
      '--next-hop', `${ADDRESSES.server}:${QUIC_PORT}`, '--next-hop-name', siteHost, '--next-hop-ca', originCertPath],
    st: [...common('st', 'client', 'satellite'),
      '--next-hop', `${PEP_ADDRESSES.gw}:${QUIC_PORT}`, '--next-hop-name', GW_NAME, '--next-hop-ca', files.gw.cert],
  };
}

/**
 * Makes the proxies' certificates (Proxy-ST's for `siteHost`, whose SPKI
 * pin Chromium gets) and starts Proxy-GW in gw, then Proxy-ST in st; both
 * are recorded in the testbed's state, so teardown ends them. The origin
 * must already run with the certificate at `originCertPath`.
 * Returns { serverAddr, spki, hops, logs, qlogDir, stats() }: point the
 * client at serverAddr; stats() returns both proxies' counters
 * ({st: {connections: {relayed, …}, streams, bytes, …}, gw: {…}}), fresh
 * while they run, their last file after teardown.
 */
export async function startQuicPepChain(tb, { siteHost, originCertPath, dir = path.join(tb.dir, 'quic-pep'), h3 = true, hops = {}, qlogDir = null, profile = tb.profile }) {
  if (!siteHost || !originCertPath) throw new Error('startQuicPepChain: siteHost and originCertPath are required');
  fs.mkdirSync(dir, { recursive: true });
  const origin = binPath('origin');
  const bin = binPath('quic-pep');
  const files = {};
  for (const [role, name] of [['st', siteHost], ['gw', GW_NAME]]) {
    const certDir = path.join(dir, `${role}-tls`);
    await run(origin, ['gen-cert', '--name', name, '--ip', PEP_ADDRESSES[role], '--out', certDir]);
    files[role] = {
      cert: path.join(certDir, 'cert.pem'),
      key: path.join(certDir, 'key.pem'),
      log: path.join(dir, `quic-pep-${role}.log`),
      stats: path.join(dir, `quic-pep-${role}.stats.json`),
    };
  }
  if (qlogDir) fs.mkdirSync(qlogDir, { recursive: true });
  const resolved = resolveHops(hops, profile);
  const args = chainArgs({ hops: resolved, h3, files, originCertPath, siteHost, qlogDir });
  // gw first, so st's first connection finds it
  for (const role of ['gw', 'st']) {
    await startProcess(tb.state, `quic-pep-${role}`, ['ip', 'netns', 'exec', tb.ns[role], bin, ...args[role]],
      { logPath: path.join(dir, `quic-pep-${role}.stderr.log`), what: `the QUIC PEP in ${role}` });
  }
  const spki = fs.readFileSync(path.join(dir, 'st-tls', 'spki.txt'), 'utf8').trim();
  const readFile = (f) => {
    try {
      return JSON.parse(fs.readFileSync(f, 'utf8'));
    } catch {
      return null;
    }
  };
  return {
    serverAddr: PEP_ADDRESSES.st,
    spki,
    hops: resolved,
    qlogDir,
    logs: { st: files.st.log, gw: files.gw.log },
    stats: async () => {
      const out = {};
      for (const role of ['st', 'gw']) {
        const pid = tb.state.processes.find((p) => p.role === `quic-pep-${role}`)?.pid;
        out[role] = (pid && alive(pid) ? await requestStats(pid, files[role].stats) : null) ?? readFile(files[role].stats);
      }
      return out;
    },
  };
}
