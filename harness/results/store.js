// The files of a results folder: results.jsonl (a record per run, appended
// as runs end, each line whole or absent) and summary.json (statistics per
// scenario), read and checked without knowing any kind of record. Input
// problems are UsageErrors that name the file and the line or key; a torn
// last line also names the command that repairs it. harness/report/outputs.js
// computes and writes summary.json and the report.
import { constants as bufferConstants } from 'node:buffer';
import fs from 'node:fs';
import path from 'node:path';
import { UsageError } from '../core/errors.js';
import { fileOnPath } from '../core/folders.js';

export const RESULTS = 'results.jsonl';
export const SUMMARY = 'summary.json';
export const LIGHTHOUSE_DIR = 'lighthouse'; // bench --lighthouse's reports
export const HAR_DIR = 'har'; // each page-load run's HAR (pageload/har-file.js)

// The campaign a folder holds (bench and bulk write it as the matrix
// starts; harness/campaign/manifest.js). Read here only for the command
// that continues the folder.
export const MANIFEST = 'campaign.json';

// Pure: the one-line description of a system error ("ENOSPC: no space left on device").
const systemError = (e) => String(e.message ?? e).split(',')[0];

// The most bytes a results file may have: it is read whole, as one string,
// and V8 makes no longer one (about 512 MiB; a run's record is a few kB).
export const MAX_READ_BYTES = bufferConstants.MAX_STRING_LENGTH;

/**
 * The text of `file` (a results file, `what` saying which), or a one-line
 * UsageError naming it and what was expected: a folder, a file too big to
 * read whole, one that cannot be read. Null when there is no such file.
 */
export function readTextFile(file, what, maxBytes = MAX_READ_BYTES) {
  const st = fs.statSync(file, { throwIfNoEntry: false });
  if (!st) return null;
  if (!st.isFile()) throw new UsageError(`${file}: ${st.isDirectory() ? 'a folder' : 'not a file'}, expected ${what}`);
  if (st.size > maxBytes)
    throw new UsageError(`${file}: ${st.size} bytes, more than satbench reads whole (${maxBytes}); expected ${what}`);
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new UsageError(`${file}: cannot read it (${systemError(e)}), expected ${what}`);
  }
}
const RESULTS_WHAT = `a ${RESULTS} (one record a line)`;

/**
 * One record per line, on disk before the next run starts (bench, bulk).
 * `records`: a run's record, or its records (a repeat view's pair), whose
 * lines go in one write, so that they are all there or none. A line is
 * whole or absent: a short write is continued, and a failed one (ENOSPC,
 * EIO, …) is cut back to the file's previous end, so the records before it
 * stay readable, and ends with a one-line UsageError. `fsx` is node:fs (a
 * test passes one that fails).
 */
export function appendFlushed(file, records, fsx = fs) {
  const data = Buffer.from(
    [records]
      .flat()
      .map((r) => JSON.stringify(r) + '\n')
      .join(''),
  );
  const created = !fsx.existsSync(file);
  let fd;
  let start = null;
  try {
    fd = fsx.openSync(file, 'a');
    start = fsx.fstatSync(fd).size;
    for (let at = 0; at < data.length;) {
      const n = fsx.writeSync(fd, data, at, data.length - at);
      if (!(n > 0)) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
      at += n;
    }
    fsx.fsyncSync(fd);
    // a new file's name is on disk too, not only its content
    if (created) syncDir(path.dirname(file), fsx);
  } catch (e) {
    if (!e.code) throw e;
    let kept = '';
    if (fd !== undefined && start !== null) {
      try {
        fsx.ftruncateSync(fd, start);
        fsx.fsyncSync(fd);
        kept = `; the records before it are intact`;
      } catch {
        kept = `; its line may be torn`;
      }
    }
    throw new UsageError(
      `${file}: writing a run's record failed (${systemError(e)})${kept}; free space, then ${continueHint(file)}`,
    );
  } finally {
    if (fd !== undefined) fsx.closeSync(fd);
  }
}

function syncDir(dir, fsx) {
  const fd = fsx.openSync(dir, 'r');
  try {
    fsx.fsyncSync(fd);
  } finally {
    fsx.closeSync(fd);
  }
}

// Pure: `s` as one word of a shell command.
const shellQuote = (s) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

// The command that continues the campaign of `file`'s folder, from its
// campaign.json; null for a folder without one (merged, or older).
function resumeCommand(file) {
  const dir = path.dirname(file);
  try {
    const { command } = JSON.parse(fs.readFileSync(path.join(dir, MANIFEST), 'utf8'));
    if (command === 'bench' || command === 'bulk') return `satbench ${command} --resume ${shellQuote(dir)}`;
  } catch {
    // no campaign.json, or unreadable: no resume command to offer
  }
  return null;
}

const continueHint = (file) => {
  const cmd = resumeCommand(file);
  return cmd ? `continue with \`${cmd}\`` : 'continue the campaign with --resume';
};

/**
 * Pure: the records of a results file's `text`, and its torn last line:
 * {records, torn: null | {line, offset (bytes before it), bytes}}. A last
 * line that is not JSON is the record being written when satbench stopped
 * (a crash, a full disk); a bad line before it is a UsageError naming
 * `file` and the line.
 */
export function parseResults(text, file) {
  const lines = text.split('\n');
  let last = lines.length - 1;
  while (last >= 0 && !lines[last].trim()) last--;
  const records = [];
  let torn = null;
  let offset = 0;
  for (const [i, line] of lines.entries()) {
    const n = i + 1;
    const bytes = Buffer.byteLength(line);
    if (line.trim()) {
      let r;
      try {
        r = JSON.parse(line);
      } catch {
        if (i !== last) throw new UsageError(`${file}: line ${n} is not JSON`);
        torn = { line: n, offset, bytes };
        break;
      }
      if (!r || typeof r !== 'object' || !r.scenario || typeof r.scenario !== 'object')
        throw new UsageError(`${file}: line ${n} has no "scenario" object`);
      if (typeof r.ok !== 'boolean') throw new UsageError(`${file}: line ${n}: "ok" is not true or false`);
      records.push(r);
    }
    offset += bytes + 1;
  }
  return { records, torn };
}

/** Pure: the one line saying `file`'s line is torn and which command repairs it. */
export function tornMessage(file, torn, command) {
  const repair = command
    ? `\`${command}\` drops it and runs that run again`
    : `\`sed -i '${torn.line}d' ${shellQuote(file)}\` drops it`;
  return `${file}: line ${torn.line} is torn (the run being written when satbench stopped); ${repair}`;
}

/** The records of a results file ([] when it is missing); a torn last line is an error saying how to repair it. */
export function readResults(file) {
  const text = readTextFile(file, RESULTS_WHAT);
  if (text === null) return [];
  const { records, torn } = parseResults(text, file);
  if (torn) throw new UsageError(tornMessage(file, torn, resumeCommand(file)));
  return records;
}

/**
 * `file` holding `records` instead, replaced whole (a temporary file
 * renamed) so that a crash leaves the old file or the new one.
 */
export function rewriteResults(file, records) {
  replaceFile(file, records.map((r) => JSON.stringify(r) + '\n').join(''));
}

/**
 * Writes `text` as `file`, whole or not at all (a temporary file beside it
 * renamed over it) and on disk (the file and its folder synced), so a
 * crash or a full disk leaves the old content or the new one, never a torn
 * file. The file system's refusal (ENOSPC, EACCES, EROFS…) is one-line
 * UsageError naming the file (and, when a file stands where a folder of its
 * path goes, that file); the temporary file goes with it. `fsx` is
 * node:fs (a test passes one that fails).
 */
export function replaceFile(file, text, fsx = fs) {
  const tmp = `${file}.${process.pid}.tmp`;
  let fd;
  try {
    fd = fsx.openSync(tmp, 'w');
    fsx.writeFileSync(fd, text);
    fsx.fsyncSync(fd);
    fsx.closeSync(fd);
    fd = undefined;
    fsx.renameSync(tmp, file);
    syncDir(path.dirname(file), fsx);
  } catch (e) {
    if (fd !== undefined) fsx.closeSync(fd);
    try {
      fsx.rmSync(tmp, { force: true });
    } catch {
      // force ignores a missing file, not a file where its folder goes (ENOTDIR): nothing to remove
    }
    if (!e.code) throw e;
    const kept = fsx.existsSync(file) ? 'the file as it was is kept' : 'nothing was written';
    const onPath = e.code === 'ENOTDIR' ? fileOnPath(path.dirname(file)) : null;
    const why = onPath ? `${onPath} is a file, expected a folder` : systemError(e);
    throw new UsageError(`${file}: writing it failed (${why}); ${kept}`);
  }
}

/**
 * --resume's repair: cuts a torn last line off `file` (and ends a last
 * record that lacks its newline) so that appending goes on from whole
 * records. Returns the torn line ({line, bytes}) or null.
 */
export function dropTornLine(file) {
  const text = readTextFile(file, RESULTS_WHAT);
  if (text === null) return null;
  const { torn } = parseResults(text, file);
  if (torn) {
    fs.truncateSync(file, torn.offset);
  } else if (text && !text.endsWith('\n')) {
    fs.appendFileSync(file, '\n');
  }
  return torn && { line: torn.line, bytes: torn.bytes };
}

// Pure: the first problem with a summary.json's content, or null.
export function summaryProblem(s) {
  if (!s || typeof s !== 'object' || Array.isArray(s)) return 'is not a JSON object';
  if (!Array.isArray(s.groups)) return 'has no "groups" list';
  if (s.meta !== undefined && (!s.meta || typeof s.meta !== 'object' || Array.isArray(s.meta)))
    return '"meta" is not an object';
  const warnings = s.meta?.warnings;
  if (warnings !== undefined && !(Array.isArray(warnings) && warnings.every((w) => typeof w === 'string')))
    return 'meta.warnings is not a list of strings';
  for (const [i, g] of s.groups.entries()) {
    if (!g || typeof g.scenario !== 'object' || g.scenario === null) return `groups[${i}].scenario is missing`;
    if (typeof g.metrics !== 'object' || g.metrics === null) return `groups[${i}].metrics is missing`;
    for (const [k, v] of Object.entries(g.metrics)) {
      if (typeof v?.median !== 'number') return `groups[${i}].metrics.${k}.median is not a number`;
    }
  }
  return null;
}

export function readSummary(file) {
  const text = readTextFile(file, `a ${SUMMARY}`);
  if (text === null) throw new UsageError(`${file}: no such file`);
  let s;
  try {
    s = JSON.parse(text);
  } catch (e) {
    throw new UsageError(`${file}: not JSON (${e.message})`);
  }
  const problem = summaryProblem(s);
  if (problem) throw new UsageError(`${file}: ${problem}`);
  return s;
}
