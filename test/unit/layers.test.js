// The harness is layered: a module imports only from its own folder or from
// a lower layer, never with a dynamic import(), and no import cycle exists.
// docs/architecture.md draws the same layers, with the same ranks (checked below).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from '../../harness/core/sys.js';

// Lower number = lower layer; ranks are whole numbers. Folders of the same
// rank do not import each other. The report (all of the HTML) sits above
// the kinds it shows and the analysis it presents.
export const LAYERS = [
  ['harness/core/', 0],
  ['harness/testbed/', 1],
  ['harness/results/', 1],
  ['harness/archive/', 1],
  ['harness/servers/', 2],
  ['harness/pep/', 2],
  ['harness/browser/', 2],
  ['harness/kinds/', 3],
  ['harness/analysis/', 4],
  ['harness/report/', 5],
  ['harness/campaign/', 6],
  ['harness/pageload/', 7],
  ['harness/bulk/', 7],
  ['harness/cli/', 8],
  ['harness/cli.js', 9],
];

// Pure: the layer of a repository-relative path, or null outside the harness.
export function layerOf(rel) {
  const hit = LAYERS.find(([prefix]) => rel === prefix || (prefix.endsWith('/') && rel.startsWith(prefix)));
  return hit ? { name: hit[0], rank: hit[1] } : null;
}

// Pure: the relative static imports of a module's source, and whether it
// has a dynamic import() of anything but a package by name (a package loaded
// on demand, like Lighthouse, cannot hide a cycle of ours).
export function importsOf(source) {
  const stat = [...source.matchAll(/^\s*(?:import|export)\s[^;]*?\bfrom\s+['"](\.{1,2}\/[^'"]+)['"]/gms)].map(
    (m) => m[1],
  );
  const bare = [...source.matchAll(/^\s*import\s+['"](\.{1,2}\/[^'"]+)['"]/gm)].map((m) => m[1]);
  return { imports: [...stat, ...bare], dynamic: /\bimport\s*\(\s*(?!['"][^.'"][^'"]*['"]\s*\))/.test(source) };
}

// Pure: the first cycle in a graph {node: [node…]}, as a path, or null.
export function findCycle(graph) {
  const state = new Map(); // 1 = on the stack, 2 = done
  const stack = [];
  const visit = (n) => {
    state.set(n, 1);
    stack.push(n);
    for (const m of graph[n] ?? []) {
      if (state.get(m) === 1) return [...stack.slice(stack.indexOf(m)), m];
      if (!state.has(m)) {
        const c = visit(m);
        if (c) return c;
      }
    }
    stack.pop();
    state.set(n, 2);
    return null;
  };
  for (const n of Object.keys(graph)) {
    if (!state.has(n)) {
      const c = visit(n);
      if (c) return c;
    }
  }
  return null;
}

// Pure: what breaks the layers in a graph {module: [imported module…]}:
// a harness module in no layer, or an import of another folder that is not
// lower.
export function layerViolations(g) {
  const bad = [];
  for (const [from, tos] of Object.entries(g)) {
    const a = layerOf(from);
    if (!a) {
      if (from.startsWith('harness/')) bad.push(`${from} is in no layer`);
      continue;
    }
    for (const to of tos) {
      const b = layerOf(to);
      if (!b) continue; // outside the harness (sites/, node_modules)
      if (b.name !== a.name && b.rank >= a.rank) bad.push(`${from} → ${to}`);
    }
  }
  return bad;
}

// Pure: the layers docs/architecture.md lists under "Layers of `harness/`",
// as [path, rank] like LAYERS: each item's `names` before its "(rank):",
// under harness/. Only a whole rank counts (an item with another is missed).
export function documentedLayers(markdown) {
  const section = markdown.split(/^## /m).find((s) => s.startsWith('Layers of `harness/`')) ?? '';
  const out = [];
  for (const [, head, rank] of section.matchAll(/^- (.*?) \((\d+)\):/gm))
    for (const [, name] of head.matchAll(/`([^`]+)`/g)) out.push([`harness/${name}`, Number(rank)]);
  return out;
}

function moduleFiles() {
  const out = [];
  const walk = (dir) => {
    for (const e of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
      const rel = path.join(dir, e.name);
      if (e.isDirectory()) walk(rel);
      else if (/\.(js|mjs)$/.test(e.name)) out.push(rel);
    }
  };
  walk('harness');
  return out;
}

function graph() {
  const g = {};
  const dynamic = [];
  for (const rel of moduleFiles()) {
    const { imports, dynamic: dyn } = importsOf(fs.readFileSync(path.join(ROOT, rel), 'utf8'));
    if (dyn) dynamic.push(rel);
    g[rel] = imports.map((spec) => path.relative(ROOT, path.resolve(ROOT, path.dirname(rel), spec)));
  }
  return { g, dynamic };
}

describe('harness layers', () => {
  it('finds a cycle and the imports of a module (the checks below can fail)', () => {
    assert.deepEqual(findCycle({ a: ['b'], b: ['c'], c: ['a'] }), ['a', 'b', 'c', 'a']);
    assert.equal(findCycle({ a: ['b'], b: ['c'], c: [] }), null);
    const src =
      "import x from './x.js';\nimport {\n  y,\n} from '../y.js';\nexport { z } from './z.js';\nimport 'node:fs';\nconst m = await import('./m.js');";
    assert.equal(importsOf("const l = await import('lighthouse');").dynamic, false);
    assert.equal(importsOf('const l = await import(file);').dynamic, true);
    assert.deepEqual(importsOf(src), { imports: ['./x.js', '../y.js', './z.js'], dynamic: true });
    assert.equal(layerOf('harness/report/html.js').rank, 5);
    assert.equal(layerOf('harness/report/pageload/medians.js').name, 'harness/report/');
    assert.ok(
      LAYERS.every(([, rank]) => Number.isInteger(rank)),
      'whole ranks only',
    );
    assert.equal(layerOf('harness/campaign/loop.js').name, 'harness/campaign/');
  });

  it('catches an upward import and a module in no layer (the check below can fail)', () => {
    const g = {
      'harness/core/units.js': ['harness/cli/args.js', 'harness/core/errors.js'],
      'harness/campaign/loop.js': ['harness/pageload/run.js', 'harness/kinds/index.js', 'sites/x.js'],
      'harness/pageload/run.js': ['harness/bulk/run.js', 'harness/campaign/loop.js'],
      'harness/pep/chain.js': ['harness/servers/origin.js', 'harness/testbed/testbed.js'],
      'harness/kinds/bulk.js': ['harness/report/html.js', 'harness/kinds/generic.js'],
      'harness/analysis/compare.js': ['harness/report/render.js', 'harness/core/stats.js'],
      'harness/report/html.js': ['harness/kinds/index.js', 'harness/analysis/summary.js'],
      'harness/elsewhere/x.js': [],
    };
    assert.deepEqual(layerViolations(g), [
      'harness/core/units.js → harness/cli/args.js',
      'harness/campaign/loop.js → harness/pageload/run.js',
      'harness/pageload/run.js → harness/bulk/run.js',
      'harness/pep/chain.js → harness/servers/origin.js',
      'harness/kinds/bulk.js → harness/report/html.js',
      'harness/analysis/compare.js → harness/report/render.js',
      'harness/elsewhere/x.js is in no layer',
    ]);
  });

  it('docs/architecture.md gives every layer the rank LAYERS gives it', () => {
    const doc = documentedLayers(fs.readFileSync(path.join(ROOT, 'docs/architecture.md'), 'utf8'));
    const sorted = (l) => [...l].sort(([a], [b]) => a.localeCompare(b));
    assert.deepEqual(sorted(doc), sorted(LAYERS));
    assert.deepEqual(
      documentedLayers(
        '## Layers of `harness/`\n\n- `cli/` (7): x (`args.js`)\n- `a/` and `b/c.js` (2): y\n- `f/` (3.5): f\n## Other\n- `z/` (1): z',
      ),
      [
        ['harness/cli/', 7],
        ['harness/a/', 2],
        ['harness/b/c.js', 2],
      ],
    );
  });

  it('has no import cycle', () => {
    assert.equal(findCycle(graph().g), null);
  });

  it('uses no dynamic import() (it would hide a cycle)', () => {
    assert.deepEqual(graph().dynamic, []);
  });

  it('every module lives in a layer and imports only its own folder or lower layers', () => {
    assert.deepEqual(layerViolations(graph().g), []);
  });
});
