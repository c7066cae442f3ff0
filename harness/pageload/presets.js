// Named benchmark matrices (`satbench bench --preset NAME`).
import { h2oBuiltWithH3 } from '../servers/origin.js';

export const BENCH_PRESETS = {
  quick: {
    description: 'kepler over leo and geo, no loss, h1, h1-pep, h1-qpep, h3 and h3-pep, 5 runs each (npm run bench)',
    profiles: ['leo', 'geo'],
    losses: [0],
    protocols: ['h1', 'h1-pep', 'h1-qpep', 'h3', 'h3-pep'],
    sites: ['kepler'],
    runs: 5,
  },
  ifip2022: {
    description:
      'the matrix of Kosek et al. (IFIP Networking 2022): geo and leo, loss 0/0.01/0.1/1 %, h1, h1-pep, h3, h3-pep, 100 runs',
    profiles: ['geo', 'leo'],
    losses: [0, 0.01, 0.1, 1],
    protocols: ['h1', 'h1-pep', 'h3', 'h3-pep'],
    sites: ['kepler'],
    runs: 100,
    // Chromium forced onto QUIC with no Alt-Svc over h3 holds images back
    // at 6 in flight, as the paper's h3 medians show (sites/origin/README.md).
    altSvc: 'tcp',
    // The paper's origin, where harness/setup.sh could build it with HTTP/3.
    origin: 'h2o',
  },
};

/**
 * A preset's origin: its own when that one can serve the preset (H2O only
 * when built with HTTP/3, or named by SATBENCH_H2O), else ours. The
 * report's Environment names the one that ran.
 */
export function presetOrigin(preset, { h2oWithH3 = h2oBuiltWithH3() } = {}) {
  if (preset.origin === 'h2o' && !h2oWithH3) return 'rust';
  return preset.origin ?? 'rust';
}
