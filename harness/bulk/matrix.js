// The scenarios of `satbench bulk` (profiles × losses × protocols ×
// directions, each a transfer of a duration or a size), what each protocol
// means (cli/bulk-plan.js checks a matrix against them).
import { objectivesFor } from '../results/objectives.js';

export const BULK_PROTOCOLS = [
  'quic',
  'quic-pep',
  'quic-masque',
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
// first: one connection; revisit: satbulk get makes a second connection
// that resumes the first (its TLS ticket and token) and is measured.
export const BULK_VIEWS = ['first', 'revisit'];
// the protocols a revisit can be made over: satbulk's QUIC, direct, through
// the QUIC PEP or through the MASQUE tunnel (whose second connection, from
// the same endpoint, is the same flow: it crosses in the first's proxying request)
export const REVISIT_PROTOCOLS = ['quic', 'quic-pep', 'quic-masque'];
// browser-h2 → h2, the page-load protocol whose Chromium flags it shares.
export const browserProtocol = (p) => p.replace(/^browser-/, '');
// The chain a bulk protocol goes through: 'quic', 'tcp' (the PEPs), 'qpep'
// (TCP over the QUIC PEPs' tunnel), 'masque' (satbulk's QUIC carried end to
// end in CONNECT-UDP, as h3-masque's), 'vpn' (the OpenVPN tunnel) or null.
export const bulkPepKind = (p) =>
  ({
    'quic-pep': 'quic',
    'quic-masque': 'masque',
    'tcp-pep': 'tcp',
    'tcp-qpep': 'qpep',
    'quic-vpn': 'vpn',
    'tcp-vpn': 'vpn',
  })[p] ?? null;

/**
 * Pure: every (scenario, run) of a bulk matrix, run-major (as bench's). An
 * upload's scenario says `direction: 'up'`; a download's has no direction
 * (records from before uploads existed keep their keys); a revisit's says
 * `view: 'revisit'` (and `revisit_capacity` when the path changes between
 * its two connections). With
 * `uploads_where_objectives` (the quic4sat preset) a profile is uploaded
 * over only where the draft sets upload objectives.
 */
export function expandBulkMatrix({
  profiles,
  losses,
  protocols,
  runs,
  directions = ['down'],
  views = ['first'],
  revisit_capacity: revisitCapacity = null,
  uploads_where_objectives: uploadsWhereObjectives = false,
  duration_s: durationS = null,
  size_bytes: sizeBytes = null,
}) {
  const scenarios = [];
  for (const profile of profiles)
    for (const direction of directions) {
      if (direction === 'up' && uploadsWhereObjectives && !objectivesFor(profile, 'up')) continue;
      for (const loss of losses)
        for (const protocol of protocols)
          for (const view of views) {
            scenarios.push({
              profile,
              loss_pct: loss ?? null,
              protocol,
              ...(sizeBytes ? { size_bytes: sizeBytes } : { duration_s: durationS }),
              ...(direction === 'up' ? { direction } : {}),
              // a first view's scenario has no view: its key is the one earlier campaigns have
              ...(view === 'revisit' ? { view } : {}),
              // the satellite link's rate for the second connection, as a fraction of the profile's
              ...(view === 'revisit' && revisitCapacity != null ? { revisit_capacity: revisitCapacity } : {}),
            });
          }
    }
  const out = [];
  for (let r = 1; r <= runs; r++) for (const scenario of scenarios) out.push({ scenario, run: r });
  return out;
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

/** Pure: how many transfers a run of `scenario` makes one after the other: a revisit's two. */
export const transfersOf = (scenario) => (scenario.view === 'revisit' ? 2 : 1);
