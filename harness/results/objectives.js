// The download and upload objectives of QUIC for SATCOM
// (draft-kuhn-quic-4-sat) that bulk transfers over its profiles are judged
// against.
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

// Seconds to send the first 2, 10 and 100 MB up: the draft sets them for
// "small" alone.
export const QUIC4SAT_UPLOAD_OBJECTIVES_S = {
  small: [10, 50, 420],
};

/**
 * Pure: the objectives a transfer is judged against, by its profile's name
 * (`quic4sat-NAME`) and direction ('down', or 'up' for an upload), as
 * {source, scenario, direction, sizes, limits_s}; null for other profiles
 * and for scenarios without objectives that way.
 */
export function objectivesFor(profileName, direction = 'down') {
  const m = /^quic4sat-(.+)$/.exec(String(profileName));
  const table = direction === 'up' ? QUIC4SAT_UPLOAD_OBJECTIVES_S : QUIC4SAT_DOWNLOAD_OBJECTIVES_S;
  const limits = m ? table[m[1]] : null;
  if (!limits) return null;
  return { source: 'draft-kuhn-quic-4-sat', scenario: m[1], direction, sizes: OBJECTIVE_SIZES, limits_s: limits };
}
