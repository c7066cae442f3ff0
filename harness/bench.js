// `satbench bench`: a matrix of page loads (profiles × losses × protocols ×
// sites × runs), a fresh testbed and origin per run, every run's record
// appended and flushed to results.jsonl as it ends, then summary.json and
// index.html.
import fs from 'node:fs';
import path from 'node:path';
import { UsageError } from './errors.js';
import { loadProfile } from './profiles.js';
import { createTestbed } from './testbed.js';
import { loadPage, PROTOCOLS, PEP_PROTOCOLS } from './runner.js';
import { startOrigin, originQuicArgs, checkOrigin } from './origin.js';
import { summarize, scenarioKey } from './summary.js';
import { expandMatrix } from './matrix.js';
import { writeReport } from '../reports/html.js';
import { ensureSite, listSites } from '../sites/generate.js';

export function validateMatrix(m) {
  for (const p of m.protocols) {
    if (PEP_PROTOCOLS.includes(p)) throw new UsageError(`--protocol ${p}: the PEP chains are not implemented yet; use ${PROTOCOLS.join(', ')}`);
    if (!PROTOCOLS.includes(p)) throw new UsageError(`--protocol: unknown protocol ${JSON.stringify(p)}; expected ${[...PROTOCOLS, ...PEP_PROTOCOLS].join(', ')}`);
  }
  for (const l of m.losses) if (!(l >= 0 && l <= 100)) throw new UsageError(`--loss: expected percentages between 0 and 100, got ${l}`);
  for (const p of m.profiles) loadProfile(p); // unknown names fail here, before anything runs
  const known = listSites();
  for (const s of m.sites) {
    if (!known.includes(s) && !fs.existsSync(path.join(s, 'index.html'))) {
      throw new UsageError(`--site ${s}: neither a reference site (${known.join(', ')}) nor a directory with an index.html`);
    }
  }
  if (!Number.isInteger(m.runs) || m.runs < 1) throw new UsageError(`-n: expected a whole number of runs >= 1, got ${m.runs}`);
  return m;
}

export function readResults(file) {
  if (!fs.existsSync(file)) return [];
  return fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((line, i) => {
    try {
      return JSON.parse(line);
    } catch {
      throw new UsageError(`${file}: line ${i + 1} is not JSON`);
    }
  });
}

function appendFlushed(file, obj) {
  const fd = fs.openSync(file, 'a');
  try {
    fs.writeSync(fd, JSON.stringify(obj) + '\n');
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

const fmtDuration = (ms) => (ms < 90000 ? `${Math.round(ms / 1000)} s` : `${Math.round(ms / 60000)} min`);

async function oneRun({ scenario, run: runNo }, { link, seed, siteDirs, timeoutMs, origin, quic, tcp }) {
  const t = [Date.now()];
  const lap = () => t.push(Date.now()) && t[t.length - 1] - t[t.length - 2];
  const profile = loadProfile(scenario.profile, { lossPct: scenario.loss_pct });
  const tb = await createTestbed({ profile, link, seed: seed + runNo, tcp });
  const phases = { testbed_ms: lap() };
  let rec;
  try {
    const { spki } = await startOrigin(tb, { origin, siteDir: siteDirs[scenario.site], quicArgs: originQuicArgs(profile, quic) });
    phases.origin_ms = lap();
    const page = await loadPage({ clientNs: tb.ns.client, protocol: scenario.protocol, spki, timeoutMs });
    phases.browser_ms = lap();
    rec = { scenario, run: runNo, seed: seed + runNo, link: tb.backend, origin, ...page, link_stats: await tb.linkStats() };
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
export async function bench(matrix, { outDir, link = 'auto', seed = 1, resume = false, timeoutMs = 120000, onProgress = () => {}, meta = {}, origin = 'rust', quic = {}, tcp }) {
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
  const todo = expandMatrix(matrix).filter((x) => !done.has(`${scenarioKey(x.scenario)}#${x.run}`));
  const startedAt = Date.now();
  let last = null;
  for (const [i, item] of todo.entries()) {
    const s = item.scenario;
    const elapsed = Date.now() - startedAt;
    const left = i ? fmtDuration((elapsed / i) * (todo.length - i)) : '?';
    onProgress(`[${i + 1}/${todo.length}] ${s.profile} loss ${s.loss_pct} % ${s.protocol} ${s.site}: run ${item.run} of ${matrix.runs}` +
      `${last ? ` · last PLT ${last}` : ''} · about ${left} left`);
    const rec = await oneRun(item, { link, seed, siteDirs, timeoutMs, origin, quic, tcp });
    appendFlushed(resultsFile, rec);
    last = rec.ok ? `${Math.round(rec.metrics.plt_ms)} ms` : `failed (${rec.error})`;
  }
  const records = readResults(resultsFile);
  const summary = { meta: { ...meta, seed, link, origin, quic, tcp: tcp ?? null, matrix, generated: new Date().toISOString() }, groups: summarize(records, { seed }) };
  fs.writeFileSync(path.join(outDir, 'summary.json'), JSON.stringify(summary, null, 2));
  writeReport(outDir, summary);
  return summary;
}
