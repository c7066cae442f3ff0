#!/usr/bin/env node
// npm run bench:import-har-memory — how much memory `satbench import-har`
// takes for a HAR with one large body: for each body size, a HAR whose
// second entry is that many random bytes in base64 (as DevTools saves an
// image or a video) is imported --runs times and the medians printed: the
// command's peak resident memory, that peak less the peak of a HAR without
// a large body, as a multiple of the body, and the wall time.
// Usage: node benchmarks/import-har-memory.js [--sizes-mb 25,50,100] [--runs 3] [--json]
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { median, round } from '../harness/core/stats.js';
import { harEntry, harLog, harPage } from '../test/har-entry.js';

const { values: o } = parseArgs({
  options: {
    'sizes-mb': { type: 'string', default: '25,50,100' },
    runs: { type: 'string', default: '3' },
    json: { type: 'boolean' },
  },
});
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-har-memory-'));
const cli = path.join(import.meta.dirname, '..', 'harness', 'cli.js');
// the child's own peak, as the kernel counts it, printed as it exits
const PEAK = `data:text/javascript,process.on('exit',()=>process.stderr.write('peak-kb '+process.resourceUsage().maxRSS+'\\n'))`;

function writeHar(file, bodyBytes) {
  const entry = (url, content) => harEntry(url, { headers: [['content-type', content.mimeType]], content });
  const entries = [entry('https://big.test/', { size: 11, mimeType: 'text/html', text: '<p>page</p>' })];
  if (bodyBytes) {
    const text = crypto.randomBytes(bodyBytes).toString('base64');
    entries.push(entry('https://big.test/video', { size: bodyBytes, mimeType: 'video/mp4', text, encoding: 'base64' }));
  }
  fs.writeFileSync(file, JSON.stringify(harLog(entries, [harPage('page_1', 'https://big.test/')])));
}

function importOnce(har, n) {
  const out = path.join(dir, `out-${n}`);
  const started = process.hrtime.bigint();
  const r = spawnSync(process.execPath, ['--import', PEAK, cli, 'import-har', har, '--out', out], { encoding: 'utf8' });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  fs.rmSync(out, { recursive: true, force: true });
  const peak = /peak-kb (\d+)/.exec(r.stderr);
  if (r.status !== 0 || !peak) throw new Error(`import-har ${har} failed: ${r.stderr}`);
  return { peakMb: Number(peak[1]) / 1024, ms };
}

let n = 0;
const measure = (har) => {
  const runs = Array.from({ length: Number(o.runs) }, () => importOnce(har, n++));
  return { peakMb: median(runs.map((r) => r.peakMb)), ms: median(runs.map((r) => r.ms)) };
};
try {
  const small = path.join(dir, 'small.har');
  writeHar(small, 0);
  const base = measure(small);
  const rows = [];
  for (const mb of o['sizes-mb'].split(',').map(Number)) {
    const har = path.join(dir, `body-${mb}.har`);
    writeHar(har, mb * 1024 * 1024);
    const m = measure(har);
    fs.rmSync(har);
    rows.push({
      body_mb: mb,
      peak_mb: round(m.peakMb, 0),
      times_body: round((m.peakMb - base.peakMb) / mb, 2),
      ms: round(m.ms, 0),
    });
  }
  const result = { runs: Number(o.runs), baseline_peak_mb: round(base.peakMb, 0), sizes: rows };
  if (o.json) process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  else {
    console.log(
      `import-har: peak resident memory, medians of ${o.runs} runs (without a large body: ${result.baseline_peak_mb} MB)`,
    );
    console.log('  body MB   peak MB   (peak - without) / body   time ms');
    for (const r of rows)
      console.log(
        `  ${String(r.body_mb).padStart(7)}   ${String(r.peak_mb).padStart(7)}   ${String(r.times_body).padStart(23)}   ${String(r.ms).padStart(7)}`,
      );
  }
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
