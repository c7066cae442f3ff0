// What `satbench bench` checks before anything runs: the matrix (profiles ×
// losses × protocols × sites × runs) and the settings that could only fail
// later, in the middle of a campaign. Every problem is a UsageError that
// names the flag and what it expects.
import fs from 'node:fs';
import path from 'node:path';
import { UsageError, withFlag } from '../core/errors.js';
import {
  PROTOCOLS,
  PEP_PROTOCOLS,
  QPEP_PROTOCOLS,
  VPN_PROTOCOLS,
  pepKind,
  refuseQuicOverQpep,
} from '../core/protocols.js';
import { checkOrigin } from '../servers/origin.js';
import { checkPepOptions } from '../pep/options.js';
import { checkCongestionControl, availableCongestionControls } from '../testbed/congestion-control.js';
import { profileCache } from '../campaign/scenario.js';
import { listSites } from '../../sites/generate.js';
import { isArchive } from '../archive/format.js';
import { archiveSite, checkArchiveScenarios } from './archive-site.js';

// Where a replayed archive's names are looked up unless --dns says: in gw,
// so that every lookup crosses the satellite link as it would on the Internet.
export const DEFAULT_ARCHIVE_DNS = 'gw';

// How our origin may order HTTP/3 responses (--h3-priorities); rfc9218 is its default.
export const H3_PRIORITIES = ['rfc9218', 'incremental-last', 'off'];
// Which of our origin's responses carry Alt-Svc (--alt-svc); all is its default.
export const ALT_SVC = ['all', 'tcp'];

/** Pure but for reading the profiles and looking for site folders. */
export function validateBenchMatrix(m, { profiles = profileCache() } = {}) {
  const protocols = [...PROTOCOLS, ...PEP_PROTOCOLS, ...QPEP_PROTOCOLS, ...VPN_PROTOCOLS];
  for (const p of m.protocols) {
    refuseQuicOverQpep(p);
    if (!protocols.includes(p))
      throw new UsageError(`--protocol: unknown protocol ${JSON.stringify(p)}; expected ${protocols.join(', ')}`);
  }
  for (const l of m.losses)
    if (!(l >= 0 && l <= 100)) throw new UsageError(`--loss: expected percentages between 0 and 100, got ${l}`);
  for (const p of m.profiles) withFlag('--profile', () => profiles(p)); // unknown names fail here, before anything runs
  const known = listSites();
  for (const s of m.sites) {
    if (!known.includes(s) && !fs.existsSync(path.join(s, 'index.html')) && !isArchive(s)) {
      throw new UsageError(
        `--site ${s}: neither a reference site (${known.join(', ')}), a directory with an index.html nor a site archive (archive.json)`,
      );
    }
  }
  if (!Number.isInteger(m.runs) || m.runs < 1)
    throw new UsageError(`-n: expected a whole number of runs >= 1, got ${m.runs}`);
  return m;
}

/**
 * The matrix and the settings together: the origin can serve the
 * protocols, the PEP options suit the chains the protocols use, the HTTP/3
 * priorities are known, the kernel has the end hosts' --cc, a site archive
 * can be replayed as asked. Asks H2O about HTTP/3 when it is the origin;
 * needs no privileges. Returns {archives}: each archive site of the matrix
 * (by its --site) read once (archive-site.js archiveSite, absolute path).
 */
export async function checkBench(
  matrix,
  { origin = 'rust', quic = {}, pep = {}, h3Priorities = null, altSvc = null, tcp = {}, dns = null } = {},
  options = {},
) {
  validateBenchMatrix(matrix, options);
  checkCongestionControl(tcp.cc, options.congestionControls ?? availableCongestionControls());
  if (h3Priorities !== null && !H3_PRIORITIES.includes(h3Priorities))
    throw new UsageError(`--h3-priorities: expected ${H3_PRIORITIES.join(', ')}, got ${JSON.stringify(h3Priorities)}`);
  if (altSvc !== null && !ALT_SVC.includes(altSvc))
    throw new UsageError(`--alt-svc: expected ${ALT_SVC.join(' or ')}, got ${JSON.stringify(altSvc)}`);
  checkPepOptions(pep, matrix.protocols.map(pepKind).filter(Boolean));
  await checkOrigin(origin, matrix.protocols, { quic, h3Priorities });
  const archives = Object.fromEntries(
    matrix.sites.filter((s) => !listSites().includes(s) && isArchive(s)).map((s) => [s, archiveSite(path.resolve(s))]),
  );
  const sites = Object.values(archives);
  if (dns !== null && !sites.length)
    throw new UsageError(`--dns ${dns}: only for a site archive (--site DIR with an archive.json)`);
  if (sites.length && origin !== 'rust')
    throw new UsageError(`--origin ${origin}: a site archive is replayed by our origin only (--origin rust)`);
  for (const site of sites)
    checkArchiveScenarios(site, matrix.protocols, dns ?? DEFAULT_ARCHIVE_DNS, { tunnel: pep.tunnel });
  return { archives };
}
