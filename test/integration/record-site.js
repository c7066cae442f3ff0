// A small multi-origin site for the record test, run inside the test's own
// network namespace: HTTPS on 443 for www, cdn and api.record.test, and
// for six.html also fonts, img and stats.record.test (one
// certificate; Chromium accepts it by its pin) and HTTP on 80, whose page
// redirects to the HTTPS one. It prints one JSON line, the bodies it serves
// decoded ("ready"), and serves until killed.
//   node record-site.js CERT KEY
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import zlib from 'node:zlib';
import { encodeGif } from '../../sites/gif.js';

const [cert, key] = process.argv.slice(2);

const page = `<!doctype html>
<html><head><meta charset="utf-8"><title>record test</title>
<link rel="stylesheet" href="/style.css">
<script src="https://cdn.record.test/app.js"></script>
</head><body><h1>A page of several origins</h1>
<p>${'Words of a paragraph that compresses well. '.repeat(40)}</p>
<img src="/old.gif" alt="moved">
<img src="https://gone.record.test/x.gif" alt="refused">
</body></html>
`;
// A page of six origins with nothing the recording cannot store: the
// replay test's (0 unmatched requests).
const sixPage = `<!doctype html>
<html><head><meta charset="utf-8"><title>six origins</title>
<link rel="stylesheet" href="https://fonts.record.test/fonts.css">
<script src="https://cdn.record.test/six.js"></script>
</head><body><h1>Six origins</h1>
<p>${'A paragraph of words for the compressor to find again. '.repeat(30)}</p>
<img src="https://img.record.test/a.gif" alt="a">
<img src="/old.gif" alt="moved">
</body></html>
`;
// A page that asks a phone's screen for another image than a desktop's
// (record --device).
const devicePage = `<!doctype html>
<html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>device</title></head>
<body><picture><source media="(max-width: 600px)" srcset="/phone.gif"><img src="/desktop.gif" alt="x"></picture></body></html>
`;
const sixScript = `
fetch('https://api.record.test/data.json?session=' + Date.now()).then((r) => r.json()).then((d) => {
  const img = document.createElement('img');
  img.src = d.picture;
  document.body.append(img);
});
new Image().src = 'https://stats.record.test/beacon.gif?t=' + Date.now();
`;
const script = `
fetch('https://api.record.test/data.json?session=' + Date.now()).then((r) => r.json()).then((d) => {
  const img = document.createElement('img');
  img.src = d.picture;
  document.body.append(img);
});
fetch('/latin.txt');
fetch('https://api.record.test/blob.bin').then((r) => r.arrayBuffer());
fetch('https://api.record.test/ping', { method: 'POST', body: 'x' });
addEventListener('load', () => fetch('https://api.record.test/slow'));
`;
const gif = encodeGif({
  width: 4,
  height: 4,
  palette: [
    [200, 40, 40],
    [40, 40, 200],
  ],
  pixels: [0, 1, 0, 1, 1, 0, 1, 0, 0, 1, 0, 1, 1, 0, 1, 0],
});
const blob = Buffer.from(Array.from({ length: 3000 }, (_, i) => (i * 7919) % 256));
const latin = Buffer.from('caf\u00e9 \u00e0 la cr\u00e8me, 10 \u20ac\n'.replace('\u20ac', '\x80'), 'latin1');
const css = `body { font-family: serif; color: #123; }\n${'.rule { margin: 1px; }\n'.repeat(50)}`;

// path on host → [status, headers, decoded body, content-encoding]
const ROUTES = {
  'www.record.test/': [200, { 'content-type': 'text/html; charset=utf-8' }, page, 'gzip'],
  'www.record.test/style.css': [200, { 'content-type': 'text/css' }, css, 'br'],
  'www.record.test/old.gif': [301, { location: 'https://cdn.record.test/new.gif' }, null],
  'www.record.test/latin.txt': [200, { 'content-type': 'text/plain; charset=iso-8859-1' }, latin],
  'cdn.record.test/new.gif': [200, { 'content-type': 'image/gif' }, gif],
  'cdn.record.test/app.js': [200, { 'content-type': 'text/javascript' }, script, 'deflate'],
  'cdn.record.test/pic.gif': [200, { 'content-type': 'image/gif', 'x-served-by': 'cdn' }, gif],
  'api.record.test/data.json': [
    200,
    { 'content-type': 'application/json', 'access-control-allow-origin': '*' },
    JSON.stringify({ picture: 'https://cdn.record.test/pic.gif' }),
    'gzip',
  ],
  'api.record.test/blob.bin': [
    200,
    { 'content-type': 'application/octet-stream', 'access-control-allow-origin': '*' },
    blob,
  ],
  'api.record.test/ping': [204, { 'access-control-allow-origin': '*' }, null],
  'www.record.test/six.html': [200, { 'content-type': 'text/html; charset=utf-8' }, sixPage, 'br'],
  'fonts.record.test/fonts.css': [200, { 'content-type': 'text/css' }, css, 'gzip'],
  'cdn.record.test/six.js': [200, { 'content-type': 'text/javascript' }, sixScript, 'br'],
  'img.record.test/a.gif': [200, { 'content-type': 'image/gif' }, gif],
  'www.record.test/device.html': [200, { 'content-type': 'text/html; charset=utf-8' }, devicePage],
  'www.record.test/phone.gif': [200, { 'content-type': 'image/gif' }, gif],
  'www.record.test/desktop.gif': [200, { 'content-type': 'image/gif' }, gif],
  'stats.record.test/beacon.gif': [200, { 'content-type': 'image/gif' }, gif],
};
const ENCODE = { gzip: zlib.gzipSync, br: zlib.brotliCompressSync, deflate: zlib.deflateSync };

function serve(req, res) {
  const host = (req.headers.host ?? req.headers[':authority'] ?? '').split(':')[0];
  const where = `${host}${req.url.split('?')[0]}`;
  if (where === 'api.record.test/slow') {
    // headers and a first chunk, then nothing: still loading when the recording ends
    res.writeHead(200, { 'content-type': 'text/plain', 'access-control-allow-origin': '*' });
    res.write('the first chunk of a body that never ends\n');
    return;
  }
  const route = ROUTES[where];
  if (!route) {
    res.writeHead(404, { 'content-type': 'text/plain' });
    return res.end('not here\n');
  }
  const [status, headers, body, coding] = route;
  req.resume();
  if (body === null) {
    res.writeHead(status, headers);
    return res.end();
  }
  const wire = coding ? ENCODE[coding](Buffer.from(body)) : Buffer.from(body);
  res.writeHead(status, {
    ...headers,
    ...(coding ? { 'content-encoding': coding } : {}),
    'content-length': wire.length,
  });
  res.end(wire);
}

const tls = https.createServer({ cert: fs.readFileSync(cert), key: fs.readFileSync(key) }, serve);
const plain = http.createServer((req, res) => {
  res.writeHead(301, { location: `https://${req.headers.host}${req.url}`, 'content-type': 'text/html' });
  res.end('<a href="https://www.record.test/">moved</a>\n');
});
await Promise.all([
  new Promise((r) => tls.listen(443, '127.0.0.1', r)),
  new Promise((r) => plain.listen(80, '127.0.0.1', r)),
]);
const decoded = Object.fromEntries(
  Object.entries(ROUTES).map(([where, [, , body]]) => [
    where,
    body === null ? null : Buffer.from(body).toString('base64'),
  ]),
);
process.stdout.write(JSON.stringify({ ready: true, decoded }) + '\n');
