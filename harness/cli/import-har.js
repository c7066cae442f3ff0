// `satbench import-har FILE --out DIR`: a site archive from a HAR file.
import path from 'node:path';
import { UsageError } from '../core/errors.js';
import { terminalSafe } from '../core/terminal.js';
import { harResponses } from '../archive/har.js';
import { readHar } from '../archive/har-read.js';
import { buildArchive } from '../archive/build.js';
import { parse, help, note } from './args.js';
import { archiveOut, saveArchive } from './archive.js';

export const HELP = `Usage: satbench import-har FILE --out DIR
  Make a site archive (sites/README.md, "Site archives") from a HAR 1.2 file with content,
  as Chrome DevTools saves it (Network panel: "Save all as HAR with content") or bench
  --har-content writes each run's (DIR/har/*.har.gz: a gzipped FILE is read as such). A
  file that fails the HAR 1.2 schema check is refused in one line naming the key. The
  first page's entries with their text and base64 bodies, the page being the URL the HAR
  names (its pages[0].title), else its first document, else its first HTML response; a
  page that is not HTML is refused. Each body is stored as it went on the wire
  (compressed again where its content-encoding says gzip, br, deflate or zstd). Entries
  without a body, failed ones, and those a service worker or Chromium's cache answered
  (unless the network answered the same request too) are listed in archive.json's "missing".

Options:
  --out DIR   the archive's folder: new or empty`;

export async function importHarCommand(argv) {
  const { values: v, positionals } = parse(argv, { out: { type: 'string' } });
  if (v.help) return help(HELP);
  if (positionals.length !== 1)
    throw new UsageError('import-har: name one HAR file (satbench import-har FILE --out DIR)');
  const [file] = positionals;
  const out = archiveOut(v.out, 'import-har');
  const { har, spool } = await readHar(file);
  let found;
  try {
    found = harResponses(har, file);
    const built = buildArchive({
      page: found.page,
      source: { tool: 'import-har', from: path.basename(file) },
      created: new Date().toISOString(),
      responses: found.responses,
    });
    saveArchive(out, built);
  } finally {
    spool.close(); // the bodies it kept are in the archive now, or not wanted
  }
  const { page, pageFrom, leftOut } = found;
  note(terminalSafe(`the page: ${page} (${pageFrom})`));
  if (leftOut) note(`${leftOut} entries of the HAR's other pages left out (the archive is its first page's)`);
}
