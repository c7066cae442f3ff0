// A page-load run's HAR in the results folder: DIR/har/SCENARIO-runN.har.gz,
// the gzip of its JSON, written whole and on disk (results/store.js
// replaceFile) before the run's record, which names it by its path
// relative to DIR, is appended.
import path from 'node:path';
import zlib from 'node:zlib';
import { runFolder } from '../campaign/results-dir.js';
import { makeDirs } from '../core/folders.js';
import { scenarioKey } from '../kinds/pageload.js';
import { HAR_DIR, replaceFile } from '../results/store.js';

/** Pure: where run `runNo` of `scenario` keeps its HAR, relative to the results folder. */
export const harPathOf = (scenario, runNo) => `${runFolder('', HAR_DIR, scenarioKey(scenario), runNo)}.har.gz`;

/** Writes `har` as run `runNo` of `scenario`'s HAR under `outDir`; returns its relative path. */
export function writeRunHar(outDir, scenario, runNo, har) {
  const rel = harPathOf(scenario, runNo);
  const file = path.join(outDir, rel);
  makeDirs(path.dirname(file));
  replaceFile(file, zlib.gzipSync(JSON.stringify(har)));
  return rel;
}

/**
 * Moves the HAR a load's record holds (gather/har.js) into its file: the
 * record's `har` becomes the file's relative path or, when it cannot be
 * written, null with the reason in `not_captured.har`; the run keeps its
 * timings either way.
 */
export function storeRunHar(record, outDir, scenario, runNo) {
  if (!record.har) return;
  try {
    record.har = writeRunHar(outDir, scenario, runNo, record.har);
  } catch (e) {
    record.har = null;
    (record.not_captured ??= {}).har = `write: ${e.message.split('\n')[0]}`;
  }
}
