// The scenarios of `satbench bulk` (profiles × losses × protocols ×
// directions, each a transfer of a duration or a size), what each protocol
// means, and the matrix's check, which cli/bulk-plan.js makes with the
// settings' before anything runs. Every problem is a UsageError that names
// the flag and what it expects.
import { UsageError, withFlag } from '../core/errors.js';
import { refuseQuicOverQpep } from '../core/protocols.js';
import { profileCache } from '../campaign/scenario.js';
import { objectivesFor } from '../results/objectives.js';

export const BULK_PROTOCOLS = [
  'quic',
  'quic-pep',
  'tcp',
  'tcp-pep',
  'tcp-qpep',
  'quic-vpn',
  'tcp-vpn',
  'browser-h1',
  'browser-h2',
  'browser-h3',
];

export const isBrowser = (p) => p.startsWith('browser-');
// down: the server sends (a download); up: the client sends.
export const BULK_DIRECTIONS = ['down', 'up'];
// browser-h2 → h2, the page-load protocol whose Chromium flags it shares.
export const browserProtocol = (p) => p.replace(/^browser-/, '');
// The chain a bulk protocol goes through: 'quic', 'tcp' (the PEPs), 'qpep'
// (TCP over the QUIC PEPs' tunnel), 'vpn' (the OpenVPN tunnel) or null.
export const bulkPepKind = (p) =>
  ({ 'quic-pep': 'quic', 'tcp-pep': 'tcp', 'tcp-qpep': 'qpep', 'quic-vpn': 'vpn', 'tcp-vpn': 'vpn' })[p] ?? null;

/**
 * Pure: every (scenario, run) of a bulk matrix, run-major (as bench's). An
 * upload's scenario says `direction: 'up'`; a download's has no direction
 * (records from before uploads existed keep their keys). With
 * `uploads_where_objectives` (the quic4sat preset) a profile is uploaded
 * over only where the draft sets upload objectives.
 */
export function expandBulkMatrix({
  profiles,
  losses,
  protocols,
  runs,
  directions = ['down'],
  uploads_where_objectives: uploadsWhereObjectives = false,
  duration_s: durationS = null,
  size_bytes: sizeBytes = null,
}) {
  const scenarios = [];
  for (const profile of profiles)
    for (const direction of directions) {
      if (direction === 'up' && uploadsWhereObjectives && !objectivesFor(profile, 'up')) continue;
      for (const loss of losses)
        for (const protocol of protocols) {
          scenarios.push({
            profile,
            loss_pct: loss ?? null,
            protocol,
            ...(sizeBytes ? { size_bytes: sizeBytes } : { duration_s: durationS }),
            ...(direction === 'up' ? { direction } : {}),
          });
        }
    }
  const out = [];
  for (let r = 1; r <= runs; r++) for (const scenario of scenarios) out.push({ scenario, run: r });
  return out;
}

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
 * Pure: how long a transfer may take before it counts as stalled: the
 * duration and 30 s, or four times the size at the link rate (the way it
 * goes) and a minute.
 */
export function transferTimeoutS(scenario, linkMbps) {
  if (scenario.duration_s) return scenario.duration_s + 30;
  if (!linkMbps) return 600;
  return Math.ceil((4 * scenario.size_bytes * 8) / (linkMbps * 1e6)) + 60;
}
