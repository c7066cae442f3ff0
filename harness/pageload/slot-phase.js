// Where a page load fell in the satellite link's slot process (a LEO
// terminal's handovers, linkem's `slots`): the phase of its slot at
// navigation start, and whether a slot boundary (a handover, with its
// spike and loss) fell inside the load. linkem's stats give the phase and
// the wall-clock time of its time 0; the load gives its navigation start
// on the same wall clock.

/**
 * Pure: `{period_s, phase_s, boundary_in_load}`, or null without a slot
 * process or without the times. `sat`: the satellite link's stats
 * (slot_phase_s, slot_t0_unix_ms); `periodS`: the profile's slot period;
 * `navUnixMs` and `loadMs`: the navigation's start and length.
 */
export function slotAtLoad(sat, periodS, navUnixMs, loadMs) {
  if (!periodS || sat?.slot_phase_s === undefined || sat?.slot_t0_unix_ms === undefined) return null;
  if (typeof navUnixMs !== 'number' || typeof loadMs !== 'number') return null;
  const since = (navUnixMs - sat.slot_t0_unix_ms) / 1000;
  const phase = (((sat.slot_phase_s + since) % periodS) + periodS) % periodS;
  return {
    period_s: periodS,
    phase_s: Math.round(phase * 1000) / 1000,
    boundary_in_load: phase + loadMs / 1000 >= periodS,
  };
}
