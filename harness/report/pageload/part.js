// The page-load part of the report: build() makes its plain data (pure):
// the medians matrix (with the paper's values), the protocol comparisons,
// each repeat or revisit view with its pair's first view, the
// distributions, the origins of replayed archives, Lighthouse and the
// runs; each section (a module beside this one) renders its share,
// escaping every string that comes from input. The kind's facts (its key
// and view metrics and labels) come in with the kind, so that this module
// needs no import of harness/kinds/pageload.js.
import { compareSamples, MIN_RUNS_FOR_COMPARISON } from '../../core/stats.js';
import { usesQuicPep } from '../../core/protocols.js';
import { opensPair, pairedScenario, viewOf } from '../../core/views.js';
import { baselineCc, ccOf, variantLabel, variantLabels, withCc } from '../../core/cc-axis.js';
import { variantPairs, quicTunnelModes, tunnelSentence } from '../../kinds/pep-variants.js';
import { campaignSettings } from '../../results/meta.js';
import { countStats } from '../../kinds/pageload-counts.js';
import { paperMedian } from '../paper.js';
import { h, fmtMs, ordered, runsTable, runFailures } from '../render.js';
import { medians } from './medians.js';
import { comparisons } from './comparisons.js';
import { boundarySplit } from './boundary-split.js';
import { firstAndRepeat } from './first-and-repeat.js';
import { distributions } from './distributions.js';
import { origins } from './origins.js';
import { lighthouse } from './lighthouse.js';
import { machineHead, machineCell, busyWarning } from './machine.js';
import { sideBySide } from './side-by-side.js';
import { buildRunViews, runViewsData, renderRunView, legend, viewId } from './run-views.js';

// Comparisons the report shows: each -pep, -qpep and -vpn protocol against
// the same protocol without PEP (without tunnel), each -qpep against the
// -vpn and -pep of its protocol, and HTTP/3 against HTTP/1.1 (the paper's).
export function comparisonPairs(protocols) {
  const pairs = variantPairs(protocols);
  for (const [a, b] of [
    ['h3', 'h1'],
    ['h3-pep', 'h1-pep'],
    ['h3-vpn', 'h1-vpn'],
  ]) {
    if (protocols.includes(a) && protocols.includes(b)) pairs.push({ a, b, kind: 'HTTP/3 vs HTTP/1.1' });
  }
  return pairs;
}

const okValues = (recs, metric) =>
  recs
    .filter((x) => x.record.ok)
    .map((x) => x.record.metrics?.[metric])
    .filter((v) => typeof v === 'number' && Number.isFinite(v));

// The Lighthouse audits bench --lighthouse put into the records.
export const lighthouseEntries = (records) =>
  (records ?? []).filter((r) => r.lighthouse).map((r) => ({ scenario: r.scenario, run: r.run, ...r.lighthouse }));

/**
 * Pure: the page-load part of the report from summary.json's page-load
 * groups and (optional) the records grouped by key: the matrix of medians
 * per site, the comparisons, the view pairs (a repeat or revisit view's
 * group, its pair's first view's, and the comparison of the two in every
 * view metric measured), and the distribution blocks and series.
 */
function build(groups, { kind, byKey, matrix: m = {}, records = null, reference = null, meta = {}, files = null }) {
  const KEY_METRICS = kind.keyMetrics;
  const gi = groups.map((g, i) => {
    const recs = byKey.get(kind.key(g.scenario)) ?? [];
    // a summary.json from before it had the count medians, beside records that have the counts
    const counts = records && !('cache_use' in g || 'handshakes' in g) ? countStats(recs.map((x) => x.record)) : {};
    return { ...counts, ...g, index: i, key: kind.key(g.scenario), recs };
  });
  // `load`: its congestion control and which load of its view (core/cc-axis.js
  // variantLabel; '' a first view alone, without --cc-axis)
  const find = (s) =>
    gi.find(
      (g) =>
        g.scenario.site === s.site &&
        g.scenario.profile === s.profile &&
        String(g.scenario.loss_pct) === String(s.loss_pct) &&
        g.scenario.protocol === s.protocol &&
        variantLabel(g.scenario) === (s.load ?? ''),
    );

  // a scenario field's values, in the matrix's order
  const axis = (field, preferred) =>
    ordered(
      gi.map((g) => g.scenario[field]),
      preferred,
    );
  const sites = axis('site', m.sites);
  const profiles = axis('profile', m.profiles);
  const losses = axis('loss_pct', m.losses);
  const protocolsAll = axis('protocol', m.protocols);
  const loads = ordered(
    gi.map((g) => variantLabel(g.scenario)),
    variantLabels(m),
  );
  // how the QUIC PEP's satellite hop ran for h3-pep and the -qpep protocols
  const tunnelModes = quicTunnelModes({ protocols: protocolsAll, records, meta });

  // a table set per site and load (a first view; a pair's first view and its repeat or revisit view; each cc)
  const siteLoads = sites.flatMap((site) =>
    loads
      .filter((load) => gi.some((g) => g.scenario.site === site && variantLabel(g.scenario) === load))
      .map((load) => ({ site, load })),
  );
  const matrix = siteLoads.map(({ site, load }) => {
    const here = (g) => g.scenario.site === site && variantLabel(g.scenario) === load;
    const protocols = protocolsAll.filter((p) => gi.some((g) => here(g) && g.scenario.protocol === p));
    const rows = [];
    for (const profile of profiles)
      for (const loss_pct of losses) {
        if (
          !gi.some((g) => here(g) && g.scenario.profile === profile && String(g.scenario.loss_pct) === String(loss_pct))
        )
          continue;
        rows.push({
          profile,
          loss_pct,
          cells: protocols.map((protocol) => find({ site, profile, loss_pct, protocol, load }) ?? null),
        });
      }
    return {
      site,
      load,
      protocols,
      tables: KEY_METRICS.map((km) => ({
        metric: km,
        rows: rows.map((r) => ({
          profile: r.profile,
          loss_pct: r.loss_pct,
          cells: r.cells.map(
            (g) =>
              g && {
                key: g.key,
                index: g.index,
                runs: g.runs,
                failed: g.failed,
                stat: g.metrics?.[km.key] ?? null,
                paper: paperMedian(reference, g.scenario, km.paper),
              },
          ),
        })),
      })),
    };
  });

  // one comparison of group `ga` against `gb` (`pair`: {a, b, kind} and
  // the load of each side, `a_load` and `b_load`) in `metrics`
  const compareGroups = (pair, ga, gb, metrics = KEY_METRICS) => ({
    ...pair,
    tunnel: usesQuicPep(pair.a) || usesQuicPep(pair.b) ? tunnelModes.join(', ') || null : null,
    site: ga.scenario.site,
    profile: ga.scenario.profile,
    loss_pct: ga.scenario.loss_pct,
    metrics: metrics.map((km) => {
      const ma = ga.metrics?.[km.key]?.median ?? null;
      const mb = gb.metrics?.[km.key]?.median ?? null;
      const pa = paperMedian(reference, ga.scenario, km.paper);
      const pb = paperMedian(reference, gb.scenario, km.paper);
      const c =
        records && ga.recs.length && gb.recs.length
          ? compareSamples(okValues(gb.recs, km.key), okValues(ga.recs, km.key))
          : null;
      return {
        metric: km,
        a: ma,
        b: mb,
        ratio: ma !== null && mb ? ma / mb : null,
        paper_ratio: pa !== null && pb ? pa / pb : null,
        p: c?.p ?? null,
        cliffs_delta: c?.cliffs_delta ?? null,
        magnitude: c?.magnitude ?? null,
        few: Math.min(ga.metrics?.[km.key]?.n ?? 0, gb.metrics?.[km.key]?.n ?? 0) < MIN_RUNS_FOR_COMPARISON,
      };
    }),
  });
  const comparisons = [];
  // each pair of protocols over the same load
  for (const site of sites)
    for (const profile of profiles)
      for (const loss_pct of losses)
        for (const load of loads)
          for (const pair of comparisonPairs(protocolsAll)) {
            const ga = find({ site, profile, loss_pct, protocol: pair.a, load });
            const gb = find({ site, profile, loss_pct, protocol: pair.b, load });
            if (ga && gb) comparisons.push(compareGroups({ ...pair, a_load: load, b_load: load }, ga, gb));
          }
  // each repeat or revisit view against its pair's first view: among the
  // comparisons in the key metrics, and for the First and repeat views
  // section in every view metric some group of a pair measured
  const pairs = gi
    .filter((g) => viewOf(g.scenario) !== 'first' && !opensPair(g.scenario))
    .map((second) => ({ second, first: gi.find((g) => g.key === kind.key(pairedScenario(second.scenario))) }))
    .filter((p) => p.first);
  const viewMetrics = kind.viewMetrics.filter((km) =>
    pairs.some((p) => p.first.metrics?.[km.key] || p.second.metrics?.[km.key]),
  );
  const viewPairs = pairs.map(({ first, second }) => {
    const { protocol } = second.scenario;
    const pair = {
      a: protocol,
      b: protocol,
      a_load: variantLabel(second.scenario),
      b_load: variantLabel(first.scenario),
      kind: `${viewOf(second.scenario)} view vs first view`,
    };
    comparisons.push(compareGroups(pair, second, first));
    return {
      view: viewOf(second.scenario),
      first,
      second,
      comparison: compareGroups(pair, second, first, viewMetrics),
    };
  });
  // --cc-axis: each congestion control against cubic (else the axis's first) over the same scenario
  const base = baselineCc(
    ordered(
      gi.map((g) => ccOf(g.scenario)).filter((cc) => cc !== null),
      m.ccs ?? [],
    ),
  );
  for (const ga of gi.filter((g) => ![null, base].includes(ccOf(g.scenario)))) {
    const gb = gi.find((g) => g.key === kind.key(withCc(ga.scenario, base)));
    const { protocol } = ga.scenario;
    const pair = {
      a: protocol,
      b: protocol,
      a_load: variantLabel(ga.scenario),
      b_load: variantLabel(gb?.scenario ?? {}),
    };
    if (gb) comparisons.push(compareGroups({ ...pair, kind: `${ccOf(ga.scenario)} vs ${base} (end hosts)` }, ga, gb));
  }

  const blocks = [];
  const series = {};
  if (records) {
    for (const site of sites)
      for (const profile of profiles)
        for (const loss_pct of losses)
          for (const load of loads) {
            const members = protocolsAll
              .map((protocol) => find({ site, profile, loss_pct, protocol, load }))
              .filter((g) => g && g.recs.length);
            if (!members.length) continue;
            for (const g of members) {
              const ok = g.recs.filter((x) => x.record.ok);
              series[g.key] = {
                protocol: g.scenario.protocol,
                // [run, one value per KEY_METRICS] of each ok run; compact on purpose.
                runs: ok.map((x) => [x.record.run, ...KEY_METRICS.map((km) => x.record.metrics?.[km.key] ?? null)]),
              };
              // over a slot process: per run, whether a boundary fell inside
              // the load (null: a run without `slot`), for the split charts
              if (ok.some((x) => x.record.slot))
                series[g.key].boundary = ok.map((x) => (x.record.slot ? x.record.slot.boundary_in_load : null));
            }
            blocks.push({
              id: `b${blocks.length}`,
              title: `${profile} · loss ${loss_pct} % · ${site}${load ? ` · ${load}` : ''}`,
              keys: members.map((g) => g.key),
              // the Distributions draw its runs with and without a boundary apart
              ...(members.some((g) => series[g.key].boundary) ? { split: true } : {}),
            });
          }
  }

  // over a slot process: each scenario's medians with and without a
  // boundary inside the load, from summary.json (analysis/boundary-split.js)
  const boundarySplits = gi
    .filter((g) => g.boundary_split)
    .map((g) => ({
      index: g.index,
      scenario: g.scenario,
      period_s: g.boundary_split.period_s,
      failed: g.boundary_split.failed ?? null,
      metrics: KEY_METRICS.map((km) => ({ metric: km, split: g.boundary_split.metrics?.[km.key] ?? null })),
    }));

  // each run's waterfall and filmstrip, the median runs side by side
  const views = buildRunViews(gi, {
    comparisons,
    files,
    label: kind.label,
    profileRtt: (profile) => {
      const rtt = meta.environment?.profiles?.[profile]?.configured?.rtt_ms;
      return typeof rtt === 'number' ? rtt : null;
    },
  });

  return {
    label: kind.label,
    keyMetrics: KEY_METRICS,
    groups: gi,
    views,
    matrix,
    comparisons,
    viewMetrics,
    viewPairs,
    boundarySplits,
    blocks,
    series,
    lighthouse: lighthouseEntries(records),
    // replayed archives: what each origin cost (harness/kinds/pageload-origins.js)
    originGroups: gi.filter((g) => g.origins),
    hasRecords: Boolean(records),
    tunnelNote: tunnelSentence(protocolsAll, tunnelModes),
    altSvcNote: altSvcSentence(protocolsAll, campaignSettings(meta).alt_svc),
  };
}

/**
 * Pure: the sentence saying that HTTP/3 page loads made with `--alt-svc
 * all` are not like for like with the paper's (its testbed matches tcp),
 * or null when no h3 protocol ran or Alt-Svc was tcp (or not recorded).
 */
export function altSvcSentence(protocols, altSvc) {
  if (altSvc !== 'all' || !protocols.some((p) => typeof p === 'string' && p.startsWith('h3'))) return null;
  return "HTTP/3 here: our origin sent Alt-Svc on every response (--alt-svc all), so Chromium requested every image at once. Kosek et al.'s testbed matches --alt-svc tcp (Chromium keeps 6 images in flight over h3), so beside their HTTP/3 medians ours are expected to be faster.";
}

function warnings(part) {
  const small = part.groups.filter((g) => (g.metrics?.plt_ms?.n ?? 0) < MIN_RUNS_FOR_COMPARISON);
  return [
    small.length
      ? `${small.length} of ${part.groups.length} scenarios have fewer than ${MIN_RUNS_FOR_COMPARISON} successful runs: their comparisons (marked ⚠) have little power.`
      : null,
    busyWarning(part.groups),
  ].filter(Boolean);
}

// ---------------------------------------------------------------- rendering

// The part's sections, in the order of the page and of its contents. A
// section is a module in this folder: nav(part) and render(part), each ''
// when it has nothing to show (origins: no replayed archive, Lighthouse: no
// audits), and optionally data(part) for the page's script; it reads the
// part build() made (each group's records are its `recs`). A new section
// is such a module and its line here.
const SECTIONS = [medians, comparisons, firstAndRepeat, boundarySplit, sideBySide, distributions, origins, lighthouse];

function renderRuns(part) {
  const views = part.views.runs;
  return `<p class="legend-note">Every run of every scenario, in ms. Open a run for its whole record as results.jsonl has it${part.hasRecords ? '' : ' (not available: this report was built from summary.json)'}${views.size ? `; under a run, its waterfall (a row per request, its phases coloured: ${legend()}; open a row for its URL, protocol and connection), its connections (a lane each) and its filmstrip with the visual progress. The median run of each scenario (by Page Load Time) is marked` : ''}.</p>
${part.groups
  .map(
    (
      g,
    ) => `<details id="g${g.index}"><summary><b>${h(part.label(g.scenario))}</b> — ${h(g.runs)} run(s)${g.failed ? `, <span class="failed">${h(g.failed)} failed</span>` : ''}</summary>
${runsTable(
  g.recs,
  `run-g${g.index}`,
  `${part.keyMetrics.map((km) => `<th>${h(km.label)}</th>`).join('')}<th>resources</th><th>protocol seen</th>${machineHead}`,
  (r) =>
    part.keyMetrics.map((km) => `<td class="num">${fmtMs(r.metrics?.[km.key])}</td>`).join('') +
    `<td class="num">${h(r.metrics?.resource_count ?? '–')}</td><td>${h(
      r.protocol_seen
        ? `${r.protocol_seen.document ?? '?'}; ${Object.entries(r.protocol_seen.resources ?? {})
            .map(([p, n]) => `${p} ×${n}`)
            .join(', ')}`
        : '–',
    )}</td>${machineCell(r)}`,
  (r) => {
    const v = views.get(viewId(g, r.run));
    return v ? renderRunView(v) : '';
  },
)}
</details>`,
  )
  .join('\n')}`;
}

export const pageloadReport = {
  build,
  warnings,
  lead: { subject: 'page loads in Chromium', unit: 'ms' },
  withoutRecords: ['distributions', "the comparisons' p-values"],
  nav: (part) => SECTIONS.map((s) => s.nav(part)).join(''),
  // shown for page loads, and for an empty report (they say there is nothing)
  sections: (part) =>
    SECTIONS.map((s) => s.render(part))
      .filter(Boolean)
      .join('\n'),
  failures: (part) =>
    runFailures(
      part.groups,
      (g) => part.label(g.scenario),
      (g) => `run-g${g.index}`,
    ),
  runsTitle: 'Page loads',
  runs: renderRuns,
  // the page's script draws the sections' charts and the run views from these
  data: (part) => Object.assign({}, ...SECTIONS.map((s) => s.data?.(part) ?? {}), runViewsData(part.views)),
};
