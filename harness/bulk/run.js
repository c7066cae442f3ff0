// One bulk run: a fresh testbed, one download (satbulk, directly or
// through a PEP chain, QPEP, the MASQUE tunnel or the VPN tunnel, or Chromium), and the run's record (kind "bulk"):
// the goodput bins, the metrics harness/results/goodput.js derives from
// them, and the objectives of the profile when it has some. Everything the
// run needs comes resolved in `plan` (campaign/scenario.js).
import { UsageError } from '../core/errors.js';
import { guardedRun, SETUP_MS } from '../campaign/run-guard.js';
import { browserBoundMs } from '../browser/chromium.js';
import { transferTimeoutS, transfersOf } from './matrix.js';
import { runFolder } from '../campaign/results-dir.js';
import { downloadMetrics, judgeRun } from '../results/goodput.js';
import { objectivesFor } from '../results/objectives.js';
import { checkThrough } from '../pep/chain.js';
import { satbulkRun } from './satbulk.js';
import { browserRun } from './browser.js';
import { carefulResumeOn, readCarefulResumeLog, keepCarefulResumeLogs } from '../servers/careful-resume-log.js';

const DOWNLOAD_FIELDS = [
  'connect_ms',
  'ttfb_ms',
  'bytes',
  'duration_ms',
  'complete',
  'requested_bytes',
  'requested_duration_ms',
  't0_unix_ms',
  'addr',
  'transport',
];

// Pure: the longest a bulk run of `scenario` over `linkMbps` may take
// before it is ended as stuck (run-guard.js): its set-up and the transfer
// (a revisit's two),
// which satbulk.js (`satbulk get` killed 30 s after the transfer's
// timeout) and browser.js (Chromium killed 30 s after it, then closed)
// bound.
export function bulkDeadlineMs(scenario, linkMbps) {
  return SETUP_MS + browserBoundMs((transferTimeoutS(scenario, linkMbps) * transfersOf(scenario) + 30) * 1000);
}

// Pure: a bulk scenario in a progress line.
export function scenarioName(s) {
  const what = s.size_bytes ? `${s.size_bytes / 1e6} MB` : `${s.duration_s} s`;
  return `${s.profile} loss ${s.loss_pct ?? 'as profile'} % ${s.protocol} ${what}${s.direction === 'up' ? ' up' : ''}${s.view === 'revisit' ? ' revisit' : ''}${s.revisit_capacity != null ? ` at ${s.revisit_capacity} × rate` : ''}`;
}

// Pure: a bulk record's result in a progress line.
export const describeRun = (rec) =>
  rec.ok
    ? `${(rec.metrics.bytes / 1e6).toFixed(1)} MB in ${(rec.metrics.duration_ms / 1000).toFixed(1)} s`
    : `failed (${rec.error})`;

// Pure: the CPU time, in ms, each process of a run used: the testbed's
// helpers by role, and the receiver (`satbulk get` reports its own).
export function runCpu(helpers, dl) {
  return { ...helpers, ...(dl?.cpu_ms != null ? { 'satbulk-get': dl.cpu_ms } : {}) };
}

// Pure: whether a download of `protocol` with record `pep` crossed its
// tunnel: a -vpn, -qpep or -masque download counts only if it did (quic-pep
// and tcp-pep connect to or are intercepted by their proxies, so always do).
export const crossedTunnel = (protocol, pep) =>
  ['vpn', 'qpep', 'masque'].includes(pep?.kind) ? checkThrough(protocol, pep) : { ok: true, error: null };

/**
 * Runs `plan` (a resolved bulk scenario: profile, linkMbps, bdpBytes,
 * pepKind, browser, quic, quicClient, tcp, pep, binMs, link, seed,
 * settings) once as run `runNo`. `outDir`: bulk's folder (a failed run's
 * helper logs, --qlog's qlogs). Every run ends in a record: a download,
 * set-up or helper that fails, or an interruption, is a record with ok
 * false and the reason (campaign/run-guard.js); only bad input throws.
 */
export async function bulkRun(plan, runNo, { outDir = null, interrupt } = {}) {
  const { scenario, linkMbps, seed } = plan;
  const base = {
    kind: 'bulk',
    scenario,
    run: runNo,
    seed: seed + runNo,
    link_rate_mbps: linkMbps,
    settings: plan.settings,
    link: plan.link,
  };
  const folder = (what) => (outDir ? runFolder(outDir, what, scenarioName(scenario), runNo) : null);
  return guardedRun({
    testbed: { profile: plan.profile, link: plan.link, seed: seed + runNo, tcp: plan.tcp },
    interrupt,
    deadlineMs: bulkDeadlineMs(scenario, linkMbps),
    logsDir: folder('logs'),
    failed: (error, tb) => ({ ...base, link: tb?.backend ?? plan.link, ok: false, error }),
    steps: async (tb, signal) => {
      base.link = tb.backend;
      let r;
      try {
        r = plan.browser
          ? await browserRun(tb, plan, { signal })
          : await satbulkRun(tb, plan, { qlogDir: plan.pep.qlog ? folder('qlog') : null });
      } catch (e) {
        if (e instanceof UsageError) throw e;
        signal.throwIfAborted();
        return {
          ...base,
          ok: false,
          error: e.message.split('\n')[0],
          cpu_ms: tb.cpuTimes(),
          link_stats: await tb.linkStats(),
        };
      }
      signal.throwIfAborted();
      const { dl } = r;
      const metrics = downloadMetrics(dl, { linkMbps });
      // a revisit: the transfer measured is the second connection's; the first's beside it
      const revisit = dl.first
        ? { first_connection: { ok: Boolean(dl.first.ok), metrics: downloadMetrics(dl.first, { linkMbps }) } }
        : {};
      const careful = carefulResumeOn(plan) ? { careful_resume: readCarefulResumeLog(tb) } : {};
      // with --qlog, the logs themselves: each connection's qlog events of Careful Resume
      if (careful.careful_resume && plan.pep.qlog) keepCarefulResumeLogs(tb, folder('qlog'));
      if (r.sender?.slow_start_exit_ms != null) metrics.sender_slow_start_exit_ms = r.sender.slow_start_exit_ms;
      if (r.sender?.max_cwnd) metrics.sender_max_cwnd_bytes = r.sender.max_cwnd;
      const objectives = objectivesFor(scenario.profile, scenario.direction);
      const through = crossedTunnel(scenario.protocol, r.pep);
      return {
        ...base,
        ok: Boolean(dl.ok) && through.ok,
        error: !dl.ok ? (dl.error ?? 'the download failed') : (through.error ?? null),
        protocol_seen: r.protocol_seen,
        metrics,
        objectives: objectives ? judgeRun(metrics, objectives) : null,
        goodput: { bin_ms: dl.bin_ms, bins: dl.bins },
        download: Object.fromEntries(DOWNLOAD_FIELDS.filter((k) => dl[k] !== undefined).map((k) => [k, dl[k]])),
        ...revisit,
        ...(r.revisit_link ? { revisit_link: r.revisit_link } : {}),
        ...careful,
        sender: r.sender,
        pep: r.pep,
        cpu_ms: runCpu(tb.cpuTimes(), dl),
        link_stats: await tb.linkStats(),
      };
    },
  });
}
