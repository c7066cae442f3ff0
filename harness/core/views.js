// The views of a page load (`bench --view`): what the browser already holds
// from an earlier visit when the measured load starts. `first`: nothing (a
// fresh Chromium and profile). `repeat` (WebPageTest's repeat view): after
// a first load, Chromium is closed and started again on the same profile,
// keeping what it keeps on disk. `revisit`: the same Chromium loads the
// page again after its connections are closed, keeping its TLS session
// cache. A repeat or revisit run records two loads, a pair: the first view
// and the repeat (revisit) view.
import { UsageError } from './errors.js';

export const VIEWS = ['first', 'repeat', 'revisit'];
export const DEFAULT_VIEWS = ['first'];

/** Pure: the view of a scenario: a first view's scenario has no `view` (its key is the one of old). */
export const viewOf = (scenario) => scenario?.view ?? 'first';

/** Pure: whether `scenario` is the first view that opened a repeat or revisit pair. */
export const opensPair = (scenario) => viewOf(scenario) !== 'first' && scenario.first_view === true;

/**
 * Pure: which load of its view a scenario is, in words: '' (a first view
 * alone), "repeat pair's first view", 'repeat view' (revisit alike).
 */
export const loadLabel = (scenario) =>
  viewOf(scenario) === 'first' ? '' : `${viewOf(scenario)}${opensPair(scenario) ? " pair's first" : ''} view`;

/** Pure: the load labels of `views` in the order their records come (a pair's first view first). */
export const loadLabels = (views) =>
  views.flatMap((v) => (v === 'first' ? [''] : loadScenarios({ view: v }).map(loadLabel)));

/** Pure: the scenario of a matrix item of `view` (the one its repeat or revisit view is recorded under). */
export const withView = (scenario, view) => (view === 'first' ? scenario : { ...scenario, view });

/**
 * Pure: the scenarios of the loads one run of `scenario` records, in the
 * order they load: a first view alone, or a pair's first view (its
 * scenario marked `first_view: true`) and then the pair's second load
 * under `scenario` itself.
 */
export const loadScenarios = (scenario) =>
  viewOf(scenario) === 'first' ? [scenario] : [{ ...scenario, first_view: true }, scenario];

/** Pure: the scenario of the other record of a pair. */
export function pairedScenario(scenario) {
  if (viewOf(scenario) === 'first') return null;
  const { first_view: _, ...second } = scenario;
  return opensPair(scenario) ? second : { ...scenario, first_view: true };
}

/** Pure: `--view`'s values checked (one clear line for a name we do not know). */
export function checkViews(views) {
  for (const v of views)
    if (!VIEWS.includes(v))
      throw new UsageError(`--view: unknown view ${JSON.stringify(v)}; expected ${VIEWS.join(', ')}`);
  return views;
}
