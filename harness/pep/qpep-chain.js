// QPEP (Pavur et al., NDSS 2021) in the testbed: the client's TCP
// connections carried over the QUIC PEP's standing tunnel (the -qpep
// protocols). The chain is the QUIC PEP's (quic-chain.js) with the tunnel;
// Proxy-ST also listens for TCP (--qpep-listen, a transparent socket), and
// nftables TPROXY in st hands it the client's TCP connections on their way
// to the server, as the split-TCP PEP's does. Each TCP connection becomes
// one bidirectional stream of the tunnel; Proxy-GW opens a TCP connection
// to the original destination from its own address. The client and the
// server see ordinary TCP to each other's addresses, and the satellite hop
// carries only the tunnel's QUIC, encrypted by its TLS. gw needs no nft
// rules: it connects out itself.
//
// TPROXY's table, mark, routing table and port are QPEP's own, never the
// split-TCP PEP's, so the two could share a namespace. Everything it sets
// up lives in st's namespace and goes with it at teardown.
//
// The plain functions (settings → the proxies' extra arguments, st's nft
// ruleset and rules) are unit-tested; `startQpepChain` applies them.
import { LINK_PLAN, ORIGIN_TCP_PORTS } from '../testbed/addressing.js';
import { linuxCc } from '../testbed/congestion-control.js';
import { startQuicPepChain } from './quic-chain.js';
import { nftRuleset, tproxyRules, applyTproxy } from './tcp-chain.js';

const lanLink = LINK_PLAN.find((l) => l.name === 'lan');

// The split-TCP PEP has mark 0x1, table 100, port 9480, table satbench_tcp_pep.
export const QPEP_TPROXY = { mark: 0x2, table: 101, port: 9481, listen: '127.0.0.1', nftTable: 'satbench_qpep' };

// Connections Proxy-GW keeps dialled ahead to a server once a client has
// reached it (--qpep-spares): as many as Chromium opens per host for
// HTTP/1.1, so its later connections skip the ground hop's handshake.
export const QPEP_SPARES = 6;

// The page's ports (h1 cleartext, h1s and h2 over TLS); bulk gives satbulk's.
export const QPEP_PORTS = ORIGIN_TCP_PORTS;

/**
 * Pure: what QPEP adds to the QUIC PEP chain. `ports`: the TCP ports st
 * intercepts (or 'all'); `ground`: the ground hops' side (--pep-ground),
 * whose cc becomes GW's TCP congestion control towards the server.
 * Returns {extra: {st, gw} (the proxies' extra arguments), st: {nft,
 * rules} (TPROXY in st), settings (for the record)}.
 */
export function qpepPlan({ ports = QPEP_PORTS, ground = {} } = {}) {
  const listen = `${QPEP_TPROXY.listen}:${QPEP_TPROXY.port}`;
  const connectCc = ground.cc ? linuxCc(ground.cc) : null;
  return {
    extra: {
      st: ['--qpep-listen', listen],
      gw: [...(connectCc ? ['--qpep-connect-cc', connectCc] : []), '--qpep-spares', String(QPEP_SPARES)],
    },
    st: {
      nft: nftRuleset({ iface: lanLink.dev, ports, tproxy: QPEP_TPROXY }),
      rules: tproxyRules(QPEP_TPROXY),
    },
    settings: { listen, ports, nft_table: QPEP_TPROXY.nftTable, connect_cc: connectCc, spares: QPEP_SPARES },
  };
}

/**
 * Starts QPEP in testbed `tb`: TPROXY in st, then the QUIC PEP chain with
 * its standing tunnel (up before this returns) and Proxy-ST's TCP
 * listener. `ports`: the TCP ports to intercept; `sat`, `ground`, `hops`,
 * `qlogDir`, `profile`, `next`, `alpn`, `h3`: as startQuicPepChain takes
 * them (the satellite hop's settings are the tunnel's). The tunnel is
 * always the standing one (cli/pep-options.js refuses another for QPEP).
 *
 * Returns {settings (the QUIC chain's, with `qpep`), logs, stats(),
 * beforeLoad(), tunnelAtLoad()}: no address to point the client at, as
 * QPEP is transparent. stats() gives each proxy's counters, QPEP's under
 * `qpep` {accepted, relayed, failed, refused, active, bytes: {up, down}}.
 */
export async function startQpepChain(tb, { ports = QPEP_PORTS, tunnel: _warm, ground = {}, ...quic } = {}) {
  const plan = qpepPlan({ ports, ground });
  await applyTproxy(tb.ns.st, plan.st);
  // No spare origin connection at gw: no QUIC client comes through.
  const chain = await startQuicPepChain(tb, { ...quic, ground, tunnel: 'warm', spare: false, extra: plan.extra });
  return {
    settings: { ...chain.settings, qpep: plan.settings },
    logs: chain.logs,
    qlogDir: chain.qlogDir,
    stats: chain.stats,
    beforeLoad: chain.beforeLoad,
    tunnelAtLoad: chain.tunnelAtLoad,
  };
}

// Pure: how many TCP connections each proxy carried over the tunnel (st)
// or connected onward (gw), from the chain's stats.
export function qpepRelayed(stats) {
  return Object.fromEntries(Object.entries(stats ?? {}).map(([role, s]) => [role, s?.qpep?.relayed ?? 0]));
}

// Pure: a -qpep run counts only if both ends relayed at least one TCP
// connection; otherwise the page went around the tunnel.
export function checkQpepRelayed(relayed) {
  const idle = ['st', 'gw'].filter((role) => !(relayed?.[role] > 0));
  return idle.length
    ? {
        ok: false,
        error: `not through QPEP: ${idle.join(' and ')} relayed no TCP connection over the tunnel`,
      }
    : { ok: true, error: null };
}
