// What the report says about the PEP variants, for page loads and bulk
// downloads alike: which protocol each variant is compared with (-pep,
// -qpep, -vpn and -masque with their plain protocol; -qpep also with the VPN
// baseline and the split-TCP PEP, as Pavur et al. compared QPEP; -masque
// also with the decrypting QUIC PEP, which it is the alternative to), and how
// the QUIC PEP's satellite hop ran (the standing tunnel or a connection
// per client connection).
import { baseProtocol, isMasque, isQpep, isVpn, usesQuicPep } from '../core/protocols.js';
import { campaignSettings } from '../results/meta.js';

const variantKind = (p) =>
  isVpn(p) ? 'VPN vs no VPN' : isQpep(p) ? 'QPEP vs no PEP' : isMasque(p) ? 'MASQUE vs no PEP' : 'PEP vs no PEP';

/**
 * Pure: the pairs [{a, b, kind}] among `protocols` (bench's or bulk's
 * names): each variant against its plain protocol, then each -qpep
 * against the -vpn and the -pep of the same protocol, and each -masque
 * against the -pep of the same protocol.
 */
export function variantPairs(protocols) {
  const pairs = [];
  for (const p of protocols) {
    const base = baseProtocol(p);
    if (base !== p && protocols.includes(base)) pairs.push({ a: p, b: base, kind: variantKind(p) });
  }
  for (const p of protocols.filter(isQpep)) {
    const base = baseProtocol(p);
    for (const [b, kind] of [
      [`${base}-vpn`, 'QPEP vs VPN'],
      [`${base}-pep`, 'QPEP vs split-TCP PEP'],
    ])
      if (protocols.includes(b)) pairs.push({ a: p, b, kind });
  }
  for (const p of protocols.filter(isMasque)) {
    const b = `${baseProtocol(p)}-pep`;
    if (protocols.includes(b)) pairs.push({ a: p, b, kind: 'MASQUE vs QUIC PEP' });
  }
  return pairs;
}

/**
 * Pure: the modes the QUIC PEP's satellite hop ran in ('warm',
 * 'per-connection'), for the runs of `protocols` that went through it:
 * from the records (pep.tunnel.mode, or the chain's settings), else from
 * the campaign's settings in `meta` (results/meta.js). Empty when none of
 * them used the QUIC PEP or nothing says.
 */
export function quicTunnelModes({ protocols = [], records = null, meta = {} } = {}) {
  const wanted = protocols.filter(usesQuicPep);
  if (!wanted.length) return [];
  const modes = new Set();
  for (const r of records ?? []) {
    if (!wanted.includes(r?.scenario?.protocol)) continue;
    const m = r.pep?.tunnel?.mode ?? r.pep?.settings?.tunnel;
    if (m) modes.add(String(m));
  }
  if (!modes.size) {
    const m = campaignSettings(meta).pep?.tunnel;
    if (m) modes.add(String(m));
  }
  return [...modes];
}

const MODE_TEXT = {
  warm: 'warm (one standing QUIC connection between Proxy-ST and Proxy-GW, up before each load, carried every client connection)',
  'per-connection': 'per-connection (a satellite QUIC connection per client connection, as Kosek et al.)',
};

/** Pure: one sentence naming the tunnel mode(s) of `protocols`, or null (plain text: escape it). */
export function tunnelSentence(protocols, modes) {
  const via = protocols.filter(usesQuicPep);
  if (!via.length || !modes.length) return null;
  return `The QUIC PEP's satellite hop (${via.join(', ')}): ${modes.map((m) => MODE_TEXT[m] ?? m).join('; ')}.`;
}

/**
 * Pure: a run record's `pep` as the satellite hop's setting in a few
 * words ("warm tunnel, cc=sat, IW 4167"; "split TCP paper, cc=bbr, IW
 * 100"), for the objectives table; null for a run through no PEP. The
 * ACK-frequency keys are named when set.
 */
export function satHopSetting(pep) {
  const s = pep?.settings;
  if (!s) return null;
  if (pep.kind === 'vpn') return 'OpenVPN tunnel, no PEP';
  if (pep.kind === 'masque') {
    const sat = s.satellite ?? {};
    return [`MASQUE ${s.mode} tunnel`, `cc=${sat.cc}`, `IW ${sat['initial-window']}`].join(', ');
  }
  const ack = (hop) =>
    ['ack-frequency', 'ack-eliciting-threshold', 'max-ack-delay-ms']
      .filter((k) => hop[k] !== undefined)
      .map((k) => (hop[k] === true || hop[k] === '' ? k : `${k}=${hop[k]}`));
  if (pep.kind === 'tcp') {
    const sat = s.sat ?? {};
    return [`split TCP ${s.preset}`, `cc=${sat.cc}`, `IW ${sat['initial-window']}`].join(', ');
  }
  const hop = s.hops?.satellite ?? {};
  return [`${s.tunnel ?? 'per-connection'} tunnel`, `cc=${hop.cc}`, `IW ${hop['initial-window']}`, ...ack(hop)].join(
    ', ',
  );
}
