// `satbench bench`: a matrix of page loads (profiles × losses × protocols ×
// sites × runs), a fresh testbed and origin per run, every run's record
// appended and flushed to results.jsonl as it ends, then summary.json and
// index.html.
import fs from 'node:fs';
import path from 'node:path';
import { UsageError } from '../core/errors.js';
import { loadProfile } from '../testbed/profiles.js';
import { createTestbed } from '../testbed/testbed.js';
import { loadPage, PROTOCOLS, PEP_PROTOCOLS } from './runner.js';
import { startOrigin, originQuicArgs, checkOrigin } from '../servers/origin.js';
import { startPepChain, relayedCounts, checkRelayed } from '../pep/chain.js';
import { scenarioKey } from '../kinds/pageload.js';
import { expandMatrix, shardItems } from '../campaign/matrix.js';
import { appendFlushed, readResults } from '../results/store.js';
import { writeOutputs } from '../analysis/outputs.js';
import { gatherEnvironment } from '../campaign/environment.js';
import { runLighthouse } from './lighthouse.js';
import { ensureSite, listSites } from '../../sites/generate.js';

export function validateMatrix(m) {
  for (const p of m.protocols) {
    if (!PROTOCOLS.includes(p) && !PEP_PROTOCOLS.includes(p))
      throw new UsageError(
        `--protocol: unknown protocol ${JSON.stringify(p)}; expected ${[...PROTOCOLS, ...PEP_PROTOCOLS].join(', ')}`,
      );
  }
  for (const l of m.losses)
    if (!(l >= 0 && l <= 100)) throw new UsageError(`--loss: expected percentages between 0 and 100, got ${l}`);
  for (const p of m.profiles) loadProfile(p); // unknown names fail here, before anything runs
  const known = listSites();
  for (const s of m.sites) {
    if (!known.includes(s) && !fs.existsSync(path.join(s, 'index.html'))) {
      throw new UsageError(
        `--site ${s}: neither a reference site (${known.join(', ')}) nor a directory with an index.html`,
      );
    }
  }
  if (!Number.isInteger(m.runs) || m.runs < 1)
    throw new UsageError(`-n: expected a whole number of runs >= 1, got ${m.runs}`);
  return m;
}

export { readResults };

const fmtDuration = (ms) => (ms < 90000 ? `${Math.round(ms / 1000)} s` : `${Math.round(ms / 60000)} min`);

async function oneRun(
  { scenario, run: runNo },
  { link, seed, siteDirs, timeoutMs, origin, quic, h3Priorities, tcp, pep, lighthouseDir, outDir },
) {
  const t = [Date.now()];
  const lap = () => t.push(Date.now()) && t[t.length - 1] - t[t.length - 2];
  const profile = loadProfile(scenario.profile, { lossPct: scenario.loss_pct });
  const tb = await createTestbed({ profile, link, seed: seed + runNo, tcp });
  const phases = { testbed_ms: lap() };
  let rec;
  try {
    const { spki } = await startOrigin(tb, {
      origin,
      siteDir: siteDirs[scenario.site],
      quicArgs: [...originQuicArgs(profile, quic), ...(h3Priorities ? ['--h3-priorities', h3Priorities] : [])],
    });
    const qlogDir =
      pep.qlog && outDir
        ? path.join(outDir, 'qlog', `${scenarioKey(scenario).replace(/[^\w.-]+/g, '_')}-run${runNo}`)
        : null;
    const chain = await startPepChain(tb, scenario.protocol, { ...pep, qlogDir });
    phases.origin_ms = lap();
    const load = {
      clientNs: tb.ns.client,
      protocol: scenario.protocol,
      spki: chain?.spki ?? spki,
      serverAddr: chain?.serverAddr,
      timeoutMs,
    };
    const page = await loadPage(load);
    phases.browser_ms = lap();
    rec = {
      scenario,
      run: runNo,
      seed: seed + runNo,
      link: tb.backend,
      origin,
      ...page,
      link_stats: await tb.linkStats(),
    };
    if (chain) {
      const stats = await chain.stats();
      rec.pep = { kind: chain.kind, settings: chain.settings, relayed: relayedCounts(stats), stats };
      const through = checkRelayed(scenario.protocol, rec.pep.relayed);
      if (rec.ok && !through.ok) Object.assign(rec, { ok: false, error: through.error });
    }
    // --lighthouse: once per scenario, with its first run, a separate load
    // after the measured one (whose record and counters are taken).
    if (lighthouseDir && runNo === 1) {
      rec.lighthouse = await runLighthouse({ ...load, outDir: lighthouseDir, scenario });
      phases.lighthouse_ms = lap();
    }
  } finally {
    await tb.destroy();
  }
  phases.teardown_ms = lap();
  // What the harness costs per run besides the page load itself.
  rec.run_wall_ms = t[t.length - 1] - t[0];
  rec.phases = phases;
  return rec;
}

/**
 * Runs the matrix into `outDir`. With `resume`, runs already in
 * results.jsonl are not repeated. Returns the summary.
 */
export async function bench(
  matrix,
  {
    outDir,
    link = 'auto',
    seed = 1,
    resume = false,
    timeoutMs = 120000,
    onProgress = () => {},
    meta = {},
    origin = 'rust',
    quic = {},
    h3Priorities = null,
    tcp,
    pep = {},
    shard = null,
    lighthouse = false,
  },
) {
  validateMatrix(matrix);
  await checkOrigin(origin, matrix.protocols);
  fs.mkdirSync(outDir, { recursive: true });
  const resultsFile = path.join(outDir, 'results.jsonl');
  const done = new Set();
  if (resume) for (const r of readResults(resultsFile)) done.add(`${scenarioKey(r.scenario)}#${r.run}`);
  else if (fs.existsSync(resultsFile)) {
    throw new UsageError(`${resultsFile} exists: continue it with --resume ${outDir}, or pick another --out`);
  }
  const siteDirs = {};
  for (const s of matrix.sites) siteDirs[s] = listSites().includes(s) ? await ensureSite(s) : path.resolve(s);
  const todo = shardItems(expandMatrix(matrix), shard).filter((x) => !done.has(`${scenarioKey(x.scenario)}#${x.run}`));
  const startedAt = Date.now();
  let last = null;
  for (const [i, item] of todo.entries()) {
    const s = item.scenario;
    const elapsed = Date.now() - startedAt;
    const left = i ? fmtDuration((elapsed / i) * (todo.length - i)) : '?';
    onProgress(
      `[${i + 1}/${todo.length}] ${s.profile} loss ${s.loss_pct} % ${s.protocol} ${s.site}: run ${item.run} of ${matrix.runs}` +
        `${last ? ` · last PLT ${last}` : ''} · about ${left} left`,
    );
    const rec = await oneRun(item, {
      link,
      seed,
      siteDirs,
      timeoutMs,
      origin,
      quic,
      h3Priorities,
      tcp,
      pep,
      lighthouseDir: lighthouse ? outDir : null,
      outDir,
    });
    appendFlushed(resultsFile, rec);
    last = rec.ok ? `${Math.round(rec.metrics.plt_ms)} ms` : `failed (${rec.error})`;
  }
  const records = readResults(resultsFile);
  return writeOutputs(outDir, records, {
    ...meta,
    seed,
    link,
    origin,
    quic,
    h3_priorities: h3Priorities ?? 'rfc9218',
    tcp: tcp ?? null,
    pep,
    matrix,
    ...(shard ? { shard } : {}),
    ...(lighthouse ? { lighthouse: true } : {}),
    environment: await gatherEnvironment(matrix),
    generated: new Date().toISOString(),
  });
}
