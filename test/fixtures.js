// Hand-made results for the report and compare tests: records shaped like
// bench's, with page-load times around the paper's medians and realistic,
// seeded noise (a few percent of spread, now and then a slow outlier).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { rng } from '../harness/core/stats.js';
import { summarize } from '../harness/analysis/summary.js';
import { downloadMetrics, judgeRun } from '../harness/results/goodput.js';
import { objectivesFor } from '../harness/results/objectives.js';
import { linkPair } from '../harness/pageload/run.js';

const BASE = {
  geo: { h1: [1222, 3841, 10806], h3: [1314, 2759, 7669], 'h1-pep': [1215, 3852, 11144], 'h3-pep': [2717, 3581, 7344] },
  leo: { h1: [291, 1138, 3218], h3: [434, 1408, 2612], 'h1-pep': [289, 1095, 3308], 'h3-pep': [1418, 1880, 3172] },
};

export function scenarios({
  profiles = ['geo', 'leo'],
  losses = [0],
  protocols = ['h1', 'h3'],
  sites = ['kepler'],
} = {}) {
  const out = [];
  for (const profile of profiles)
    for (const loss_pct of losses)
      for (const protocol of protocols) for (const site of sites) out.push({ profile, loss_pct, protocol, site });
  return out;
}

/**
 * Records for every scenario × run. `scale` multiplies a metric (e.g.
 * {plt_ms: 1.3}), `cv` is the relative spread, `fail` lists [scenarioIndex,
 * run, error] of failed runs.
 */
export function makeRecords(list, { runs = 20, seed = 7, scale = {}, cv = 0.04, fail = [] } = {}) {
  const next = rng(seed);
  const normal = () => Math.sqrt(-2 * Math.log(1 - next())) * Math.cos(2 * Math.PI * next());
  const records = [];
  for (let run = 1; run <= runs; run++) {
    list.forEach((scenario, si) => {
      const [rs, fcp, plt] = BASE[scenario.profile]?.[scenario.protocol] ?? [500, 1500, 4000];
      const lossFactor = 1 + scenario.loss_pct * 0.8;
      const noisy = (v, k) => {
        const outlier = next() < 0.05 ? 1.25 : 1;
        return Math.round(v * lossFactor * (scale[k] ?? 1) * outlier * (1 + cv * normal()) * 10) / 10;
      };
      const f = fail.find(([i, r]) => i === si && r === run);
      if (f) {
        records.push({
          scenario,
          run,
          seed: seed + run,
          link: 'linkem',
          ok: false,
          error: f[2],
          protocol_seen: null,
          metrics: null,
          navigation: null,
        });
        return;
      }
      const metrics = {
        response_start_ms: noisy(rs, 'response_start_ms'),
        fcp_ms: noisy(fcp, 'fcp_ms'),
        plt_ms: noisy(plt, 'plt_ms'),
      };
      metrics.lcp_ms = metrics.fcp_ms;
      metrics.dom_content_loaded_ms = Math.round((metrics.response_start_ms + 500) * 10) / 10;
      metrics.resource_count = 74;
      metrics.transfer_bytes = 838304;
      const proto = scenario.protocol.startsWith('h3') ? 'h3' : 'http/1.1';
      records.push({
        scenario,
        run,
        seed: seed + run,
        link: 'linkem',
        ok: true,
        error: null,
        protocol_seen: { document: proto, resources: { [proto]: 74 } },
        metrics,
        navigation: {
          name: 'https://satbench.test/',
          nextHopProtocol: proto,
          responseStart: metrics.response_start_ms,
          loadEventStart: metrics.plt_ms,
        },
      });
    });
  }
  return records;
}

// A server's handshake counts over one load (a record's `handshakes.origin`
// or `.proxy_st`, as the servers' connection logs give them), every
// connection over `protocol`.
export const handshakeCounts = (connections, resumed, early = 0, earlyRequests = 0, protocol = 'h3') => {
  const counts = {
    connections,
    full: connections - resumed,
    resumed,
    early_offered: early,
    early_accepted: early,
    early_requests: earlyRequests,
  };
  return { ...counts, by_protocol: { [protocol]: { ...counts } } };
};

/**
 * `runs` linked pairs of `view` over `scenario` (bench --view repeat or
 * revisit): a first view of PLT about 2000 ms (every object fetched, one
 * full handshake) and a second of about `second` ms (75 objects
 * revalidated, one resumed handshake, with 0-RTT in every other run);
 * `counts` false: records from before the counts; `extra(run)` adds to
 * both records of a run.
 */
export function makeViewPairs(
  runs,
  {
    scenario = { profile: 'geo', loss_pct: 0, protocol: 'h3', site: 'kepler' },
    view = 'revisit',
    second = 900,
    counts = true,
    extra = () => ({}),
  } = {},
) {
  const s = { ...scenario, view };
  const rec = (sc, run, plt, more) => ({
    scenario: sc,
    run,
    seed: run,
    ok: true,
    metrics: { plt_ms: plt, response_start_ms: plt / 4, fcp_ms: plt / 2 },
    ...(counts ? more : {}),
    ...extra(run),
  });
  return Array.from({ length: runs }, (_, i) =>
    linkPair([
      rec({ ...s, first_view: true }, i + 1, 2000 + ((i * 37) % 101), {
        cache_use: { from_cache: 0, revalidated: 0, fetched: 76 },
        handshakes: { origin: handshakeCounts(1, 0) },
      }),
      rec(s, i + 1, second + ((i * 53) % 89), {
        cache_use: { from_cache: 0, revalidated: 75, fetched: 1 },
        handshakes: { origin: handshakeCounts(1, 1, i % 2, 3 * (i % 2)) },
      }),
    ]),
  ).flat();
}

// A results folder (results.jsonl and summary.json) in a new temp dir.
export function writeResultsDir(records, { meta = {}, dir } = {}) {
  const out = dir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-fixture-'));
  fs.mkdirSync(out, { recursive: true });
  fs.writeFileSync(path.join(out, 'results.jsonl'), records.map((r) => JSON.stringify(r)).join('\n') + '\n');
  const summary = {
    meta: { seed: 1, generated: '2026-01-01T00:00:00.000Z', ...meta },
    groups: summarize(records, { seed: meta.seed ?? 1 }),
  };
  fs.writeFileSync(path.join(out, 'summary.json'), JSON.stringify(summary, null, 2));
  return out;
}

// Bulk downloads, shaped like `satbench bulk`'s records: a window that
// doubles every round trip from the initial window up to the link rate
// (with a PEP, from a larger one and a shorter set-up, as Kosek et al.
// saw; the split-TCP PEP's smaller than the QUIC PEP's, so that the
// objectives they meet differ), loss taking a share off the rate, seeded
// noise per 100 ms bin. Metrics and objectives come from
// harness/results/goodput.js as in a real run.
const BULK_LINKS = {
  geo: { rtt_ms: 580, mbps: 20 },
  leo: { rtt_ms: 90, mbps: 20 },
  'quic4sat-medium': { rtt_ms: 650, mbps: 50 },
  'quic4sat-large': { rtt_ms: 650, mbps: 250 },
};

export function bulkScenarios({
  profiles = ['geo'],
  losses = [0],
  protocols = ['quic', 'quic-pep', 'tcp', 'tcp-pep'],
  duration_s = 10,
  size_bytes = null,
} = {}) {
  const out = [];
  for (const profile of profiles)
    for (const loss_pct of losses)
      for (const protocol of protocols) {
        out.push({ profile, loss_pct, protocol, ...(size_bytes ? { size_bytes } : { duration_s }) });
      }
  return out;
}

export function makeBulkRecords(list, { runs = 3, seed = 11, binMs = 100, cv = 0.08, fail = [] } = {}) {
  const next = rng(seed);
  const records = [];
  for (let run = 1; run <= runs; run++) {
    list.forEach((scenario, si) => {
      const link = BULK_LINKS[scenario.profile] ?? { rtt_ms: 600, mbps: 20 };
      const base = { kind: 'bulk', scenario, run, seed: seed + run, link: 'linkem', link_rate_mbps: link.mbps };
      const f = fail.find(([i, r]) => i === si && r === run);
      if (f) {
        records.push({ ...base, ok: false, error: f[2], metrics: null, goodput: null });
        return;
      }
      const pep = scenario.protocol.endsWith('-pep');
      const connect = pep ? 1 + 2 * next() : link.rtt_ms * (1 + 0.05 * next());
      const ttfb = connect + link.rtt_ms * (1 + 0.05 * next());
      const iw = ({ 'quic-pep': 100, 'tcp-pep': 40 }[scenario.protocol] ?? 10) * 1460;
      const ceiling = ((link.mbps * 1e6) / 8) * (1 - Math.min(0.6, (scenario.loss_pct ?? 0) * (pep ? 0.15 : 0.4)));
      const size = scenario.size_bytes ?? Infinity;
      const endMs = scenario.duration_s ? scenario.duration_s * 1000 : Infinity;
      const bins = [];
      let bytes = 0;
      let durationMs = endMs;
      for (let t = 0; t < endMs && bytes < size; t += binMs) {
        const mid = t + binMs / 2;
        const rate =
          mid < ttfb ? 0 : Math.min(ceiling, (iw * 2 ** ((mid - ttfb) / link.rtt_ms)) / (link.rtt_ms / 1000));
        let b = Math.round(rate * (binMs / 1000) * Math.max(0, 1 + cv * (next() * 2 - 1)));
        if (bytes + b >= size) {
          b = size - bytes;
          durationMs = t + binMs * (rate > 0 ? Math.max(0.05, b / (rate * (binMs / 1000))) : 1);
        }
        bins.push(b);
        bytes += b;
      }
      const dl = {
        bins,
        bin_ms: binMs,
        bytes,
        duration_ms: Math.round(durationMs),
        complete: true,
        connect_ms: connect,
        ttfb_ms: ttfb,
        requested_bytes: scenario.size_bytes ?? null,
      };
      const metrics = downloadMetrics(dl, { linkMbps: link.mbps });
      metrics.sender_slow_start_exit_ms = Math.round(ttfb + link.rtt_ms * (pep ? 4 : 7));
      const objectives = objectivesFor(scenario.profile, scenario.direction);
      records.push({
        ...base,
        ok: true,
        error: null,
        protocol_seen: scenario.protocol.startsWith('quic') ? 'satbulk' : 'tcp',
        metrics,
        objectives: objectives ? judgeRun(metrics, objectives) : null,
        goodput: { bin_ms: binMs, bins },
        download: { connect_ms: connect, ttfb_ms: ttfb, bytes, duration_ms: dl.duration_ms, complete: true },
      });
    });
  }
  return records;
}

// One successful bulk run on geo (2 s, 1 s bins) of `protocol`: `bins`
// bytes per second, `extra` keys on top (a PEP's record, …).
export const bulkRecord = (protocol, bins, extra = {}) => ({
  kind: 'bulk',
  scenario: { profile: 'geo', loss_pct: 0, protocol, duration_s: 2 },
  run: 1,
  ok: true,
  error: null,
  link_rate_mbps: 50,
  goodput: { bin_ms: 1000, bins },
  metrics: { bytes: bins.reduce((a, b) => a + b, 0) },
  ...extra,
});
