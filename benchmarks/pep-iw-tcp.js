#!/usr/bin/env node
// The initial-window effect of the split-TCP PEP (issue 4): bytes of a
// 10 MB HTTP/1.1 download (curl in the client namespace, our origin in the
// server namespace) received in the first --seconds, end to end and
// through the tcp-pep chain, on a fresh testbed per run. Prints medians over
// --runs runs and their ratio (the issue asks for at least 2 on geo).
// Usage: node benchmarks/pep-iw-tcp.js [--profile geo] [--preset paper] [--runs 3] [--seconds 3] [--json]
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createTestbed } from '../harness/testbed/testbed.js';
import { installSignalHandlers } from '../harness/testbed/teardown.js';
import { loadProfile } from '../harness/testbed/profiles.js';
import { run, requireNetAdmin } from '../harness/core/sys.js';
import { ADDRESSES } from '../harness/testbed/addressing.js';
import { startOrigin } from '../harness/servers/origin.js';
import { startTcpPepChain } from '../harness/pep/tcp-chain.js';
import { median, round } from '../harness/core/stats.js';

const { values: opts } = parseArgs({
  options: {
    profile: { type: 'string', default: 'geo' },
    preset: { type: 'string', default: 'paper' },
    runs: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '3' },
    json: { type: 'boolean' },
  },
});
const runs = Number(opts.runs);
const seconds = Number(opts.seconds);
const SIZE = 10_000_000;

async function once(mode, i, root) {
  const tb = await createTestbed({ profile: loadProfile(opts.profile, { lossPct: 0 }), seed: 1 + i });
  try {
    await startOrigin(tb, { siteDir: root });
    const chain = mode === 'pep' ? await startTcpPepChain(tb, { preset: opts.preset }) : null;
    // -m: curl stops after `seconds` from its start (connection set-up included).
    const r = await run(
      'ip',
      [
        'netns',
        'exec',
        tb.ns.client,
        'curl',
        '-s',
        '-o',
        '/dev/null',
        '-m',
        String(seconds),
        '-w',
        '%{size_download} %{time_starttransfer}',
        `http://${ADDRESSES.server}/10mb.bin`,
      ],
      { allowFail: true, timeoutMs: (seconds + 10) * 1000 },
    );
    const [bytes, ttfb] = r.stdout.trim().split(' ').map(Number);
    const stats = chain ? await chain.stats() : null;
    return {
      mode,
      run: i + 1,
      bytes,
      ttfb_ms: ttfb * 1000,
      relayed: stats ? { st: stats.st.connections, gw: stats.gw.connections } : null,
    };
  } finally {
    await tb.destroy();
  }
}

async function main() {
  requireNetAdmin('benchmarks/pep-iw-tcp.js');
  // a signal tears down the testbed being used (the process ends with this script)
  installSignalHandlers();
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'tpep-iw-'));
  fs.writeFileSync(path.join(root, '10mb.bin'), crypto.randomBytes(SIZE));
  fs.writeFileSync(path.join(root, 'index.html'), '<!doctype html><title>x</title>');
  const samples = [];
  try {
    for (let i = 0; i < runs; i++) {
      for (const mode of ['e2e', 'pep']) {
        const s = await once(mode, i, root);
        samples.push(s);
        if (!opts.json)
          process.stderr.write(
            `run ${i + 1}/${runs} ${mode}: ${s.bytes} bytes in ${seconds} s${s.relayed ? ` (relayed st ${s.relayed.st}, gw ${s.relayed.gw})` : ''}\n`,
          );
      }
    }
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
  const med = (mode) => median(samples.filter((s) => s.mode === mode).map((s) => s.bytes));
  const result = {
    what: `bytes of a 10 MB HTTP/1.1 download received in the first ${seconds} s`,
    profile: opts.profile,
    preset: opts.preset,
    runs,
    seconds,
    e2e_bytes: med('e2e'),
    pep_bytes: med('pep'),
    ratio: round(med('pep') / med('e2e'), 2),
    samples,
  };
  if (opts.json) {
    console.log(JSON.stringify(result, null, 2));
    return;
  }
  console.log(`${result.what}, ${opts.profile}, no loss, medians of ${runs} runs`);
  console.log(`end to end (cubic, IW 10):         ${result.e2e_bytes} bytes`);
  console.log(`through the TCP PEP (${opts.preset}):`.padEnd(35) + ` ${result.pep_bytes} bytes`);
  console.log(`ratio: ${result.ratio}`);
}

main().catch((e) => {
  console.error(`bench-iw-tcp: ${e.message}`);
  process.exit(2);
});
