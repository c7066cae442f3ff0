// Reading a HAR file as a stream of JSON tokens (stream-json), so that its
// bodies (log.entries[i].response.content.text) go to a spool on disk
// (spool.js) instead of memory: JSON.parse held the file's text, the
// parsed body and then its bytes, about 4 times the largest body. The rest
// of the file is built into objects as JSON.parse would.
import fs from 'node:fs';
import zlib from 'node:zlib';
import { parser } from 'stream-json/parser.js';
import { UsageError } from '../core/errors.js';
import { openSpool } from './spool.js';

// Pure: whether the string at `path` (keys and indexes from the top) is a
// body: log.entries[i].response.content.text.
export const isBodyPath = (path) =>
  path.length === 6 &&
  path[0] === 'log' &&
  path[1] === 'entries' &&
  typeof path[2] === 'number' &&
  path[3] === 'response' &&
  path[4] === 'content' &&
  path[5] === 'text';

/**
 * Pure: a builder of the value a token stream describes (stream-json's
 * tokens, strings streamed and not packed): `push(token)` each in turn,
 * `value()` at the end. A string at a body path (isBodyPath) is given to
 * `bodyText()`, a writer ({add(piece), done() → value}) that keeps it.
 */
export function valueBuilder(bodyText) {
  const stack = []; // [container, key or index]
  let root;
  let text = null; // the string being read: {parts} or a body writer
  const path = () => stack.map((f) => f.key);
  const put = (value) => {
    const top = stack.at(-1);
    if (!top) root = value;
    else if (Array.isArray(top.container)) top.container[top.key++] = value;
    // as JSON.parse: a "__proto__" key is an own property, never the prototype
    else Object.defineProperty(top.container, top.key, { value, writable: true, enumerable: true, configurable: true });
  };
  const open = (container) => {
    put(container);
    stack.push({ container, key: Array.isArray(container) ? 0 : null });
  };
  const handlers = {
    startObject: () => open({}),
    startArray: () => open([]),
    endObject: () => stack.pop(),
    endArray: () => stack.pop(),
    keyValue: (k) => {
      stack.at(-1).key = k;
    },
    startString: () => {
      text = isBodyPath(path()) ? bodyText() : { parts: [] };
    },
    stringChunk: (s) => (text.parts ? text.parts.push(s) : text.add(s)),
    endString: () => {
      put(text.parts ? text.parts.join('') : text.done());
      text = null;
    },
    numberValue: (n) => put(Number(n)),
    trueValue: () => put(true),
    falseValue: () => put(false),
    nullValue: () => put(null),
  };
  return {
    push: ({ name, value }) => handlers[name]?.(value),
    value: () => root,
  };
}

// A gzip stream begins with these two bytes (RFC 1952); a HAR's JSON cannot.
const isGzip = (bytes) => bytes[0] === 0x1f && bytes[1] === 0x8b;

// The first two bytes of `file`; a UsageError naming it when it cannot be read.
function firstBytes(file) {
  let fd;
  try {
    if (fs.statSync(file).isDirectory()) throw Object.assign(new Error('a folder'), { code: 'a folder' });
    fd = fs.openSync(file, 'r');
    const head = Buffer.alloc(2);
    return head.subarray(0, fs.readSync(fd, head, 0, 2, 0));
  } catch (e) {
    throw new UsageError(`${file}: cannot read it (${e.code === 'ENOENT' ? 'no such file' : (e.code ?? e.message)})`);
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/**
 * Reads HAR `file`, gzipped or not (bench writes each run's gzipped) →
 * {har, spool}: the parsed file, its bodies kept in `spool` (close it when
 * the archive is made). A file that cannot be read, is not whole gzip or
 * not JSON is a UsageError naming it.
 */
export async function readHar(file) {
  const gzip = isGzip(firstBytes(file));
  const spool = openSpool();
  try {
    const tokens = parser.asStream({
      packStrings: false,
      streamStrings: true,
      packKeys: true,
      streamKeys: false,
      packNumbers: true,
      streamNumbers: false,
    });
    const builder = valueBuilder(() => spool.text());
    let failed = null; // reading or unzipping, rather than the JSON
    const fail = (why) => (e) => tokens.destroy((failed = `${why} (${e.code ?? e.message})`));
    let source = fs.createReadStream(file).on('error', fail('cannot read it'));
    if (gzip) source = source.pipe(zlib.createGunzip()).on('error', fail('not whole gzip'));
    source.pipe(tokens);
    try {
      for await (const token of tokens) builder.push(token);
    } catch (e) {
      throw new UsageError(`${file}: ${failed ?? `not JSON (${e.message.split('\n')[0]})`}`);
    }
    return { har: builder.value(), spool };
  } catch (e) {
    spool.close();
    throw e;
  }
}
