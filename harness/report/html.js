// The report: one self-contained HTML file (Chart.js, the data, the styles
// and the script all inlined; a Content-Security-Policy that forbids any
// network use when it is opened). buildReport() turns a summary and its run
// records into a plain model (pure); renderReport() turns the model into
// HTML, escaping every string that comes from input; writeReport() is the
// I/O. The page is assembled here: each kind of record (harness/kinds/)
// names its part (parts.js: sections, runs, failures, chart data); what
// every report has (headline, warnings, failures, environment) is this file's.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { DEFAULT_KIND, kindOf, kinds, keyOf } from '../kinds/index.js';
import { partOf } from './parts.js';
import { OTHER_RESULTS } from './median-table.js';
import { h, escapeHtml, jsonForScript, inlineScript } from './render.js';
import { loadReference } from './paper.js';
import { runFiles } from './run-files.js';
import { replaceFile } from '../results/store.js';
import { campaignSettings } from '../results/meta.js';

export { escapeHtml, jsonForScript, inlineScript };

const HERE = path.dirname(fileURLToPath(import.meta.url));

/**
 * Pure: the report's parts, one per registered kind and one ("other") for
 * records of unknown kinds. A part is shown when it has groups; the default
 * kind's (page loads) also when no registered kind has any, so that an
 * empty report says there is nothing.
 */
function buildParts(allGroups, ctx) {
  const parts = kinds().map((kind) => {
    const groups = allGroups.filter((g) => kindOf(g) === kind);
    const report = partOf(kind);
    return { name: kind.name, report, ...report.build(groups, { ...ctx, kind }) };
  });
  const unknown = allGroups.filter((g) => kindOf(g).unknown);
  parts.push({ name: 'other', report: OTHER_RESULTS, ...OTHER_RESULTS.build(unknown, ctx) });
  const anyKnown = parts.some((p) => p.report !== OTHER_RESULTS && p.groups.length);
  for (const p of parts) p.shown = p.groups.length > 0 || (p.name === DEFAULT_KIND.name && !anyKnown);
  return parts;
}

// "no distributions, p-values or per-run records": what the shown parts
// lose without results.jsonl.
const listed = (items) => (items.length > 1 ? `${items.slice(0, -1).join(', ')} or ${items.at(-1)}` : items[0]);

/**
 * The report's content as plain data. `records` (results.jsonl, in file
 * order) are optional: without them there are no distributions, p-values,
 * per-run rows or Lighthouse audits. `files` reads the files the records
 * name in their results folder (run-files.js; null: none is read). The model has every part as `parts`
 * and by its name (model.pageload, model.bulk, model.other).
 */
export function buildReport({ summary, records = null, reference = null, files = null }) {
  const meta = summary.meta ?? {};
  const allGroups = summary.groups ?? [];
  const byKey = new Map(); // group key → [{line in results.jsonl, record}]
  (records ?? []).forEach((record, i) => {
    const key = keyOf(record);
    if (!byKey.has(key)) byKey.set(key, []);
    byKey.get(key).push({ line: i + 1, record });
  });
  const parts = buildParts(allGroups, { kindOf, byKey, matrix: meta.matrix ?? {}, records, reference, meta, files });
  const shown = parts.filter((p) => p.shown);

  const failures = parts
    .flatMap((p) => p.report.failures(p))
    .map((f) => ({ ...f, error: f.error ?? '(no reason recorded)' }));
  const reasons = new Map();
  for (const f of failures) {
    const reason = String(f.error).slice(0, 160);
    reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
  }

  const warnings = parts.flatMap((p) => p.report.warnings?.(p) ?? []);
  if (!records) {
    const lost = [...shown.flatMap((p) => p.report.withoutRecords ?? []), 'per-run records'];
    warnings.push(`Built from summary.json alone: no ${listed(lost)} (results.jsonl was not available).`);
  }
  if (meta.shard)
    warnings.push(
      `This is shard ${meta.shard.index}/${meta.shard.count} of the matrix; \`satbench merge\` joins the shards.`,
    );
  for (const w of meta.warnings ?? []) warnings.push(String(w));
  const runsTotal = allGroups.reduce((a, g) => a + (g.runs ?? 0), 0);
  const failedTotal = allGroups.reduce((a, g) => a + (g.failed ?? 0), 0);

  return {
    meta,
    parts,
    ...Object.fromEntries(parts.map((p) => [p.name, p])),
    failures,
    reasons: [...reasons.entries()].sort((a, b) => b[1] - a[1]),
    warnings,
    hasRecords: Boolean(records),
    totals: { scenarios: allGroups.length, runs: runsTotal, failed: failedTotal },
  };
}

// ---------------------------------------------------------------- rendering

// "Page loads in Chromium and bulk downloads over emulated satellite links,
// with and without PEPs. Medians in ms over …": the shown parts' subjects,
// settings, and their unit if they share one.
function lead(model) {
  const leads = model.parts.filter((p) => p.shown && p.report.lead).map((p) => p.report.lead);
  const subjects = leads.map((l) => l.subject).join(' and ') || 'results';
  const settings = leads.filter((l) => l.setting).map((l) => `, ${l.setting}`);
  const units = new Set(leads.map((l) => l.unit));
  const unit = units.size === 1 && leads[0]?.unit ? ` in ${leads[0].unit}` : '';
  return `${subjects[0].toUpperCase()}${subjects.slice(1)} over emulated satellite links${settings.join('')}. Medians${unit} over the successful runs of each scenario, with a seeded bootstrap 95 % interval; generated ${h(model.meta.generated ?? 'at an unknown time')}.`;
}

function renderFailures(model) {
  if (!model.failures.length) return '<p>No failed runs.</p>';
  return `<p>${model.failures.length} failed run(s). Failed runs are counted, never dropped: their metrics are left out of the statistics.</p>
<table><thead><tr><th>runs</th><th>reason</th></tr></thead><tbody>
${model.reasons.map(([reason, n]) => `<tr><td class="num">${n}</td><td>${h(reason)}</td></tr>`).join('\n')}
</tbody></table>
<details><summary>every failed run</summary><table><thead><tr><th>scenario</th><th>run</th><th>reason</th></tr></thead><tbody>
${model.failures.map((f) => `<tr><td>${h(f.label)}</td><td class="num">${model.hasRecords ? `<a href="#${h(f.anchor)}">${h(f.run)}</a>` : h(f.run)}</td><td class="failed">${h(f.error)}</td></tr>`).join('\n')}
</tbody></table></details>`;
}

// What --alt-svc meant for the page loads (sites/origin/README.md).
const ALT_SVC_SHOWN = {
  all: 'on every response (over h3 Chromium requests all images at once)',
  tcp: 'over TCP only (over h3 Chromium keeps at most 6 images in flight)',
};

// Pure: bench's emulation as meta.settings.emulation has it (browser/emulation.js emulationSettings).
export function describeEmulation(e) {
  const cpu = e.cpu_slowdown === 1 ? 'CPU not slowed' : `CPU ${e.cpu_slowdown}× slower (DevTools throttling)`;
  const ua = e.user_agent ? `user agent ${e.user_agent}` : "Chromium's own user agent";
  return `${e.device}: ${e.width}×${e.height} CSS px, pixel ratio ${e.device_scale_factor}${e.touch ? ', touch' : ''}, ${ua}; ${cpu}`;
}

// Pure: the campaign's CPU benchmark (campaign/cpu-benchmark.js) in a line.
export const describeCpuBenchmark = (b) =>
  `${b.score_ms} ms (median of ${b.rounds_ms?.length ?? '?'} rounds of a fixed JavaScript workload in ${b.runtime ?? 'Node.js'} as the runs started; lower is faster)`;

const kvRows = (pairs) =>
  pairs
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `<tr><th>${h(k)}</th><td>${v === null ? '<span class="note">not recorded</span>' : v}</td></tr>`)
    .join('\n');

function renderEnvironment(model) {
  const meta = model.meta;
  const settings = campaignSettings(meta);
  const env = meta.environment ?? {};
  const code = (v) =>
    v === null || v === undefined ? null : `<code>${h(typeof v === 'string' ? v : JSON.stringify(v))}</code>`;
  const libs = env.libraries
    ? Object.entries(env.libraries)
        .map(([k, v]) => `${h(k)} ${h(v ?? '–')}`)
        .join(', ')
    : null;
  const git = env.git
    ? `${code(env.git.commit)}${env.git.dirty ? ' <span class="warn">(uncommitted changes)</span>' : ''}`
    : null;
  const rows = kvRows([
    ['satbench', env.satbench ? h(env.satbench) : null],
    ['git commit', git],
    ['Chromium', env.chromium ? h(`${env.chromium.version ?? '?'} (${env.chromium.path ?? '?'})`) : null],
    ['kernel', env.kernel ? h(env.kernel) : null],
    ['operating system', env.os ? h(env.os) : null],
    ['CPU', env.cpu ? h(`${env.cpu.model} × ${env.cpu.cores}, ${env.cpu.memory_gib} GiB memory`) : null],
    ['CPU benchmark', meta.cpu_benchmark ? h(describeCpuBenchmark(meta.cpu_benchmark)) : undefined],
    ['Node.js', env.node ? h(env.node) : null],
    ['libraries', libs],
    ['link emulation', meta.link !== undefined ? h(meta.link) : null],
    [
      'origin server',
      settings.origin !== undefined
        ? `${h(settings.origin)}${env.origin ? ` · ${h(env.origin.version ?? 'version not recorded')} (${h(env.origin.path)}), for every scenario` : ''}`
        : undefined,
    ],
    ['emulation', settings.emulation ? h(describeEmulation(settings.emulation)) : undefined],
    ['origin Alt-Svc', settings.alt_svc ? h(ALT_SVC_SHOWN[settings.alt_svc] ?? settings.alt_svc) : undefined],
    ['seed', meta.seed !== undefined ? h(meta.seed) : null],
    ['preset', meta.preset !== undefined ? h(meta.preset) : undefined],
    // which parts of the preset's own set-up (ifip2022: the paper's) ran, and why
    ['preset set-up', Array.isArray(meta.preset_setup) ? meta.preset_setup.map((x) => h(x)).join('<br>') : undefined],
    [
      'command line',
      meta.argv ? code(`satbench ${kindOf(meta).command ?? DEFAULT_KIND.command} ${meta.argv.join(' ')}`) : undefined,
    ],
    // every setting of the campaign, as its records carry them (both kinds alike)
    ['settings', Object.keys(settings).length ? code(settings) : undefined],
    ['matrix', meta.matrix ? code(meta.matrix) : null],
    ['shard', meta.shard ? h(`${meta.shard.index}/${meta.shard.count}`) : undefined],
    [
      'merged from',
      meta.merged_from
        ? meta.merged_from
            .map(
              (x) =>
                `${h(x.dir)}${x.shard ? ` (shard ${h(x.shard.index)}/${h(x.shard.count)})` : ''}${x.cpu_benchmark ? `, CPU benchmark ${h(describeCpuBenchmark(x.cpu_benchmark))}` : ''}`,
            )
            .join('<br>')
        : undefined,
    ],
    ['generated', meta.generated ? h(meta.generated) : null],
  ]);
  const flags = env.chromium_flags
    ? Object.entries(env.chromium_flags)
        .map(
          ([p, args]) =>
            `<details><summary>Chromium flags for ${h(p)}</summary><pre class="raw">${h(args.join('\n'))}</pre></details>`,
        )
        .join('\n')
    : '<p class="note">Chromium flags: not recorded.</p>';
  const profiles = env.profiles
    ? `<table><thead><tr><th>profile</th><th>RTT ms</th><th>forward / return Mbit/s</th><th>loss % (forward / return)</th><th>--loss on</th><th>loss drawn per (forward / return)</th><th>description</th></tr></thead><tbody>
${Object.entries(env.profiles)
  .map(
    ([name, p]) =>
      `<tr><td>${h(name)}</td><td class="num">${h(p.configured?.rtt_ms ?? '–')}</td><td class="num">${h(p.configured?.forward_mbps ?? '∞')} / ${h(p.configured?.return_mbps ?? '∞')}</td><td class="num">${h(p.configured?.loss_pct ?? '–')} / ${h(p.configured?.return_loss_pct ?? '–')}</td><td>${h(p.configured?.loss_on ?? '–')}</td><td>${h(p.configured?.loss_unit ? `${p.configured.loss_unit.forward} / ${p.configured.loss_unit.return}` : '–')}</td><td>${h(p.description ?? '')}<details><summary>links</summary><pre class="raw">${h(JSON.stringify(p.links, null, 2))}</pre></details></td></tr>`,
  )
  .join('\n')}
</tbody></table>`
    : '<p class="note">Link profiles: not recorded.</p>';
  return `<table class="kv">${rows}</table>\n<h3>Link profiles</h3>\n${profiles}\n<h3>Chromium</h3>\n${flags}`;
}

// Every shown part's runs; under a heading each when there are several.
function renderRuns(model) {
  const withRuns = model.parts.filter((p) => p.groups.length && p.report.runs);
  if (!withRuns.length) return '<p class="note">No page-load results.</p>';
  if (withRuns.length === 1) return withRuns[0].report.runs(withRuns[0]);
  return withRuns.map((p) => `<h3>${h(p.report.runsTitle)}</h3>\n${p.report.runs(p)}`).join('\n');
}

let assets = null;
function readAssets() {
  if (!assets) {
    const require = createRequire(import.meta.url);
    assets = {
      // The UMD build sits next to the package's main file (its exports map
      // does not list it).
      chartJs: fs.readFileSync(path.join(path.dirname(require.resolve('chart.js')), 'chart.umd.min.js'), 'utf8'),
      clientJs: fs.readFileSync(path.join(HERE, 'client.js'), 'utf8'),
      clientRunsJs: fs.readFileSync(path.join(HERE, 'client-runs.js'), 'utf8'),
      css: fs.readFileSync(path.join(HERE, 'report.css'), 'utf8'),
    };
  }
  return assets;
}

// Compressed so that thousands of 20-kB records stay a file a browser opens.
const packRecords = (records) =>
  zlib.gzipSync(records.map((r) => JSON.stringify(r)).join('\n') + '\n').toString('base64');

// No network whatever the content: scripts and styles inline only, images
// from data: only, no fetch, no frames, no forms.
const CSP =
  "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'";

/**
 * The whole report as an HTML string. `summary` is summary.json's content;
 * options: records (results.jsonl's, in file order), reference (the
 * paper's medians; default the stored copy), dir (the results folder whose
 * files the records name: HARs and filmstrips; default none read),
 * inlineBudget (run-files.js).
 */
export function renderReport(summary, { records = null, reference = loadReference(), dir = null, inlineBudget } = {}) {
  const model = buildReport({ summary, records, reference, files: dir ? runFiles(dir, { inlineBudget }) : null });
  const { chartJs, clientJs, clientRunsJs, css } = readAssets();
  const t = model.totals;
  const data = Object.assign({}, ...model.parts.map((p) => p.report.data?.(p) ?? {}));
  const shown = model.parts.filter((p) => p.shown);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>satbench report${model.meta.generated ? ` — ${h(model.meta.generated)}` : ''}</title>
<style>${css}</style>
</head><body>
<nav class="toc">${shown.map((p) => p.report.nav(p)).join('')}<a href="#failures">Failures</a><a href="#environment">Environment</a><a href="#runs">Runs</a></nav>
<main>
<h1>satbench report</h1>
<p class="lead">${lead(model)}</p>
<div class="headline"><div><b>${h(t.scenarios)}</b> scenarios</div><div><b>${h(t.runs)}</b> runs</div><div class="${t.failed ? 'failed' : ''}"><b>${h(t.failed)}</b> failed</div>${model.meta.seed !== undefined ? `<div>seed <b>${h(model.meta.seed)}</b></div>` : ''}</div>
${model.warnings.length ? `<ul class="warnings">${model.warnings.map((w) => `<li>${h(w)}</li>`).join('')}</ul>` : ''}
${model.parts.map((p) => (p.shown ? p.report.sections(p) : '')).join('\n')}
<section id="failures"><h2>Failures</h2>
${renderFailures(model)}
</section>
<section id="environment"><h2>Environment</h2>
${renderEnvironment(model)}
</section>
<section id="runs" class="runs"><h2>Runs</h2>
${renderRuns(model)}
</section>
</main>
<script type="application/json" id="summary">${jsonForScript(summary)}</script>
<script type="application/json" id="report-data">${jsonForScript(data)}</script>
${records ? `<script type="application/octet-stream" id="raw-records" data-encoding="gzip+base64">${packRecords(records)}</script>` : ''}
<script>${inlineScript(chartJs)}</script>
<script>${inlineScript(clientJs)}</script>
<script>${inlineScript(clientRunsJs)}</script>
</body></html>
`;
}

/** index.html of `outDir`, written whole or not at all (results/store.js replaceFile). */
export function writeReport(outDir, summary, options = {}) {
  const file = path.join(outDir, REPORT);
  replaceFile(file, renderReport(summary, { dir: outDir, ...options }));
  return file;
}

export const REPORT = 'index.html';
