// `satbench bench`: a matrix of page loads (profiles × losses × protocols ×
// sites × runs), a fresh testbed and origin per run (pageload/run.js), run
// by the campaign loop (every record appended and flushed to results.jsonl
// as its run ends), then summary.json and index.html.
import path from 'node:path';
import { pepKind } from '../core/protocols.js';
import { shardItems } from '../campaign/matrix.js';
import { expandMatrix, scenarioLabel } from '../kinds/pageload.js';
import { runCampaign } from '../campaign/loop.js';
import { openResults } from '../campaign/results-dir.js';
import { profileCache, scenarioResolver } from '../campaign/scenario.js';
import { gatherEnvironment } from '../campaign/environment.js';
import { readResults } from '../results/store.js';
import { writeOutputs } from '../report/outputs.js';
import { ensureSite, listSites } from '../../sites/generate.js';
import { checkBench, DEFAULT_ARCHIVE_DNS } from './matrix.js';
import { pageloadRun, describeRun } from './run.js';

/**
 * Runs the matrix into `outDir`. With `resume`, runs already in
 * results.jsonl are not repeated. Returns the summary. `profiles`: the
 * command's profile reader (campaign/scenario.js), if it has one.
 */
export async function bench(
  matrix,
  {
    outDir,
    link = 'auto',
    seed = 1,
    resume = false,
    manifest = null, // campaign.json of a new folder (campaign/manifest.js)
    timeoutMs = 120000,
    onProgress = () => {},
    meta = {},
    origin = 'rust',
    quic = {},
    h3Priorities = null,
    altSvc = null,
    dns = null,
    tcp,
    pep = {},
    shard = null,
    lighthouse = false,
    profiles = profileCache(),
  },
) {
  const { archives } = await checkBench(matrix, { origin, quic, pep, h3Priorities, altSvc, dns }, { profiles });
  const { file, done } = openResults(outDir, { resume, kind: 'pageload', manifest, onWarning: onProgress });
  const siteDirs = {};
  for (const s of matrix.sites) siteDirs[s] = listSites().includes(s) ? await ensureSite(s) : path.resolve(s);
  const plan = scenarioResolver({
    settings: { link, seed, timeoutMs, origin, quic, h3Priorities, altSvc, tcp, pep },
    profiles,
    facts: (s) => ({
      siteDir: siteDirs[s.site],
      pepKind: pepKind(s.protocol),
      archive: archives[s.site] ?? null,
      dns: archives[s.site] ? (dns ?? DEFAULT_ARCHIVE_DNS) : null,
    }),
  });
  await runCampaign({
    kind: 'pageload',
    items: shardItems(expandMatrix(matrix), shard),
    done,
    resultsFile: file,
    runOne: ({ scenario, run }) => pageloadRun(plan(scenario), run, { outDir, lighthouse }),
    name: scenarioLabel,
    describe: describeRun,
    runs: matrix.runs,
    onProgress,
  });
  return writeOutputs(outDir, readResults(file), {
    ...meta,
    seed,
    link,
    origin,
    quic,
    h3_priorities: h3Priorities ?? 'rfc9218',
    alt_svc: altSvc ?? 'all',
    ...(Object.keys(archives).length ? { dns: dns ?? DEFAULT_ARCHIVE_DNS } : {}),
    tcp: tcp ?? null,
    pep,
    matrix,
    ...(shard ? { shard } : {}),
    ...(lighthouse ? { lighthouse: true } : {}),
    environment: await gatherEnvironment(matrix, { profiles, origin }),
    generated: new Date().toISOString(),
  });
}
