// What every kind of record has unless it says otherwise, and the kind that
// records of an unknown kind get: keyed by their whole scenario, every
// numeric metric summarised, listed in the report as a table of medians.
// defineKind() is how a kind module (pageload.js, bulk.js, …) starts.

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
 *   report                    the key of its part of the report, which harness/report/parts.js
 *                             renders: 'medians' (one table of medians), 'pageload', 'bulk'
 *   title                     the heading of a 'medians' part (default: name)
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
    report: 'medians',
    ...spec,
  };
}
