#!/usr/bin/env node
// npm run bench:replay-fidelity — does a replayed archive load like the
// page it was recorded from? kepler split over six origins (www, css, img,
// photos, txt and bin.kepler.test), served directly by its own servers
// (one `origin serve --root` per host, each at its own address, each with
// its own certificate) in a testbed; recorded there once with `satbench
// record` (in the client namespace, through the testbed's DNS); then
// loaded --runs times directly and --runs times replayed (`bench --site
// ARCHIVE`), DNS in gw both ways. Prints both PLT medians with their 95 %
// intervals and the replay's difference (issue 15's target: within 3 %).
// Usage: node benchmarks/replay-fidelity.js [--profile geo] [--protocol h2] [--runs 10] [--json]
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { bench } from '../harness/pageload/bench.js';
import { checkBench } from '../harness/cli/bench-plan.js';
import { DEFAULTS } from '../harness/core/defaults.js';
import { loadPage } from '../harness/pageload/load.js';
import { binPath, requireNetAdmin, ROOT } from '../harness/core/sys.js';
import { bootstrapMedianCi, median, round } from '../harness/core/stats.js';
import { makeCertificate } from '../harness/core/certificates.js';
import { createTestbed, startProcess } from '../harness/testbed/testbed.js';
import { installSignalHandlers } from '../harness/testbed/teardown.js';
import { loadProfile } from '../harness/testbed/profiles.js';
import { originAddress, ORIGIN_HTTP_PORT, ORIGIN_PORT } from '../harness/testbed/addressing.js';
import { startDns } from '../harness/servers/dns.js';
import { ensureSite } from '../sites/generate.js';

const { values: o } = parseArgs({
  options: {
    profile: { type: 'string', default: 'geo' },
    protocol: { type: 'string', default: 'h2' },
    runs: { type: 'string', default: '10' },
    json: { type: 'boolean' },
  },
});
requireNetAdmin('bench:replay-fidelity');
// a signal tears down the testbed being used (the process ends with this script)
installSignalHandlers();
const runs = Number(o.runs);
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-replay-fidelity-'));
const progress = (m) => process.stderr.write(`${m}\n`);

// kepler's folders, each on a host of its own (pic split in two)
const HOSTS = ['www', 'css', 'img', 'photos', 'txt', 'bin'].map((h) => `${h}.kepler.test`);
const hostOf = (rel) =>
  rel.startsWith('css/')
    ? 'css.kepler.test'
    : rel.startsWith('pic/img')
      ? 'photos.kepler.test'
      : rel.startsWith('pic/')
        ? 'img.kepler.test'
        : rel.startsWith('txt/')
          ? 'txt.kepler.test'
          : 'bin.kepler.test';

// One root per host: the index with absolute URLs, and each file under the same path on its host.
function splitSite(siteDir) {
  const roots = Object.fromEntries(HOSTS.map((h) => [h, path.join(work, 'roots', h)]));
  for (const rel of fs.readdirSync(siteDir, { recursive: true })) {
    const from = path.join(siteDir, rel);
    if (rel === 'index.html' || fs.statSync(from).isDirectory()) continue;
    const to = path.join(roots[hostOf(rel)], rel);
    fs.mkdirSync(path.dirname(to), { recursive: true });
    fs.copyFileSync(from, to);
  }
  const index = fs
    .readFileSync(path.join(siteDir, 'index.html'), 'utf8')
    .replace(
      /(src|href)="((?:css|pic|txt|noncompressible)\/[^"]+)"/g,
      (_, a, rel) => `${a}="https://${hostOf(rel)}/${rel}"`,
    );
  fs.mkdirSync(roots['www.kepler.test'], { recursive: true });
  fs.writeFileSync(path.join(roots['www.kepler.test'], 'index.html'), index);
  return roots;
}

const roots = splitSite(await ensureSite('kepler'));
const hosts = HOSTS.map((name, i) => ({ name, address: originAddress(i) }));
const certs = [];
for (const h of hosts)
  certs.push(await makeCertificate({ name: h.name, ip: h.address, dir: path.join(work, 'tls', h.name) }));
const pins = certs.map((c) => c.spki);
const page = 'https://www.kepler.test/';
const profile = loadProfile(o.profile);
const archiveDir = path.join(work, 'archive');

// A testbed with the page's own servers and DNS in gw; `use(tb)` runs in it.
async function withDirectSite(seed, use) {
  const tb = await createTestbed({ profile, seed, serverAddresses: hosts.map((h) => h.address) });
  try {
    for (const [i, h] of hosts.entries())
      await startProcess(
        tb.state,
        `origin-${h.name}`,
        ['ip', 'netns', 'exec', tb.ns.server, binPath('origin'), 'serve', '--root', roots[h.name], '--addr', h.address]
          .concat(['--http-port', String(ORIGIN_HTTP_PORT), '--https-port', String(ORIGIN_PORT)])
          .concat(['--cert', certs[i].cert, '--key', certs[i].key]),
        { logPath: path.join(tb.dir, `origin-${h.name}.log`), what: `the origin of ${h.name}` },
      );
    await startDns(tb, { place: 'gw', hosts });
    return await use(tb);
  } finally {
    await tb.destroy();
  }
}

// satbench record in the client namespace, through the testbed's DNS
const record = (tb) =>
  new Promise((resolve, reject) =>
    execFile(
      'ip',
      ['netns', 'exec', tb.ns.client, process.execPath, path.join(ROOT, 'harness/cli.js'), 'record', page]
        .concat(['--out', archiveDir, '--timeout', '120'])
        .concat(pins.flatMap((p) => ['--spki', p])),
      { timeout: 180000 },
      (err, stdout, stderr) => (err ? reject(new Error(`record failed: ${stderr}`)) : resolve(stderr)),
    ),
  );

progress(`recording ${page} over ${o.profile}`);
progress(await withDirectSite(1, record));

const direct = [];
for (let i = 1; i <= runs; i++) {
  const rec = await withDirectSite(1 + i, (tb) =>
    loadPage({
      clientNs: tb.ns.client,
      protocol: o.protocol,
      spki: pins.join(','),
      target: { url: page, hosts, mapHosts: false },
      timeoutMs: DEFAULTS.timeoutMs,
    }),
  );
  if (!rec.ok) throw new Error(`direct load ${i}: ${rec.error}`);
  direct.push(rec.metrics.plt_ms);
  progress(`direct ${i} of ${runs}: PLT ${Math.round(rec.metrics.plt_ms)} ms`);
}

const outDir = path.join(work, 'replay');
const plan = await checkBench(
  { profiles: [o.profile], losses: [0], protocols: [o.protocol], sites: [archiveDir], runs },
  { dns: 'gw' },
);
const summary = await bench(plan, { outDir, onProgress: (m) => progress(`replay: ${m}`) });
const g = summary.groups[0];
const stat = (values) => ({
  median: round(median(values), 0),
  ci95: bootstrapMedianCi(values).map((x) => round(x, 0)),
});
const result = {
  profile: o.profile,
  protocol: o.protocol,
  runs,
  origins: hosts.length,
  direct: stat(direct),
  replay: { median: round(g.metrics.plt_ms.median, 0), ci95: g.metrics.plt_ms.ci95.map((x) => round(x, 0)) },
  replay_failed: g.failed,
  unmatched: g.origins?.unmatched ?? null,
  work,
};
result.difference_pct = round(((result.replay.median - result.direct.median) / result.direct.median) * 100, 1);
if (o.json) process.stdout.write(JSON.stringify(result, null, 2) + '\n');
else {
  console.log(
    `replay fidelity: kepler over ${hosts.length} origins, ${o.profile}, ${o.protocol}, ${runs} loads each, DNS in gw`,
  );
  console.log(`  direct  PLT ${result.direct.median} ms [${result.direct.ci95.join(', ')}]`);
  console.log(
    `  replay  PLT ${result.replay.median} ms [${result.replay.ci95.join(', ')}] (${g.failed} failed, ${result.unmatched?.requests.length ?? '?'} unmatched)`,
  );
  console.log(`  replay − direct: ${result.difference_pct} % (target: within 3 %); files in ${work}`);
}
