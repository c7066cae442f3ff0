// The vocabulary of `satbench bench`'s matrix (profiles × losses ×
// protocols × sites × runs) and settings, and the matrix's check, which
// cli/bench-plan.js makes with the settings' before anything runs. Every
// problem is a UsageError that names the flag and what it expects.
import fs from 'node:fs';
import path from 'node:path';
import { UsageError, withFlag } from '../core/errors.js';
import { PROTOCOLS, PEP_PROTOCOLS, QPEP_PROTOCOLS, VPN_PROTOCOLS, refuseQuicOverQpep } from '../core/protocols.js';
import { profileCache } from '../campaign/scenario.js';
import { listSites } from '../../sites/generate.js';
import { isArchive } from '../archive/format.js';

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
