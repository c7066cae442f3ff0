// `satbench bench`: a matrix of page loads (profiles × losses × protocols ×
// sites × runs), a fresh testbed and origin per run (pageload/run.js), run
// by the campaign loop (every record appended and flushed to results.jsonl
// as its run ends), then summary.json and index.html.
import path from 'node:path';
import { pepKind } from '../core/protocols.js';
import { DEFAULTS } from '../core/defaults.js';
import { shardItems } from '../campaign/matrix.js';
import { expandMatrix, scenarioLabel } from '../kinds/pageload.js';
import { runCampaign } from '../campaign/loop.js';
import { openResults } from '../campaign/results-dir.js';
import { scenarioResolver } from '../campaign/scenario.js';
import { gatherEnvironment } from '../campaign/environment.js';
import { readResults } from '../results/store.js';
import { writeOutputs } from '../analysis/outputs.js';
import { ensureSite, listSites } from '../../sites/generate.js';
import { pageloadRun, describeRun } from './run.js';

/**
 * Runs `plan` (cli/bench-plan.js checkBench: the checked matrix, settings
 * and PEP sides) into `outDir`. With `resume`, runs already in
 * results.jsonl are not repeated. `run` is the one page-load run (tests
 * give their own). Returns the summary.
 */
export async function bench(
  plan,
  {
    outDir,
    resume = false,
    manifest = null, // campaign.json of a new folder (campaign/manifest.js)
    onProgress = () => {},
    meta = {},
    run = pageloadRun,
  },
) {
  const { matrix, settings, pepChains, archives, profiles } = plan;
  const { file, done } = openResults(outDir, { resume, kind: 'pageload', manifest, onWarning: onProgress });
  const siteDirs = {};
  for (const s of matrix.sites) siteDirs[s] = listSites().includes(s) ? await ensureSite(s) : path.resolve(s);
  const resolve = scenarioResolver({
    settings,
    profiles,
    facts: (s) => ({
      siteDir: siteDirs[s.site],
      pepKind: pepKind(s.protocol),
      pepSides: pepChains[pepKind(s.protocol)] ?? null,
      archive: archives[s.site] ?? null,
      dns: archives[s.site] ? settings.dns : null,
    }),
  });
  await runCampaign({
    kind: 'pageload',
    items: shardItems(expandMatrix(matrix), settings.shard),
    done,
    resultsFile: file,
    runOne: ({ scenario, run: runNo }) => run(resolve(scenario), runNo, { outDir, lighthouse: settings.lighthouse }),
    name: scenarioLabel,
    describe: describeRun,
    runs: matrix.runs,
    onProgress,
  });
  const { seed, link, origin, quic, h3Priorities, altSvc, dns, tcp, pep, shard, lighthouse } = settings;
  return writeOutputs(outDir, readResults(file), {
    ...meta,
    seed,
    link,
    origin,
    quic,
    h3_priorities: h3Priorities ?? 'rfc9218',
    alt_svc: altSvc ?? DEFAULTS.altSvc,
    ...(dns ? { dns } : {}),
    tcp: tcp ?? null,
    pep,
    matrix,
    ...(shard ? { shard } : {}),
    ...(lighthouse ? { lighthouse: true } : {}),
    environment: await gatherEnvironment(matrix, { profiles, origin }),
    generated: new Date().toISOString(),
  });
}
