// Output folders a command makes: a file where a folder must be is refused
// before anything is written, and the folder is made one level at a time.
import fs from 'node:fs';
import path from 'node:path';
import { UsageError } from './errors.js';

/** The nearest of `dir` and the folders on its path that exists, when it is not a folder; else null. */
export function fileOnPath(dir) {
  for (let p = path.resolve(dir); ; p = path.dirname(p)) {
    const st = fs.statSync(p, { throwIfNoEntry: false });
    if (st) return st.isDirectory() ? null : p;
    if (p === path.dirname(p)) return null;
  }
}

/** Refuses `dir` (given as `flag DIR`) when it, or a folder on its path, is a regular file. */
export function refuseFileOnPath(dir, flag) {
  const file = fileOnPath(dir);
  if (file)
    throw new UsageError(`${flag} ${dir}: ${file === path.resolve(dir) ? '' : `${file} `}is a file, not a folder`);
}

/** Refuses `dir` unless it is new or an empty folder. */
export function requireNewOrEmpty(dir, flag) {
  refuseFileOnPath(dir, flag);
  const held = fs.existsSync(dir) ? fs.readdirSync(dir) : [];
  if (held.length)
    throw new UsageError(
      `${flag} ${dir}: holds ${held.length} file(s) (${held[0]}, …); expected a new or empty folder`,
    );
}

// mkdir -p one level at a time: node's recursive mkdir never returns where
// the kernel refuses with ENOENT (under /proc, say). Returns the folders it made, outermost first.
export function makeDirs(dir) {
  const missing = [];
  for (let p = path.resolve(dir); !fs.existsSync(p); p = path.dirname(p)) missing.unshift(p);
  for (const p of missing) fs.mkdirSync(p);
  return missing;
}
