// The site archive (sites/README.md, "Site archives"): DIR/archive.json and
// the body files it names. Reading one checks every key, so that a replay
// never starts from a broken archive; an error names the file, the key and
// what was expected, in one line.
import fs from 'node:fs';
import path from 'node:path';
import { UsageError } from '../core/errors.js';
import { DROPPED_HEADERS, hasControlCharacter } from './headers.js';
import { archiveUrl } from './urls.js';
import { pageChain } from './match.js';

export const ARCHIVE_FILE = 'archive.json';
export const FORMAT = 'satbench-archive';
export const VERSION = 1;
export const SOURCE_TOOLS = ['record', 'import-har'];
// A body file: bodies/NNNN, inside the archive's folder.
export const BODY_NAME = /^bodies\/[\w.-]+$/;
// RFC 9110's token: what a method or a header name is made of.
export const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

export const show = (v) => {
  if (v === undefined) return 'nothing';
  const s = JSON.stringify(v);
  return s.length > 80 ? `${s.slice(0, 77)}…` : s;
};
const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const isUrl = (v) => typeof v === 'string' && archiveUrl(v) === v;
const URL_EXPECTED = 'an absolute http(s) URL as the WHATWG URL parser writes it, without fragment';
// A UTC time as toISOString writes it (the fraction optional), on a day and at an hour that exist.
const UTC_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z$/;
const isUtcTime = (v) =>
  typeof v === 'string' &&
  UTC_TIME.test(v) &&
  !Number.isNaN(Date.parse(v)) &&
  // Date.parse takes 2026-02-30 as 2026-03-02: written back, it differs
  new Date(v).toISOString().slice(0, 19) === v.slice(0, 19);

/** Pure: throws a UsageError for the first key of `archive` that is not as the format says (`file` names it). */
export function validateArchive(archive, file) {
  const check = (ok, key, expected, got) => {
    if (!ok) throw new UsageError(`${file}: ${key}: expected ${expected}, got ${show(got)}`);
  };
  check(isObject(archive), '(top level)', 'an object', archive);
  check(archive.format === FORMAT, 'format', JSON.stringify(FORMAT), archive.format);
  check(archive.version === VERSION, 'version', `${VERSION} (the version this satbench reads)`, archive.version);
  check(isUrl(archive.page), 'page', URL_EXPECTED, archive.page);
  const created = archive.created;
  check(isUtcTime(created), 'created', 'an ISO 8601 time', created);
  const source = archive.source;
  check(isObject(source), 'source', 'an object {tool, from}', source);
  check(SOURCE_TOOLS.includes(source.tool), 'source.tool', SOURCE_TOOLS.map(show).join(' or '), source.tool);
  check(typeof source.from === 'string' && source.from !== '', 'source.from', 'a URL or file name', source.from);
  check(Array.isArray(archive.entries) && archive.entries.length > 0, 'entries', 'a non-empty array', archive.entries);
  archive.entries.forEach((e, i) => {
    const key = `entries[${i}]`;
    check(isObject(e), key, 'an object {method, url, status, headers, body}', e);
    check(typeof e.method === 'string' && TOKEN.test(e.method), `${key}.method`, 'an HTTP method', e.method);
    check(isUrl(e.url), `${key}.url`, URL_EXPECTED, e.url);
    const status = e.status;
    check(Number.isInteger(status) && status >= 100 && status <= 599, `${key}.status`, 'a status 100–599', status);
    check(Array.isArray(e.headers), `${key}.headers`, 'an array of [name, value]', e.headers);
    e.headers.forEach((h, j) => {
      const pair = Array.isArray(h) && h.length === 2 && typeof h[1] === 'string';
      check(pair && typeof h[0] === 'string' && TOKEN.test(h[0]), `${key}.headers[${j}]`, '[name, value]', h);
      check(!DROPPED_HEADERS.includes(h[0].toLowerCase()), `${key}.headers[${j}]`, 'no hop-by-hop header', h);
      check(!hasControlCharacter(h[1]), `${key}.headers[${j}]`, 'a value without control characters', h);
    });
    check(
      e.body === null || (typeof e.body === 'string' && BODY_NAME.test(e.body)),
      `${key}.body`,
      'null or "bodies/NAME"',
      e.body,
    );
  });
  check(Array.isArray(archive.missing), 'missing', 'an array', archive.missing);
  archive.missing.forEach((m, i) => {
    const key = `missing[${i}]`;
    check(isObject(m), key, 'an object {method, url, reason}', m);
    check(typeof m.method === 'string' && TOKEN.test(m.method), `${key}.method`, 'an HTTP method', m.method);
    check(isUrl(m.url), `${key}.url`, URL_EXPECTED, m.url);
    check(typeof m.reason === 'string' && m.reason !== '', `${key}.reason`, 'a reason', m.reason);
  });
  const load = pageChain(archive);
  const broken = load.loop ? 'a redirect loop' : `no entry for ${load.unanswered}`;
  check(!load.unanswered && !load.loop, 'page', `a URL whose load ends at an entry (GET): ${broken}`, archive.page);
}

/** Whether `dir` holds an archive (its archive.json; readArchive checks it). */
export const isArchive = (dir) => fs.existsSync(path.join(dir, ARCHIVE_FILE));

/** The archive in `dir`, checked: archive.json as the format says, and every body file there. */
export function readArchive(dir) {
  const file = path.join(dir, ARCHIVE_FILE);
  let text;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    if (e.code === 'ENOENT')
      throw new UsageError(
        `${dir}: no ${ARCHIVE_FILE}, so not a site archive (satbench record or import-har make one)`,
      );
    throw new UsageError(`${file}: cannot read it (${e.code ?? e.message})`);
  }
  let archive;
  try {
    archive = JSON.parse(text);
  } catch (e) {
    throw new UsageError(`${file}: not JSON (${e.message.split('\n')[0]})`);
  }
  validateArchive(archive, file);
  // a body is a file inside the archive's folder, through symlinks too, as
  // the origin (sites/origin/src/archive.rs) checks before it serves
  const root = fs.realpathSync(dir);
  archive.entries.forEach((e, i) => {
    if (e.body === null) return;
    const body = path.join(dir, e.body);
    const fail = (what) => new UsageError(`${file}: entries[${i}].body: expected the file ${body}, ${what}`);
    let real;
    try {
      real = fs.realpathSync(body);
    } catch {
      throw fail('which is missing');
    }
    if (!real.startsWith(root + path.sep)) throw fail('which leads outside the archive (a symlink)');
    if (!fs.statSync(real).isFile()) throw fail('which is not a file');
  });
  return archive;
}
