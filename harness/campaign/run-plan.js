// A checked plan (cli/bench-plan.js, cli/bulk-plan.js) run to its outputs,
// the same for every kind: the results folder opened (or resumed), the
// run loop over the kind's items, then summary.json and index.html with
// the campaign's meta, which every kind writes in one shape: the command
// line's part (preset, argv, resumed), the kind's tag, seed and link, the
// settings its records carry under `settings`, the matrix, the shard, the
// environment, the CPU benchmark timed as the runs start and when
// (results/meta.js reads it back, old shapes too).
import { runCampaign } from './loop.js';
import { installSignalHandlers } from '../testbed/teardown.js';
import { scenarioWeight } from './progress.js';
import { configuredSummary } from '../testbed/profiles.js';
import { openResults } from './results-dir.js';
import { gatherEnvironment } from './environment.js';
import { cpuBenchmark } from './cpu-benchmark.js';
import { readResults } from '../results/store.js';
import { writeOutputs } from '../report/outputs.js';

/**
 * Runs `plan`'s `items` ({scenario, run}) with `runOne`, as campaign/loop.js
 * does, into `outDir`. `settings`: what the kind records of the plan's
 * settings (summary.json's meta.settings); `tag`: the kind's mark on its
 * meta ({kind: 'bulk'}, or none for page loads); `origin`: the origin
 * whose version the environment names. Returns the summary.
 */
export async function runPlan(
  plan,
  { outDir, resume = false, manifest = null, onProgress = () => {}, meta = {} },
  { items, runOne, name, describe, settings, tag = {}, origin },
) {
  const { kind, matrix, profiles } = plan;
  // a campaign started by a script (benchmarks/) has satbench's signal handlers too; under cli.js this is a no-op
  const uninstall = installSignalHandlers();
  let release = () => {};
  // a scenario not yet run is expected from its profile (its RTT and rate)
  const weight = (s) => scenarioWeight(s, configuredSummary(profiles(s.profile, s.loss_pct ?? null)));
  try {
    let file, done;
    ({ file, done, release } = openResults(outDir, { resume, kind, manifest, onWarning: onProgress }));
    // the machine as this session's runs start (a resumed campaign's: as it resumed)
    const benchmark = cpuBenchmark();
    await runCampaign({
      kind,
      items,
      done,
      resultsFile: file,
      runOne,
      name,
      describe,
      runs: matrix.runs,
      onProgress,
      weight,
    });
    const { seed, link, shard = null } = plan.settings;
    return writeOutputs(outDir, readResults(file), {
      ...meta,
      ...tag,
      seed,
      link,
      settings,
      matrix,
      ...(shard ? { shard } : {}),
      environment: await gatherEnvironment(matrix, { profiles, origin }),
      cpu_benchmark: benchmark,
      generated: new Date().toISOString(),
    });
  } finally {
    release();
    uninstall();
  }
}
