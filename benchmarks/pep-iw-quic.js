#!/usr/bin/env node
// The initial-window effect of the QUIC PEP (issue 4): bytes of a 10 MB
// QUIC download (satbulk get quic in the client namespace, satbulk serve in
// the server namespace) received in the first --seconds, end to end and
// through the quic-pep chain (the paper's setting: satellite hop NewReno
// with IW 100), on a fresh testbed per run. Times start just before the
// client connects, so the handshake counts. Prints medians over --runs
// runs and their ratio (the issue asks for at least 2 on geo).
// Usage: node benchmarks/pep-iw-quic.js [--profile geo] [--runs 3] [--seconds 3] [--parallel] [--json]
//   --parallel: the chain's default handshake mode instead of --h3
import { parseArgs } from 'node:util';
import { createTestbed } from '../harness/testbed/testbed.js';
import { installSignalHandlers } from '../harness/testbed/teardown.js';
import { loadProfile } from '../harness/testbed/profiles.js';
import { run, binPath, requireNetAdmin } from '../harness/core/sys.js';
import { ADDRESSES, SITE_HOST } from '../harness/testbed/addressing.js';
import { originCertificate } from '../harness/servers/origin.js';
import { startSatbulkServer, satbulkGetArgs } from '../harness/bulk/satbulk.js';
import { startQuicPepChain, PEP_QUIC_PORT } from '../harness/pep/quic-chain.js';
import { median, round } from '../harness/core/stats.js';

const { values: opts } = parseArgs({
  options: {
    profile: { type: 'string', default: 'geo' },
    runs: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '3' },
    parallel: { type: 'boolean' },
    json: { type: 'boolean' },
  },
});
const runs = Number(opts.runs);
const seconds = Number(opts.seconds);
const SIZE = 10_000_000;

async function once(mode, i) {
  const tb = await createTestbed({ profile: loadProfile(opts.profile, { lossPct: 0 }), seed: 1 + i });
  try {
    const tls = await originCertificate(tb);
    // satbulk takes the origin's place on 443/udp, so the chain needs nothing special
    await startSatbulkServer(tb, { tls, quicPort: PEP_QUIC_PORT });
    const chain =
      mode === 'pep'
        ? await startQuicPepChain(tb, {
            siteHost: SITE_HOST,
            originCertPath: tls.cert,
            alpn: ['satbulk'],
            h3: !opts.parallel,
          })
        : null;
    const [addr, ca] = chain ? [chain.serverAddr, chain.ca] : [ADDRESSES.server, tls.cert];
    const download = { protocol: 'quic', size_bytes: SIZE };
    const get = satbulkGetArgs(download, { addr: `${addr}:${PEP_QUIC_PORT}`, ca, binMs: 100, timeoutS: 120 });
    const r = await run('ip', ['netns', 'exec', tb.ns.client, binPath('satbulk'), ...get], {
      allowFail: true,
      timeoutMs: 180000,
    });
    const j = JSON.parse(r.stdout);
    if (!j.ok) throw new Error(`${mode} run ${i + 1}: satbulk get: ${j.error}`);
    const bins = Math.round((seconds * 1000) / j.bin_ms);
    const bytes = j.bins.slice(0, bins).reduce((a, b) => a + b, 0);
    const stats = chain ? await chain.stats() : null;
    return {
      mode,
      run: i + 1,
      bytes,
      connect_ms: j.connect_ms,
      ttfb_ms: j.ttfb_ms,
      duration_ms: j.duration_ms,
      relayed: stats ? { st: stats.st.connections, gw: stats.gw.connections } : null,
    };
  } finally {
    await tb.destroy();
  }
}

async function main() {
  requireNetAdmin('benchmarks/pep-iw-quic.js');
  // a signal tears down the testbed being used (the process ends with this script)
  installSignalHandlers();
  const samples = [];
  for (let i = 0; i < runs; i++) {
    for (const mode of ['e2e', 'pep']) {
      const s = await once(mode, i);
      samples.push(s);
      if (!opts.json) {
        process.stderr.write(
          `run ${i + 1}/${runs} ${mode}: ${s.bytes} bytes in ${seconds} s, all 10 MB in ${Math.round(s.duration_ms)} ms` +
            `${s.relayed ? ` (relayed st ${s.relayed.st}, gw ${s.relayed.gw})` : ''}\n`,
        );
      }
    }
  }
  const med = (mode, k = 'bytes') => median(samples.filter((s) => s.mode === mode).map((s) => s[k]));
  const result = {
    what: `bytes of a 10 MB QUIC download received in the first ${seconds} s`,
    profile: opts.profile,
    handshake: opts.parallel ? 'parallel' : 'h3',
    runs,
    seconds,
    e2e_bytes: med('e2e'),
    pep_bytes: med('pep'),
    ratio: round(med('pep') / med('e2e'), 2),
    e2e_duration_ms: round(med('e2e', 'duration_ms'), 0),
    pep_duration_ms: round(med('pep', 'duration_ms'), 0),
    samples,
  };
  if (opts.json) {
    console.log(JSON.stringify(result, null, 2));
    return;
  }
  console.log(`${result.what}, ${opts.profile}, no loss, medians of ${runs} runs`);
  console.log(
    `end to end (cubic, IW 10):                 ${result.e2e_bytes} bytes (all 10 MB: ${result.e2e_duration_ms} ms)`,
  );
  console.log(
    `through the QUIC PEP (newreno, IW 100):    ${result.pep_bytes} bytes (all 10 MB: ${result.pep_duration_ms} ms)`,
  );
  console.log(`ratio: ${result.ratio}`);
}

main().catch((e) => {
  console.error(`bench-iw-quic: ${e.message}`);
  process.exit(2);
});
