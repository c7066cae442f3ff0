// `satbench record URL --out DIR`: a site archive of a live page.
import net from 'node:net';
import { UsageError } from '../core/errors.js';
import { archiveUrl } from '../archive/urls.js';
import { buildArchive } from '../archive/build.js';
import { recordPage } from '../browser/record.js';
import { DEFAULTS } from '../core/defaults.js';
import { checkEmulation } from '../browser/emulation.js';
import { parse, help, integer, deviceLines } from './args.js';
import { archiveOut, saveArchive } from './archive.js';

export const HELP = `Usage: satbench record URL --out DIR [--settle-ms MS] [--timeout S]
                       [--resolve HOST=IP]... [--spki PIN]... [--device NAME]
  Load URL once in a fresh headless Chromium on this machine's own network (not in a
  testbed), wait for its load event and MS more, and store every response the page got as
  a site archive in DIR (sites/README.md, "Site archives"): archive.json and bodies/.
  A request that cannot be stored (failed or blocked, still loading at the end, answered by
  Chromium's cache or a service worker, a body DevTools no longer holds) is listed in
  archive.json's "missing" with the reason. A page that does not load, or answers with an
  HTTP error, writes nothing.

Options:
  --out DIR          the archive's folder: new or empty
  --settle-ms MS     how long to go on recording after the load event (default 2000)
  --timeout S        how long the load event may take, in seconds (default 60)
  --resolve HOST=IP  connect to IP for HOST instead of asking DNS (Chromium's host-resolver
                     rules); repeatable
  --spki PIN         accept a certificate whose public key has this pin (base64 SHA-256, as
                     \`origin gen-cert\` writes to spki.txt), for servers of your own with
                     self-signed certificates; repeatable
  --device NAME      the device the page is loaded as, as bench --device emulates it (default
                     ${DEFAULTS.device}): a page asks a phone for other images, styles or a page of its own,
                     so record it as the device bench replays it as; the archive's source says
                     which:${deviceLines(21)}
  (No --cpu-slowdown: a slower CPU changes how long the page's work takes, which an archive
  does not keep, not what it asks for; give it to bench when the archive is replayed.)`;

const OPTIONS = {
  out: { type: 'string' },
  'settle-ms': { type: 'string', default: '2000' },
  timeout: { type: 'string', default: '60' },
  resolve: { type: 'string', multiple: true, default: [] },
  spki: { type: 'string', multiple: true, default: [] },
  device: { type: 'string', default: DEFAULTS.device },
  // known only to be refused in words (archive-only: see recordInput)
  'cpu-slowdown': { type: 'string' },
};

// Pure: why record refuses --cpu-slowdown.
export const NO_CPU_SLOWDOWN =
  "--cpu-slowdown: not for record: an archive keeps the page's responses, not how long its work took, and a slower CPU changes only that; give it to bench when the archive is replayed (bench --site DIR --cpu-slowdown N)";

// Pure: --resolve HOST=IP as [host, ip].
export function resolveRule(value) {
  const m = /^([A-Za-z0-9.-]+)=(.+)$/.exec(value);
  if (!m || !net.isIP(m[2]))
    throw new UsageError(`--resolve: expected HOST=IP (an IPv4 or IPv6 address), got ${JSON.stringify(value)}`);
  return [m[1].toLowerCase(), m[2]];
}

// Pure: --spki PIN checked: 32 bytes in base64.
export function spkiPin(value) {
  if (!/^[A-Za-z0-9+/]{43}=$/.test(value))
    throw new UsageError(`--spki: expected a base64 SHA-256 pin (44 characters), got ${JSON.stringify(value)}`);
  return value;
}

/** The recording asked for by parsed options and operands (--out is checked on disk). */
export function recordInput(v, positionals) {
  if (positionals.length !== 1) throw new UsageError('record: name one URL (satbench record URL --out DIR)');
  const url = archiveUrl(positionals[0]);
  if (!url) throw new UsageError(`record: expected an http or https URL, got ${JSON.stringify(positionals[0])}`);
  if (v['cpu-slowdown'] !== undefined) throw new UsageError(NO_CPU_SLOWDOWN);
  return {
    url,
    out: archiveOut(v.out, 'record'),
    settleMs: integer(v['settle-ms'], '--settle-ms', 0),
    timeoutMs: integer(v.timeout, '--timeout', 1) * 1000,
    resolve: v.resolve.map(resolveRule),
    spki: v.spki.map(spkiPin),
    emulation: checkEmulation({ device: v.device }),
  };
}

export async function recordCommand(argv) {
  const { values: v, positionals } = parse(argv, OPTIONS);
  if (v.help) return help(HELP);
  const input = recordInput(v, positionals);
  const responses = await recordPage(input.url, input);
  const built = buildArchive({
    page: input.url,
    source: { tool: 'record', from: input.url, device: input.emulation.device },
    created: new Date().toISOString(),
    responses,
  });
  saveArchive(input.out, built);
}
