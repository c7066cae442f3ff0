// The download objectives of QUIC for SATCOM (draft-kuhn-quic-4-sat) that
// bulk transfers over its profiles are judged against.
import { OBJECTIVE_SIZES } from './goodput.js';

// Seconds to receive the first 2, 10 and 100 MB (a copy of
// reference/quic4sat-scenarios.json; a unit test checks they agree).
// variable-medium has none.
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
