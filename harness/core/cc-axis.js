// The end hosts' congestion control as a matrix axis (`bench --cc-axis`):
// each value sets, for its scenario, the kernel's TCP congestion control
// in every namespace (what --cc sets for a whole campaign) and our QUIC
// senders' controller (what --quic cc= sets), so that BBR and Cubic run in
// one campaign and the report sets them side by side. A campaign without
// the axis has scenarios without `cc` (their keys are the ones of old) and
// takes --cc and --quic cc= as before.
import { UsageError } from './errors.js';
import { QUIC_OPTIONS } from './quic-options.js';
import { loadLabel, loadScenarios, DEFAULT_VIEWS } from './views.js';

// The controllers both the kernel's TCP and our QUIC senders have under one
// name (`sat` is our QUIC's alone; the kernel's `reno` is QUIC's `newreno`).
export const CC_AXIS_VALUES = QUIC_OPTIONS.find((o) => o.key === 'cc').values.filter((v) => v !== 'sat');

// A matrix without the axis: one value, which puts no `cc` in the scenario.
export const DEFAULT_CCS = [null];

// What the others are compared with: Linux's and our QUIC's default.
const BASELINE = 'cubic';

/** Pure: a scenario's congestion control from the axis, or null (the campaign's --cc and --quic). */
export const ccOf = (scenario) => scenario?.cc ?? null;

/** Pure: the scenario of a matrix item of `cc` (null: none, the key of old). */
export const withCc = (scenario, cc) => (cc === null ? scenario : { ...scenario, cc });

/** Pure: the scenario's congestion control in words ("cc=bbr"), '' without the axis. */
export const ccLabel = (scenario) => (ccOf(scenario) === null ? '' : `cc=${ccOf(scenario)}`);

/**
 * Pure: what tells a scenario's loads apart beyond its profile, loss,
 * protocol and site, in words: its congestion control and which load of
 * its view ("cc=bbr repeat view"; '' for a first view without the axis).
 * The report sets a table apart per site and this.
 */
export const variantLabel = (scenario) => [ccLabel(scenario), loadLabel(scenario)].filter(Boolean).join(' ');

/** Pure: the variant labels of a matrix in the order its records come (congestion control, then view). */
export const variantLabels = ({ ccs, views } = {}) =>
  (ccs ?? DEFAULT_CCS).flatMap((cc) =>
    (views ?? DEFAULT_VIEWS).flatMap((view) => loadScenarios({ view }).map((s) => variantLabel(withCc(s, cc)))),
  );

/**
 * Pure: what a scenario of the axis changes in the campaign's settings
 * ({tcp, quic} with its cc; nothing without the axis), for the run's
 * resolved scenario (campaign/scenario.js facts).
 */
export function ccSettings(scenario, { tcp = {}, quic = {} } = {}) {
  const cc = ccOf(scenario);
  return cc === null ? {} : { tcp: { ...tcp, cc }, quic: { ...quic, cc } };
}

/**
 * Pure: the axis's value the others are compared with: cubic where it
 * ran (the kernel's and our QUIC's default), else the first.
 */
export const baselineCc = (ccs) => (ccs.includes(BASELINE) ? BASELINE : (ccs[0] ?? null));

/** Pure: where a campaign's axis came from, for its errors: --cc-axis, or the preset that has one (`given`: the options typed). */
export const ccAxisSource = (ccs, given = {}) =>
  given['cc-axis'] === undefined && given.preset !== undefined
    ? `--preset ${given.preset} (its --cc-axis ${ccs.join(',')})`
    : '--cc-axis';

/**
 * Pure: refuses the axis beside --cc or --quic cc=, which it sets itself
 * per scenario (`tcp`, `quic`: the settings those options made).
 */
export function refuseCcBeside(ccs, { tcp = {}, quic = {} } = {}) {
  if (!ccs) return;
  const beside = [tcp.cc !== undefined && '--cc', quic.cc !== undefined && '--quic cc='].filter(Boolean);
  if (beside.length)
    throw new UsageError(
      `--cc-axis sets the end hosts' TCP and our QUIC senders' congestion control per scenario; leave out ${beside.join(' and ')}`,
    );
}
