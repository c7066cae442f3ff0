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
import { scenarioResolver } from '../campaign/scenario.js';
import { runPlan } from '../campaign/run-plan.js';
import { shardItems } from '../campaign/matrix.js';
import { expandBulkMatrix, bulkPepKind, isBrowser } from './matrix.js';
import { bulkRun, scenarioName, describeRun } from './run.js';

/**
 * Runs `plan` (cli/bulk-plan.js checkBulk: the checked matrix, settings
 * and PEP sides) into `io.outDir`, as bench does (campaign/run-plan.js).
 * `run` is the one bulk run (tests give their own). Returns the summary.
 */
export async function bulk(plan, { run = bulkRun, ...io }) {
  const { matrix, pepChains, profiles } = plan;
  const { binMs, quic, quicClient, tcp, pep } = plan.settings;
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
  return runPlan(plan, io, {
    items: shardItems(expandBulkMatrix(matrix), plan.settings.shard),
    runOne: ({ scenario, run: runNo }) => run(resolve(scenario), runNo, { outDir: io.outDir }),
    name: scenarioName,
    describe: describeRun,
    settings,
    tag: { kind: 'bulk' },
  });
}
