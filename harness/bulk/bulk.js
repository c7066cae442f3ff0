// `satbench bulk`: a matrix of downloads (profiles × losses × protocols ×
// runs), a fresh testbed per run (bulk/run.js), run by the campaign loop
// (every record, kind "bulk", appended and flushed to results.jsonl as its
// run ends), then summary.json and index.html.
//
// Protocols: quic and tcp (satbulk end to end), quic-pep and tcp-pep
// (satbulk through the PEP chains), tcp-qpep (TCP over the QUIC PEPs'
// tunnel), quic-vpn and tcp-vpn (through an OpenVPN tunnel), browser-h1,
// -h2, -h3 (Chromium fetching one large file from our origin). Every download is timed from t0, just
// before connecting, and binned; harness/results/goodput.js turns the bins
// into metrics.
import { runCampaign } from '../campaign/loop.js';
import { openResults } from '../campaign/results-dir.js';
import { scenarioResolver } from '../campaign/scenario.js';
import { gatherEnvironment } from '../campaign/environment.js';
import { readResults } from '../results/store.js';
import { writeOutputs } from '../analysis/outputs.js';
import { expandBulkMatrix, bulkPepKind, isBrowser } from './matrix.js';
import { bulkRun, scenarioName, describeRun } from './run.js';

/**
 * Runs `plan` (cli/bulk-plan.js checkBulk: the checked matrix, settings
 * and PEP sides) into `outDir` (as bench: --resume skips finished runs).
 * `run` is the one bulk run (tests give their own). Returns the summary.
 */
export async function bulk(
  plan,
  {
    outDir,
    resume = false,
    manifest = null, // campaign.json of a new folder (campaign/manifest.js)
    onProgress = () => {},
    meta = {},
    run = bulkRun,
  },
) {
  const { matrix, pepChains, profiles } = plan;
  const { link, seed, binMs, quic, quicClient, tcp, pep } = plan.settings;
  const { file, done } = openResults(outDir, { resume, kind: 'bulk', manifest, onWarning: onProgress });
  // What every record carries of the command's settings (and meta.settings).
  const settings = { quic, quic_client: quicClient, tcp: tcp ?? null, pep, bin_ms: binMs };
  const resolve = scenarioResolver({
    settings: { ...plan.settings, settings },
    profiles,
    facts: (s) => ({
      pepKind: bulkPepKind(s.protocol),
      pepSides: pepChains[bulkPepKind(s.protocol)] ?? null,
      browser: isBrowser(s.protocol),
    }),
  });
  await runCampaign({
    kind: 'bulk',
    items: expandBulkMatrix(matrix),
    done,
    resultsFile: file,
    runOne: ({ scenario, run: runNo }) => run(resolve(scenario), runNo, { outDir }),
    name: scenarioName,
    describe: describeRun,
    runs: matrix.runs,
    onProgress,
  });
  return writeOutputs(outDir, readResults(file), {
    ...meta,
    kind: 'bulk',
    seed,
    link,
    settings,
    matrix,
    environment: await gatherEnvironment(matrix, { profiles }),
    generated: new Date().toISOString(),
  });
}
