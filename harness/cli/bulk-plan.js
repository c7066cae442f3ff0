// `satbench bulk`'s campaign checked once into its plan: the matrix and
// the settings (the command line's, or those campaign.json saved) with
// every default applied from core/defaults.js and the PEP chains' typed
// sides. The campaign loop and every run read this plan; nothing below
// checks or parses the settings again.
import { binPath } from '../core/sys.js';
import { DEFAULTS } from '../core/defaults.js';
import { checkCongestionControl, availableCongestionControls } from '../testbed/congestion-control.js';
import { profileCache } from '../campaign/scenario.js';
import { validateBulkMatrix, bulkPepKind, isBrowser } from '../bulk/matrix.js';
import { checkPepOptions, parsePepOptions } from './pep-options.js';

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
  } = settings;
  validateBulkMatrix(matrix, { profiles });
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
  return { kind: 'bulk', matrix, settings: { link, seed, binMs, quic, quicClient, tcp, pep }, pepChains, profiles };
}
