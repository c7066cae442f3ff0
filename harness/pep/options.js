// The PEP chains' settings as the user gives them (--pep-preset, --pep-sat,
// --pep-ground; bench and bulk alike): one side's KEY=VALUE list for the
// satellite hop, one for both ground hops. The QUIC PEP takes the QUIC
// options (transport/quic-options.json), the split-TCP PEP cc,
// initial-window, sndbuf and rcvbuf. Parsed and checked before anything
// runs; the chains take the sides as they come out of here.
import { UsageError, withFlag } from '../core/errors.js';
import { QUIC_KEYS, checkQuicOption, keyValueItems, quicOptionKind } from '../core/quic-options.js';
import { pepSettings } from './tcp-chain.js';
import { checkQpepTunnel } from './qpep-chain.js';

export const TCP_PEP_KEYS = ['cc', 'initial-window', 'sndbuf', 'rcvbuf'];
export const PEP_KEYS = [...new Set([...QUIC_KEYS, ...TCP_PEP_KEYS])];

// Pure: whether a side's key takes a whole number: a QUIC option whose kind
// is count (transport/quic-options.json), or a key only the split-TCP PEP
// has (sndbuf, rcvbuf: bytes). cc (a choice) and flags take none.
export const takesNumber = (key) => (quicOptionKind(key) ?? 'count') === 'count';

/** Pure: "cc=newreno,initial-window=100" → {cc: 'newreno', 'initial-window': '100'}. */
export function parsePepSide(text, flag) {
  const out = {};
  for (const [key, value] of keyValueItems(text)) {
    if (!PEP_KEYS.includes(key))
      throw new UsageError(`${flag}: unknown option ${JSON.stringify(key)}; expected ${PEP_KEYS.join(', ')}`);
    if (takesNumber(key) && !/^\d+$/.test(String(value)))
      throw new UsageError(`${flag}: ${key} expects a whole number, got ${JSON.stringify(value)}`);
    out[key] = value;
  }
  return out;
}

/** Pure: a side as the split-TCP chain takes it (numbers as numbers), or why it cannot. */
export function tcpPepSide(side = {}, flag = '--pep-sat') {
  const out = {};
  for (const [k, v] of Object.entries(side)) {
    if (!TCP_PEP_KEYS.includes(k))
      throw new UsageError(`${flag}: ${k} is a QUIC option; the split-TCP PEP takes ${TCP_PEP_KEYS.join(', ')}`);
    out[k] = takesNumber(k) ? Number(v) : v;
  }
  return out;
}

/** Pure: a side as the QUIC chain takes it (the QUIC options' keys), or why it cannot. */
export function quicPepSide(side = {}, flag = '--pep-sat') {
  for (const [k, v] of Object.entries(side)) {
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
export const DEFAULT_PEP_TUNNEL = 'warm';

/** Pure: --pep-tunnel's value, or why it is not one. */
export function parsePepTunnel(text) {
  if (text === undefined || text === null) return DEFAULT_PEP_TUNNEL;
  if (!PEP_TUNNEL_MODES.includes(text))
    throw new UsageError(`--pep-tunnel: expected ${PEP_TUNNEL_MODES.join(' or ')}, got ${JSON.stringify(text)}`);
  return text;
}

/**
 * Pure: the command line's PEP options → {preset, sat, ground, tunnel,
 * sat_by_chain}. `satByChain` ({quic, tcp}: a --pep-sat list each) is what
 * a campaign preset recommends for each chain's satellite hop; --pep-sat,
 * when given, replaces it for every chain.
 */
export function parsePepOptions({ preset, sat, ground, tunnel }, { satByChain = null } = {}) {
  // a preset is judged as it is read, whatever protocols run (not when a split-TCP run starts)
  if (preset !== undefined && preset !== null) withFlag('--pep-preset', () => pepSettings(preset));
  const byChain =
    !sat && satByChain
      ? Object.fromEntries(Object.entries(satByChain).map(([k, v]) => [k, parsePepSide(v, `preset's ${k} --pep-sat`)]))
      : null;
  return {
    preset: preset ?? null,
    sat: sat ? parsePepSide(sat, '--pep-sat') : {},
    ground: ground ? parsePepSide(ground, '--pep-ground') : {},
    tunnel: parsePepTunnel(tunnel),
    ...(byChain ? { sat_by_chain: byChain } : {}),
  };
}

/**
 * Pure: the satellite side the chain of `kind` ('tcp', 'quic', 'qpep')
 * starts with: the preset's for that chain (QPEP rides the QUIC PEP's
 * tunnel: the quic one), else --pep-sat's.
 */
export function chainSat(pep, kind) {
  const chain = kind === 'qpep' ? 'quic' : kind;
  return pep.sat_by_chain?.[chain] ?? pep.sat ?? {};
}

/**
 * Pure: fails now, naming the flag, when a chain of `kinds` ('tcp',
 * 'quic', 'qpep') could not start with `pep`'s settings.
 */
export function checkPepOptions(pep, kinds) {
  const { preset = null, ground = {} } = pep;
  // a preset that no run would use is a mistake, not a setting to ignore
  if (preset !== null && !kinds.includes('tcp'))
    throw new UsageError(
      `--pep-preset ${preset}: sets the split-TCP PEP, which no protocol of the matrix goes through (bench: h1-pep, h1s-pep, h2-pep; bulk: tcp-pep)`,
    );
  if (kinds.includes('tcp')) {
    const p = preset ?? 'paper';
    const s = { sat: tcpPepSide(chainSat(pep, 'tcp'), '--pep-sat'), ground: tcpPepSide(ground, '--pep-ground') };
    withFlag('--pep-preset', () => pepSettings(p));
    withFlag('--pep-sat', () => pepSettings(p, { sat: s.sat }));
    withFlag('--pep-ground', () => pepSettings(p, { ground: s.ground }));
  }
  // QPEP is the QUIC PEP with its tunnel: the same sides, and no other mode
  if (kinds.includes('quic') || kinds.includes('qpep')) {
    quicPepSide(chainSat(pep, 'quic'), '--pep-sat');
    quicPepSide(ground, '--pep-ground');
  }
  if (kinds.includes('qpep')) checkQpepTunnel(pep.tunnel);
  return pep;
}
