// Gatherers record one kind of fact about a page load each (Lighthouse's
// model: gatherers record, the plain functions of load.js and analysis/
// judge). A gatherer is {key, start({page, cdp}), stop({page, cdp, record}),
// afterLoadMs}: `start` runs before the navigation (Network is already
// enabled on `cdp`), `stop` after the load event and the in-page reads, and
// what it returns is the record's field `key`; `afterLoadMs`, the most its
// `stop` may take. A gatherer that fails leaves its field null and its
// reason in the record's `not_captured`; the load's timings are kept.
import path from 'node:path';
import { DEFAULTS } from '../../core/defaults.js';
import { runFolder } from '../../campaign/results-dir.js';
import { scenarioKey } from '../../kinds/pageload.js';
import cacheUse from './cache-use.js';
import connections from './connections.js';
import har from './har.js';
import machine from './machine.js';
import tcpCc from './tcp-cc.js';
import visual from './visual.js';

/**
 * Pure: the gatherers of one page load: every load counts its connections
 * and its responses by the browser cache (from it, revalidated, fetched) and records the machine's CPU load (stopped before the others' waiting
 * and fetching, so that it spans the load alone); with `visual` (bench
 * --visual), the screenshots and what the user saw, its filmstrip in
 * `outDir` (null: no file) as filmstrip/KEY-runN of `scenario`'s run
 * `runNo`; `har` ({satbench, content}, har.js) the HAR of the load, last,
 * since its stop may fetch the response bodies from Chromium; `endHosts`
 * (the testbed's {client, server} namespaces) the congestion control the
 * kernel runs on their TCP connections (tcp-cc.js).
 */
export function gatherersFor({
  har: harOptions = null,
  visual: withVisual = DEFAULTS.visual,
  outDir = null,
  scenario,
  runNo,
  endHosts = null,
} = {}) {
  const frames =
    outDir && scenario ? path.relative(outDir, runFolder(outDir, 'filmstrip', scenarioKey(scenario), runNo)) : null;
  return [
    connections(),
    cacheUse(),
    machine(),
    ...(endHosts ? [tcpCc(endHosts)] : []),
    ...(withVisual ? [visual({ outDir, frames })] : []),
    ...(harOptions ? [har(harOptions)] : []),
  ];
}

// Pure: the most the gatherers' stops may add after the load event.
export const afterLoadMs = (gatherers) => gatherers.reduce((a, g) => a + (g.afterLoadMs ?? 0), 0);

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
