// What record and import-har share: their --out folder, checked before any
// work, and the archive written there with a line saying what it holds.
import path from 'node:path';
import { UsageError } from '../core/errors.js';
import { terminalSafe } from '../core/terminal.js';
import { requireNewOrEmpty } from '../core/folders.js';
import { ARCHIVE_FILE } from '../archive/format.js';
import { archiveOrigins } from '../archive/match.js';
import { writeArchive } from '../archive/write.js';
import { note } from './args.js';

/** The --out folder of `command`: named, and new or empty. */
export function archiveOut(out, command) {
  if (!out) throw new UsageError(`${command}: name the archive's folder with --out DIR`);
  requireNewOrEmpty(out, '--out');
  return out;
}

// Pure: the lines that say what an archive holds (archive/build.js's result),
// each terminal-safe: URLs and reasons come from the page or the HAR.
export function archiveLines(dir, { archive, bodies, skipped, cached }) {
  const bytes = bodies.reduce((n, [, b]) => n + b.length, 0);
  const { origins } = archiveOrigins(archive);
  const lines = [
    `wrote ${path.join(dir, ARCHIVE_FILE)}: ${archive.entries.length} responses (${bytes} bytes of bodies) from ${origins.length} origin(s), page ${archive.page}`,
  ];
  if (cached)
    lines.push(`${cached} response(s) from Chromium's cache left out: an entry from the network answers them`);
  if (skipped.length) lines.push(`${skipped.length} data:/blob: URL(s) left out: no server sends them`);
  if (archive.missing.length) {
    lines.push(`${archive.missing.length} request(s) cannot be replayed, listed under "missing":`);
    for (const m of archive.missing) lines.push(`  ${m.method} ${m.url}: ${m.reason}`);
  }
  return lines.map(terminalSafe);
}

/** Writes the archive into `dir` and says what it holds on stderr. */
export function saveArchive(dir, built) {
  writeArchive(dir, built);
  for (const line of archiveLines(dir, built)) note(line);
}
