// A result set loaded for compare: a results folder, a results.jsonl or a
// summary.json, its statistics recomputed from the runs where it has them.
import fs from 'node:fs';
import path from 'node:path';
import { UsageError } from '../core/errors.js';
import { readResults, readSummary, RESULTS, SUMMARY } from '../results/store.js';
import { summarize } from './summary.js';

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
