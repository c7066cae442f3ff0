// Gatherers record one kind of fact about a page load each (Lighthouse's
// model: gatherers record, the plain functions of load.js and analysis/
// judge). A gatherer is {key, start({page, cdp}), stop({page, cdp, record})}:
// `start` runs before the navigation (Network is already enabled on
// `cdp`), `stop` after the load event and the in-page reads, and what it
// returns is the record's field `key`. A gatherer that fails leaves its
// field null and its reason in the record's `not_captured`; the load's
// timings are kept.
import connections from './connections.js';
import har from './har.js';
import machine from './machine.js';

// Pure: the gatherers of a page load with `options`: every load counts its
// connections and records the machine's CPU load (stopped before the HAR's
// body fetching, so that it spans the load alone); `har` ({satbench, content}, har.js) adds the HAR of
// the load, last, since its stop may fetch the response bodies from Chromium.
export function gatherersFor({ har: harOptions = null } = {}) {
  return [connections(), machine(), ...(harOptions ? [har(harOptions)] : [])];
}

// Runs `phase` ('start' or 'stop') of each gatherer in turn; a failure is
// written into `record` (field null, reason in not_captured), never thrown.
export async function runGatherers(gatherers, phase, context, record) {
  for (const g of gatherers) {
    if (record.not_captured?.[g.key]) continue;
    try {
      const value = await g[phase]?.({ ...context, record });
      if (phase === 'stop') record[g.key] = value ?? null;
    } catch (e) {
      record[g.key] = null;
      (record.not_captured ??= {})[g.key] = `${phase}: ${e.message.split('\n')[0]}`;
    }
  }
}
