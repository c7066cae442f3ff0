// Builders shared by the synthetic sites (deutschmann-*, kuhn-*): style
// sheets, scripts and pages of an exact size and a typical compressibility,
// and JPEGs of an exact size whose pixel size follows from it.
import { ALPHA, filler, sizedObject } from './fill.js';
import { prose, css, js } from './text.js';
import { jpegOfSize } from './jpeg.js';

// gzip -9 ratios aimed at: typical of minified style sheets, scripts and pages.
export const RATIO = { css: 0.25, js: 0.3, html: 0.35 };
const ALPHAS = [0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1, 0.05, 0];

export function cssObject(name, bytes) {
  return sizedObject({
    name,
    size: bytes,
    gzip: Math.round(bytes * RATIO.css),
    tolerance: 0.1,
    good: 0.03,
    variants: ALPHAS.map((alpha) => ({ alpha })),
    frame: (v) => {
      const natural = css(Math.round(bytes * v.alpha), name, 'c');
      return { head: `${natural}/* `, tail: ' */\n', minFill: 1, natural };
    },
    fill: { alpha: ALPHA.css, phrase: (f) => f.natural.replace(/[*/]/g, ' ') || 'style ', lineLen: 76 },
  }).buf;
}

export function jsObject(name, bytes) {
  return sizedObject({
    name,
    size: bytes,
    gzip: Math.round(bytes * RATIO.js),
    tolerance: 0.1,
    good: 0.03,
    variants: ALPHAS.map((alpha) => ({ alpha })),
    frame: (v) => {
      const natural = js(Math.round(bytes * v.alpha), name, name.replace(/^.*\//, ''));
      return { head: `${natural}/* `, tail: ' */\n', minFill: 1, natural };
    },
    fill: { alpha: ALPHA.css, phrase: (f) => f.natural.replace(/[*/]/g, ' ') || 'script ', lineLen: 76 },
  }).buf;
}

/** A page: `body` (HTML, already marked up) then a comment filling it to `bytes`. */
export function htmlPage(name, bytes, { title, head = '', body }) {
  const top = `<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>${title}</title>\n${head}</head>\n<body>\n${body}`;
  return sizedObject({
    name,
    size: bytes,
    gzip: Math.round(bytes * RATIO.html),
    tolerance: 0.1,
    good: 0.03,
    variants: ALPHAS.map((alpha) => ({ alpha })),
    frame: (v) => {
      const extra = prose(Math.max(0, Math.round((bytes - top.length) * v.alpha) - 20), name);
      const text = extra ? `<p>${extra.trim().replace(/\n\n/g, '</p>\n<p>')}</p>\n` : '';
      return { head: `${top}${text}<!--\n`, tail: '\n-->\n</body>\n</html>\n', minFill: 1 };
    },
    fill: { alpha: ALPHA.html, phrase: 'satbench reference site ', lineLen: 76 },
  }).buf;
}

/** Pixel size for a JPEG of `bytes` at about `bpp` bytes per pixel, 4:3. */
export function jpegDims(bytes, bpp = 0.5) {
  const px = Math.max(256, (bytes - 700) / bpp);
  const w = Math.max(16, Math.round(Math.sqrt((px * 4) / 3) / 8) * 8);
  const h = Math.max(16, Math.round((w * 3) / 4 / 8) * 8);
  return [w, h];
}

/** A JPEG of exactly `bytes`: the scan takes ~98 %, random COM bytes the rest (so it does not compress). */
export function jpegObject(name, bytes, [width, height] = jpegDims(bytes)) {
  const j = jpegOfSize({ width, height, bytes, seed: name, reserve: 0.02, minReserve: 16 });
  return {
    buf: j.make(filler(j.fillLen, j.fillLen, { seed: `${name}|com`, alpha: ALPHA.binary, phrase: '' })),
    width,
    height,
  };
}
