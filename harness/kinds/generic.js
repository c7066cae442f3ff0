// What every kind of record has unless it says otherwise, and the kind that
// records of an unknown kind get: keyed by their whole scenario, every
// numeric metric summarised, listed in the report as a table of medians.
// defineKind() is how a kind module (pageload.js, bulk.js, …) starts.
import { h, medianList } from '../../reports/render.js';

// Object keys in sorted order, so that equal scenarios give equal keys
// whatever order their writer used.
export const stableJson = (v) =>
  v && typeof v === 'object' && !Array.isArray(v)
    ? `{${Object.keys(v)
        .sort()
        .map((k) => `${JSON.stringify(k)}:${stableJson(v[k])}`)
        .join(',')}}`
    : JSON.stringify(v);

// Times, counts and bytes get worse as they grow; rates (goodput, …) as
// they shrink.
export const higherIsBetterByName = (metric) => /(_mbps|_bps|goodput|throughput)/.test(metric);

// Every numeric metric the ok records carry, sorted.
export function numericMetrics(okRecords) {
  const names = new Set();
  for (const r of okRecords)
    for (const [k, v] of Object.entries(r.metrics ?? {})) if (typeof v === 'number') names.add(k);
  return [...names].sort();
}

// The failed runs of a report part's groups, each linked to its row among
// the runs (`anchor(group)`-run).
export const runFailures = (groups, label, anchor) =>
  groups.flatMap((g) =>
    (g.failures ?? []).map((f) => ({ label: label(g), anchor: `${anchor(g)}-${f.run}`, run: f.run, error: f.error })),
  );

/**
 * A report part that is one table of medians, a row per group: what a kind
 * without its own sections shows, and (as "Other results") what records
 * of unknown kinds show. `nav`: whether the table of contents links to it.
 */
export function medianTableReport({ id, title, note, nav = true }) {
  return {
    build: (groups, { kindOf }) => ({ groups: groups.map((g) => ({ ...g, label: kindOf(g).label(g.scenario) })) }),
    nav: (part) => (nav && part.groups.length ? `<a href="#${h(id)}">${h(title)}</a>` : ''),
    sections: (part) =>
      part.groups.length
        ? `<section id="${h(id)}"><h2>${h(title)}</h2>
<p class="legend-note">${h(note)}</p>
<table><thead><tr><th>scenario</th><th>runs</th><th>failed</th><th>medians</th></tr></thead><tbody>
${part.groups
  .map(
    (g) =>
      `<tr><td>${h(g.label)}</td><td class="num">${h(g.runs)}</td><td class="num">${h(g.failed)}</td><td>${medianList(g.metrics)}</td></tr>`,
  )
  .join('\n')}
</tbody></table></section>`
        : '',
    // its runs have no anchors to link a failure to; the totals count them
    failures: () => [],
  };
}

/**
 * A kind from what its module says, the rest generic. Fields (who asks):
 *   name                      records' `kind`; summary.json groups carry it
 *   key(scenario)             its group key (summary, compare, merge, report, bench/bulk --resume)
 *   label(scenario)           plain-text name (compare's rows, merge's errors, the report)
 *   metricNames(okRecords)    what summary summarises
 *   higherIsBetter(metric)    which way is better (compare: a "slowdown" is a change for the worse)
 *   budgetMatch               scenario fields a budget's `match` may name (compare)
 *   complete(entries)         summary: [{group, records}] of this kind → its groups with extras
 *   tag(fields)               a record or summary group of it (loop's failed records, summary):
 *                             `fields` with the kind's name first, or as they are (page loads)
 *   matrixAxes                merge: {matrix list: scenario field, or [field, its value when
 *                             absent]} a record's field must be among
 *   matrixScalars             merge: matrix settings a record's scenario field must equal
 *   matrixOrder(matrix)       merge: null (keep the shards' order) or record → position
 *   defaultBudget             compare without --budget: {metric: limits} (all kinds' together)
 *   command                   the satbench command that writes it (the report's environment,
 *                             merge: the kind of a campaign.json)
 *   report                    its report part: build, nav, sections, failures, and optional
 *                             runs/runsTitle, warnings, data, lead, withoutRecords (reports/html.js)
 */
export function defineKind(spec) {
  const { name } = spec;
  return {
    key: (s) => `${name}:${stableJson(s)}`,
    label: (s) =>
      `${name} ${Object.entries(s ?? {})
        .map(([k, v]) => `${k}=${v}`)
        .join(' ')}`,
    metricNames: numericMetrics,
    higherIsBetter: higherIsBetterByName,
    budgetMatch: [],
    complete: (entries) => entries.map((e) => e.group),
    tag: (fields) => ({ kind: name, ...fields }),
    // a campaign's axes and download settings (bulk's: it should say so itself)
    matrixAxes: {},
    matrixScalars: [],
    matrixOrder: () => null,
    defaultBudget: {},
    command: null,
    report: medianTableReport({ id: name, title: spec.title ?? name, note: `${name}: medians of each metric.` }),
    ...spec,
  };
}

// The report part of every record whose kind is not registered.
export const OTHER_RESULTS = medianTableReport({
  id: 'other',
  title: 'Other results',
  note: 'Records of other kinds (e.g. bulk transfers): medians of each metric.',
  nav: false,
});
