// The Deutschmann et al. (NetSys 2019) sites: a small one (34 objects, 4 kB
// to 400 kB, 1.4 MB in all) and a large one (34 objects, 4 kB to 4 MB, 10 MB
// in all); kB and MB are 1,000 and 1,000,000 bytes.
//
// Sizes: object i of n = 34 gets a log-size at quantile u_i = i/(n−1) of a
// truncated exponential over [ln min, ln max]:
//   size_i = min · (max/min)^q(u_i),  q(u) = −ln(1 − u·(1 − e^−λ)) / λ,
// so the smallest is exactly `min`, the largest exactly `max`, and λ is
// solved (bisection) so the sizes add up to the total; rounding is corrected
// one byte at a time on the middle objects so the total is exact. λ = 0 would
// be plain log-uniform spacing, which adds up to 3.0 MB (small) and 21 MB
// (large): too much, so the spacing leans towards the small end (λ ≈ 2.6 and
// 2.2). The smallest object is index.html; the 33 subresources are the rest:
// the five largest are JPEGs, and the others, in size order, cycle through
// JPEG, CSS, JPEG, JS (19 JPEGs, 7 style sheets, 7 scripts). Style sheets and
// scripts compress like minified ones (gzip ratio ≈ 0.25 and 0.3), JPEGs do
// not compress.
import { cssObject, jsObject, jpegObject, jpegDims, htmlPage } from './objects.js';

export const DEUTSCHMANN = {
  'deutschmann-small': { min: 4000, max: 400000, total: 1400000, n: 34 },
  'deutschmann-large': { min: 4000, max: 4000000, total: 10000000, n: 34 },
};

export function logSizes({ min, max, total, n }) {
  const q = (u, l) => (l === 0 ? u : -Math.log(1 - u * (1 - Math.exp(-l))) / l);
  const at = (l) => Array.from({ length: n }, (_, i) => min * Math.pow(max / min, q(i / (n - 1), l)));
  const sum = (l) => at(l).reduce((a, b) => a + b, 0);
  let lo = 0,
    hi = 60;
  if (sum(0) < total) throw new Error('total larger than log-uniform spacing allows');
  for (let k = 0; k < 100; k++) {
    const mid = (lo + hi) / 2;
    if (sum(mid) > total) lo = mid;
    else hi = mid;
  }
  const sizes = at(hi).map(Math.round);
  sizes[0] = min;
  sizes[n - 1] = max;
  let diff = total - sizes.reduce((a, b) => a + b, 0);
  for (let i = 1; diff !== 0; i = (i % (n - 2)) + 1) {
    const s = Math.sign(diff);
    sizes[i] += s;
    diff -= s;
  }
  return { sizes, lambda: hi };
}

/** Page order: style sheets (head), then images, then scripts (end of body). */
export function deutschmannPlan(name) {
  const spec = DEUTSCHMANN[name];
  const { sizes } = logSizes(spec);
  const sub = sizes.slice(1); // ascending, 33 objects
  const kinds = sub.map((_, i) => (i >= sub.length - 5 ? 'img' : ['img', 'css', 'img', 'js'][i % 4]));
  const objs = sub.map((bytes, i) => {
    const no = String(i + 1).padStart(2, '0');
    if (kinds[i] === 'css') return { path: `css/style${no}.css`, bytes, element: 'link' };
    if (kinds[i] === 'js') return { path: `js/script${no}.js`, bytes, element: 'script' };
    return { path: `img/photo${no}.jpg`, bytes, element: 'img', pixels: jpegDims(bytes) };
  });
  const order = { link: 0, img: 1, script: 2 };
  return { index: sizes[0], objects: objs.sort((a, b) => order[a.element] - order[b.element]) };
}

export function buildDeutschmann(name) {
  const { index, objects } = deutschmannPlan(name);
  const spec = DEUTSCHMANN[name];
  const files = [];
  for (const o of objects) {
    const id = `${name}/${o.path}`;
    if (o.element === 'link') files.push({ ...o, buf: cssObject(id, o.bytes) });
    else if (o.element === 'script') files.push({ ...o, buf: jsObject(id, o.bytes) });
    else files.push({ ...o, buf: jpegObject(id, o.bytes, o.pixels).buf });
  }
  const head =
    objects
      .filter((o) => o.element === 'link')
      .map((o) => `<link rel="stylesheet" href="${o.path}">\n`)
      .join('') +
    '<style>body { font-family: sans-serif; max-width: 800px; margin: 1em auto; } img { max-width: 180px; height: auto; margin: 2px; }</style>\n';
  const imgs = objects
    .filter((o) => o.element === 'img')
    .map((o) => `<img src="${o.path}" width="${o.pixels[0]}" height="${o.pixels[1]}" alt="">`)
    .join('\n');
  const scripts = objects
    .filter((o) => o.element === 'script')
    .map((o) => `<script src="${o.path}"></script>`)
    .join('\n');
  const mb = (spec.total / 1e6).toFixed(1);
  const body =
    `<h1>${name}</h1>\n<p>A reference site after Deutschmann et al. (NetSys 2019): ${spec.n} objects from ${spec.min / 1000} kB` +
    ` to ${spec.max >= 1e6 ? `${spec.max / 1e6} MB` : `${spec.max / 1000} kB`}, ${mb} MB in all.</p>\n${imgs}\n${scripts}\n`;
  const html = htmlPage(`${name}/index.html`, index, { title: name, head, body });
  return [{ path: 'index.html', element: 'document', bytes: index, buf: html }, ...files];
}
