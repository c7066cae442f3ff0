#!/usr/bin/env node
// How big a results folder's report is (issue 28: "the report stays one
// file that opens offline"): as `satbench report` builds it (the median
// runs' waterfalls and frames inlined, the other runs' within the budget,
// the rest linked), without the runs' HARs and filmstrips (the report as
// it was before them), and with every run's waterfall and frames inlined.
// Nothing is written into DIR.
// Usage: node benchmarks/report-size.js DIR [--json]
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { renderReport } from '../harness/report/html.js';
import { readResults, readSummary, RESULTS, SUMMARY } from '../harness/results/store.js';
import { summarize } from '../harness/analysis/summary.js';

const { values: o, positionals } = parseArgs({ options: { json: { type: 'boolean' } }, allowPositionals: true });
const dir = positionals[0];
if (!dir || !fs.existsSync(path.join(dir, RESULTS))) {
  console.error(`usage: node benchmarks/report-size.js DIR (a results folder with ${RESULTS})`);
  process.exit(2);
}
const records = readResults(path.join(dir, RESULTS));
const sf = path.join(dir, SUMMARY);
const summary = fs.existsSync(sf) ? readSummary(sf) : { meta: {}, groups: summarize(records) };

const bytes = (html) => Buffer.byteLength(html);
const withoutFiles = records.map(({ har: _h, visual: _v, ...r }) => r);
const sizes = {
  runs: records.length,
  with_har: records.filter((r) => typeof r.har === 'string').length,
  with_frames: records.filter((r) => typeof r.visual?.frames === 'string').length,
  before_bytes: bytes(renderReport(summary, { records: withoutFiles })),
  built_bytes: bytes(renderReport(summary, { records, dir })),
  all_inlined_bytes: bytes(renderReport(summary, { records, dir, inlineBudget: Infinity })),
};
if (o.json) console.log(JSON.stringify(sizes, null, 2));
else {
  const mb = (b) => `${(b / 1e6).toFixed(2)} MB`;
  console.log(`${dir}: ${sizes.runs} runs, ${sizes.with_har} with a HAR, ${sizes.with_frames} with a filmstrip`);
  console.log(`  before (no HAR or filmstrip read):          ${mb(sizes.before_bytes)}`);
  console.log(`  as built (within the inline budget):        ${mb(sizes.built_bytes)}`);
  console.log(`  every run's waterfall and frames inlined:   ${mb(sizes.all_inlined_bytes)}`);
}
