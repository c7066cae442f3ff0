// What the protocol names of a page-load matrix mean: the browser's protocol
// (h1 cleartext, h1s over TLS, h2, h3), each also through the PEP chain
// (`-pep`) or through an OpenVPN tunnel over the satellite hop (`-vpn`, the
// baseline a PEP is compared against), which chain that is, and the ALPN
// the browser must report.
export const PROTOCOLS = ['h1', 'h1s', 'h2', 'h3'];
export const PEP_PROTOCOLS = PROTOCOLS.map((p) => `${p}-pep`);
export const VPN_PROTOCOLS = PROTOCOLS.map((p) => `${p}-vpn`);

// What Chromium's nextHopProtocol says for each (h1s is HTTP/1.1 over TLS).
export const NEXT_HOP = { h1: 'http/1.1', h1s: 'http/1.1', h2: 'h2', h3: 'h3' };

export const baseProtocol = (protocol) => protocol.replace(/-(pep|vpn)$/, '');
export const isPep = (protocol) => protocol.endsWith('-pep');
export const isVpn = (protocol) => protocol.endsWith('-vpn');
// The chain a protocol goes through: h3-pep the QUIC PEPs, the other -pep
// protocols the split-TCP PEPs, every -vpn protocol the VPN tunnel.
export const pepKind = (protocol) =>
  isVpn(protocol) ? 'vpn' : !isPep(protocol) ? null : baseProtocol(protocol) === 'h3' ? 'quic' : 'tcp';
