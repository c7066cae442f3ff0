// One way to start a PEP chain, for page loads (h1-pep … h3-pep, h1-qpep …
// h2-qpep) and bulk downloads (tcp-pep, quic-pep, tcp-qpep) alike, and the
// judgement of whether a run really went through it. The chains themselves
// live in tcp-chain.js (split TCP), quic-chain.js (QUIC), qpep-chain.js
// (TCP over the QUIC PEPs' tunnel), masque-chain.js (h3-masque: the
// client's QUIC carried end to end in CONNECT-UDP) and vpn-chain.js (the
// -vpn protocols' OpenVPN tunnel, the no-PEP baseline).
import { isPep } from '../core/protocols.js';
import { startTcpPepChain } from './tcp-chain.js';
import { startQuicPepChain } from './quic-chain.js';
import { startQpepChain, qpepRelayed, checkQpepRelayed } from './qpep-chain.js';
import { startVpnChain, checkTunnelled } from './vpn-chain.js';
import { fecRecord } from './fec.js';
import { startMasqueChain, masqueRecord, checkMasqueCarried } from './masque-chain.js';

/**
 * Starts the chain of `kind` ('tcp', 'quic', 'qpep', 'masque', 'vpn'; null: none,
 * returns null) in testbed `tb`. `sides`: the chain's typed settings as the
 * campaign's plan holds them (cli/pep-options.js checkPepOptions: tcp
 * {preset, sat, ground}, quic, qpep and masque {sat, ground, tunnel}); `qlogDir`:
 * the QUIC PEPs write a qlog per connection there. `via`: where the chain
 * relays to when it is not the origin's HTTPS: for QUIC {next, alpn, h3}
 * (see startQuicPepChain), for TCP, QPEP and MASQUE {ports} to intercept.
 * Returns {kind, settings, stats(), …}: for QUIC also serverAddr, port, ca
 * and spki, where the client must connect and what it must trust (the TCP
 * PEP and QPEP are transparent).
 */
export async function startPepChain(tb, kind, { sides = {}, qlogDir = null, via = {} } = {}) {
  const ports = via.ports ? { ports: via.ports } : {};
  if (kind === 'tcp') return { kind, ...(await startTcpPepChain(tb, { ...sides, ...ports })) };
  if (kind === 'quic') return { kind, ...(await startQuicPepChain(tb, { ...sides, qlogDir, ...via })) };
  if (kind === 'qpep') return { kind, ...(await startQpepChain(tb, { ...sides, qlogDir, ...ports })) };
  if (kind === 'masque') return { kind, ...(await startMasqueChain(tb, { sat: sides.sat, qlogDir, ...ports })) };
  if (kind === 'vpn') return { kind, ...(await startVpnChain(tb)) };
  return null;
}

// Pure: a run record's `pep`: the chain's kind and settings, and what shows
// the run went through it (the VPN's TUN counters, the PEPs' relayed
// connections: for QPEP the TCP connections carried over the tunnel; for
// MASQUE the proxying requests and the packets they carried).
export function pepRecord(chain, stats) {
  if (chain.kind === 'vpn') return { kind: chain.kind, settings: chain.settings, tun: stats };
  const rec =
    chain.kind === 'masque'
      ? { kind: chain.kind, settings: chain.settings ?? null, masque: masqueRecord(stats), stats }
      : {
          kind: chain.kind,
          settings: chain.settings ?? null,
          relayed: chain.kind === 'qpep' ? qpepRelayed(stats) : relayedCounts(stats),
          stats,
        };
  // the QUIC chain's tunnel as the load began (its beforeLoad)
  if (chain.tunnelAtLoad) rec.tunnel = chain.tunnelAtLoad();
  const fec = fecRecord(stats);
  if (fec) rec.fec = fec;
  return rec;
}

// Pure: whether a run of `protocol` with record `pep` went through its chain.
export function checkThrough(protocol, pep) {
  if (pep?.kind === 'vpn') return checkTunnelled(pep.tun);
  if (pep?.kind === 'qpep') return checkQpepRelayed(pep.relayed);
  if (pep?.kind === 'masque') return checkMasqueCarried(pep.masque);
  return checkRelayed(protocol, pep?.relayed);
}

// Pure: how many connections each proxy relayed, from the chain's stats.
export function relayedCounts(stats) {
  return Object.fromEntries(Object.entries(stats ?? {}).map(([role, s]) => [role, s?.connections ?? 0]));
}

// Pure: a -pep run counts only if every proxy of the chain relayed at least
// one connection; otherwise the page went around the PEPs.
export function checkRelayed(protocol, relayed) {
  if (!isPep(protocol)) return { ok: true, error: null };
  const idle = ['st', 'gw'].filter((role) => !(relayed?.[role] > 0));
  return idle.length
    ? { ok: false, error: `not through the PEP chain: ${idle.join(' and ')} relayed no connection` }
    : { ok: true, error: null };
}
