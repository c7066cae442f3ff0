// `satbench bulk`'s campaign checked once into its plan: the matrix and
// the settings (the command line's, or those campaign.json saved) with
// every default applied from core/defaults.js and the PEP chains' typed
// sides. The campaign loop and every run read this plan; nothing below
// checks or parses the settings again. Every problem is a UsageError that
// names the flag and what it expects.
import { UsageError, withFlag } from '../core/errors.js';
import { refuseQuicOverQpep } from '../core/protocols.js';
import { binPath } from '../core/sys.js';
import { DEFAULTS } from '../core/defaults.js';
import { checkCongestionControl, availableCongestionControls } from '../testbed/congestion-control.js';
import { profileCache } from '../campaign/scenario.js';
import { satelliteAtCapacity } from '../testbed/profiles.js';
import { linkemOnly } from '../testbed/link-backends.js';
import {
  BULK_PROTOCOLS,
  BULK_DIRECTIONS,
  BULK_VIEWS,
  REVISIT_PROTOCOLS,
  bulkPepKind,
  isBrowser,
} from '../bulk/matrix.js';
import { checkPepOptions, parsePepOptions } from './pep-options.js';

/** Pure but for reading the profiles. */
export function validateBulkMatrix(m, { profiles = profileCache() } = {}) {
  for (const p of m.protocols) {
    refuseQuicOverQpep(p);
    if (!BULK_PROTOCOLS.includes(p))
      throw new UsageError(
        `--protocol: unknown bulk protocol ${JSON.stringify(p)}; expected ${BULK_PROTOCOLS.join(', ')}`,
      );
  }
  if (!m.protocols.length) throw new UsageError('--protocol: name at least one protocol');
  const directions = m.directions ?? ['down'];
  for (const d of directions)
    if (!BULK_DIRECTIONS.includes(d))
      throw new UsageError(`--direction: expected down or up (or both, comma-separated), got ${JSON.stringify(d)}`);
  if (!directions.length) throw new UsageError('--direction: name down, up or both');
  const views = m.views ?? ['first'];
  for (const v of views)
    if (!BULK_VIEWS.includes(v))
      throw new UsageError(`--view: expected first or revisit (or both, comma-separated), got ${JSON.stringify(v)}`);
  if (!views.length) throw new UsageError('--view: name first, revisit or both');
  const noRevisit = m.protocols.find((p) => !REVISIT_PROTOCOLS.includes(p));
  if (views.includes('revisit') && noRevisit)
    throw new UsageError(
      `--view revisit: ${noRevisit} makes no second connection; a revisit is satbulk's QUIC (${REVISIT_PROTOCOLS.join(', ')})`,
    );
  if (m.revisit_capacity != null) {
    if (!views.includes('revisit'))
      throw new UsageError(
        '--revisit-capacity: only with --view revisit (the path changes between its two connections)',
      );
    for (const p of m.profiles) satelliteAtCapacity(profiles(p), m.revisit_capacity);
  }
  const browser = m.protocols.find(isBrowser);
  if (directions.includes('up') && browser)
    throw new UsageError(
      `--direction up: ${browser} only downloads; upload with quic, tcp or their PEP and VPN variants`,
    );
  for (const l of m.losses)
    if (l !== null && !(l >= 0 && l <= 100))
      throw new UsageError(`--loss: expected percentages between 0 and 100, got ${l}`);
  for (const p of m.profiles) withFlag('--profile', () => profiles(p)); // unknown names fail here, before anything runs
  if ((m.duration_s == null) === (m.size_bytes == null))
    throw new UsageError('give --duration or --size (one of them)');
  if (m.duration_s != null && !(m.duration_s > 0))
    throw new UsageError(`--duration: expected seconds > 0, got ${m.duration_s}`);
  if (m.size_bytes != null && !(Number.isInteger(m.size_bytes) && m.size_bytes >= 1))
    throw new UsageError(`--size: expected a whole number of bytes >= 1, got ${m.size_bytes}`);
  if (!Number.isInteger(m.runs) || m.runs < 1)
    throw new UsageError(`-n: expected a whole number of runs >= 1, got ${m.runs}`);
  return m;
}

/**
 * Pure: refuses careful-resume=on where a bulk run cannot use it: without
 * --view revisit a run makes one connection, so none would start from a
 * saved path; through the QUIC PEP only per-connection mode dials Proxy-GW
 * again for the revisit; and the receiver (--quic-client) sends nothing to
 * resume.
 */
export function checkBulkCarefulResume({
  views = ['first'],
  quic = {},
  quicClient = {},
  sat = {},
  tunnel = DEFAULTS.pepTunnel,
}) {
  const why = 'without --view revisit a bulk run makes one connection, so none would start from a saved path';
  const revisit = views.includes('revisit');
  if (quic['careful-resume'] === 'on' && !revisit) throw new UsageError(`--quic careful-resume=on: ${why}`);
  if (sat['careful-resume'] === 'on' && !revisit) throw new UsageError(`--pep-sat careful-resume=on: ${why}`);
  if (sat['careful-resume'] === 'on' && tunnel !== 'per-connection')
    throw new UsageError(
      `--pep-sat careful-resume=on: the warm tunnel carries both connections of a revisit as one; use --pep-tunnel per-connection`,
    );
  if (quicClient['careful-resume'] === 'on')
    throw new UsageError("--quic-client careful-resume=on: Careful Resume is the sender's (--quic)");
}

/**
 * Pure but for reading the profiles: --revisit-capacity changes netem's
 * satellite link in place between the two connections, which linkem (read
 * once at start) cannot.
 */
export function checkRevisitLink(matrix, link, profiles) {
  if (matrix.revisit_capacity == null) return;
  if (link === 'linkem')
    throw new UsageError(
      '--revisit-capacity: changes the link with netem between the connections; not with --link linkem',
    );
  for (const p of matrix.profiles) {
    const why = linkemOnly(profiles(p));
    if (why)
      throw new UsageError(
        `--revisit-capacity: ${why}, which only linkem emulates, and linkem cannot change it between the connections`,
      );
  }
}

/**
 * The matrix and the settings together: the PEP options suit the chains
 * the protocols use, the kernel has --cc, and the binaries the protocols
 * need are built. Needs no privileges. `settings` as bulkInput makes them;
 * a key left out takes its default. Returns the plan: {kind, matrix,
 * settings (complete), pepChains (the typed sides of each chain the
 * protocols use), profiles (the reader that parsed each profile once)}.
 */
export function checkBulk(matrix, settings = {}, options = {}) {
  const profiles = options.profiles ?? profileCache();
  const {
    link = DEFAULTS.link,
    seed = DEFAULTS.seed,
    binMs = DEFAULTS.binMs,
    quic = {},
    quicClient = {},
    tcp = null,
    pep: given = parsePepOptions({}),
    shard = null,
  } = settings;
  validateBulkMatrix(matrix, { profiles });
  checkBulkCarefulResume({
    views: matrix.views,
    quic,
    quicClient,
    sat: given.sat ?? {},
    tunnel: given.tunnel,
  });
  checkRevisitLink(matrix, link, profiles);
  checkCongestionControl(tcp?.cc, options.congestionControls ?? availableCongestionControls());
  const pep = {
    preset: given.preset ?? null,
    sat: given.sat ?? {},
    ground: given.ground ?? {},
    tunnel: given.tunnel ?? DEFAULTS.pepTunnel,
    ...(given.sat_by_chain ? { sat_by_chain: given.sat_by_chain } : {}),
    ...(given.qlog ? { qlog: true } : {}),
  };
  const pepChains = checkPepOptions(pep, matrix.protocols.map(bulkPepKind).filter(Boolean));
  for (const p of matrix.protocols) binPath(isBrowser(p) ? 'origin' : 'satbulk');
  return {
    kind: 'bulk',
    matrix,
    settings: { link, seed, binMs, quic, quicClient, tcp, pep, shard },
    pepChains,
    profiles,
  };
}
