// A results folder's derived files: summary.json (the records summarised)
// and index.html (the report), written after bench and bulk, by `satbench
// report` and into the folder `satbench merge` makes. The raw files are
// harness/results/store.js's.
import fs from 'node:fs';
import path from 'node:path';
import { UsageError } from '../core/errors.js';
import { readResults, readSummary, replaceFile, RESULTS, SUMMARY, MANIFEST, LIGHTHOUSE_DIR } from '../results/store.js';
import { kindOfCommand } from '../kinds/index.js';
import { summarize } from '../analysis/summary.js';
import { mergeSets } from '../analysis/merge.js';
import { writeReport, renderReport, REPORT } from './html.js';
import { namedFiles } from './run-files.js';

/**
 * summary.json and index.html of `outDir` from its records: the statistics
 * are recomputed from the records with meta.seed. Returns the summary.
 */
export function writeOutputs(outDir, records, meta) {
  const { summary, html } = renderOutputs(records, meta, outDir);
  writeRendered(outDir, summary, html);
  return summary;
}

// Pure but for the report's assets and the run files it reads from `dir`:
// summary.json's content and the report page, made before anything is
// written, so that a summary the report cannot show leaves no file half
// made.
function renderOutputs(records, meta, dir) {
  const summary = { meta, groups: summarize(records, { seed: meta.seed ?? 1 }) };
  return { summary, html: renderReport(summary, { records, dir }) };
}

// Each file whole or not at all: a full disk leaves the old one or none.
function writeRendered(outDir, summary, html) {
  replaceFile(path.join(outDir, SUMMARY), JSON.stringify(summary, null, 2));
  replaceFile(path.join(outDir, REPORT), html);
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

// A folder's meta: its summary.json's, else (an interrupted campaign has
// none) what its campaign.json, written as the matrix started, says of the
// kind, matrix, seed and shard.
function folderMeta(dir) {
  const sf = path.join(dir, SUMMARY);
  if (fs.existsSync(sf)) return readSummary(sf).meta ?? {};
  const mf = path.join(dir, MANIFEST);
  if (!fs.existsSync(mf)) return {};
  let m;
  try {
    m = JSON.parse(fs.readFileSync(mf, 'utf8'));
  } catch (e) {
    throw new UsageError(`${mf}: not JSON (${e.message})`);
  }
  const s = m?.settings ?? {};
  return Object.fromEntries(
    Object.entries({
      ...kindOfCommand(m?.command)?.tag({}), // its `kind`, if its kind's meta carries one
      matrix: m?.matrix,
      seed: s.seed,
      shard: s.shard ?? undefined,
    }).filter(([, v]) => v !== undefined && v !== null),
  );
}

/**
 * `satbench merge`: the folders' runs joined (analysis/merge.js mergeSets
 * decides) into the new folder `outDir`: results.jsonl, the Lighthouse
 * reports, the runs' HARs and filmstrips, summary.json and index.html.
 */
export function mergeFolders(dirs, outDir) {
  const sets = dirs.map((dir) => {
    const rf = path.join(dir, RESULTS);
    if (!fs.existsSync(rf)) throw new UsageError(`${dir}: no ${RESULTS} (merge needs every run)`);
    return { dir, records: readResults(rf), meta: folderMeta(dir) };
  });
  const out = path.resolve(outDir);
  if (dirs.some((d) => path.resolve(d) === out))
    throw new UsageError(`--out ${outDir}: must be a new folder, not one of the inputs`);
  if (fs.existsSync(out) && !fs.statSync(out).isDirectory())
    throw new UsageError(`--out ${outDir}: is a file; expected a new folder`);
  if (fs.existsSync(path.join(out, RESULTS)))
    throw new UsageError(`--out ${outDir}: already holds a ${RESULTS}; pick a new folder`);
  const { records, meta, warnings } = mergeSets(sets);
  fs.mkdirSync(out, { recursive: true });
  // Lighthouse reports (bench --lighthouse) and each run's HAR and
  // filmstrip come along, so that the merged folder is complete on its own;
  // records name them relative to it. They are there before the report,
  // which reads the HARs and frames.
  for (const d of dirs) {
    const lh = path.join(d, LIGHTHOUSE_DIR);
    if (fs.existsSync(lh)) fs.cpSync(lh, path.join(out, LIGHTHOUSE_DIR), { recursive: true });
  }
  for (const { dir, records: rs } of sets)
    for (const rel of rs.flatMap(namedFiles)) {
      const from = path.join(dir, rel);
      if (fs.existsSync(from)) fs.cpSync(from, path.join(out, rel), { recursive: true });
    }
  const { summary, html } = renderOutputs(records, meta, out);
  replaceFile(path.join(out, RESULTS), records.map((r) => JSON.stringify(r)).join('\n') + '\n');
  writeRendered(out, summary, html);
  return { summary, records: records.length, warnings };
}
