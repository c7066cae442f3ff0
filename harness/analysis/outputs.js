// A results folder's derived files: summary.json (the records summarised)
// and index.html (the report), and a result set loaded for compare. Used by
// bench, bulk, report, merge and compare; the raw files are
// harness/results/store.js's.
import fs from 'node:fs';
import path from 'node:path';
import { UsageError } from '../core/errors.js';
import { readResults, readSummary, RESULTS, SUMMARY } from '../results/store.js';
import { summarize } from './summary.js';
import { writeReport } from '../../reports/html.js';

/**
 * A results folder, a results.jsonl or a summary.json. Returns {path,
 * records (null when only a summary.json was given or found), summary,
 * source}. A folder's results.jsonl wins over its summary.json (the runs
 * are needed for tests of significance); its summary.json still gives meta.
 */
export function loadResultSet(p) {
  if (!fs.existsSync(p)) throw new UsageError(`${p}: no such file or folder`);
  if (fs.statSync(p).isDirectory()) {
    const rf = path.join(p, RESULTS);
    const sf = path.join(p, SUMMARY);
    const meta = fs.existsSync(sf) ? (readSummary(sf).meta ?? {}) : {};
    if (fs.existsSync(rf)) {
      const records = readResults(rf);
      if (!records.length) throw new UsageError(`${rf}: no records`);
      return { path: p, records, summary: { meta, groups: summarize(records, { seed: meta.seed ?? 1 }) }, source: rf };
    }
    if (fs.existsSync(sf)) return { path: p, records: null, summary: readSummary(sf), source: sf };
    throw new UsageError(`${p}: neither ${RESULTS} nor ${SUMMARY} in this folder`);
  }
  if (p.endsWith('.jsonl')) {
    const records = readResults(p);
    if (!records.length) throw new UsageError(`${p}: no records`);
    return { path: p, records, summary: { meta: {}, groups: summarize(records) }, source: p };
  }
  return { path: p, records: null, summary: readSummary(p), source: p };
}

/**
 * summary.json and index.html of `outDir` from its records: the statistics
 * are recomputed from the records with meta.seed. Returns the summary.
 */
export function writeOutputs(outDir, records, meta) {
  const summary = { meta, groups: summarize(records, { seed: meta.seed ?? 1 }) };
  fs.writeFileSync(path.join(outDir, SUMMARY), JSON.stringify(summary, null, 2));
  writeReport(outDir, summary, { records });
  return summary;
}

/**
 * `satbench report DIR`: index.html from results.jsonl (or, without it,
 * from summary.json alone). summary.json is kept when it matches the
 * records and rewritten from them when it is missing or stale.
 */
export function reportFolder(dir) {
  const rf = path.join(dir, RESULTS);
  const sf = path.join(dir, SUMMARY);
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) throw new UsageError(`${dir}: not a folder`);
  if (!fs.existsSync(rf)) {
    if (!fs.existsSync(sf)) throw new UsageError(`${dir}: neither ${RESULTS} nor ${SUMMARY} in this folder`);
    const summary = readSummary(sf);
    return { file: writeReport(dir, summary), summary, rewrote: false };
  }
  const records = readResults(rf);
  if (!records.length) throw new UsageError(`${rf}: no records`);
  const old = fs.existsSync(sf) ? readSummary(sf) : null;
  const runs = old ? old.groups.reduce((a, g) => a + (g.runs ?? 0), 0) : -1;
  if (old && runs === records.length) {
    return { file: writeReport(dir, old, { records }), summary: old, rewrote: false };
  }
  const summary = writeOutputs(dir, records, { ...(old?.meta ?? {}), generated: new Date().toISOString() });
  return { file: path.join(dir, 'index.html'), summary, rewrote: true };
}
