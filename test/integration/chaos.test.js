// What a long campaign meets, for real: a helper that dies during a load,
// a Chromium that hangs, a second Ctrl-C, and the chaos test: a small bench
// matrix that, at moments a seeded generator picks, gets SIGINT, SIGTERM or
// SIGKILL, or loses one of its helpers to SIGKILL. After each trial (and
// `satbench cleanup` where satbench itself was killed) nothing of it may
// remain, every finished run's record must be whole, and --resume must
// complete the matrix without running any run twice.
// SATBENCH_CHAOS_TRIALS and SATBENCH_CHAOS_SEED change the trials.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  satbench,
  spawnSatbench,
  exited,
  writeProfile,
  tinySite,
  until,
  cmdlines,
  testbedsOf,
  watchSatbench,
  leftBehind,
} from './helpers.js';
import { alive } from '../../harness/testbed/processes.js';
import { KILL_GRACE_MS, PROFILE_PREFIX } from '../../harness/browser/chromium.js';
import { afterLoadMs, gatherersFor } from '../../harness/pageload/gather/index.js';
import { run, ROOT } from '../../harness/core/sys.js';
import { rng } from '../../harness/core/stats.js';
import { SETUP_MS } from '../../harness/campaign/run-guard.js';

const wait = (ms) => new Promise((r) => setTimeout(r, ms));
const profile = (oneWayMs) =>
  writeProfile({
    satellite: {
      forward: { delay: `${oneWayMs}ms`, rate: '20mbit' },
      return: { delay: `${oneWayMs}ms`, rate: '20mbit' },
    },
    internet: { forward: { delay: '5ms' }, return: { delay: '5ms' } },
  });

// Chromium's main process of satbench process `pid` (its profile folder
// carries that PID; Chromium's children have --type=).
const chromiumOf = (pid) =>
  cmdlines().filter((p) => p.cmd.includes(`${PROFILE_PREFIX}${pid}-`) && !p.cmd.includes('--type='));

// Watches satbench process `pid`: its testbeds and helpers, Chromium included.
const observe = (pid) => watchSatbench(pid, () => chromiumOf(pid).map((p) => p.pid));

/** Everything of satbench process `pid` still on the machine, in words. */
async function leftovers(pid, made) {
  const found = await leftBehind(made);
  for (const p of cmdlines())
    if (p.cmd.includes(`${PROFILE_PREFIX}${pid}-`) && alive(p.pid))
      found.push(`process ${p.pid}: ${p.cmd.slice(0, 80)}`);
  for (const n of fs.readdirSync(os.tmpdir()))
    if (n.startsWith(`${PROFILE_PREFIX}${pid}-`)) found.push(`Chromium profile ${n}`);
  const nft = await run('nft', ['list', 'tables'], { allowFail: true });
  for (const l of nft.stdout.split('\n')) if (l.includes('satbench')) found.push(`host nft ${l.trim()}`);
  return [...new Set(found)];
}

const linesOf = (file) => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '');
const records = (text) =>
  text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
const runKey = (r) => `${r.scenario.protocol}#${r.run}`;

function collect(child) {
  const out = { stderr: '', stdout: '' };
  child.stderr.on('data', (d) => (out.stderr += d));
  child.stdout.on('data', (d) => (out.stdout += d));
  return out;
}

describe('a run meets trouble (integration, real Chromium)', function () {
  this.timeout(120000);
  const site = tinySite();
  // `bench` of the site over h1 and a 150 ms link, with `extra` options, into
  // a fresh folder named after `tag`, watched from its start; once its
  // Chromium is up.
  const watchedBench = async (tag, extra) => {
    const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), `satbench-${tag}-`)), 'r');
    const child = spawnSatbench([
      'bench',
      '--profile',
      profile(150),
      '--protocol',
      'h1',
      '--site',
      site,
      ...extra,
      '--out',
      out,
    ]);
    const io = collect(child);
    const watch = observe(child.pid);
    // the set-up before it is bounded by the run's SETUP_MS (a loaded machine takes more than 30 s)
    const chromium = await until(() => chromiumOf(child.pid)[0], SETUP_MS);
    return { out, child, io, watch, chromium };
  };

  it('a helper killed during a load fails its run within a second or two, naming it; the next run goes on', async () => {
    // 150 ms each way: the load takes a second or more, long enough to kill linkem in it
    const { out, child, io, watch, chromium } = await watchedBench('death', ['-n', '2', '--timeout', '60']);
    await wait(300);
    const linkem = testbedsOf(child.pid)[0].processes.find((p) => p.role === 'linkem-sat');
    process.kill(linkem.pid, 'SIGKILL');
    const killed = Date.now();
    await until(() => io.stderr.includes('run 1 of 2 done'), 30000);
    const tookMs = Date.now() - killed;
    const { code } = await exited(child);
    watch.stop();
    assert.equal(code, 0, io.stderr);
    const recs = records(linesOf(path.join(out, 'results.jsonl')));
    assert.equal(recs.length, 2);
    assert.equal(recs[0].ok, false);
    assert.match(recs[0].error, new RegExp(`^linkem for the sat link \\(pid ${linkem.pid}\\) was killed by SIGKILL`));
    // Noticed, not timed out: the watch polls every 200 ms (typically ~1 s
    // here); the bound leaves room for a loaded CI machine, far below --timeout 60.
    console.log(`      linkem killed: its run ended ${tookMs} ms later`);
    assert.ok(tookMs < 10000, `the run took ${tookMs} ms to end after linkem died (Chromium pid ${chromium.pid})`);
    assert.equal(recs[1].ok, true, recs[1].error);
    assert.match(io.stderr, /run 1 of 2 done · failed \(linkem for the sat link/);
    assert.deepEqual(await leftovers(child.pid, watch.made), []);
  });

  it('a helper that fails to start fails its run with its exit status and log; the matrix goes on', async () => {
    // the real binaries, but an origin that makes certificates and refuses to serve
    const bin = fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-bin-'));
    for (const b of ['linkem', 'satprobe', 'tcp-pep', 'quic-pep', 'satbulk'])
      fs.symlinkSync(path.join(ROOT, 'target/release', b), path.join(bin, b));
    const real = path.join(ROOT, 'target/release/origin');
    const script = `#!/bin/sh\n[ "$1" = gen-cert ] && exec ${real} "$@"\necho "origin: cannot bind 198.18.3.2:443" >&2\nexit 3\n`;
    fs.writeFileSync(path.join(bin, 'origin'), script, { mode: 0o755 });
    const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-nostart-')), 'r');
    const args = ['bench', '--profile', profile(10), '--protocol', 'h1', '--site', site, '-n', '2', '--out', out];
    const r = await satbench(args, { env: { SATBENCH_BIN_DIR: bin } });
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stderr, /internal error/);
    const recs = records(linesOf(path.join(out, 'results.jsonl')));
    assert.equal(recs.length, 2);
    for (const rec of recs) {
      assert.equal(rec.ok, false);
      assert.match(
        rec.error,
        /^the origin server \(pid \d+\) exited with status 3; log: origin: cannot bind 198\.18\.3\.2:443$/,
      );
    }
    assert.equal(JSON.parse(fs.readFileSync(path.join(out, 'summary.json'), 'utf8')).groups[0].failed, 2);
    assert.ok(fs.existsSync(path.join(out, 'index.html')));
  });

  it('a hung Chromium holds its run for its timeout and a few seconds, not more', async () => {
    const { out, child, io, watch, chromium } = await watchedBench('hung', ['-n', '1', '--timeout', '3']);
    process.kill(chromium.pid, 'SIGSTOP'); // answers nothing, not even close()
    const { code } = await exited(child);
    watch.stop();
    assert.equal(code, 0, io.stderr);
    const [rec] = records(linesOf(path.join(out, 'results.jsonl')));
    assert.equal(rec.ok, false);
    // Chromium is killed 5 s after the 3 s timeout and what the gatherers may
    // take after the load (an h1 run's: tcp_cc's ss reads), whichever call
    // hangs (close() included)
    const gatherers = gatherersFor({ har: { content: false }, endHosts: { client: 'c', server: 's' } });
    const bound = 3000 + KILL_GRACE_MS + afterLoadMs(gatherers) + 1500;
    assert.ok(rec.phases.browser_ms < bound, `the browser held the run ${rec.phases.browser_ms} ms (bound ${bound})`);
    assert.deepEqual(await leftovers(child.pid, watch.made), []);
  });

  it('a second signal exits at once, and cleanup removes what it left', async () => {
    const { child, io, watch } = await watchedBench('twice', ['-n', '2']);
    child.kill('SIGINT');
    await wait(20);
    const second = Date.now();
    child.kill('SIGINT');
    const { code } = await exited(child);
    watch.stop();
    assert.equal(code, 130, io.stderr);
    assert.ok(Date.now() - second < 1000, `exited ${Date.now() - second} ms after the second signal`);
    assert.match(io.stderr, /second signal \(SIGINT\): exiting now; `satbench cleanup` removes what is left/);
    const c = await satbench(['cleanup', '--json']);
    assert.equal(c.code, 0, c.stderr);
    assert.deepEqual(await leftovers(child.pid, watch.made), []);
  });
});

describe('chaos: signals and kills at random moments (integration)', function () {
  const TRIALS = Number(process.env.SATBENCH_CHAOS_TRIALS ?? 30);
  const SEED = Number(process.env.SATBENCH_CHAOS_SEED ?? 20261123);
  this.timeout(15 * 60 * 1000);

  it(`${TRIALS} trials: nothing left behind, no finished record lost, --resume completes the matrix`, async () => {
    const site = tinySite();
    const prof = profile(10);
    const options = ['--profile', prof, '--protocol', 'h1,h1-pep', '--site', site, '-n', '2', '--timeout', '20'];
    const matrix = ['h1#1', 'h1-pep#1', 'h1#2', 'h1-pep#2'].sort();
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-chaos-'));
    const random = rng(SEED); // seeded: the same seed, the same trials
    const pick = (list) => list[Math.floor(random() * list.length)];

    // One undisturbed campaign: that the matrix runs, and how long it takes.
    const t0 = Date.now();
    const full = await satbench(['bench', ...options, '--out', path.join(root, 'full')], { timeoutMs: 120000 });
    const fullMs = Date.now() - t0;
    assert.equal(full.code, 0, full.stderr);
    assert.deepEqual(
      records(linesOf(path.join(root, 'full/results.jsonl')))
        .map(runKey)
        .sort(),
      matrix,
    );

    const totals = {
      trials: 0,
      leftovers: 0,
      lost: 0,
      repeated: 0,
      interrupted: 0,
      early: 0,
      missed: 0,
      killedLeft: 0,
    };
    const byAction = {};
    const problems = [];
    for (let trial = 1; trial <= TRIALS; trial++) {
      // each action in turn, so that every one is tried; the moment and the helper are random
      const action = ['SIGINT', 'SIGTERM', 'SIGKILL', 'helper'][(trial - 1) % 4];
      const delayMs = Math.round(random() * 0.9 * fullMs);
      const out = path.join(root, `t${trial}`);
      const file = path.join(out, 'results.jsonl');
      const label = `trial ${trial} (${action} at ${delayMs} ms)`;
      const child = spawnSatbench(['bench', ...options, '--out', out]);
      const io = collect(child);
      const watch = observe(child.pid);
      const end = exited(child);
      let victim = null;
      const finished = await Promise.race([wait(delayMs).then(() => false), end.then(() => true)]);
      const snapshot = linesOf(file);
      if (finished) totals.missed++;
      else if (action === 'helper') {
        // a testbed helper or Chromium, whichever is there (between runs: the next one's)
        const candidates = async () => {
          const list = [...testbedsOf(child.pid).flatMap((st) => st.processes), ...chromiumOf(child.pid)].filter((p) =>
            alive(p.pid),
          );
          return list.length ? list : null;
        };
        const list = await Promise.race([until(candidates, 10000).catch(() => null), end.then(() => null)]);
        if (list) {
          victim = pick(list);
          try {
            process.kill(victim.pid, 'SIGKILL');
          } catch {
            /* it ended just now */
          }
        } else totals.missed++;
      } else child.kill(action);
      let hang;
      const { code, signal } = await Promise.race([
        end,
        new Promise((r) => (hang = setTimeout(() => r({ code: 'hung', signal: null }), 90000))),
      ]);
      clearTimeout(hang);
      watch.stop();
      if (code === 'hung') {
        child.kill('SIGKILL');
        problems.push(`${label}: satbench did not end within 90 s`);
      }
      byAction[action] = (byAction[action] ?? 0) + 1;
      totals.trials++;

      const expected = { SIGINT: 130, SIGTERM: 143, SIGKILL: null, helper: 0 }[action];
      if (!finished && action !== 'SIGKILL' && code !== expected) {
        // a signal before the campaign began ends node itself: nothing was built yet
        if (signal === action && !testbedsOf(child.pid).length && !linesOf(file)) totals.early++;
        else problems.push(`${label}: exit ${code} ${signal ?? ''}, expected ${expected}: ${io.stderr.slice(-300)}`);
      }
      if ([130, 143].includes(code))
        for (const f of ['summary.json', 'index.html'])
          if (!fs.existsSync(path.join(out, f))) problems.push(`${label}: interrupted without ${f}`);
      if (action === 'SIGKILL' && !finished) {
        // what a SIGKILL leaves, before cleanup: shows the search finds things
        if ((await leftovers(child.pid, watch.made)).length) totals.killedLeft++;
        const c = await satbench(['cleanup']);
        if (c.code !== 0) problems.push(`${label}: cleanup exited ${c.code}: ${c.stderr}`);
      }
      const left = await leftovers(child.pid, watch.made);
      totals.leftovers += left.length;
      if (left.length) problems.push(`${label}: left ${left.join(', ')}`);

      // every record finished before the kill is still there, unchanged, and
      // every run reported done has its record
      const after = linesOf(file);
      const whole = snapshot.slice(0, snapshot.lastIndexOf('\n') + 1);
      if (!after.startsWith(whole)) problems.push(`${label}: a finished record changed`);
      const wholeAfter = after.slice(0, after.lastIndexOf('\n') + 1);
      const done = (io.stderr.match(/ done · /g) ?? []).length;
      const recs = records(wholeAfter);
      if (done > recs.length) {
        totals.lost += done - recs.length;
        problems.push(`${label}: ${done} runs done, ${recs.length} records`);
      }
      totals.interrupted += recs.filter((r) => r.interrupted).length;
      if (victim?.what && action === 'helper' && recs.some((r) => !r.ok && r.error.startsWith(victim.what)))
        byAction.helperNamed = (byAction.helperNamed ?? 0) + 1;

      // --resume with the same options (a folder killed before its campaign began starts anew)
      const resumed = fs.existsSync(path.join(out, 'campaign.json'))
        ? await satbench(['bench', ...options, '--resume', out], { timeoutMs: 120000 })
        : await satbench(['bench', ...options, '--out', out], { timeoutMs: 120000 });
      if (resumed.code !== 0) problems.push(`${label}: --resume exited ${resumed.code}: ${resumed.stderr.slice(-300)}`);
      const keys = records(linesOf(file)).map(runKey);
      const repeated = keys.length - new Set(keys).size;
      totals.repeated += repeated;
      if (repeated || [...new Set(keys)].sort().join() !== matrix.join())
        problems.push(`${label}: after --resume the runs are ${keys.join(' ')}`);
    }
    console.log(
      `      chaos: ${totals.trials} trials (seed ${SEED}; ${Object.entries(byAction)
        .map(([k, v]) => `${k} ${v}`)
        .join(
          ', ',
        )}), leftovers found ${totals.leftovers}, records lost ${totals.lost}, runs repeated ${totals.repeated}, ` +
        `runs recorded as interrupted ${totals.interrupted}, signals before the campaign began ${totals.early}, ` +
        `trials where satbench had ended first ${totals.missed}, SIGKILLs that left something for cleanup ${totals.killedLeft}; ` +
        `an undisturbed campaign took ${fullMs} ms`,
    );
    assert.deepEqual(problems, []);
    assert.ok(totals.killedLeft > 0, 'no SIGKILL left anything to find: the search for leftovers sees nothing');
    assert.ok(totals.missed <= TRIALS / 5, `${totals.missed} of ${TRIALS} trials came after satbench had ended`);
  });
});
