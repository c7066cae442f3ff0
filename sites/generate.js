#!/usr/bin/env node
// The reference sites, generated deterministically (seeded, no Math.random):
// byte-identical output on every run. See sites/README.md.
//
//   node sites/generate.js NAME... [--out DIR] [--force]
//
// API:
//   listSites()                       → site names
//   siteManifest(name)                → [{path, bytes, element}] the page references, in page order (index.html not included)
//   ensureSite(name, {outDir, force}) → absolute path of the generated site (default sites/build/NAME/),
//                                       regenerated only when missing, incomplete or from another generator version
import { createHash } from 'node:crypto';
import { readFileSync, existsSync, statSync } from 'node:fs';
import { mkdir, writeFile, rm, rename, readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { buildKepler, keplerPlan } from './kepler.js';
import manifest from '../reference/kepler-manifest.json' with { type: 'json' };
import { buildDeutschmann, deutschmannPlan } from './deutschmann.js';
import { buildKuhn, kuhnPlan } from './kuhn.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SOURCES = [
  'generate.js',
  'fill.js',
  'prng.js',
  'jpeg.js',
  'gif.js',
  'text.js',
  'objects.js',
  'raw.js',
  'kepler.js',
  '../reference/kepler-manifest.json',
  '../reference/kepler-content-facts.json',
  'deutschmann.js',
  'kuhn.js',
];

const SITES = {
  kepler: {
    plan: () => ({ index: manifest.document.bytes, objects: keplerPlan() }),
    build: buildKepler,
  },
  'deutschmann-small': {
    plan: () => deutschmannPlan('deutschmann-small'),
    build: () => buildDeutschmann('deutschmann-small'),
  },
  'deutschmann-large': {
    plan: () => deutschmannPlan('deutschmann-large'),
    build: () => buildDeutschmann('deutschmann-large'),
  },
  'kuhn-a': { plan: () => kuhnPlan('kuhn-a'), build: () => buildKuhn('kuhn-a') },
  'kuhn-b': { plan: () => kuhnPlan('kuhn-b'), build: () => buildKuhn('kuhn-b') },
};

let versionCache;
/** Hash of the generator's own sources: any change to them regenerates the sites. */
export function generatorVersion() {
  if (!versionCache) {
    const h = createHash('sha256');
    for (const f of SOURCES)
      h.update(f)
        .update('\0')
        .update(readFileSync(path.join(HERE, f)))
        .update('\0');
    versionCache = h.digest('hex').slice(0, 16);
  }
  return versionCache;
}

export function listSites() {
  return Object.keys(SITES);
}

function site(name) {
  const s = SITES[name];
  if (!s) throw new Error(`unknown site "${name}"; known sites: ${listSites().join(', ')}`);
  return s;
}

/** What the page references, in page order: [{path, bytes, element}] (index.html itself not included). */
export function siteManifest(name) {
  return site(name)
    .plan()
    .objects.map(({ path: p, bytes, element }) => ({ path: p, bytes, element }));
}

/** Every file of the served tree: index.html first, then siteManifest(name). */
export function siteFiles(name) {
  return [{ path: 'index.html', bytes: site(name).plan().index, element: 'document' }, ...siteManifest(name)];
}

export function defaultSiteDir(name) {
  return path.join(HERE, 'build', name);
}

/** The stamp sits beside the served tree, never in it: DIR.stamp.json. */
export function stampPath(dir) {
  return `${path.resolve(dir)}.stamp.json`;
}

async function listTree(dir, prefix = '') {
  const out = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const rel = prefix ? `${prefix}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...(await listTree(path.join(dir, e.name), rel)));
    else out.push(rel);
  }
  return out;
}

async function upToDate(name, dir) {
  try {
    const stamp = JSON.parse(await readFile(stampPath(dir), 'utf8'));
    if (stamp.site !== name || stamp.version !== generatorVersion()) return false;
    const files = siteFiles(name);
    for (const f of files) {
      const p = path.join(dir, f.path);
      if (!existsSync(p) || statSync(p).size !== f.bytes) return false;
    }
    return (await listTree(dir)).length === files.length;
  } catch {
    return false;
  }
}

/** Build a site's objects in memory: [{path, element, buf, …}], index.html first. */
export function buildSite(name) {
  const files = site(name).build();
  const want = siteFiles(name);
  if (files.length !== want.length) throw new Error(`${name}: built ${files.length} objects, planned ${want.length}`);
  files.forEach((f, i) => {
    if (f.path !== want[i].path || f.buf.length !== want[i].bytes) {
      throw new Error(
        `${name}: object ${i} is ${f.path} (${f.buf.length} bytes), planned ${want[i].path} (${want[i].bytes} bytes)`,
      );
    }
  });
  return files;
}

/** Generate a site into outDir (default sites/build/NAME/) unless it is there already; returns its absolute path. */
export async function ensureSite(name, { outDir, force = false } = {}) {
  site(name);
  const dir = path.resolve(outDir ?? defaultSiteDir(name));
  if (!force && (await upToDate(name, dir))) return dir;
  if (existsSync(dir) && !existsSync(stampPath(dir)) && (await readdir(dir)).length > 0) {
    throw new Error(
      `refusing to replace ${dir}: it is not empty and not a generated site (no ${path.basename(stampPath(dir))} beside it)`,
    );
  }
  const files = buildSite(name);
  // Write beside the target and move into place, so a reader never sees half a site.
  const tmp = `${dir}.tmp-${process.pid}-${Date.now()}`;
  await rm(tmp, { recursive: true, force: true });
  for (const f of files) {
    const p = path.join(tmp, f.path);
    await mkdir(path.dirname(p), { recursive: true });
    await writeFile(p, f.buf);
  }
  await rm(stampPath(dir), { force: true });
  await rm(dir, { recursive: true, force: true });
  await mkdir(path.dirname(dir), { recursive: true });
  await rename(tmp, dir);
  const digest = createHash('sha256');
  for (const f of files) digest.update(f.path).update('\0').update(f.buf);
  await writeFile(
    stampPath(dir),
    JSON.stringify(
      {
        site: name,
        version: generatorVersion(),
        objects: files.length,
        bytes: files.reduce((a, f) => a + f.buf.length, 0),
        sha256: digest.digest('hex'),
      },
      null,
      1,
    ) + '\n',
  );
  return dir;
}

async function main(argv) {
  const names = [];
  let out = null,
    force = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--out') out = argv[++i];
    else if (a.startsWith('--out=')) out = a.slice(6);
    else if (a === '--force') force = true;
    else if (a === '--list') {
      console.log(listSites().join('\n'));
      return 0;
    } else if (a === '-h' || a === '--help') ((names.length = 0), (argv.length = 0));
    else if (a === 'all') names.push(...listSites());
    else names.push(a);
  }
  if (!names.length) {
    console.error(
      `usage: node sites/generate.js NAME... [--out DIR] [--force]\n  NAME: ${listSites().join(', ')}, or all\n  --out DIR: write each site to DIR/NAME (default sites/build/NAME)`,
    );
    return 2;
  }
  for (const n of names) site(n);
  for (const n of names) {
    const t = Date.now();
    const dir = await ensureSite(n, { outDir: out ? path.join(out, n) : undefined, force });
    const files = siteFiles(n);
    console.log(
      `${n}: ${dir} (${files.length} objects, ${files.reduce((a, f) => a + f.bytes, 0)} bytes, ${Date.now() - t} ms)`,
    );
  }
  return 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (e) => {
      console.error(e.message);
      process.exitCode = 2;
    },
  );
}
