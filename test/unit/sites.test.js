import assert from 'node:assert/strict';
import { mkdtemp, mkdir, rm, readFile, readdir, stat, unlink, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import os from 'node:os';
import path from 'node:path';
import jpeg from 'jpeg-js';
import { listSites, ensureSite, siteManifest, siteFiles, stampPath } from '../../sites/generate.js';
import manifest from '../../reference/kepler-manifest.json' with { type: 'json' };
import { readJpegInfo } from '../../sites/jpeg.js';
import { readGifInfo, decodeGifIndices } from '../../sites/gif.js';

async function tree(dir, prefix = '') {
  const out = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const rel = prefix ? `${prefix}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...(await tree(path.join(dir, e.name), rel)));
    else out.push(rel);
  }
  return out.sort();
}

async function treeHash(dir) {
  const h = createHash('sha256');
  for (const f of await tree(dir))
    h.update(f)
      .update('\0')
      .update(await readFile(path.join(dir, f)))
      .update('\0');
  return h.digest('hex');
}

/** Tags that load something, in document order, comments removed. */
function referencedTags(html) {
  const body = html.replace(/<!--[\s\S]*?-->/g, '');
  const tags = [];
  for (const m of body.matchAll(/<(link|iframe|img|script)\b([^>]*)>/gi)) {
    const attrs = {};
    for (const a of m[2].matchAll(/([a-z-]+)="([^"]*)"/gi)) attrs[a[1].toLowerCase()] = a[2];
    tags.push({ element: m[1].toLowerCase(), attrs, url: attrs.src ?? attrs.href });
  }
  return tags;
}

const gz = (buf) => gzipSync(buf, { level: 9 }).length;

describe('sites', function () {
  this.timeout(60000);
  let tmp;
  before(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'satbench-sites-'));
  });
  after(async () => {
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it('lists the sites and rejects an unknown one with the known names', async () => {
    assert.deepEqual(listSites(), ['kepler', 'deutschmann-small', 'deutschmann-large', 'kuhn-a', 'kuhn-b']);
    assert.throws(
      () => siteManifest('nope'),
      /unknown site "nope".*kepler, deutschmann-small, deutschmann-large, kuhn-a, kuhn-b/,
    );
    await assert.rejects(ensureSite('nope', { outDir: path.join(tmp, 'nope') }), /known sites: kepler/);
  });

  it('will not replace a directory that is not a generated site', async () => {
    const dir = path.join(tmp, 'precious');
    await mkdir(dir);
    await writeFile(path.join(dir, 'keep.txt'), 'mine');
    await assert.rejects(ensureSite('kuhn-b', { outDir: dir }), /refusing to replace/);
    assert.equal(await readFile(path.join(dir, 'keep.txt'), 'utf8'), 'mine');
  });

  describe('kepler', () => {
    let dir;
    before(async () => {
      dir = await ensureSite('kepler', { outDir: path.join(tmp, 'kepler') });
    });

    it('has exactly the 75 objects of the original, the stamp outside the tree', async () => {
      const files = await tree(dir);
      assert.equal(files.length, manifest.objects_total_including_document);
      assert.equal(files.length, 75);
      assert.deepEqual(files, ['index.html', ...manifest.subresources.map((s) => s.path)].sort());
      assert.ok(existsSync(stampPath(dir)));
      assert.ok(!stampPath(dir).startsWith(dir + path.sep));
      assert.deepEqual(
        siteManifest('kepler'),
        manifest.subresources.map(({ path: p, bytes, element }) => ({ path: p, bytes, element })),
      );
    });

    it('index.html references the objects in the original page order, with their elements and attributes', async () => {
      const html = await readFile(path.join(dir, 'index.html'), 'latin1');
      assert.match(html, /charset=iso-8859-1/i);
      assert.match(html, new RegExp(`<table[^>]* width="${manifest.document.table_width}"`));
      const tags = referencedTags(html);
      assert.equal(tags.length, 74);
      assert.deepEqual(
        tags.map((t) => t.url),
        manifest.subresources.map((s) => s.path),
      );
      assert.deepEqual(
        tags.map((t) => t.element),
        manifest.subresources.map((s) => s.element),
      );
      const counts = tags.reduce((c, t) => ({ ...c, [t.element]: (c[t.element] ?? 0) + 1 }), {});
      assert.deepEqual(counts, { link: 9, iframe: 33, img: 32 });
      tags.forEach((t, i) => {
        const s = manifest.subresources[i];
        if (t.element === 'link') assert.equal(t.attrs.rel, 'stylesheet');
        assert.equal(t.attrs.width, s.attr_width, `${s.path} width`);
        assert.equal(t.attrs.height, s.attr_height, `${s.path} height`);
        assert.equal(t.attrs.class, s.attr_class, `${s.path} class`);
      });
      // visible text for First Contentful Paint
      assert.match(html, /<h1>[^<]+<\/h1>/);
    });

    it('every object has the exact size and gzip -9 size within 5 % of the original', async () => {
      const all = [{ ...manifest.document }, ...manifest.subresources];
      let total = 0;
      for (const s of all) {
        const buf = await readFile(path.join(dir, s.path));
        assert.equal(buf.length, s.bytes, `${s.path} size`);
        total += buf.length;
        const dev = (gz(buf) - s.gzip_bytes) / s.gzip_bytes;
        assert.ok(Math.abs(dev) <= 0.05, `${s.path}: gzip ${gz(buf)} vs ${s.gzip_bytes}`);
      }
      assert.equal(total, manifest.bytes_total_including_document);
    });

    it('images are JPEGs and GIFs of the listed pixel sizes, and decode', async () => {
      for (const s of manifest.subresources.filter((x) => x.element === 'img')) {
        const buf = await readFile(path.join(dir, s.path));
        if (s.path.endsWith('.jpg')) {
          const info = readJpegInfo(buf);
          assert.deepEqual([info.width, info.height], s.pixels, s.path);
          assert.equal(info.progressive, s.path.endsWith('_45.jpg'), s.path); // the photos, as the original's
          assert.equal(info.baseline, !info.progressive);
          assert.equal(info.components, 3);
        } else {
          const info = readGifInfo(buf);
          assert.deepEqual([info.width, info.height], s.pixels, s.path);
          assert.deepEqual([info.image.width, info.image.height], s.pixels, s.path);
          assert.equal(decodeGifIndices(buf).length, s.pixels[0] * s.pixels[1]);
        }
      }
      // a full decode with an independent decoder: every pixel, and a picture that is not flat
      for (const p of ['pic/img1_45.jpg', 'pic/img2_45.jpg', 'pic/p020x015n001.jpg', 'pic/p120x050n000.jpg']) {
        const img = jpeg.decode(await readFile(path.join(dir, p)), { useTArray: true });
        const s = manifest.subresources.find((x) => x.path === p);
        assert.deepEqual([img.width, img.height], s.pixels);
        assert.equal(img.data.length, s.pixels[0] * s.pixels[1] * 4);
        const reds = new Set();
        for (let i = 0; i < img.data.length; i += 4) reds.add(img.data[i]);
        assert.ok(reds.size > 8, `${p} is a picture`);
      }
    });

    it('text objects are well formed: closed comments, balanced rules', async () => {
      for (const s of manifest.subresources.filter((x) => x.path.endsWith('.css'))) {
        const t = await readFile(path.join(dir, s.path), 'latin1');
        assert.equal(t.split('/*').length, t.split('*/').length, s.path);
        const rules = t.replace(/\/\*[\s\S]*?\*\//g, '');
        assert.equal(rules.split('{').length, rules.split('}').length, s.path);
        assert.match(rules, /\{[^}]*:[^}]*\}/, `${s.path} has a declaration`);
      }
      const t = await readFile(path.join(dir, 'index.html'), 'latin1');
      assert.equal(t.split('<!--').length, 2);
      assert.equal(t.split('-->').length, 2);
      assert.ok(t.indexOf('<!--') < t.indexOf('-->'));
      assert.match(t, /<\/html>\n$/);
      // the raw frame is no HTML document, as the original's (its layout: kepler-facts.test.js)
      const bin = await readFile(path.join(dir, 'noncompressible/bin.html'), 'latin1');
      assert.match(bin, /^[a-z ]+\r\n/);
      assert.doesNotMatch(bin, /<!doctype|<html|<!--/i);
    });

    it('is byte-identical when generated again, and not regenerated when up to date', async () => {
      const again = await ensureSite('kepler', { outDir: path.join(tmp, 'kepler2') });
      assert.equal(await treeHash(again), await treeHash(dir));
      const before = (await stat(path.join(dir, 'index.html'))).mtimeMs;
      assert.equal(await ensureSite('kepler', { outDir: dir }), dir);
      assert.equal((await stat(path.join(dir, 'index.html'))).mtimeMs, before);
      // a missing object makes it regenerate, to the same bytes
      await unlink(path.join(again, 'pic/img1_45.jpg'));
      await ensureSite('kepler', { outDir: again });
      assert.equal(await treeHash(again), await treeHash(dir));
    });
  });

  const OTHERS = {
    'deutschmann-small': { objects: 34, total: 1400000, min: 4000, max: 400000 },
    'deutschmann-large': { objects: 34, total: 10000000, min: 4000, max: 4000000 },
    'kuhn-a': { objects: 2, total: 5302000, min: 2000, max: 5300000 },
    'kuhn-b': { objects: 1, total: 11000, min: 11000, max: 11000 },
  };
  for (const [name, want] of Object.entries(OTHERS)) {
    it(`${name}: ${want.objects} objects, ${want.total} bytes, page references them all`, async () => {
      const dir = await ensureSite(name, { outDir: path.join(tmp, name) });
      const files = await tree(dir);
      assert.equal(files.length, want.objects);
      assert.deepEqual(
        files,
        siteFiles(name)
          .map((f) => f.path)
          .sort(),
      );
      const sizes = [];
      for (const f of siteFiles(name)) {
        const buf = await readFile(path.join(dir, f.path));
        assert.equal(buf.length, f.bytes, f.path);
        sizes.push(buf.length);
        if (f.path.endsWith('.jpg')) {
          const info = readJpegInfo(buf);
          assert.ok(info.width >= 16 && info.height >= 16);
        }
      }
      assert.equal(
        sizes.reduce((a, b) => a + b, 0),
        want.total,
      );
      assert.equal(Math.min(...sizes), want.min);
      assert.equal(Math.max(...sizes), want.max);
      const html = await readFile(path.join(dir, 'index.html'), 'utf8');
      assert.deepEqual(
        referencedTags(html).map((t) => t.url),
        siteManifest(name).map((o) => o.path),
      );
      assert.deepEqual(
        referencedTags(html).map((t) => t.element),
        siteManifest(name).map((o) => o.element),
      );
      assert.match(html, /<h1>[^<]+<\/h1>/);
      if (name.startsWith('deutschmann')) {
        const kinds = siteManifest(name).reduce((c, o) => ({ ...c, [o.element]: (c[o.element] ?? 0) + 1 }), {});
        assert.deepEqual(kinds, { link: 7, img: 19, script: 7 });
        // log-spaced: sorted sizes grow by a bounded factor from one to the next
        const sorted = [...sizes].sort((a, b) => a - b);
        for (let i = 1; i < sorted.length; i++)
          assert.ok(sorted[i] / sorted[i - 1] < 2.2, `${sorted[i - 1]} → ${sorted[i]}`);
      }
    });
  }
});
