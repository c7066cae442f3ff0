// `satbench sites [DIR...]`: what `bench --site` can load: the reference
// sites, and the site archives (satbench record / import-har) in the
// folders given (default ./archives), each with its page and origins.
import fs from 'node:fs';
import path from 'node:path';
import { listSites, siteFiles } from '../../sites/generate.js';
import { isArchive, readArchive } from '../archive/format.js';
import { archiveOrigins } from '../archive/match.js';
import { UsageError } from '../core/errors.js';
import { terminalSafe } from '../core/terminal.js';
import { parse, print, help } from './args.js';

export const HELP = `Usage: satbench sites [DIR...] [--json]
  List what bench --site takes: the reference sites (objects, bytes), and the site
  archives in each DIR (default ./archives, when it exists): a DIR that is an archive,
  or the archives directly inside it, each with its page, origins, entries and missing.

Options:
  --json   print them as JSON`;

// Pure-ish: the archives at `dir` (itself, or its direct sub-folders), each described or with its error.
export function archivesIn(dir) {
  const candidates = isArchive(dir)
    ? [dir]
    : fs
        .readdirSync(dir, { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => path.join(dir, e.name))
        .filter(isArchive);
  return candidates.map((d) => {
    try {
      const a = readArchive(d);
      return {
        dir: d,
        page: a.page,
        origins: archiveOrigins(a).origins.length,
        entries: a.entries.length,
        missing: a.missing.length,
      };
    } catch (e) {
      return { dir: d, error: e.message };
    }
  });
}

export async function sitesCommand(argv) {
  const { values: v, positionals } = parse(argv, {});
  if (v.help) return help(HELP);
  const dirs = positionals.length ? positionals : fs.existsSync('archives') ? ['archives'] : [];
  for (const d of dirs)
    if (!fs.statSync(d, { throwIfNoEntry: false })?.isDirectory())
      throw new UsageError(`satbench sites ${d}: not a folder (expected one holding site archives, or an archive)`);
  const reference = listSites().map((name) => {
    const files = siteFiles(name); // index.html included, as sites/README.md counts them
    return { name, objects: files.length, bytes: files.reduce((s, f) => s + f.bytes, 0) };
  });
  const archives = dirs.flatMap(archivesIn);
  if (v.json) return print({ reference, archives });
  for (const s of reference)
    process.stdout.write(`${s.name.padEnd(20)} reference site, ${s.objects} objects, ${s.bytes} bytes\n`);
  for (const a of archives)
    process.stdout.write(
      // a folder's name and an archive's error come from the disk: terminal-safe
      `${terminalSafe(
        a.error
          ? `${a.dir}: not usable: ${a.error}`
          : `${a.dir}  archive of ${a.page}: ${a.origins} origins, ${a.entries} responses, ${a.missing} missing`,
      )}\n`,
    );
  if (!archives.length)
    process.stdout.write(
      'no site archives (satbench record / import-har make them; satbench sites DIR lists a folder)\n',
    );
}
