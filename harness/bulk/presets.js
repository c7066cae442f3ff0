// Named bulk-transfer matrices (`satbench bulk --preset NAME`) and the
// QUIC-for-SATCOM download objectives they are judged against.
import { OBJECTIVE_SIZES } from '../results/goodput.js';

export const BULK_PRESETS = {
  'ifip2022-goodput': {
    description:
      'Kosek et al. (IFIP Networking 2022) goodput: geo and leo, loss 0/0.01/0.1/1 %, 15 s downloads over QUIC and TCP with and without PEP, 10 runs',
    profiles: ['geo', 'leo'],
    losses: [0, 0.01, 0.1, 1],
    protocols: ['quic', 'quic-pep', 'tcp', 'tcp-pep'],
    duration_s: 15,
    size_bytes: null,
    runs: 10,
  },
  quic4sat: {
    description:
      'QUIC for SATCOM (draft-kuhn-quic-4-sat): the six link scenarios, a 100 MB download each over QUIC and TCP with and without PEP, 3 runs; time to 2, 10 and 100 MB against the objectives',
    profiles: [
      'quic4sat-small',
      'quic4sat-medium',
      'quic4sat-congested-medium',
      'quic4sat-variable-medium',
      'quic4sat-large',
      'quic4sat-lossy-large',
    ],
    losses: [null],
    protocols: ['quic', 'quic-pep', 'tcp', 'tcp-pep'],
    duration_s: null,
    size_bytes: 100e6,
    runs: 3,
  },
};

// Download objectives of draft-kuhn-quic-4-sat, seconds to receive the
// first 2, 10 and 100 MB (a copy of shared/reference/quic4sat-scenarios.json;
// a unit test checks they agree). variable-medium has none.
export const QUIC4SAT_DOWNLOAD_OBJECTIVES_S = {
  small: [3, 10, 85],
  medium: [3, 5, 20],
  'congested-medium': [3, 5, 20],
  'variable-medium': null,
  large: [3, 5, 8],
  'lossy-large': [3, 6, 10],
};

/**
 * Pure: the objectives a profile is judged against, by its name
 * (`quic4sat-NAME`), as {source, scenario, sizes, limits_s}; null for other
 * profiles and for scenarios without objectives.
 */
export function objectivesFor(profileName) {
  const m = /^quic4sat-(.+)$/.exec(String(profileName));
  const limits = m ? QUIC4SAT_DOWNLOAD_OBJECTIVES_S[m[1]] : null;
  if (!limits) return null;
  return { source: 'draft-kuhn-quic-4-sat', scenario: m[1], sizes: OBJECTIVE_SIZES, limits_s: limits };
}

// Without --preset: what the options do not say.
export const BULK_DEFAULTS = {
  profiles: ['geo'],
  losses: [0],
  protocols: ['quic', 'tcp'],
  duration_s: 10,
  size_bytes: null,
  runs: 3,
};
