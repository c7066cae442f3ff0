// The files of a results folder: results.jsonl (a record per run, appended
// as runs end) and summary.json (statistics per scenario), read and checked
// without knowing any kind of record. Input problems are UsageErrors that
// name the file and the line or key. harness/analysis/outputs.js computes
// and writes summary.json and the report.
import fs from 'node:fs';
import { UsageError } from '../core/errors.js';

export const RESULTS = 'results.jsonl';
export const SUMMARY = 'summary.json';
export const LIGHTHOUSE_DIR = 'lighthouse'; // bench --lighthouse's reports

// One record per line, on disk before the next run starts (bench, bulk).
export function appendFlushed(file, obj) {
  const fd = fs.openSync(file, 'a');
  try {
    fs.writeSync(fd, JSON.stringify(obj) + '\n');
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

export function readResults(file) {
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .map((line, i) => [line, i + 1])
    .filter(([line]) => line.trim())
    .map(([line, n]) => {
      let r;
      try {
        r = JSON.parse(line);
      } catch {
        throw new UsageError(`${file}: line ${n} is not JSON`);
      }
      if (!r || typeof r !== 'object' || !r.scenario || typeof r.scenario !== 'object')
        throw new UsageError(`${file}: line ${n} has no "scenario" object`);
      if (typeof r.ok !== 'boolean') throw new UsageError(`${file}: line ${n}: "ok" is not true or false`);
      return r;
    });
}

// Pure: the first problem with a summary.json's content, or null.
export function summaryProblem(s) {
  if (!s || typeof s !== 'object' || Array.isArray(s)) return 'is not a JSON object';
  if (!Array.isArray(s.groups)) return 'has no "groups" list';
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
  let s;
  try {
    s = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    throw new UsageError(`${file}: ${e.code === 'ENOENT' ? 'no such file' : `not JSON (${e.message})`}`);
  }
  const problem = summaryProblem(s);
  if (problem) throw new UsageError(`${file}: ${problem}`);
  return s;
}
