// Writing an archive into a new or empty folder: the body files first,
// archive.json last (whole, under another name, then renamed), so that a
// folder with an archive.json always holds a complete archive. What a
// failed write made is removed again.
import fs from 'node:fs';
import path from 'node:path';
import { UsageError } from '../core/errors.js';
import { makeDirs } from '../core/folders.js';
import { ARCHIVE_FILE } from './format.js';

// Pure: archive.json's text: a key a line, and an entry or missing request a line.
export function archiveJson(archive) {
  const line = ([key, v]) =>
    Array.isArray(v) && v.length
      ? `  ${JSON.stringify(key)}: [\n${v.map((x) => `    ${JSON.stringify(x)}`).join(',\n')}\n  ]`
      : `  ${JSON.stringify(key)}: ${JSON.stringify(v)}`;
  return `{\n${Object.entries(archive).map(line).join(',\n')}\n}\n`;
}

/** Writes {archive, bodies} (archive/build.js) into `dir`, which the caller checked is new or empty. */
export function writeArchive(dir, { archive, bodies }) {
  const made = [];
  const tmp = path.join(dir, `.${ARCHIVE_FILE}.partial`);
  try {
    made.push(...makeDirs(dir));
    fs.mkdirSync(path.join(dir, 'bodies'));
    for (const [name, bytes] of bodies) fs.writeFileSync(path.join(dir, name), bytes);
    fs.writeFileSync(tmp, archiveJson(archive));
    fs.renameSync(tmp, path.join(dir, ARCHIVE_FILE));
  } catch (e) {
    if (made.length) fs.rmSync(made[0], { recursive: true, force: true });
    else {
      fs.rmSync(path.join(dir, 'bodies'), { recursive: true, force: true });
      fs.rmSync(tmp, { force: true });
    }
    throw new UsageError(`${dir}: cannot write the archive (${e.code ?? e.message})`);
  }
}
