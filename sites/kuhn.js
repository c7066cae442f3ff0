// The Kuhn et al. (ASMS 2020) pages. kuhn-a: a page with one large object,
// index.html (2,000 bytes) and one JPEG of exactly 5,300,000 bytes (5.3 MB),
// two objects. kuhn-b: a page of 11 kB, one object: index.html of exactly
// 11,000 bytes of text (no subresources).
import { jpegObject, jpegDims, htmlPage } from './objects.js';

export const KUHN_A_IMAGE = 5300000;
export const KUHN_A_INDEX = 2000;
export const KUHN_B_INDEX = 11000;

export function kuhnPlan(name) {
  if (name === 'kuhn-a')
    return {
      index: KUHN_A_INDEX,
      objects: [{ path: 'img/large.jpg', bytes: KUHN_A_IMAGE, element: 'img', pixels: jpegDims(KUHN_A_IMAGE) }],
    };
  if (name === 'kuhn-b') return { index: KUHN_B_INDEX, objects: [] };
  throw new Error(`not a kuhn site: ${name}`);
}

export function buildKuhn(name) {
  const { index, objects } = kuhnPlan(name);
  const files = objects.map((o) => ({ ...o, buf: jpegObject(`${name}/${o.path}`, o.bytes, o.pixels).buf }));
  const imgs = objects
    .map(
      (o) =>
        `<p><img src="${o.path}" width="${o.pixels[0]}" height="${o.pixels[1]}" style="max-width: 100%; height: auto" alt=""></p>\n`,
    )
    .join('');
  const what = name === 'kuhn-a' ? 'a page with one 5.3 MB object' : 'a page of 11 kB';
  const body = `<h1>${name}</h1>\n<p>A reference page after Kuhn et al. (ASMS 2020): ${what}.</p>\n${imgs}`;
  const html = htmlPage(`${name}/index.html`, index, { title: name, body });
  return [{ path: 'index.html', element: 'document', bytes: index, buf: html }, ...files];
}
