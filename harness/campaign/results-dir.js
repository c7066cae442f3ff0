// A campaign's results folder: results.jsonl and the runs already in it,
// so a resumed campaign repeats none of them.
import fs from 'node:fs';
import path from 'node:path';
import { UsageError } from '../core/errors.js';
import { readResults, RESULTS } from '../results/store.js';
import { groupKey, kindOf } from '../kinds/index.js';

// A run's identity: its kind's key of its scenario, and its number.
export const runId = (kind, scenario, run) => `${groupKey(kind, scenario)}#${run}`;

/**
 * The results file of `outDir` (made if needed) and the runs of `kind`
 * ('pageload', 'bulk') already in it. Without `resume` an existing file is
 * an error: a campaign never appends to another one by accident.
 */
export function openResults(outDir, { resume = false, kind }) {
  fs.mkdirSync(outDir, { recursive: true });
  const file = path.join(outDir, RESULTS);
  const done = new Set();
  if (resume) {
    for (const r of readResults(file)) if (kindOf(r).name === kind) done.add(runId(kind, r.scenario, r.run));
  } else if (fs.existsSync(file)) {
    throw new UsageError(`${file} exists: continue it with --resume ${outDir}, or pick another --out`);
  }
  return { file, done };
}
