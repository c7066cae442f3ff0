// Named benchmark matrices (`satbench bench --preset NAME`).
import { h2oBuiltWithH3, h2oPatchedBuilt } from '../servers/origin.js';
import { pepKind } from '../core/protocols.js';

/**
 * Pure: the runs per scenario that give `smaller` loads with a handover
 * inside them, on average, when a load lasts `loadS` and handovers come
 * every `periodS` at a phase the load's start does not know: a load has
 * one inside it with probability loadS / periodS.
 */
export const runsForBoundarySplit = ({ loadS, periodS, smaller = 10 }) =>
  Math.ceil((smaller * periodS) / Math.min(loadS, periodS));

// kepler's load over starlink (from navigation start to the load event,
// the span boundary_in_load looks at): 4.2-6.3 s in a first run of the
// preset, on 2 cores loaded 7 by other work; an idle machine loads faster,
// so a lower 3 s, which gives 10 loads with a handover on average where
// the measured ones would give 16 (README, the preset's section).
const STARLINK_KEPLER_LOAD_S = 3;
const STARLINK_PERIOD_S = 15;

export const BENCH_PRESETS = {
  quick: {
    description: 'kepler over leo and geo, no loss, h1, h1-pep, h1-qpep, h3 and h3-pep, 5 runs each (npm run bench)',
    profiles: ['leo', 'geo'],
    losses: [0],
    protocols: ['h1', 'h1-pep', 'h1-qpep', 'h3', 'h3-pep'],
    sites: ['kepler'],
    runs: 5,
  },
  ifip2022: {
    description:
      "the matrix of Kosek et al. (IFIP Networking 2022) on the paper's set-up: geo-dvb and leo-dvb, loss 0/0.01/0.1/1 %, h1, h1-pep, h3, h3-pep, 100 runs, the QUIC PEP per connection, H2O",
    // The access-model profiles: their handshakes take as long as the
    // paper's (geo and leo are satbench's plain links).
    profiles: ['geo-dvb', 'leo-dvb'],
    losses: [0, 0.01, 0.1, 1],
    protocols: ['h1', 'h1-pep', 'h3', 'h3-pep'],
    sites: ['kepler'],
    runs: 100,
    // Chromium forced onto QUIC with no Alt-Svc over h3 holds images back
    // at 6 in flight, as the paper's h3 medians show (sites/origin/README.md).
    altSvc: 'tcp',
    // The paper's origin as it behaved in 2021 (without the OpenSSL 3
    // handshake bug), where harness/setup.sh could build it: presetOrigin.
    origin: 'h2o-patched',
    // The paper's QUIC PEP: a connection per client connection over the
    // satellite hop, NewReno with an initial window of 100 (that mode's
    // own, pep/quic-chain.js DEFAULT_HOPS), not our standing warm tunnel.
    pepTunnel: 'per-connection',
  },
  starlink: {
    description:
      "today's satellite access: kepler, deutschmann-small and deutschmann-large over starlink, starlink-motion and geo-hts, h1, h2, h3 and each through its PEP (h1-pep, h2-pep, h3-pep), runs enough for 10 kepler loads with a handover inside, or more, each with the end hosts on Cubic and on BBR (Huston's question: why does BBR fare better there)",
    // the Starlink-like link, it in motion, and a current GEO service beside them
    profiles: ['starlink', 'starlink-motion', 'geo-hts'],
    losses: [0],
    protocols: ['h1', 'h1-pep', 'h2', 'h2-pep', 'h3', 'h3-pep'],
    sites: ['kepler', 'deutschmann-small', 'deutschmann-large'],
    // the end hosts' TCP and our QUIC senders on each (core/cc-axis.js): twice the runs
    ccs: ['cubic', 'bbr'],
    runs: runsForBoundarySplit({ loadS: STARLINK_KEPLER_LOAD_S, periodS: STARLINK_PERIOD_S }),
  },
};

/**
 * A preset's origin: its own when that one can serve the preset, else the
 * next best here: h2o-patched only where the set-up built it, then H2O only
 * when built with HTTP/3 (or named by SATBENCH_H2O), then ours. The
 * report's Environment names the one that ran and why.
 */
export function presetOrigin(preset, { h2oWithH3 = h2oBuiltWithH3(), patched = h2oPatchedBuilt() } = {}) {
  let origin = preset.origin ?? 'rust';
  if (origin === 'h2o-patched' && !patched) origin = 'h2o';
  if (origin === 'h2o' && !h2oWithH3) origin = 'rust';
  return origin;
}

// Pure: whether a command line (a campaign's argv) typed `flag`.
const typedFlag = (argv, flag) => argv.some((a) => a === flag || a.startsWith(`${flag}=`));

/**
 * Pure: what the report's Environment says of a preset's own set-up (the
 * parts ifip2022 takes from the paper): for each part, what ran and why
 * (the preset's, an option's, a campaign saved before the preset had it,
 * or not built here). `run`: the campaign's {matrix, settings, argv} (its
 * manifest's); `patched`: whether h2o-patched is built here. [] for a preset
 * without such parts.
 */
export function presetSetup(name, { matrix, settings, argv = [] }, { patched = h2oPatchedBuilt() } = {}) {
  const preset = BENCH_PRESETS[name];
  if (!preset?.pepTunnel) return [];
  const saved = `as the campaign saved it (started before ${name} was the paper's set-up)`;
  const why = (flag) => (typedFlag(argv, flag) ? `chosen with ${flag}` : saved);
  const rows = [];
  const profiles = matrix.profiles.join(', ');
  rows.push(
    matrix.profiles.every((p) => preset.profiles.includes(p))
      ? `link profiles ${profiles}: the access models whose handshakes take as long as the paper's`
      : `link profiles ${profiles}: ${why('--profile')}; the paper's are ${preset.profiles.join(', ')}`,
  );
  if (matrix.protocols.some((p) => pepKind(p) === 'quic')) {
    const tunnel = settings.pep?.tunnel ?? 'warm';
    rows.push(
      tunnel === preset.pepTunnel
        ? "QUIC PEP: a connection per client connection, NewReno with an initial window of 100 on the satellite hop (the paper's)"
        : `QUIC PEP: the standing ${tunnel} tunnel, satbench's own, ${why('--pep-tunnel')}`,
    );
    if (typedFlag(argv, '--pep-sat')) rows.push("QUIC PEP satellite hop: as --pep-sat set it, not the paper's");
  }
  const origin = settings.origin;
  if (origin === preset.origin)
    rows.push(`origin ${origin}: H2O without the OpenSSL 3 handshake bug, the paper's server as it behaved in 2021`);
  else if (typedFlag(argv, '--origin')) rows.push(`origin ${origin}: chosen with --origin`);
  else if (!patched)
    rows.push(
      `origin ${origin}: h2o-patched is not built here (harness/setup.sh builds it), so ${origin === 'h2o' ? 'H2O with the OpenSSL 3 bug that costs its HTTP/3 handshake two round trips' : 'ours (no H2O with HTTP/3 here either)'}`,
    );
  else rows.push(`origin ${origin}: ${saved}`);
  return rows;
}
