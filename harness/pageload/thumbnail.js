// A filmstrip frame made small. Chromium traces its screenshots at about
// 500 × 375 px for the default 800 × 600 viewport, 30–40 KB each as JPEG;
// a filmstrip shows them side by side at a quarter of that area, which
// keeps a run's frames near 10 KB each for the report to inline. jpeg-js
// (speedline-core's and Lighthouse's decoder) writes the JPEG.
import jpeg from 'jpeg-js';

export const THUMBNAIL = { maxWidth: 250, quality: 70 };

/**
 * Pure: RGBA pixels ({width, height, data}) reduced by a whole `factor`,
 * each output pixel the mean of its factor × factor block (the last partial
 * row and column of blocks dropped).
 */
export function shrink({ width, height, data }, factor) {
  const w = Math.floor(width / factor);
  const h = Math.floor(height / factor);
  const out = Buffer.alloc(w * h * 4);
  const area = factor * factor;
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++)
      for (let c = 0; c < 4; c++) {
        let sum = 0;
        for (let dy = 0; dy < factor; dy++)
          for (let dx = 0; dx < factor; dx++) sum += data[((y * factor + dy) * width + x * factor + dx) * 4 + c];
        out[(y * w + x) * 4 + c] = Math.round(sum / area);
      }
  return { width: w, height: h, data: out };
}

/** Pure: the JPEG of `pixels` (RGBA) at most `maxWidth` wide, reduced by a whole factor. */
export function thumbnail(pixels, { maxWidth, quality } = THUMBNAIL) {
  const factor = Math.max(1, Math.ceil(pixels.width / maxWidth));
  return jpeg.encode(factor === 1 ? pixels : shrink(pixels, factor), quality).data;
}
