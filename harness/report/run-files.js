// The files a run's record names in its results folder (issue 28: its HAR,
// gzip-compressed, and its filmstrip, a folder of JPEGs), read for the
// report. Only paths inside the folder are read: a record naming
// "../../somewhere" or an absolute path is refused, so that no file from
// elsewhere ends up inlined in a report. Every call throws on a missing or
// unreadable file with a short reason; the report shows the run without it.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { isRelativePath } from './render.js';
import { framesOf } from './pageload/filmstrip.js';

// A HAR of a page load is a few MB at most; a bigger one is not read whole.
const MAX_HAR_BYTES = 256 * 1024 * 1024;

// The reason a read failed, without the folder's absolute path.
function reason(e) {
  if (e.code === 'ENOENT') return 'missing';
  if (e.code === 'EACCES') return 'not readable (permission denied)';
  if (e.code === 'ENOTDIR' || e.code === 'EISDIR') return `not a ${e.code === 'EISDIR' ? 'file' : 'folder'}`;
  return String(e.message)
    .split('\n')[0]
    .replace(/, (open|scandir|stat) '.*'$/, '');
}

const failing = (what, rel, fn) => {
  try {
    return fn();
  } catch (e) {
    throw new Error(`${what} ${rel}: ${reason(e)}`, { cause: e });
  }
};

/** Pure: the run files `record` names (its HAR, its filmstrip folder) that are paths inside its folder. */
export const namedFiles = (record) => [record?.har, record?.visual?.frames].filter(isRelativePath);

// The median runs' waterfalls and frames are always in the report; other
// runs' while what the report carries of the views stays within this (a
// 50-run npm run bench's all are); the rest are linked as files of the
// results folder, as the Lighthouse reports are.
export const INLINE_BUDGET_BYTES = 8 * 1024 * 1024;

/**
 * The reader of the run files of results folder `dir`, and `inlineBudget`:
 * how many bytes of run views (waterfalls, frames) the report carries
 * (run-views.js).
 */
export function runFiles(dir, { inlineBudget = INLINE_BUDGET_BYTES } = {}) {
  const inside = (what, rel) => {
    if (!isRelativePath(rel)) throw new Error(`${what} ${JSON.stringify(rel)}: not a path inside the results folder`);
    return path.join(dir, rel);
  };
  return {
    inlineBudget,
    /** The HAR `rel` names, parsed. */
    har(rel) {
      const file = inside('HAR', rel);
      return failing('HAR', rel, () => {
        const json = zlib.gunzipSync(fs.readFileSync(file), { maxOutputLength: MAX_HAR_BYTES });
        return JSON.parse(json.toString('utf8'));
      });
    },
    /** The frames of the filmstrip folder `rel`, by time: [{ms, name, bytes, hash}]. */
    frames(rel) {
      const folder = inside('filmstrip', rel);
      return failing('filmstrip', rel, () =>
        framesOf(fs.readdirSync(folder)).map((f) => {
          const data = fs.readFileSync(path.join(folder, f.name));
          return { ...f, bytes: data.length, hash: crypto.createHash('sha1').update(data).digest('hex') };
        }),
      );
    },
    /** One frame of the filmstrip folder `rel` as a data: URL. */
    frameData(rel, name) {
      const folder = inside('filmstrip', rel);
      return failing(
        'filmstrip',
        rel,
        () => `data:image/jpeg;base64,${fs.readFileSync(path.join(folder, path.basename(name))).toString('base64')}`,
      );
    },
  };
}
