// Bodies as they go on the wire. An archive keeps each body after its
// content-encoding, so a replay server sends the file as it is; browsers
// and HAR files hand the body over decoded, so it is encoded again here
// with node's zlib at its default levels (gzip and deflate 6, brotli 11,
// zstd 3): the bytes, and so the size on the wire, may differ from the
// original server's.
import zlib from 'node:zlib';

const CODECS = {
  gzip: [zlib.gzipSync, zlib.gunzipSync],
  'x-gzip': [zlib.gzipSync, zlib.gunzipSync],
  // HTTP's "deflate" is the zlib format (RFC 9110 8.4.1.2)
  deflate: [zlib.deflateSync, zlib.inflateSync],
  br: [zlib.brotliCompressSync, zlib.brotliDecompressSync],
  identity: [(b) => b, (b) => b],
};
// zstd came with Node 22.15; older Nodes cannot encode it
if (zlib.zstdCompressSync) CODECS.zstd = [zlib.zstdCompressSync, zlib.zstdDecompressSync];

export const KNOWN_CODINGS = Object.keys(CODECS);

// Pure: the codings of a content-encoding value, in the order the server applied them.
export const contentCodings = (value) =>
  (value ?? '')
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter(Boolean);

// Pure: the first coding of `value` that satbench cannot apply, or null.
export const unknownCoding = (value) => contentCodings(value).find((c) => !Object.hasOwn(CODECS, c)) ?? null;

// bytes as a Buffer, without a copy when they are one already (a body may be as large as the file it came from)
const asBuffer = (b) => (Buffer.isBuffer(b) ? b : Buffer.from(b));

/** The wire bytes of a decoded body under content-encoding `value` (every coding known: see unknownCoding). */
export const encodeBody = (decoded, value) =>
  contentCodings(value).reduce((body, c) => asBuffer(CODECS[c][0](body)), asBuffer(decoded));

/** The decoded body of wire bytes under content-encoding `value`. */
export const decodeBody = (wire, value) =>
  contentCodings(value)
    .reverse()
    .reduce((body, c) => asBuffer(CODECS[c][1](body)), asBuffer(wire));
