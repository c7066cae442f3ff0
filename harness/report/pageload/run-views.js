// What the report shows of each page-load run beside its numbers: its
// waterfall and connection view (from its HAR), its filmstrip and visual
// progress (from its frames and record.visual), each run's median run
// marked; and for each pair of the Comparisons, the two median runs on one
// time axis (WebPageTest's compare view). build() reads the run files
// through `files` (report/run-files.js, or null when no results folder was
// read) and makes plain data; the page's script (client-runs.js) draws it
// when a view is opened. A file that is missing or unreadable leaves its
// view out with the reason; the run is shown without it.
import { h, fmtMs, isRelativePath } from '../render.js';
import { waterfallOf, roundTripsAt, sendWaves, PHASES } from './waterfall.js';
import { visualChanges, filmstripStep, filmstripCells, toInline } from './filmstrip.js';
import { medianRun } from './median-run.js';
import { variantLabel } from '../../core/cc-axis.js';
import { comparisonSides } from './comparisons.js';

const finite = (v) => typeof v === 'number' && Number.isFinite(v);
export const viewId = (g, run) => `g${g.index}-${run}`;

// The visual progress curve [[ms, percent], …], its points that are numbers.
const progressOf = (visual) =>
  Array.isArray(visual?.progress)
    ? visual.progress.filter((p) => Array.isArray(p) && finite(p[0]) && finite(p[1])).map((p) => [p[0], p[1]])
    : null;

// Why a run has no file of a kind (`key`: 'har' or 'visual'): the record's
// not_captured reason, or that it was not written.
function absent(record, key, what) {
  const why = record.not_captured?.[key];
  return why ? `${what} not captured: ${why}` : `${what} not recorded for this run`;
}

// The HAR of `record`: {waterfall} or {note}.
function readWaterfall(record, files, profileRtt) {
  if (typeof record.har !== 'string') return { note: absent(record, 'har', 'HAR') };
  if (!files) return { note: `HAR ${record.har}: the results folder was not read`, link: record.har };
  try {
    const waterfall = waterfallOf(files.har(record.har), {
      metrics: record.metrics,
      rttMs: profileRtt(record.scenario?.profile),
    });
    const note = waterfall.skipped ? `${waterfall.skipped} HAR entries without a start time are left out` : null;
    return { waterfall, note, link: record.har };
  } catch (e) {
    return { note: e.message, link: isRelativePath(record.har) ? record.har : null };
  }
}

// The frames of `record`'s filmstrip folder that show a change: {frames} or {note}.
function listFrames(record, files) {
  const rel = record.visual?.frames;
  if (typeof rel !== 'string') return { note: absent(record, 'visual', 'filmstrip') };
  if (!files) return { note: `filmstrip ${rel}: the results folder was not read`, link: rel };
  try {
    const frames = visualChanges(files.frames(rel), (f) => f.hash);
    if (!frames.length) return { note: `filmstrip ${rel}: no frames in it`, link: rel };
    return { frames, link: rel };
  } catch (e) {
    return { note: e.message, link: isRelativePath(rel) ? rel : null };
  }
}

// "The load event came 8.8 round trips of 580 ms after the start" and the
// like: what the waterfall counts; then in which round trips the requests
// before the load event were sent (the page's waves).
function roundTripSentence(waterfall) {
  const load = waterfall?.marks.find((m) => m.key === 'load');
  if (!waterfall?.rtt) return 'No satellite round trip known for this run: none marked.';
  const n = load ? roundTripsAt(load.ms, waterfall.rtt) : null;
  const marks = waterfall.roundTrips.length ? '' : ' (too many to mark)';
  const head =
    n === null
      ? `Round trips of ${waterfall.rtt} ms marked${marks}.`
      : `The load event came ${n} round trips of ${waterfall.rtt} ms (the profile's satellite RTT) after the start${marks}.`;
  const waves = sendWaves(waterfall.rows, waterfall.rtt, load?.ms);
  return waves.length ? `${head} ${wavesSentence(waves)}` : head;
}

/** Pure: "Requests sent after 1 round trip: 1 (1 opening a connection); after 2: 14; …". */
export function wavesSentence(waves) {
  const part = (w) => `${w.requests}${w.connecting ? ` (${w.connecting} opening a connection)` : ''}`;
  const [first, ...rest] = waves;
  const head = `Requests sent after ${first.n} round trip${first.n === 1 ? '' : 's'}: ${part(first)}`;
  return `${[head, ...rest.map((w) => `after ${w.n}: ${part(w)}`)].join('; ')}.`;
}

/**
 * The run views and compare views of the page-load part's groups (with
 * `recs`, `index`, `scenario`), `comparisons` the part's pairs, `files` the
 * results folder's reader or null, `profileRtt(profile)` the RTT the
 * campaign's Environment gives a profile (or null). Returns {runs: Map id →
 * run view, medians: Map group index → id, compares: [...]}. Only records
 * that carry `har` or `visual` (issue 28's runs) get a view.
 */
export function buildRunViews(groups, { comparisons = [], files = null, profileRtt = () => null, label }) {
  const runs = new Map();
  const medians = new Map();
  for (const g of groups) {
    const median = medianRun(g.recs.map((x) => x.record));
    for (const { record } of g.recs) {
      if (!('har' in record) && !('visual' in record)) continue;
      const id = viewId(g, record.run);
      const wf = readWaterfall(record, files, profileRtt);
      const film = listFrames(record, files);
      const progress = progressOf(record.visual);
      runs.set(id, {
        id,
        run: record.run,
        title: `${label(g.scenario)} · run ${record.run}`,
        median: record === median,
        plt: record.metrics?.plt_ms,
        waterfall: wf.waterfall ?? null,
        harNote: wf.note ?? null,
        harLink: wf.link ?? null,
        frames: film.frames ?? null,
        filmNote: film.note ?? null,
        filmLink: film.link ?? null,
        progress,
        end: Math.max(
          wf.waterfall?.end ?? 0,
          film.frames?.at(-1)?.ms ?? 0,
          progress?.at(-1)?.[0] ?? 0,
          ...[record.metrics?.plt_ms].filter(finite),
        ),
        rounds: wf.waterfall ? roundTripSentence(wf.waterfall) : null,
      });
      if (record === median) medians.set(g.index, id);
    }
  }

  // What the report carries: the median runs' views whole; the other runs'
  // waterfalls (small, and what the report is for), then their frames,
  // while the whole stays within the budget.
  const all = [...runs.values()];
  const mediansFirst = (vs) => [...vs.filter((v) => v.median), ...vs.filter((v) => !v.median)];
  const chosen = toInline(
    [
      ...mediansFirst(all.filter((v) => v.waterfall)).map((v) => ({
        id: `${v.id} wf`,
        median: v.median,
        bytes: JSON.stringify(v.waterfall).length,
      })),
      // inlined as base64
      ...mediansFirst(all.filter((v) => v.frames)).map((v) => ({
        id: `${v.id} film`,
        median: v.median,
        bytes: (4 / 3) * v.frames.reduce((a, f) => a + f.bytes, 0),
      })),
    ],
    files?.inlineBudget ?? 0,
  );
  for (const v of all) {
    if (v.waterfall && !chosen.has(`${v.id} wf`)) {
      v.waterfall = null;
      v.harNote = `waterfall left out to keep this file small (the median runs' are in it): see the HAR file`;
    }
    if (!v.frames) continue;
    if (chosen.has(`${v.id} film`)) {
      try {
        v.film = v.frames.map((f) => ({ ms: f.ms, src: files.frameData(v.filmLink, f.name) }));
      } catch (e) {
        v.filmNote = e.message;
      }
    } else {
      v.filmNote = `${v.frames.length} frames, left out to keep this file small (the median runs' are in it)`;
    }
  }

  const compares = comparisons.map((c) => {
    const pick = (protocol, load = '') => {
      const g = groups.find(
        (x) =>
          x.scenario.site === c.site &&
          x.scenario.profile === c.profile &&
          String(x.scenario.loss_pct) === String(c.loss_pct) &&
          x.scenario.protocol === protocol &&
          variantLabel(x.scenario) === load,
      );
      const id = g ? medians.get(g.index) : undefined;
      return id ? runs.get(id) : null;
    };
    return { comparison: c, a: pick(c.a, c.a_load), b: pick(c.b, c.b_load) };
  });
  return {
    runs,
    medians,
    compares: compares.filter((x) => x.a || x.b).map((x, index) => ({ ...x, index })),
  };
}

// A view's filmstrip cells on an axis of `end` ms at `step`.
const cellsOf = (v, step, end) =>
  v?.film
    ? filmstripCells(
        v.film.map((f) => f.ms),
        { step, endMs: end },
      )
    : null;

/** The page's data for the views: what client-runs.js draws (nothing when no run has a view). */
export function runViewsData(views) {
  if (!views.runs.size) return {};
  const runViews = {};
  for (const v of views.runs.values()) {
    const step = filmstripStep(v.end);
    runViews[v.id] = {
      title: v.title,
      end: v.end,
      waterfall: v.waterfall,
      frames: v.film?.map((f) => f.src) ?? null,
      film: v.film ? { step, cells: cellsOf(v, step, v.end) } : null,
      progress: v.progress,
    };
  }
  const compareViews = views.compares.map((c) => {
    const end = Math.max(c.a?.end ?? 0, c.b?.end ?? 0);
    const step = filmstripStep(end);
    const side = (v) => v && { view: v.id, film: v.film ? { step, cells: cellsOf(v, step, end) } : null };
    return { end, a: side(c.a), b: side(c.b) };
  });
  return { phases: PHASES, runViews, compareViews };
}

// ---------------------------------------------------------------- rendering

// The notes and links of a run view (escaped); the drawing is the script's.
function notes(v) {
  const links = [
    [v.harLink, 'HAR'],
    [v.filmLink, 'frames'],
  ]
    .filter(([rel]) => rel && isRelativePath(rel))
    .map(([rel, text]) => `<a href="${h(rel)}">${text}</a>`);
  return [v.rounds, v.harNote, v.filmNote]
    .filter(Boolean)
    .map((n) => `<li>${h(n)}</li>`)
    .concat(links.length ? [`<li>files: ${links.join(' · ')}</li>`] : [])
    .join('');
}

/** The HTML of a run's view in the Runs section: opened, the page's script draws it. */
export function renderRunView(v) {
  return `<details class="run-view" id="view-${h(v.id)}" data-view="${h(v.id)}"><summary>waterfall, connections and filmstrip${v.median ? ' <b>· the median run</b>' : ''}</summary>
<ul class="view-notes">${notes(v)}</ul><div class="view-draw"></div></details>`;
}

/** The HTML of a compare view (the i-th of runViewsData's compareViews). */
export function renderCompareView(c) {
  const side = (v, protocol) =>
    v
      ? `<li><b>${h(protocol)}</b>: <a href="#view-${h(v.id)}">run ${h(v.run)}</a>, Page Load Time ${fmtMs(v.plt)} ms<ul>${notes(v)}</ul></li>`
      : `<li><b>${h(protocol)}</b>: no median run with a waterfall or filmstrip</li>`;
  const x = c.comparison;
  const [a, b] = comparisonSides(x);
  return `<details class="compare-view" data-compare="${c.index}"><summary><b>${h(a)} / ${h(b)}</b> · ${h(`${x.profile} · loss ${x.loss_pct} % · ${x.site}`)}</summary>
<ul class="view-notes">${side(c.a, a)}${side(c.b, b)}</ul><div class="view-draw"></div></details>`;
}

// The colours of the phases, the events and the round trips, as the drawings use them.
export const legend = () =>
  `<span class="wf-legend">${PHASES.map((p) => `<span><i class="ph ph-${p}"></i>${p}</span>`).join('')}<span><i class="mk mk-fcp"></i>FCP</span><span><i class="mk mk-lcp"></i>LCP</span><span><i class="mk mk-dcl"></i>DOMContentLoaded</span><span><i class="mk mk-load"></i>load</span><span><i class="mk mk-rtt"></i>satellite round trip</span></span>`;
