// What the protocol names of a page-load matrix mean: the browser's protocol
// (h1 cleartext, h1s over TLS, h2, h3), each also through the PEP chain
// (`-pep`), through QPEP (`-qpep`: the TCP protocols carried over the QUIC
// PEP's standing tunnel), through a MASQUE tunnel that decrypts nothing
// (`h3-masque`: the client's QUIC carried end to end in CONNECT-UDP between
// Proxy-ST and Proxy-GW) or through an OpenVPN tunnel over the satellite hop
// (`-vpn`, the baseline a PEP is compared against), which chain that is,
// and the ALPN the browser must report.
import { UsageError } from './errors.js';

export const PROTOCOLS = ['h1', 'h1s', 'h2', 'h3'];
export const PEP_PROTOCOLS = PROTOCOLS.map((p) => `${p}-pep`);
// QPEP carries TCP connections: there is no h3-qpep (HTTP/3 through the QUIC PEP is h3-pep).
export const QPEP_PROTOCOLS = PROTOCOLS.filter((p) => p !== 'h3').map((p) => `${p}-qpep`);
export const VPN_PROTOCOLS = PROTOCOLS.map((p) => `${p}-vpn`);
// CONNECT-UDP carries UDP: only HTTP/3 goes through it.
export const MASQUE_PROTOCOLS = ['h3-masque'];

// What Chromium's nextHopProtocol says for each (h1s is HTTP/1.1 over TLS).
export const NEXT_HOP = { h1: 'http/1.1', h1s: 'http/1.1', h2: 'h2', h3: 'h3' };

// String(): a record read from a file may lack its protocol (the report still shows it).
export const baseProtocol = (protocol) => String(protocol).replace(/-(pep|qpep|vpn|masque)$/, '');
export const isPep = (protocol) => String(protocol).endsWith('-pep');
export const isQpep = (protocol) => String(protocol).endsWith('-qpep');
export const isVpn = (protocol) => String(protocol).endsWith('-vpn');
export const isMasque = (protocol) => String(protocol).endsWith('-masque');
// The chain a protocol goes through: h3-pep the QUIC PEPs, the other -pep
// protocols the split-TCP PEPs, every -qpep protocol QPEP (the QUIC PEPs'
// tunnel carrying TCP), h3-masque the MASQUE chain, every -vpn protocol the
// VPN tunnel.
export const pepKind = (protocol) =>
  isVpn(protocol)
    ? 'vpn'
    : isMasque(protocol)
      ? 'masque'
      : isQpep(protocol)
        ? 'qpep'
        : !isPep(protocol)
          ? null
          : baseProtocol(protocol) === 'h3'
            ? 'quic'
            : 'tcp';

// Whether a protocol (of bench or bulk) crosses the satellite through the
// QUIC PEP, whose satellite hop is the standing tunnel or a connection per
// client connection (--pep-tunnel): h3-pep, quic-pep and every -qpep.
export const usesQuicPep = (protocol) => protocol === 'h3-pep' || protocol === 'quic-pep' || isQpep(protocol);

/**
 * Pure: refuses QUIC through QPEP (h3-qpep for bench, quic-qpep for bulk)
 * with what to use instead; QPEP intercepts TCP only.
 */
export function refuseQuicOverQpep(protocol) {
  if (protocol === 'h3-qpep')
    throw new UsageError('--protocol: h3-qpep: QPEP carries TCP; HTTP/3 through the QUIC PEP is h3-pep');
  if (protocol === 'quic-qpep')
    throw new UsageError('--protocol: quic-qpep: QPEP carries TCP; QUIC through the QUIC PEP is quic-pep');
}
