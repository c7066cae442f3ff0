// The harness is layered: a module imports only from its own folder or from
// a lower layer, never with a dynamic import(), and no import cycle exists.
// docs/architecture.md draws the same layers.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from '../../harness/core/sys.js';

// Lower number = lower layer. Folders of the same rank do not import each
// other. reports/html.js assembles the page from every kind, so it sits above
// the kinds; the rest of reports/ are helpers below them.
export const LAYERS = [
  ['harness/core/', 0],
  ['harness/testbed/', 1],
  ['harness/results/', 1],
  ['harness/servers/', 2],
  ['harness/pep/', 2],
  ['harness/browser/', 2],
  ['reports/html.js', 3.5],
  ['reports/', 2],
  ['harness/kinds/', 3],
  ['harness/analysis/', 4],
  ['harness/campaign/', 5],
  ['harness/pageload/', 6],
  ['harness/bulk/', 6],
  ['harness/cli/', 7],
  ['harness/cli.js', 8],
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
  walk('reports');
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
    assert.equal(layerOf('reports/html.js').rank, 3.5);
    assert.equal(layerOf('reports/client.js').rank, 2);
    assert.equal(layerOf('harness/campaign/loop.js').name, 'harness/campaign/');
  });

  it('has no import cycle', () => {
    assert.equal(findCycle(graph().g), null);
  });

  it('uses no dynamic import() (it would hide a cycle)', () => {
    assert.deepEqual(graph().dynamic, []);
  });

  it('every module lives in a layer and imports only its own folder or lower layers', () => {
    const bad = [];
    for (const [from, tos] of Object.entries(graph().g)) {
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
    assert.deepEqual(bad, []);
  });
});
