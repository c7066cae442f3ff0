// A campaign is checked once into its plan (cli/bench-plan.js,
// cli/bulk-plan.js): the campaign loop and every run read that plan, and
// nothing below parses or checks the settings again.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DEFAULTS } from '../../harness/core/defaults.js';
import { checkBench } from '../../harness/cli/bench-plan.js';
import { checkBulk } from '../../harness/cli/bulk-plan.js';
import { parsePepOptions } from '../../harness/cli/pep-options.js';
import { profileCache } from '../../harness/campaign/scenario.js';
import { bench } from '../../harness/pageload/bench.js';
import { bulk } from '../../harness/bulk/bulk.js';
import { failedRunRecord } from '../../harness/pageload/run.js';
import { campaignSettings } from '../../harness/results/meta.js';

const CCS = { congestionControls: ['reno', 'cubic'] };

describe('a campaign checked once into its plan', () => {
  let tmp;
  let benchMeta;
  before(() => (tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-plan-'))));
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it('bench: applies every default once and types each chain’s PEP sides', async () => {
    const matrix = { profiles: ['geo'], losses: [0], protocols: ['h1-pep', 'h3-pep'], sites: ['kepler'], runs: 1 };
    const pep = parsePepOptions({ sat: 'initial-window=50' });
    const plan = await checkBench(matrix, { pep }, { ...CCS, profiles: profileCache() });
    assert.equal(plan.settings.timeoutMs, DEFAULTS.timeoutMs);
    assert.equal(plan.settings.link, DEFAULTS.link);
    assert.equal(plan.settings.origin, DEFAULTS.origin);
    // the split-TCP PEP takes numbers, the QUIC PEP the options as given
    assert.deepEqual(plan.pepChains.tcp, { preset: 'paper', sat: { 'initial-window': 50 }, ground: {} });
    assert.deepEqual(plan.pepChains.quic, { sat: { 'initial-window': '50' }, ground: {}, tunnel: 'warm' });
    assert.equal(plan.pepChains.qpep, undefined, 'no -qpep protocol, no QPEP sides');
  });

  it('bench: the loop and every run read the plan, and nothing checks it again', async () => {
    const matrix = { profiles: ['geo'], losses: [0], protocols: ['h1', 'h3-pep'], sites: ['kepler'], runs: 2 };
    const plan = await checkBench(matrix, { timeoutMs: 5000 }, { ...CCS, profiles: profileCache() });
    // what check would refuse now runs as it is: only check judges settings
    plan.pepChains.quic.sat.cc = 'not-a-cc';
    plan.settings.quic = { 'initial-window': 'many' };
    const seen = [];
    const run = async (resolved, runNo) => {
      seen.push(resolved);
      const { scenario, seed, link, origin } = resolved;
      return failedRunRecord({ scenario, run: runNo, seed: seed + runNo, link, origin }, 'not run: a test');
    };
    const summary = await bench(plan, { outDir: path.join(tmp, 'bench'), run });
    assert.equal(seen.length, 4);
    const pep = seen.find((r) => r.scenario.protocol === 'h3-pep');
    assert.equal(pep.pepSides, plan.pepChains.quic, 'the plan’s own sides, not parsed again');
    assert.equal(seen.find((r) => r.scenario.protocol === 'h1').pepSides, null);
    for (const r of seen) {
      assert.equal(r.timeoutMs, 5000);
      assert.equal(r.quic, plan.settings.quic);
      assert.equal(r.profile, plan.profiles('geo', 0), 'the profile the check parsed');
      assert.equal(r.cache, 'revalidate', "kepler's own cache policy, no --cache given");
    }
    assert.equal(
      summary.groups.reduce((a, g) => a + g.failed, 0),
      4,
    );
    // the campaign's settings under meta.settings, as bulk writes them
    assert.equal(summary.meta.settings.origin, 'rust');
    assert.equal(summary.meta.settings.alt_svc, DEFAULTS.altSvc);
    assert.deepEqual(summary.meta.settings.cache, { kepler: 'revalidate' });
    assert.equal(summary.meta.origin, undefined);
    benchMeta = summary.meta;
  });

  it('bulk: the runs read the plan’s settings and sides', async () => {
    const matrix = { profiles: ['geo'], losses: [0], protocols: ['tcp-pep'], duration_s: 1, size_bytes: null, runs: 1 };
    const plan = checkBulk(matrix, { pep: parsePepOptions({ preset: 'B' }) }, { ...CCS, profiles: profileCache() });
    assert.equal(plan.settings.binMs, DEFAULTS.binMs);
    assert.equal(plan.settings.pep.tunnel, DEFAULTS.pepTunnel);
    assert.equal(plan.pepChains.tcp.preset, 'B');
    const seen = [];
    const run = async (resolved, runNo) => {
      seen.push(resolved);
      return { kind: 'bulk', scenario: resolved.scenario, run: runNo, ok: false, error: 'not run: a test' };
    };
    const summary = await bulk(plan, { outDir: path.join(tmp, 'bulk'), run });
    assert.equal(seen.length, 1);
    // both kinds write their meta in one shape; bulk's is tagged
    assert.deepEqual(Object.keys(summary.meta), ['kind', ...Object.keys(benchMeta)]);
    assert.equal(summary.meta.settings.bin_ms, DEFAULTS.binMs);
    assert.equal(seen[0].pepSides, plan.pepChains.tcp);
    assert.equal(seen[0].binMs, DEFAULTS.binMs);
  });
});

describe('summary.json meta.settings read back', () => {
  it('reads the settings of both shapes: under settings, and bench’s older flat meta', () => {
    const settings = { origin: 'h2o', alt_svc: 'tcp', quic: {}, tcp: null, pep: { tunnel: 'warm' } };
    assert.deepEqual(campaignSettings({ seed: 1, settings }), settings);
    assert.deepEqual(campaignSettings({ seed: 1, link: 'linkem', ...settings, matrix: {} }), settings);
    assert.deepEqual(campaignSettings({ seed: 1 }), {});
    assert.deepEqual(campaignSettings(undefined), {});
  });
});
