// What the protocol names of a page-load matrix mean: the browser's protocol
// (h1 cleartext, h1s over TLS, h2, h3), each also through the PEP chain
// (`-pep`), which chain that is, and the ALPN the browser must report.
export const PROTOCOLS = ['h1', 'h1s', 'h2', 'h3'];
export const PEP_PROTOCOLS = PROTOCOLS.map((p) => `${p}-pep`);

// What Chromium's nextHopProtocol says for each (h1s is HTTP/1.1 over TLS).
export const NEXT_HOP = { h1: 'http/1.1', h1s: 'http/1.1', h2: 'h2', h3: 'h3' };

export const baseProtocol = (protocol) => protocol.replace(/-pep$/, '');
export const isPep = (protocol) => protocol.endsWith('-pep');
// h3-pep goes through the QUIC PEPs, the other -pep protocols through the split-TCP PEPs.
export const pepKind = (protocol) => (!isPep(protocol) ? null : baseProtocol(protocol) === 'h3' ? 'quic' : 'tcp');
