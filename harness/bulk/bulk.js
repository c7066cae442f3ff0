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
import { profileCache, scenarioResolver } from '../campaign/scenario.js';
import { gatherEnvironment } from '../campaign/environment.js';
import { readResults } from '../results/store.js';
import { writeOutputs } from '../report/outputs.js';
import { checkBulk, expandBulkMatrix, bulkPepKind, isBrowser } from './matrix.js';
import { DEFAULT_BIN_MS } from './satbulk.js';
import { bulkRun, scenarioName, describeRun } from './run.js';
import { DEFAULT_PEP_TUNNEL } from '../pep/options.js';

/**
 * Runs the bulk matrix into `outDir` (as bench: --resume skips finished
 * runs). Returns the summary. `quic` / `quicClient`: satbulk's (and the
 * origin's) QUIC options of the sender and the receiver; `tcp`: the end
 * hosts' TCP (testbed); `pep`: {preset, sat, ground} hop settings.
 */
export async function bulk(
  matrix,
  {
    outDir,
    link = 'auto',
    seed = 1,
    resume = false,
    manifest = null, // campaign.json of a new folder (campaign/manifest.js)
    binMs = DEFAULT_BIN_MS,
    onProgress = () => {},
    meta = {},
    quic = {},
    quicClient = {},
    tcp,
    pep = {},
    profiles = profileCache(),
  },
) {
  const pepSettings = {
    preset: pep.preset ?? null,
    sat: pep.sat ?? {},
    ground: pep.ground ?? {},
    tunnel: pep.tunnel ?? DEFAULT_PEP_TUNNEL,
    ...(pep.sat_by_chain ? { sat_by_chain: pep.sat_by_chain } : {}),
    ...(pep.qlog ? { qlog: true } : {}),
  };
  checkBulk(matrix, { pep: pepSettings }, { profiles });
  const { file, done } = openResults(outDir, { resume, kind: 'bulk', manifest, onWarning: onProgress });
  // What every record carries of the command's settings (and meta.settings).
  const settings = { quic, quic_client: quicClient, tcp: tcp ?? null, pep: pepSettings, bin_ms: binMs };
  const plan = scenarioResolver({
    settings: { link, seed, binMs, quic, quicClient, tcp, pep: pepSettings, settings },
    profiles,
    facts: (s) => ({ pepKind: bulkPepKind(s.protocol), browser: isBrowser(s.protocol) }),
  });
  await runCampaign({
    kind: 'bulk',
    items: expandBulkMatrix(matrix),
    done,
    resultsFile: file,
    runOne: ({ scenario, run }) => bulkRun(plan(scenario), run, { outDir }),
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
