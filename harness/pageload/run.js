// One page-load run: a fresh testbed, the origin (and the PEP chain for a
// -pep protocol, QPEP for a -qpep one, the VPN tunnel for a -vpn one), one
// load in a fresh Chromium (a repeat or revisit view: two), the run's
// record (or the pair's two). Everything the run needs
// comes resolved in `plan` (campaign/scenario.js).
import { guardedRun, SETUP_MS } from '../campaign/run-guard.js';
import {
  logBytes,
  originConnLogPath,
  originLogBytes,
  readLogSlice,
  readOriginLog,
  startOrigin,
} from '../servers/origin.js';
import { handshakesRecord } from '../servers/connection-log.js';
import { carefulResumeLogBytes, carefulResumeOn, readCarefulResumeLog } from '../servers/careful-resume-log.js';
import { startPepChain, pepRecord, checkThrough } from '../pep/chain.js';
import { runFolder } from '../campaign/results-dir.js';
import { scenarioKey } from '../kinds/pageload.js';
import { loadPage, loadPair, noLoad } from './load.js';
import { loadLabel, loadScenarios, viewOf } from '../core/views.js';
import { archiveTarget } from './archive-site.js';
import { startDns } from '../servers/dns.js';
import { siteTarget, browserBoundMs, KILL_GRACE_MS } from '../browser/chromium.js';
import { ADDRESSES, namespacesOf, randomId } from '../testbed/addressing.js';
import { runLighthouse, lighthouseKillAfterMs } from './lighthouse.js';
import { afterLoadMs, gatherersFor } from './gather/index.js';
import { storeRunHar } from './har-file.js';
import { configuredRttMs } from '../testbed/profiles.js';
import { emulationRecord } from '../browser/emulation.js';
import { slotAtLoad } from './slot-phase.js';

// Pure: the longest a page-load run of `timeoutMs` may take before it is
// ended as stuck (run-guard.js): its set-up, the browser of each of its
// `loads` (a repeat or revisit pair: 2; each killed KILL_GRACE_MS after the
// timeout and what its gatherers may add after the load, `afterLoad` ms,
// then closed) and, with `lighthouse`, Lighthouse's browser.
export function pageloadDeadlineMs(timeoutMs, { lighthouse = false, afterLoad = 0, loads = 1 } = {}) {
  const load = browserBoundMs(timeoutMs + KILL_GRACE_MS + afterLoad);
  return SETUP_MS + loads * load + (lighthouse ? browserBoundMs(lighthouseKillAfterMs(timeoutMs)) : 0);
}

// Pure: `obj` with each value v of key k replaced by f(v, k).
const mapValues = (obj, f) => Object.fromEntries(Object.entries(obj).map(([k, v]) => [k, f(v, k)]));

// Pure: a page-load record's result in a progress line (a pair's: each load's, its view named).
export const describeRun = (rec) =>
  `${loadLabel(rec.scenario) ? `${loadLabel(rec.scenario)} ` : ''}${rec.ok ? `PLT ${Math.round(rec.metrics.plt_ms)} ms` : `failed (${rec.error})`}`;

// Pure: where the QUIC PEPs of one run write their qlogs (bench --qlog).
export const qlogDirOf = (outDir, scenario, runNo) => runFolder(outDir, 'qlog', scenarioKey(scenario), runNo);

// Pure: the record of a run that ended without a page load (its set-up,
// a helper or the browser failed, or it was interrupted): the shape of a
// failed load's record, with the reason.
export function failedRunRecord(base, error) {
  return { ...base, ...noLoad(error) };
}

/**
 * Pure: the records of one run's loads linked: each record of a repeat or
 * revisit pair names the other (`paired_with`: its scenario and run).
 */
export function linkPair(records) {
  if (records.length !== 2) return records;
  const ref = (r) => ({ scenario: r.scenario, run: r.run });
  return [
    { ...records[0], paired_with: ref(records[1]) },
    { ...records[1], paired_with: ref(records[0]) },
  ];
}

/**
 * Runs `plan` (a resolved page-load scenario: profile, siteDir, pepKind,
 * pepSides, origin, quic, h3Priorities, altSvc, tcp, pep, link, seed, timeoutMs,
 * emulation, visual, harContent) once as run `runNo`. `outDir`: bench's
 * folder (qlogs, Lighthouse reports, the HAR, the filmstrip, a failed
 * run's helper logs); `plan.visual`: screenshots and visual metrics;
 * `lighthouse`: after this run's load, a separate Lighthouse load (bench asks
 * for it with each scenario's first run).
 * A repeat or revisit scenario (core/views.js) loads the page twice on
 * the one testbed, origin and PEP chain, and returns both records, the
 * pair's first view first (linkPair). Every run ends in its records: a
 * failed page load, set-up (testbed, origin, PEP), dead helper or an
 * interruption is a record with ok false and the reason
 * (campaign/run-guard.js); only bad input throws.
 */
export async function pageloadRun(plan, runNo, { outDir = null, lighthouse = false, interrupt } = {}) {
  const { scenario, profile, seed } = plan;
  // the testbed's id, chosen here so that the gatherers know its end hosts' namespaces
  const id = randomId();
  const ns = namespacesOf(id);
  const t = [Date.now()];
  const lap = () => t.push(Date.now()) && t[t.length - 1] - t[t.length - 2];
  const phases = {};
  const base = {
    run: runNo,
    seed: seed + runNo,
    link: plan.link,
    origin: plan.origin,
    emulation: emulationRecord(plan.emulation),
    // a replayed archive: its hosts (each at its own address) and where their names were looked up
    ...(plan.archive ? { archive: { hosts: plan.archive.hosts.length, dns: plan.dns } } : {}),
  };
  // the scenario of each load the run records, and its gatherers
  const loads = loadScenarios(scenario).map((s) => ({
    scenario: s,
    // with a results folder, the HAR of the load (gather/har.js), satbench's facts in its page
    gatherers: gatherersFor({
      har: outDir && {
        satbench: { scenario: s, run: runNo, seed: seed + runNo, rtt_ms: configuredRttMs(profile) },
        content: Boolean(plan.harContent),
      },
      visual: plan.visual,
      outDir,
      scenario: s,
      runNo,
      endHosts: { client: ns.client, server: ns.server },
    }),
  }));
  const records = await guardedRun({
    testbed: {
      id,
      profile,
      link: plan.link,
      seed: seed + runNo,
      tcp: plan.tcp,
      serverAddresses: plan.archive?.hosts.map((h) => h.address) ?? [],
    },
    interrupt,
    deadlineMs: pageloadDeadlineMs(plan.timeoutMs, {
      lighthouse: lighthouse && Boolean(outDir),
      afterLoad: afterLoadMs(loads[0].gatherers),
      loads: loads.length,
    }),
    logsDir: outDir ? runFolder(outDir, 'logs', scenarioKey(scenario), runNo) : null,
    failed: (error, tb) =>
      linkPair(
        loads.map((l) => failedRunRecord({ scenario: l.scenario, ...base, link: tb?.backend ?? plan.link }, error)),
      ),
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
        cache: plan.cache,
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
      // the counters as each load ends: the origin's logs up to there (requests;
      // connections: ours and Proxy-ST's), the link's and the PEPs'
      const connLogs = { origin: originConnLogPath(tb), proxySt: chain?.connLog ?? null };
      const counters = [];
      const count = async () =>
        counters.push({
          log: originLogBytes(tb),
          conns: mapValues(connLogs, (f) => (f ? logBytes(f) : 0)),
          cr: carefulResumeLogBytes(tb),
          link_stats: await tb.linkStats(),
          pep: await chain?.stats(),
        });
      const pages =
        loads.length === 1
          ? [await loadPage({ ...load, gatherers: loads[0].gatherers, signal })]
          : await loadPair({
              ...load,
              view: viewOf(scenario),
              gatherers: loads.map((l) => l.gatherers),
              signal,
              between: count,
            });
      await count();
      phases.browser_ms = lap();
      signal.throwIfAborted();
      const recs = pages.map((page, i) => {
        // a second load that never started has the counters of the first
        const c = counters[Math.min(i, counters.length - 1)];
        const rec = {
          scenario: loads[i].scenario,
          ...base,
          link: tb.backend,
          ...page,
          origin_log: readOriginLog(tb, { from: i ? counters[0].log : 0, to: c.log }),
          link_stats: c.link_stats,
        };
        // each server's connections of this load (a server that keeps no log: absent)
        const handshakes = handshakesRecord(
          mapValues(connLogs, (f, k) => f && readLogSlice(f, { from: i ? counters[0].conns[k] : 0, to: c.conns[k] })),
        );
        if (handshakes) rec.handshakes = handshakes;
        // careful-resume=on (--quic: our origin; --pep-sat: Proxy-GW): each of the
        // load's connections that started from a saved path
        if (carefulResumeOn(plan))
          rec.careful_resume = readCarefulResumeLog(tb, { from: i ? counters[0].cr : {}, to: c.cr });
        // a LEO slot process: the slot's phase at navigation start, and
        // whether a handover fell inside the load (a failed one: before it failed)
        const slot = slotAtLoad(
          rec.link_stats.sat,
          profile.links.satellite.forward.slots?.period_s ?? profile.links.satellite.return.slots?.period_s,
          page.nav_unix_ms,
          page.load_wall_ms ?? page.failed_after_ms,
        );
        if (slot) rec.slot = slot;
        // the HAR goes to its own file, which the record names
        storeRunHar(rec, outDir, loads[i].scenario, runNo);
        if (chain) {
          rec.pep = pepRecord(chain, c.pep);
          const through = checkThrough(scenario.protocol, rec.pep);
          if (rec.ok && !through.ok) Object.assign(rec, { ok: false, error: through.error });
        }
        return rec;
      });
      // a revisit's second load: how many of its connections the first load had opened (none: closed between)
      if (viewOf(scenario) === 'revisit' && recs[1].ok) {
        const [first, second] = loads.map((l) => l.gatherers.find((g) => g.key === 'connections'));
        recs[1].connection_reuse = second.reuse(first.ids());
      }
      // --lighthouse: a separate load after the measured one (whose record
      // and counters are taken).
      if (lighthouse && outDir) {
        recs.at(-1).lighthouse = await runLighthouse({ ...load, outDir, scenario, runNo });
        phases.lighthouse_ms = lap();
      }
      return linkPair(recs);
    },
  });
  phases.teardown_ms = lap();
  // What the harness costs per run besides the page load itself (a pair's: both loads').
  for (const rec of [records].flat()) {
    rec.run_wall_ms = t[t.length - 1] - t[0];
    rec.phases = phases;
  }
  return records.length === 1 ? records[0] : records;
}
