// The campaign a results folder holds, DIR/campaign.json: the command, its
// options (with their defaults), and the matrix and every setting they made.
// Written when the matrix starts, so that `--resume DIR` runs that matrix
// with those settings (not today's preset, seed or link) and refuses options
// that contradict them.
import fs from 'node:fs';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { UsageError, optionFlag } from '../core/errors.js';
import { MANIFEST, replaceFile } from '../results/store.js';

export { MANIFEST };
const FORMAT = 1;
const COMMANDS = ['bench', 'bulk'];

// Options that say where results go and how they print, not what runs.
const NOT_SAVED = new Set(['out', 'resume', 'json', 'help']);

const plain = (x) => JSON.parse(JSON.stringify(x));

/** Pure: the manifest of a campaign that starts now. `values`: its parsed options. */
export function newManifest({ command, argv, values, matrix, settings, started = new Date().toISOString() }) {
  const options = Object.fromEntries(Object.entries(values).filter(([k, v]) => !NOT_SAVED.has(k) && v !== undefined));
  return plain({ format: FORMAT, command, argv, options, matrix, settings, started });
}

/** Pure: the first problem with a manifest's content, or null. */
export function manifestProblem(m) {
  if (!m || typeof m !== 'object' || Array.isArray(m)) return 'is not a JSON object';
  if (m.format !== FORMAT) return `"format" is ${JSON.stringify(m.format)}, expected ${FORMAT}`;
  if (!COMMANDS.includes(m.command)) return `"command" is ${JSON.stringify(m.command)}, expected bench or bulk`;
  for (const key of ['options', 'matrix', 'settings'])
    if (!m[key] || typeof m[key] !== 'object' || Array.isArray(m[key])) return `"${key}" is not an object`;
  if (!Array.isArray(m.argv)) return '"argv" is not a list';
  return null;
}

/**
 * The manifest of `dir` for `--resume dir` of `command`: a missing folder,
 * one without campaign.json and one of the other command are UsageErrors.
 */
export function readManifest(dir, command) {
  if (!fs.existsSync(dir)) throw new UsageError(`--resume ${dir}: no such folder (start a campaign with --out ${dir})`);
  if (!fs.statSync(dir).isDirectory()) throw new UsageError(`--resume ${dir}: not a folder`);
  const file = path.join(dir, MANIFEST);
  if (!fs.existsSync(file))
    throw new UsageError(
      `--resume ${dir}: no ${MANIFEST} there (the matrix and settings bench and bulk save as they start), so there is nothing to continue; start anew with another --out`,
    );
  let m;
  try {
    m = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    throw new UsageError(`${file}: not JSON (${e.message})`);
  }
  const problem = manifestProblem(m);
  if (problem) throw new UsageError(`${file}: ${problem}`);
  if (m.command !== command)
    throw new UsageError(
      `--resume ${dir}: holds a ${m.command} campaign; continue it with \`satbench ${m.command} --resume ${dir}\``,
    );
  return m;
}

/** Written whole or not at all (a temporary file renamed), and on disk. */
export function writeManifest(dir, manifest) {
  const file = path.join(dir, MANIFEST);
  replaceFile(file, JSON.stringify(manifest, null, 2) + '\n');
  return file;
}

/**
 * Pure: the options of a resumed command line that contradict the saved
 * ones: `given` (the options typed, without defaults) one at a time over
 * `saved` (the saved options over today's defaults), through the command's
 * `input(values)` → {matrix, settings}. An option contradicts when it
 * changes the matrix or a setting, or cannot go with the saved options
 * (--size on a --duration campaign); the same value in other words (--seed
 * 01, --profile "leo, geo") does not. `ran` ({matrix, settings}, the
 * manifest's): what the campaign really ran, so that an option given as
 * it ran is no contradiction even where today's preset would make
 * something else of the saved options. Returns [{option, given, saved}].
 */
export function contradictions({ saved, given, input, ran = null }) {
  const made = (values) => {
    try {
      return plain(input(values));
    } catch (e) {
      if (e instanceof UsageError) return e;
      throw e;
    }
  };
  const base = made(saved);
  return Object.entries(given)
    .filter(([k, v]) => !NOT_SAVED.has(k) && v !== undefined && !isDeepStrictEqual(v, saved[k]))
    .filter(([k, v]) => {
      const trial = made({ ...saved, [k]: v });
      if (base instanceof UsageError || trial instanceof UsageError) return true;
      const changed = changedParts(base, trial);
      // what the option changes is what the campaign ran: no contradiction
      if (!ran) return changed.length > 0;
      return changed.some(([part, key]) => !isDeepStrictEqual(trial[part][key], ran[part]?.[key]));
    })
    .map(([option, v]) => ({ option, given: v, saved: saved[option] }));
}

// Pure: the [part, key] pairs ('matrix' or 'settings', and a key of it) in which `a` and `b` differ.
function changedParts(a, b) {
  const out = [];
  for (const part of ['matrix', 'settings'])
    for (const key of new Set([...Object.keys(a[part] ?? {}), ...Object.keys(b[part] ?? {})]))
      if (!isDeepStrictEqual(a[part]?.[key], b[part]?.[key])) out.push([part, key]);
  return out;
}

// Pure: an option and its value as typed (`config`: the parseArgs options).
function typed(option, value, config) {
  const flag = optionFlag(option, config[option]);
  return value === true ? flag : `${flag} ${value}`;
}

/** Pure: the one line refusing `list` (from contradictions) for `--resume dir`. */
export function contradictionMessage(dir, list, config) {
  const each = list.map(({ option, given, saved }) => {
    const was =
      saved === undefined || saved === false
        ? `started without ${typed(option, true, config)}`
        : `started with ${typed(option, saved, config)}`;
    return `${typed(option, given, config)} (${was})`;
  });
  return `--resume ${dir}: ${each.join(', ')}: contradicts the campaign saved in ${path.join(dir, MANIFEST)}; leave ${list.length > 1 ? 'them' : 'it'} out to continue it, or start anew with another --out`;
}
