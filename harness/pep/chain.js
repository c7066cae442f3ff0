// Which PEP chain a `-pep` protocol runs through, and the judgement of
// whether a run really went through it. The chains themselves live in
// tcp-pep.js (split TCP: h1-pep, h1s-pep, h2-pep) and quic-pep.js (h3-pep).
import { baseProtocol } from '../pageload/runner.js';

export const isPep = (protocol) => protocol.endsWith('-pep');
export const pepKind = (protocol) => (!isPep(protocol) ? null : baseProtocol(protocol) === 'h3' ? 'quic' : 'tcp');

/**
 * Starts the chain `protocol` needs in testbed `tb`; null without a PEP.
 * Returns {kind, settings, serverAddr?, stats()}: serverAddr is where
 * Chromium must send the site's name (Proxy-ST for QUIC; the TCP PEP is
 * transparent and leaves it alone). `pep.qlogDir`: the QUIC PEPs write a
 * qlog per connection there.
 */
export async function startPepChain(tb, protocol, pep = {}) {
  const kind = pepKind(protocol);
  const { preset = null, sat = {}, ground = {} } = pep;
  if (kind === 'tcp') {
    const { startTcpPepChain } = await import('./tcp-chain.js');
    const { tcpPepSide } = await import('../bulk/bulk.js');
    return {
      kind,
      ...(await startTcpPepChain(tb, {
        preset: preset ?? 'paper',
        ...(Object.keys(sat).length ? { sat: tcpPepSide(sat, '--pep-sat') } : {}),
        ...(Object.keys(ground).length ? { ground: tcpPepSide(ground, '--pep-ground') } : {}),
      })),
    };
  }
  if (kind === 'quic') {
    const { startQuicPepChain } = await import('./quic-chain.js');
    const { quicPepSide } = await import('../bulk/bulk.js');
    return {
      kind,
      ...(await startQuicPepChain(tb, {
        sat: quicPepSide(sat, '--pep-sat'),
        ground: quicPepSide(ground, '--pep-ground'),
        qlogDir: pep.qlogDir ?? null,
      })),
    };
  }
  return null;
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
