// Hand-made results for the report and compare tests: records shaped like
// bench's, with page-load times around the paper's medians and realistic,
// seeded noise (a few percent of spread, now and then a slow outlier).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { rng } from '../harness/stats.js';
import { summarize } from '../harness/summary.js';

const BASE = {
  geo: { h1: [1222, 3841, 10806], h3: [1314, 2759, 7669], 'h1-pep': [1215, 3852, 11144], 'h3-pep': [2717, 3581, 7344] },
  leo: { h1: [291, 1138, 3218], h3: [434, 1408, 2612], 'h1-pep': [289, 1095, 3308], 'h3-pep': [1418, 1880, 3172] },
};

export function scenarios({ profiles = ['geo', 'leo'], losses = [0], protocols = ['h1', 'h3'], sites = ['kepler'] } = {}) {
  const out = [];
  for (const profile of profiles) for (const loss_pct of losses) for (const protocol of protocols) for (const site of sites) out.push({ profile, loss_pct, protocol, site });
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
        records.push({ scenario, run, seed: seed + run, link: 'linkem', ok: false, error: f[2], protocol_seen: null, metrics: null, navigation: null });
        return;
      }
      const metrics = { response_start_ms: noisy(rs, 'response_start_ms'), fcp_ms: noisy(fcp, 'fcp_ms'), plt_ms: noisy(plt, 'plt_ms') };
      metrics.lcp_ms = metrics.fcp_ms;
      metrics.dom_content_loaded_ms = Math.round((metrics.response_start_ms + 500) * 10) / 10;
      metrics.resource_count = 74;
      metrics.transfer_bytes = 838304;
      const proto = scenario.protocol.startsWith('h3') ? 'h3' : 'http/1.1';
      records.push({
        scenario, run, seed: seed + run, link: 'linkem', ok: true, error: null,
        protocol_seen: { document: proto, resources: { [proto]: 74 } },
        metrics,
        navigation: { name: 'https://satbench.test/', nextHopProtocol: proto, responseStart: metrics.response_start_ms, loadEventStart: metrics.plt_ms },
      });
    });
  }
  return records;
}

// A results folder (results.jsonl and summary.json) in a new temp dir.
export function writeResultsDir(records, { meta = {}, dir } = {}) {
  const out = dir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-fixture-'));
  fs.mkdirSync(out, { recursive: true });
  fs.writeFileSync(path.join(out, 'results.jsonl'), records.map((r) => JSON.stringify(r)).join('\n') + '\n');
  const summary = { meta: { seed: 1, generated: '2026-01-01T00:00:00.000Z', ...meta }, groups: summarize(records, { seed: meta.seed ?? 1 }) };
  fs.writeFileSync(path.join(out, 'summary.json'), JSON.stringify(summary, null, 2));
  return out;
}
