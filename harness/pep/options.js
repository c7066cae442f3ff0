// The vocabulary of the PEP chains' settings (bench and bulk alike): one
// side's KEY=VALUE list for the satellite hop, one for both ground hops.
// The QUIC PEP takes the QUIC options (transport/quic-options.json), the
// split-TCP PEP cc, initial-window, sndbuf and rcvbuf. `flag` is where a
// value came from, as the caller names it (cli/pep-options.js parses the
// command line into each chain's typed sides before anything runs; the
// chains take them as they are).
import { UsageError } from '../core/errors.js';
import { QUIC_KEYS, checkQuicOption, keyValueItems, quicOptionKind } from '../core/quic-options.js';

export const TCP_PEP_KEYS = ['cc', 'initial-window', 'sndbuf', 'rcvbuf'];
// The QUIC PEP's own satellite-hop keys, beyond the QUIC options every
// QUIC tool takes: fec=K/N (forward error correction between the proxies)
// and, for h3-masque alone, masque=MODE (how the inner packets cross).
export const QUIC_PEP_SAT_KEYS = ['fec', 'masque'];
export const PEP_KEYS = [...new Set([...QUIC_KEYS, ...TCP_PEP_KEYS, ...QUIC_PEP_SAT_KEYS])];

// Pure: whether a side's key takes a whole number: a QUIC option whose kind
// is count (transport/quic-options.json), or a key only the split-TCP PEP
// has (sndbuf, rcvbuf: bytes). cc (a choice), flags, fec and masque take none.
export const takesNumber = (key) => !QUIC_PEP_SAT_KEYS.includes(key) && (quicOptionKind(key) ?? 'count') === 'count';

// quic-pep's bounds on fec=K/N (proxy/quic-pep/src/fec/setting.rs): K ≥ 1, K < N ≤ 64.
const FEC_MAX_N = 64;

/** Pure: fec's value `K/N` as {k, n}, or why it is not one (`flag` starts the message). */
export function parseFec(value, flag) {
  const m = /^(\d+)\/(\d+)$/.exec(String(value));
  const k = m ? Number(m[1]) : NaN;
  const n = m ? Number(m[2]) : NaN;
  if (!m || k < 1 || n <= k || n > FEC_MAX_N)
    throw new UsageError(
      `${flag}: fec expects K/N, K source datagrams and N in all per window (1 ≤ K < N ≤ ${FEC_MAX_N}, e.g. fec=8/10), got ${JSON.stringify(value)}`,
    );
  return { k, n };
}

// How h3-masque's inner packets cross the satellite hop (quic-pep
// --masque-mode): as HTTP Datagrams, or as capsules on the request stream.
export const MASQUE_MODES = ['datagram', 'stream'];

/** Pure: masque's value, or why it is not one (`flag` starts the message). */
export function parseMasqueMode(value, flag) {
  if (!MASQUE_MODES.includes(value))
    throw new UsageError(
      `${flag}: masque expects ${MASQUE_MODES.join(' or ')} (how h3-masque's packets cross the satellite hop: HTTP Datagrams, or capsules on the request stream), got ${JSON.stringify(value)}`,
    );
  return value;
}

/** Pure: "cc=newreno,initial-window=100" → {cc: 'newreno', 'initial-window': '100'}. */
export function parsePepSide(text, flag) {
  const out = {};
  for (const [key, value] of keyValueItems(text)) {
    if (!PEP_KEYS.includes(key))
      throw new UsageError(`${flag}: unknown option ${JSON.stringify(key)}; expected ${PEP_KEYS.join(', ')}`);
    if (takesNumber(key) && !/^\d+$/.test(String(value)))
      throw new UsageError(`${flag}: ${key} expects a whole number, got ${JSON.stringify(value)}`);
    if (key === 'fec') parseFec(value, flag);
    if (key === 'masque') parseMasqueMode(value, flag);
    out[key] = value;
  }
  return out;
}

/** Pure: a side as the split-TCP chain takes it (numbers as numbers), or why it cannot. */
export function tcpPepSide(side, flag) {
  const out = {};
  for (const [k, v] of Object.entries(side)) {
    if (!TCP_PEP_KEYS.includes(k))
      throw new UsageError(`${flag}: ${k} is a QUIC option; the split-TCP PEP takes ${TCP_PEP_KEYS.join(', ')}`);
    out[k] = takesNumber(k) ? Number(v) : v;
  }
  return out;
}

/** Pure: a side as the QUIC chain takes it (the QUIC options' keys, and fec), or why it cannot. */
export function quicPepSide(side, flag) {
  for (const [k, v] of Object.entries(side)) {
    if (QUIC_PEP_SAT_KEYS.includes(k)) continue;
    if (!QUIC_KEYS.includes(k))
      throw new UsageError(`${flag}: ${k} is a TCP option; the QUIC PEP takes ${QUIC_KEYS.join(', ')}`);
    checkQuicOption(k, v, flag);
  }
  return { ...side };
}

// The QUIC PEP's satellite hop: one standing ST↔GW tunnel that every
// client connection shares (warm), or a connection per client connection
// as Kosek et al. measured (per-connection).
export const PEP_TUNNEL_MODES = ['warm', 'per-connection'];

/**
 * Pure: the satellite side the chain of `kind` ('tcp', 'quic', 'qpep', 'masque')
 * starts with: the preset's for that chain (QPEP rides the QUIC PEP's
 * tunnel, MASQUE its own connection over the same hop: the quic one), else
 * the one satellite side given for all.
 */
export function chainSat(pep, kind) {
  const chain = kind === 'qpep' || kind === 'masque' ? 'quic' : kind;
  return pep.sat_by_chain?.[chain] ?? pep.sat ?? {};
}
