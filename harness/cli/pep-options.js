// The PEP chains' options of bench and bulk (--pep-preset, --pep-sat,
// --pep-ground, --pep-tunnel): read from the command line as given (what
// campaign.json saves), then checked into each chain's typed sides, which
// a campaign's plan carries to the runs. Only here are these flags named.
import { UsageError, withFlag } from '../core/errors.js';
import { DEFAULTS } from '../core/defaults.js';
import { PEP_TUNNEL_MODES, parsePepSide, tcpPepSide, quicPepSide, chainSat } from '../pep/options.js';
import { pepSettings } from '../pep/tcp-chain.js';

export const PEP_OPTIONS = {
  'pep-preset': { type: 'string' },
  'pep-sat': { type: 'string' },
  'pep-ground': { type: 'string' },
  'pep-tunnel': { type: 'string' },
};

/** Pure: --pep-tunnel's value, or why it is not one. */
export function parsePepTunnel(text) {
  if (text === undefined || text === null) return DEFAULTS.pepTunnel;
  if (!PEP_TUNNEL_MODES.includes(text))
    throw new UsageError(`--pep-tunnel: expected ${PEP_TUNNEL_MODES.join(' or ')}, got ${JSON.stringify(text)}`);
  return text;
}

/**
 * Pure: the command line's PEP options → {preset, sat, ground, tunnel,
 * sat_by_chain}, the settings as given. `satByChain` ({quic, tcp}: a
 * --pep-sat list each) is what a campaign preset recommends for each
 * chain's satellite hop; --pep-sat, when given, replaces it for every chain.
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

/** The PEP settings of parsed options `v`; `satByChain` as parsePepOptions takes it. */
export const pepOptions = (v, satByChain = null) =>
  parsePepOptions(
    { preset: v['pep-preset'], sat: v['pep-sat'], ground: v['pep-ground'], tunnel: v['pep-tunnel'] },
    { satByChain },
  );

/**
 * Pure: where a campaign's QUIC PEP mode `tunnel` came from, as its errors
 * name it: --pep-tunnel when typed, else the preset that chose it (`given`:
 * the campaign's options as campaign.json saves them).
 */
export function tunnelSource(tunnel, given = {}) {
  return given['pep-tunnel'] === undefined && given.preset !== undefined && tunnel !== DEFAULTS.pepTunnel
    ? `--preset ${given.preset}, which runs the QUIC PEP ${tunnel},`
    : `--pep-tunnel ${tunnel}:`;
}

/**
 * Pure: why --pep-sat masque=MODE (`sat`) or --pep-ground masque=MODE
 * (`ground`) cannot go with the chains of `kinds`, or null: the mode is
 * h3-masque's tunnel's alone; to any other chain it would mean nothing.
 */
export function masqueModeRefusal(sat, ground, kinds) {
  if (ground !== undefined)
    return `--pep-ground masque=${ground}: sets how h3-masque's packets cross the satellite hop; use --pep-sat masque=${ground}`;
  if (sat === undefined) return null;
  const others = kinds.filter((k) => k in CHAINS_WITH_SIDES);
  if (!others.length) return null;
  return `--pep-sat masque=${sat}: sets how h3-masque's packets cross the satellite hop, which means nothing to ${others.map((k) => CHAINS_WITH_SIDES[k]).join(' or ')}; run h3-masque in a campaign of its own`;
}

// The chains other than h3-masque's that --pep-sat sets, as the user knows them.
const CHAINS_WITH_SIDES = {
  tcp: 'the split-TCP PEP (-pep over TCP, tcp-pep)',
  quic: 'the QUIC PEP (h3-pep, quic-pep)',
  qpep: 'QPEP (-qpep, tcp-qpep)',
};

/**
 * Pure: the typed sides each chain of `kinds` ('tcp', 'quic', 'qpep',
 * 'masque', 'vpn') starts with, from `pep` (parsePepOptions' shape): {tcp:
 * {preset, sat, ground}, quic: {sat, ground, tunnel}, qpep and masque: {…as
 * quic}}, only for
 * the kinds given. Fails now, naming the flag, when a chain could not
 * start with them; `tunnelFrom` names where the tunnel mode came from
 * (tunnelSource).
 */
export function checkPepOptions(pep, kinds, { tunnelFrom = null } = {}) {
  const { preset = null, ground = {} } = pep;
  // a preset that no run would use is a mistake, not a setting to ignore
  if (preset !== null && !kinds.includes('tcp'))
    throw new UsageError(
      `--pep-preset ${preset}: sets the split-TCP PEP, which no protocol of the matrix goes through (bench: h1-pep, h1s-pep, h2-pep; bulk: tcp-pep)`,
    );
  // so are hops given for PEPs that no run starts (a campaign preset's own
  // satellite hops, sat_by_chain, are its recommendations, not the user's)
  const withSides = kinds.filter((k) => k !== 'vpn');
  for (const [flag, side] of [
    ['--pep-sat', pep.sat ?? {}],
    ['--pep-ground', ground],
  ])
    if (!withSides.length && Object.keys(side).length)
      throw new UsageError(
        `${flag} ${Object.entries(side)
          .map(([k, v]) => `${k}=${v}`)
          .join(
            ',',
          )}: sets the PEPs' hops, which no protocol of the matrix goes through (bench: the -pep and -qpep protocols, h3-masque; bulk: quic-pep, quic-masque, tcp-pep, tcp-qpep)`,
      );
  const masqueMode = masqueModeRefusal(pep.sat?.masque, ground.masque, kinds);
  if (masqueMode) throw new UsageError(masqueMode);
  const chains = {};
  if (kinds.includes('tcp')) {
    const p = preset ?? DEFAULTS.tcpPepPreset;
    const sides = { sat: tcpPepSide(chainSat(pep, 'tcp'), '--pep-sat'), ground: tcpPepSide(ground, '--pep-ground') };
    withFlag('--pep-preset', () => pepSettings(p));
    withFlag('--pep-sat', () => pepSettings(p, { sat: sides.sat }));
    withFlag('--pep-ground', () => pepSettings(p, { ground: sides.ground }));
    chains.tcp = { preset: p, ...sides };
  }
  // Careful Resume is the satellite hop's sender's (Proxy-GW, which accepts
  // Proxy-ST's connections and keeps each one's path)
  if (ground['careful-resume'] === 'on')
    throw new UsageError(
      '--pep-ground careful-resume=on: Careful Resume is for the satellite hop (--pep-sat careful-resume=on: Proxy-GW resumes from the path its previous connection from Proxy-ST measured)',
    );
  if (ground.fec !== undefined)
    throw new UsageError(
      `--pep-ground fec=${ground.fec}: forward error correction is for the satellite hop (--pep-sat fec=K/N: Proxy-ST and Proxy-GW code what crosses it)`,
    );
  // QPEP is the QUIC PEP with its tunnel: the same sides, and no other mode
  const tunnel = pep.tunnel ?? DEFAULTS.pepTunnel;
  for (const kind of ['quic', 'qpep', 'masque'].filter((k) => kinds.includes(k)))
    chains[kind] = {
      sat: quicPepSide(chainSat(pep, kind), '--pep-sat'),
      ground: quicPepSide(ground, '--pep-ground'),
      tunnel,
    };
  if (kinds.includes('qpep') && tunnel !== 'warm')
    throw new UsageError(
      `${tunnelFrom ?? tunnelSource(tunnel)} QPEP (the -qpep protocols) carries TCP over the standing tunnel; use --pep-tunnel warm`,
    );
  if (kinds.includes('masque') && tunnel !== 'warm')
    throw new UsageError(
      `${tunnelFrom ?? tunnelSource(tunnel)} the MASQUE chain (h3-masque, quic-masque) carries every client flow over one standing HTTP/3 connection to Proxy-GW; use --pep-tunnel warm`,
    );
  if (kinds.includes('vpn')) chains.vpn = {};
  return chains;
}
