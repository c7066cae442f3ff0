// The (scenario, run) pairs of a benchmark matrix.

// Pure: every (scenario, run) of the matrix, run-major so that slow drifts
// of the machine spread over all scenarios instead of hitting one.
export function expandMatrix({ profiles, losses, protocols, sites, runs }) {
  const scenarios = [];
  for (const profile of profiles) for (const loss_pct of losses) for (const protocol of protocols) for (const site of sites) {
    scenarios.push({ profile, loss_pct, protocol, site });
  }
  const out = [];
  for (let run = 1; run <= runs; run++) for (const scenario of scenarios) out.push({ scenario, run });
  return out;
}

