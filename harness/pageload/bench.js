// `satbench bench`: a matrix of page loads (profiles × losses × protocols ×
// sites × views × congestion controls × runs), a fresh testbed and origin per run (pageload/run.js), run
// by the campaign loop (every record appended and flushed to results.jsonl
// as its run ends), then summary.json and index.html.
import path from 'node:path';
import { pepKind } from '../core/protocols.js';
import { DEFAULTS } from '../core/defaults.js';
import { shardItems } from '../campaign/matrix.js';
import { expandMatrix, scenarioLabel } from '../kinds/pageload.js';
import { scenarioResolver } from '../campaign/scenario.js';
import { runPlan } from '../campaign/run-plan.js';
import { ensureSite, listSites } from '../../sites/generate.js';
import { pageloadRun, describeRun } from './run.js';
import { presetSetup } from './presets.js';
import { emulationSettings } from '../browser/emulation.js';
import { sitePolicy } from '../core/cache-policy.js';
import { ccSettings } from '../core/cc-axis.js';

/**
 * Runs `plan` (cli/bench-plan.js checkBench: the checked matrix, settings
 * and PEP sides) into `io.outDir` (campaign/run-plan.js: with `resume`,
 * runs already in results.jsonl are not repeated). `run` is the one
 * page-load run (tests give their own). Returns the summary.
 */
export async function bench(plan, { run = pageloadRun, ...io }) {
  const { matrix, settings, pepChains, archives, profiles } = plan;
  const siteDirs = {};
  for (const s of matrix.sites) siteDirs[s] = listSites().includes(s) ? await ensureSite(s) : path.resolve(s);
  const cacheOf = (site) => sitePolicy(site, { given: settings.cache ?? null, archive: Boolean(archives[site]) });
  const resolve = scenarioResolver({
    settings,
    profiles,
    facts: (s) => ({
      siteDir: siteDirs[s.site],
      pepKind: pepKind(s.protocol),
      pepSides: pepChains[pepKind(s.protocol)] ?? null,
      archive: archives[s.site] ?? null,
      cache: cacheOf(s.site),
      dns: archives[s.site] ? settings.dns : null,
      // --cc-axis: the scenario's own end-host TCP and QUIC congestion control
      ...ccSettings(s, settings),
    }),
  });
  const { origin, quic, h3Priorities, altSvc, dns, tcp, pep, lighthouse, harContent, emulation, visual } = settings;
  // the report's Environment: which parts of the preset's own set-up ran, and why
  const setup = presetSetup(io.meta?.preset, { matrix, settings, argv: io.meta?.argv ?? [] });
  const withSetup = { ...io, meta: { ...io.meta, ...(setup.length ? { preset_setup: setup } : {}) } };
  return runPlan(plan, withSetup, {
    items: shardItems(expandMatrix(matrix), settings.shard),
    runOne: ({ scenario, run: runNo }) =>
      // --lighthouse: once per scenario, with its first run
      run(resolve(scenario), runNo, { outDir: io.outDir, lighthouse: lighthouse && runNo === 1 }),
    name: scenarioLabel,
    describe: describeRun,
    // what summary.json's meta.settings says of the campaign (results/meta.js)
    settings: {
      origin,
      quic,
      h3_priorities: h3Priorities ?? 'rfc9218',
      alt_svc: altSvc ?? DEFAULTS.altSvc,
      // --cache, else each site's own: a policy, or its recorded headers (an archive), or the origin's own
      cache:
        settings.cache ??
        Object.fromEntries(matrix.sites.map((s) => [s, cacheOf(s) ?? (archives[s] ? 'recorded' : 'origin')])),
      ...(dns ? { dns } : {}),
      tcp: tcp ?? null,
      pep,
      ...(lighthouse ? { lighthouse: true } : {}),
      ...(harContent ? { har_content: true } : {}),
      emulation: emulationSettings(emulation),
      visual,
    },
    origin,
  });
}
