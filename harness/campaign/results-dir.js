// A campaign's results folder: checked before anything is made, its
// campaign.json written as the matrix starts, and results.jsonl with the
// runs already in it, so a resumed campaign repeats none of them.
import fs from 'node:fs';
import path from 'node:path';
import { UsageError } from '../core/errors.js';
import { refuseFileOnPath, makeDirs } from '../core/folders.js';
import { readResults, rewriteResults, dropTornLine, RESULTS } from '../results/store.js';
import { writeManifest, MANIFEST } from './manifest.js';
import { lockResults } from './lock.js';
import { groupKey, kindOf } from '../kinds/index.js';

// A run's identity: its kind's key of its scenario, and its number.
export const runId = (kind, scenario, run) => `${groupKey(kind, scenario)}#${run}`;

// Pure: a run's own folder under `what` (qlog, logs) in the campaign's
// folder, named after its scenario (`name`, as progress lines say it) and
// number.
export const runFolder = (outDir, what, name, run) =>
  path.join(outDir, what, `${String(name).replace(/[^\w.-]+/g, '_')}-run${run}`);

/**
 * Pure: `some` of `records` and the records paired with them (a record's
 * `paired_with`: {scenario, run} of the other load of its pair).
 */
export function withPartners(records, some) {
  const ids = new Set(some.map((r) => runId(kindOf(r).name, r.scenario, r.run)));
  const paired = (r) => r.paired_with && ids.has(runId(kindOf(r).name, r.paired_with.scenario, r.paired_with.run));
  return records.filter((r) => some.includes(r) || paired(r));
}

/**
 * Refuses `dir` as a new campaign's --out before anything is made: a
 * regular file (or one on its path), or a folder that already holds a
 * campaign (results.jsonl or campaign.json).
 */
export function checkOutDir(dir) {
  refuseFileOnPath(dir, '--out');
  for (const name of [RESULTS, MANIFEST]) {
    const file = path.join(dir, name);
    if (fs.existsSync(file))
      throw new UsageError(`${file} exists: continue it with --resume ${dir}, or pick another --out`);
  }
}

/**
 * The results file of `outDir` and the runs of `kind` ('pageload', 'bulk')
 * already in it. A new campaign's folder is made, and `manifest` (its
 * matrix and settings, campaign/manifest.js) written there before any run;
 * a folder that holds a campaign is an error, so none is appended to by
 * accident. With `resume` the folder must exist; a torn last line of
 * results.jsonl (the run being written when satbench stopped) and the
 * records of runs a signal interrupted are dropped with a warning through
 * `onWarning`, and those runs run again. The folder is locked for this
 * campaign (lock.js) before anything in it is read or written; `release`
 * unlocks it.
 */
export function openResults(outDir, options) {
  try {
    return openResultsDir(outDir, options);
  } catch (e) {
    // the file system's refusal (a full disk, a read-only one, no permission) is the user's to fix
    if (e.code && !(e instanceof UsageError))
      throw new UsageError(`${outDir}: ${String(e.message).split(',')[0]} (${e.syscall ?? 'file system'})`);
    throw e;
  }
}

function openResultsDir(outDir, { resume = false, kind, manifest = null, onWarning = () => {} }) {
  const file = path.join(outDir, RESULTS);
  const done = new Set();
  let release;
  if (resume) {
    if (!fs.existsSync(outDir) || !fs.statSync(outDir).isDirectory())
      throw new UsageError(`--resume ${outDir}: no such folder`);
    release = lockResults(outDir, manifest?.command ?? kind);
    const torn = dropTornLine(file);
    if (torn)
      onWarning(
        `warning: ${file}: dropped line ${torn.line}, torn (${torn.bytes} bytes of the run being written when satbench stopped); that run runs again`,
      );
    const records = readResults(file);
    // a run a signal cut short was not measured: it runs again, its record
    // goes, and so does the other record of its pair (a first view measured
    // before the signal), which the run records again
    const cut = withPartners(
      records,
      records.filter((r) => r.interrupted && kindOf(r).name === kind),
    );
    if (cut.length) {
      const kept = records.filter((r) => !cut.includes(r));
      rewriteResults(file, kept);
      onWarning(
        `warning: ${file}: dropped ${cut.length} run(s) interrupted by a signal (${cut.map((r) => `line ${records.indexOf(r) + 1}`).join(', ')}); they run again`,
      );
    }
    for (const r of records) if (kindOf(r).name === kind && !cut.includes(r)) done.add(runId(kind, r.scenario, r.run));
  } else {
    checkOutDir(outDir);
    makeDirs(outDir);
    release = lockResults(outDir, manifest?.command ?? kind);
    try {
      // another campaign may have started in it between the check and the lock
      checkOutDir(outDir);
      if (manifest) writeManifest(outDir, manifest);
    } catch (e) {
      release();
      throw e;
    }
  }
  return { file, done, release };
}
