#!/usr/bin/env node
// npm run bench:views — issue 30's targets for the second visit: kepler over
// --profile (geo), each of --protocols (h1, h3, h3-pep) in a `repeat` and a
// `revisit` pair (bench --view), once per --caches policy (revalidate,
// immutable: a campaign each, since --cache is a campaign setting), --runs
// pairs each (10). Prints per protocol, cache and view the medians of
// Response Start and PLT of the pair's first view and of its second, the
// ratio, the two-sided Mann–Whitney p and Cliff's δ; the second view's
// cache use (from cache, revalidated, fetched) and, where the servers
// reported them, its handshakes (full, resumed, 0-RTT accepted); and the
// 0-RTT target: h3 revisit's Response Start against one satellite round
// trip plus 40 ms.
// Usage: node benchmarks/views.js [--runs 10] [--profile geo] [--protocols h1,h3,h3-pep]
//          [--caches revalidate,immutable] [--site kepler] [--keep] [--from DIR] [--json]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { bench } from '../harness/pageload/bench.js';
import { checkBench } from '../harness/cli/bench-plan.js';
import { readResults } from '../harness/results/store.js';
import { loadProfile } from '../harness/testbed/profiles.js';
import { requireNetAdmin } from '../harness/core/sys.js';
import { cliffsDelta, fmtP, mannWhitneyU, median, round } from '../harness/core/stats.js';
import { opensPair, viewOf } from '../harness/core/views.js';

const { values: o } = parseArgs({
  options: {
    runs: { type: 'string', default: '10' },
    profile: { type: 'string', default: 'geo' },
    protocols: { type: 'string', default: 'h1,h3,h3-pep' },
    caches: { type: 'string', default: 'revalidate,immutable' },
    site: { type: 'string', default: 'kepler' },
    keep: { type: 'boolean' },
    from: { type: 'string' },
    json: { type: 'boolean' },
  },
});
if (!o.from) requireNetAdmin('bench:views');
const caches = o.caches.split(',');
const protocols = o.protocols.split(',');
const VIEWS = ['repeat', 'revisit'];
const profile = loadProfile(o.profile);
// the path's round trip (satellite and ground links): the issue's "one satellite round trip", 580 ms on geo
const rttMs = Object.values(profile.links).reduce((a, l) => a + l.forward.delay_ms + l.return.delay_ms, 0);

// --from DIR: the folders a kept run left (DIR/CACHE/results.jsonl)
const root = o.from ?? fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-views-'));
const moment = () => (o.from ? null : { at: new Date().toISOString(), loadavg: os.loadavg().map((x) => round(x, 2)) });
const started = moment();
if (!o.from) {
  process.stderr.write(`results in ${root}\n`);
  for (const cache of caches) {
    const matrix = {
      profiles: [o.profile],
      losses: [0],
      protocols,
      sites: [o.site],
      views: VIEWS,
      runs: Number(o.runs),
    };
    const plan = await checkBench(matrix, { cache });
    await bench(plan, { outDir: path.join(root, cache), onProgress: (m) => process.stderr.write(`${cache}: ${m}\n`) });
  }
}
const ended = moment();

const med = (xs) => (xs.length ? round(median(xs), 0) : null);
const metric = (recs, key) => recs.map((r) => r.metrics?.[key]).filter((v) => typeof v === 'number');
// a count's median over the second views that have it (null: none has)
const count = (recs, get) => med(recs.map(get).filter((v) => typeof v === 'number'));

// Chromium's handshakes: with Proxy-ST through a QUIC PEP, else with the origin
const chromiumsServer = (r) => r.handshakes?.proxy_st ?? r.handshakes?.origin;

/** Pure: the first and second views of each pair in `records`, compared. */
function comparePairs(records, { protocol, view }) {
  const own = records.filter((r) => r.scenario.protocol === protocol && viewOf(r.scenario) === view);
  const firsts = own.filter((r) => r.ok && opensPair(r.scenario));
  const seconds = own.filter((r) => r.ok && !opensPair(r.scenario));
  const side = (key) => {
    const [a, b] = [metric(firsts, key), metric(seconds, key)];
    return {
      first: med(a),
      second: med(b),
      ratio: a.length && b.length ? round(median(b) / median(a), 3) : null,
      p: a.length && b.length ? mannWhitneyU(a, b).p : null,
      delta: a.length && b.length ? round(cliffsDelta(b, a), 2) : null,
    };
  };
  return {
    pairs: firsts.length,
    failed: own.filter((r) => !r.ok).length,
    busy: own.filter((r) => r.machine?.busy).length,
    response_start_ms: side('response_start_ms'),
    plt_ms: side('plt_ms'),
    cache_use: {
      from_cache: count(seconds, (r) => r.cache_use?.from_cache),
      revalidated: count(seconds, (r) => r.cache_use?.revalidated),
      fetched: count(seconds, (r) => r.cache_use?.fetched),
    },
    handshakes: {
      full: count(seconds, (r) => chromiumsServer(r)?.full),
      resumed: count(seconds, (r) => chromiumsServer(r)?.resumed),
      early_accepted: count(seconds, (r) => chromiumsServer(r)?.early_accepted),
    },
  };
}

const rows = caches.flatMap((cache) => {
  const file = path.join(root, cache, 'results.jsonl');
  const records = fs.existsSync(file) ? readResults(file) : [];
  return protocols.flatMap((protocol) =>
    VIEWS.map((view) => ({ cache, protocol, view, ...comparePairs(records, { protocol, view }) })),
  );
});
const revisitH3 = rows.filter((r) => r.protocol === 'h3' && r.view === 'revisit');
const target = {
  bound_ms: rttMs + 40,
  rtt_ms: rttMs,
  revisit_h3: revisitH3.map((r) => ({
    cache: r.cache,
    response_start_ms: r.response_start_ms.second,
    first_view_ms: r.response_start_ms.first,
    early_accepted: r.handshakes.early_accepted,
    within: r.response_start_ms.second !== null && r.response_start_ms.second <= rttMs + 40,
  })),
};
const result = { site: o.site, profile: o.profile, runs: Number(o.runs), started, ended, rows, target };
if (o.keep || o.from) result.out = root;
else fs.rmSync(root, { recursive: true, force: true });

if (o.json) process.stdout.write(JSON.stringify(result, null, 2) + '\n');
else {
  console.log(`${o.site} over ${o.profile} (RTT ${rttMs} ms), ${o.runs} pairs each: the second view against its first`);
  if (started)
    console.log(
      `  load average (1, 5, 15 min): ${started.loadavg.join(', ')} at start, ${ended.loadavg.join(', ')} at end`,
    );
  const cell = (s) =>
    `${s.first ?? '–'} → ${s.second ?? '–'}${s.ratio === null ? '' : ` ×${s.ratio.toFixed(2)} p ${fmtP(s.p)} δ ${s.delta}`}`;
  const dash = (v) => v ?? '–';
  for (const r of rows) {
    const c = r.cache_use;
    const hs = r.handshakes;
    console.log(
      `  ${r.cache.padEnd(10)} ${r.protocol.padEnd(6)} ${r.view.padEnd(7)} n ${r.pairs}` +
        `  Response Start ${cell(r.response_start_ms)}  PLT ${cell(r.plt_ms)}` +
        `  cache ${dash(c.from_cache)}/${dash(c.revalidated)}/${dash(c.fetched)}` +
        `  handshakes ${dash(hs.full)}/${dash(hs.resumed)}/${dash(hs.early_accepted)}` +
        `${r.failed ? `  [${r.failed} failed]` : ''}${r.busy ? `  [${r.busy} busy]` : ''}`,
    );
  }
  console.log(
    "  (cache: the second view's medians from cache/revalidated/fetched; handshakes: full/resumed/0-RTT accepted, from the server Chromium talked to: our origin, or Proxy-ST)",
  );
  for (const t of target.revisit_h3)
    console.log(
      `  target: h3 revisit (${t.cache}) Response Start ${dash(t.response_start_ms)} ms against ${target.bound_ms} ms` +
        ` (one satellite round trip + 40 ms): ${t.within ? 'within' : 'not within'}; first view ${dash(t.first_view_ms)} ms;` +
        ` 0-RTT accepted (median per load) ${dash(t.early_accepted)}`,
    );
}
