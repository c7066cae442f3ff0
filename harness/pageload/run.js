// One page-load run: a fresh testbed, the origin (and the PEP chain for a
// -pep protocol, QPEP for a -qpep one, the VPN tunnel for a -vpn one), one
// load in a fresh Chromium, the run's record. Everything the run needs
// comes resolved in `plan` (campaign/scenario.js).
import { guardedRun, SETUP_MS } from '../campaign/run-guard.js';
import { readOriginLog, startOrigin } from '../servers/origin.js';
import { startPepChain, pepRecord, checkThrough } from '../pep/chain.js';
import { runFolder } from '../campaign/results-dir.js';
import { scenarioKey } from '../kinds/pageload.js';
import { loadPage, noLoad } from './load.js';
import { archiveTarget } from './archive-site.js';
import { startDns } from '../servers/dns.js';
import { siteTarget, browserBoundMs, KILL_GRACE_MS } from '../browser/chromium.js';
import { ADDRESSES } from '../testbed/addressing.js';
import { runLighthouse, lighthouseKillAfterMs } from './lighthouse.js';
import { afterLoadMs, gatherersFor } from './gather/index.js';
import { storeRunHar } from './har-file.js';
import { configuredRttMs } from '../testbed/profiles.js';
import { emulationRecord } from '../browser/emulation.js';
import { slotAtLoad } from './slot-phase.js';

// Pure: the longest a page-load run of `timeoutMs` may take before it is
// ended as stuck (run-guard.js): its set-up, the load's browser (killed
// KILL_GRACE_MS after the timeout and what its gatherers may add after the
// load, `afterLoad` ms, then closed) and, with `lighthouse`, Lighthouse's
// browser.
export function pageloadDeadlineMs(timeoutMs, { lighthouse = false, afterLoad = 0 } = {}) {
  const load = browserBoundMs(timeoutMs + KILL_GRACE_MS + afterLoad);
  return SETUP_MS + load + (lighthouse ? browserBoundMs(lighthouseKillAfterMs(timeoutMs)) : 0);
}

// Pure: a page-load record's result in a progress line.
export const describeRun = (rec) => (rec.ok ? `PLT ${Math.round(rec.metrics.plt_ms)} ms` : `failed (${rec.error})`);

// Pure: where the QUIC PEPs of one run write their qlogs (bench --qlog).
export const qlogDirOf = (outDir, scenario, runNo) => runFolder(outDir, 'qlog', scenarioKey(scenario), runNo);

// Pure: the record of a run that ended without a page load (its set-up,
// a helper or the browser failed, or it was interrupted): the shape of a
// failed load's record, with the reason.
export function failedRunRecord(base, error) {
  return { ...base, ...noLoad(error) };
}

/**
 * Runs `plan` (a resolved page-load scenario: profile, siteDir, pepKind,
 * pepSides, origin, quic, h3Priorities, altSvc, tcp, pep, link, seed, timeoutMs,
 * emulation, visual, harContent) once as run `runNo`. `outDir`: bench's
 * folder (qlogs, Lighthouse reports, the HAR, the filmstrip, a failed
 * run's helper logs); `plan.visual`: screenshots and visual metrics;
 * `lighthouse`: after this run's load, a separate Lighthouse load (bench asks
 * for it with each scenario's first run).
 * Every run ends in a record: a failed page load, set-up (testbed, origin,
 * PEP), dead helper or an interruption is a record with ok false and the
 * reason (campaign/run-guard.js); only bad input throws.
 */
export async function pageloadRun(plan, runNo, { outDir = null, lighthouse = false, interrupt } = {}) {
  const { scenario, profile, seed } = plan;
  const t = [Date.now()];
  const lap = () => t.push(Date.now()) && t[t.length - 1] - t[t.length - 2];
  const phases = {};
  const base = {
    scenario,
    run: runNo,
    seed: seed + runNo,
    link: plan.link,
    origin: plan.origin,
    emulation: emulationRecord(plan.emulation),
    // a replayed archive: its hosts (each at its own address) and where their names were looked up
    ...(plan.archive ? { archive: { hosts: plan.archive.hosts.length, dns: plan.dns } } : {}),
  };
  // with a results folder, the HAR of the load (gather/har.js), satbench's facts in its page
  const har = outDir && {
    satbench: { scenario, run: runNo, seed: seed + runNo, rtt_ms: configuredRttMs(profile) },
    content: Boolean(plan.harContent),
  };
  const gatherers = gatherersFor({ har, visual: plan.visual, outDir, scenario, runNo });
  const rec = await guardedRun({
    testbed: {
      profile,
      link: plan.link,
      seed: seed + runNo,
      tcp: plan.tcp,
      serverAddresses: plan.archive?.hosts.map((h) => h.address) ?? [],
    },
    interrupt,
    deadlineMs: pageloadDeadlineMs(plan.timeoutMs, {
      lighthouse: lighthouse && Boolean(outDir),
      afterLoad: afterLoadMs(gatherers),
    }),
    logsDir: outDir ? runFolder(outDir, 'logs', scenarioKey(scenario), runNo) : null,
    failed: (error, tb) => failedRunRecord({ ...base, link: tb?.backend ?? plan.link }, error),
    steps: async (tb, signal) => {
      phases.testbed_ms = lap();
      const { spki } = await startOrigin(tb, {
        origin: plan.origin,
        siteDir: plan.siteDir,
        archive: plan.archive,
        quic: plan.quic,
        bdpBytes: plan.bdpBytes,
        h3Priorities: plan.h3Priorities,
        altSvc: plan.altSvc,
      });
      const qlogDir = plan.pep.qlog && outDir ? qlogDirOf(outDir, scenario, runNo) : null;
      // a replayed archive's QUIC: Proxy-ST intercepts it to every origin's
      // address, and Proxy-GW trusts the origins by the key they share
      const via = plan.archive && plan.pepKind === 'quic' ? { transparent: true, originSpki: spki } : {};
      const chain = await startPepChain(tb, plan.pepKind, { sides: plan.pepSides, qlogDir, via });
      if (plan.archive && plan.dns !== 'none') await startDns(tb, { place: plan.dns, hosts: plan.archive.hosts });
      phases.origin_ms = lap();
      const load = {
        clientNs: tb.ns.client,
        protocol: scenario.protocol,
        spki: chain?.spki ?? spki,
        target: plan.archive
          ? archiveTarget(plan.archive, plan.dns)
          : siteTarget(scenario.protocol, chain?.serverAddr ?? ADDRESSES.server),
        timeoutMs: plan.timeoutMs,
        emulation: plan.emulation,
      };
      await chain?.beforeLoad?.();
      signal.throwIfAborted();
      const page = await loadPage({ ...load, gatherers, signal });
      phases.browser_ms = lap();
      signal.throwIfAborted();
      const rec = {
        ...base,
        link: tb.backend,
        ...page,
        origin_log: readOriginLog(tb),
        link_stats: await tb.linkStats(),
      };
      // a LEO slot process: the slot's phase at navigation start, and
      // whether a handover fell inside the load
      const slot = slotAtLoad(
        rec.link_stats.sat,
        profile.links.satellite.forward.slots?.period_s ?? profile.links.satellite.return.slots?.period_s,
        page.nav_unix_ms,
        page.load_wall_ms,
      );
      if (slot) rec.slot = slot;
      // the HAR goes to its own file, which the record names
      storeRunHar(rec, outDir, scenario, runNo);
      if (chain) {
        rec.pep = pepRecord(chain, await chain.stats());
        const through = checkThrough(scenario.protocol, rec.pep);
        if (rec.ok && !through.ok) Object.assign(rec, { ok: false, error: through.error });
      }
      // --lighthouse: a separate load after the measured one (whose record
      // and counters are taken).
      if (lighthouse && outDir) {
        rec.lighthouse = await runLighthouse({ ...load, outDir, scenario, runNo });
        phases.lighthouse_ms = lap();
      }
      return rec;
    },
  });
  phases.teardown_ms = lap();
  // What the harness costs per run besides the page load itself.
  rec.run_wall_ms = t[t.length - 1] - t[0];
  rec.phases = phases;
  return rec;
}
