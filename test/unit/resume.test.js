// A campaign's folder: campaign.json (the matrix and every setting) written
// as the matrix starts, which options of a resumed command line contradict
// it, the folder checked before anything is made, and --resume's repair of
// a torn last line.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { UsageError } from '../../harness/core/errors.js';
import {
  newManifest,
  manifestProblem,
  readManifest,
  contradictions,
  contradictionMessage,
  MANIFEST,
} from '../../harness/campaign/manifest.js';
import { LOCK } from '../../harness/campaign/lock.js';
import { openResults, checkOutDir } from '../../harness/campaign/results-dir.js';
import { benchInput } from '../../harness/cli/bench.js';
import { bulkInput } from '../../harness/cli/bulk.js';
import { CAMPAIGN_OPTIONS, campaignInput } from '../../harness/cli/campaign.js';

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-resume-'));
const usage = (pattern) => (e) => e instanceof UsageError && pattern.test(e.message) && !e.message.includes('\n');

// The parsed options of bench and bulk as parseArgs gives them: defaults, then what was typed.
const BENCH_DEFAULTS = { preset: 'quick', seed: '1', link: 'auto', timeout: '120', origin: 'rust' };
const BULK_DEFAULTS = { seed: '1', link: 'auto', 'bin-ms': '100' };
const CONFIG = { ...CAMPAIGN_OPTIONS, shard: { type: 'string' }, lighthouse: { type: 'boolean' } };

// `satbench bench --profile leo --protocol h1 -n 3`, as saved.
const LEO = { ...BENCH_DEFAULTS, profile: 'leo', protocol: 'h1', n: '3' };
const benchAgainst = (given, saved = LEO) => contradictions({ saved, given, input: benchInput }).map((c) => c.option);

describe('campaign.json and --resume', () => {
  describe('contradictions', () => {
    it('none when nothing or the same values are given, in whatever words', () => {
      assert.deepEqual(benchAgainst({}), []);
      assert.deepEqual(benchAgainst({ profile: 'leo', protocol: 'h1', n: '3', seed: '1', link: 'auto' }), []);
      assert.deepEqual(benchAgainst({ n: '03', seed: '01', profile: ' leo', preset: 'quick', timeout: '120' }), []);
      const two = { ...BENCH_DEFAULTS, profile: 'leo,geo', quic: 'cc=bbr' };
      assert.deepEqual(benchAgainst({ profile: 'leo, geo', quic: 'cc=bbr' }, two), []);
    });

    it('names each option that changes the matrix or a setting', () => {
      assert.deepEqual(
        benchAgainst({ protocol: 'h3', n: '5', seed: '2', link: 'netem', origin: 'h2o', shard: '1/2' }),
        ['protocol', 'n', 'seed', 'link', 'origin', 'shard'],
      );
      assert.deepEqual(benchAgainst({ lighthouse: true, timeout: '60', quic: 'cc=bbr' }), [
        'lighthouse',
        'timeout',
        'quic',
      ]);
      // the preset changes what the folder's options left to it (losses, protocols)
      assert.deepEqual(benchAgainst({ preset: 'ifip2022' }, { ...BENCH_DEFAULTS, n: '3' }), ['preset']);
      // …and its settings (ifip2022 keeps Alt-Svc off h3)…
      assert.deepEqual(benchAgainst({ preset: 'ifip2022' }, { ...LEO, loss: '0' }), ['preset']);
      // …and nothing once the folder's options fix everything the presets differ in
      const fixed = { ...LEO, loss: '0', 'alt-svc': 'tcp', 'pep-tunnel': 'per-connection' };
      assert.deepEqual(benchAgainst({ preset: 'ifip2022' }, fixed), []);
    });

    it("options typed for the quick preset's matrix contradict a folder made with --profile leo --protocol h1 -n 3", () => {
      // the README's own `bench --resume out/mine` typed with the preset's values
      assert.deepEqual(benchAgainst({ profile: 'leo,geo', protocol: 'h1,h3', n: '5' }), ['profile', 'protocol', 'n']);
    });

    it('an option that cannot go with the saved ones contradicts them (bulk --size on a --duration campaign)', () => {
      const saved = { ...BULK_DEFAULTS, duration: '5' };
      const against = (given) => contradictions({ saved, given, input: bulkInput }).map((c) => c.option);
      assert.deepEqual(against({ size: '1MB' }), ['size']);
      assert.deepEqual(against({ duration: '5s', 'bin-ms': '100' }), []);
      assert.deepEqual(against({ 'bin-ms': '50', protocol: 'tcp-pep', 'quic-client': 'initial-window=20' }), [
        'bin-ms',
        'protocol',
        'quic-client',
      ]);
    });

    it('takes an option given as the campaign ran it, where today’s preset would read the saved options otherwise', () => {
      // a folder started when the ifip2022 preset still ran geo and leo (its campaign.json says so)
      const saved = { ...LEO, preset: 'ifip2022', profile: undefined, protocol: undefined, n: undefined };
      const ran = { matrix: { ...benchInput(saved).matrix, profiles: ['geo', 'leo'] }, settings: {} };
      const against = (given) => contradictions({ saved, given, input: benchInput, ran }).map((c) => c.option);
      assert.deepEqual(against({ profile: 'geo,leo' }), [], 'what it ran');
      assert.deepEqual(against({ profile: 'geo' }), ['profile'], 'not what it ran');
    });

    it('ignores where results go and how they print', () => {
      assert.deepEqual(benchAgainst({ out: 'x', resume: 'x', json: true }), []);
    });

    it('words them in one line, each as typed beside what the folder was started with', () => {
      const list = contradictions({
        saved: LEO,
        given: { protocol: 'h3', n: '5', lighthouse: true },
        input: benchInput,
      });
      assert.deepEqual(list, [
        { option: 'protocol', given: 'h3', saved: 'h1' },
        { option: 'n', given: '5', saved: '3' },
        { option: 'lighthouse', given: true, saved: undefined },
      ]);
      assert.equal(
        contradictionMessage('out/mine', list, CONFIG),
        '--resume out/mine: --protocol h3 (started with --protocol h1), -n 5 (started with -n 3), --lighthouse (started without --lighthouse): contradicts the campaign saved in out/mine/campaign.json; leave them out to continue it, or start anew with another --out',
      );
      assert.match(contradictionMessage('d', list.slice(0, 1), CONFIG), /; leave it out to continue it/);
    });
  });

  describe('the manifest', () => {
    it('keeps the command line, the options that decide what runs, the matrix and the settings as JSON', () => {
      const values = { ...LEO, out: 'out/mine', json: true };
      const m = newManifest({ command: 'bench', argv: ['-n', '3'], values, ...benchInput(values), started: 'T' });
      assert.deepEqual(m.options, LEO);
      assert.deepEqual(m.matrix, {
        profiles: ['leo'],
        losses: [0],
        protocols: ['h1'],
        sites: ['kepler'],
        views: ['first'],
        runs: 3,
      });
      assert.equal(m.settings.seed, 1);
      assert.equal(m.settings.shard, null);
      assert.equal(manifestProblem(m), null);
      assert.deepEqual(JSON.parse(JSON.stringify(m)), m);
      assert.equal(manifestProblem({ ...m, command: 'report' }), '"command" is "report", expected bench or bulk');
      assert.equal(manifestProblem({ ...m, matrix: [] }), '"matrix" is not an object');
      assert.equal(manifestProblem([]), 'is not a JSON object');
    });

    it('readManifest: a missing folder, a file, no campaign.json, a bad one and the other command are one line each', () => {
      const dir = tmp();
      assert.throws(() => readManifest(path.join(dir, 'nope'), 'bench'), usage(/--resume .*nope: no such folder/));
      fs.writeFileSync(path.join(dir, 'f'), '');
      assert.throws(() => readManifest(path.join(dir, 'f'), 'bench'), usage(/--resume .*f: not a folder$/));
      assert.throws(
        () => readManifest(dir, 'bench'),
        usage(/: no campaign\.json there \(the matrix and settings bench and bulk save as they start\)/),
      );
      fs.writeFileSync(path.join(dir, MANIFEST), '{');
      assert.throws(() => readManifest(dir, 'bench'), usage(/campaign\.json: not JSON/));
      const values = { ...BULK_DEFAULTS };
      const m = newManifest({ command: 'bulk', argv: [], values, ...bulkInput(values) });
      fs.writeFileSync(path.join(dir, MANIFEST), JSON.stringify(m));
      assert.throws(
        () => readManifest(dir, 'bench'),
        usage(new RegExp(`holds a bulk campaign; continue it with \`satbench bulk --resume ${dir}\``)),
      );
      assert.deepEqual(readManifest(dir, 'bulk'), m);
    });

    it("--resume of an ifip2022 folder made before the preset became the paper's set-up runs what it saved", () => {
      // what bench saved then: the preset's geo and leo, H2O, the warm tunnel
      const options = { preset: 'ifip2022', seed: '1', link: 'auto', timeout: '120' };
      const then = benchInput({ ...options, profile: 'geo,leo', origin: 'h2o', 'pep-tunnel': 'warm' });
      const dir = tmp();
      const saved = {
        ...newManifest({ command: 'bench', argv: ['--preset', 'ifip2022'], values: {}, ...then }),
        options,
      };
      fs.writeFileSync(path.join(dir, MANIFEST), JSON.stringify(saved));
      const config = { ...CONFIG, preset: { type: 'string', default: 'quick' }, timeout: { type: 'string' } };
      const v = { ...BENCH_DEFAULTS, resume: dir };
      const resumed = campaignInput([], { given: { resume: dir }, v }, { name: 'bench', config, input: benchInput });
      assert.deepEqual(resumed.matrix.profiles, ['geo', 'leo']);
      assert.equal(resumed.settings.origin, 'h2o');
      assert.equal(resumed.settings.pep.tunnel, 'warm');
      assert.deepEqual(resumed.settings, JSON.parse(JSON.stringify(then.settings)));
    });
  });

  describe('the folder', () => {
    it('--out naming a file, or a path through one, is refused before anything is made', () => {
      const dir = tmp();
      const file = path.join(dir, 'file');
      fs.writeFileSync(file, 'x');
      assert.throws(() => checkOutDir(file), usage(new RegExp(`^--out ${file}: is a file, not a folder$`)));
      assert.throws(
        () => checkOutDir(path.join(file, 'a', 'b')),
        usage(new RegExp(`^--out ${file}/a/b: ${file} is a file, not a folder$`)),
      );
      assert.throws(() => openResults(file, { kind: 'bench' }), usage(/is a file, not a folder/));
      assert.equal(fs.readFileSync(file, 'utf8'), 'x');
      assert.deepEqual(fs.readdirSync(dir), ['file']);
      checkOutDir(path.join(dir, 'new', 'deeper'));
      checkOutDir(dir);
    });

    it('a folder holding a campaign (its campaign.json alone too) is not a new one', () => {
      const dir = tmp();
      fs.writeFileSync(path.join(dir, MANIFEST), '{}');
      assert.throws(
        () => checkOutDir(dir),
        usage(new RegExp(`^${dir}/campaign\\.json exists: continue it with --resume ${dir}, or pick another --out$`)),
      );
    });

    it('writes campaign.json as the matrix starts, and --resume leaves it as it was', () => {
      const dir = path.join(tmp(), 'r');
      const values = { ...LEO };
      const m = newManifest({ command: 'bench', argv: [], values, ...benchInput(values) });
      const { release } = openResults(dir, { kind: 'pageload', manifest: m });
      assert.deepEqual(JSON.parse(fs.readFileSync(path.join(dir, MANIFEST), 'utf8')), m);
      assert.deepEqual(fs.readdirSync(dir).sort(), [MANIFEST, LOCK], 'the campaign holds the folder');
      release();
      assert.deepEqual(fs.readdirSync(dir), [MANIFEST], 'no temporary file left');
      fs.appendFileSync(path.join(dir, MANIFEST), ' ');
      openResults(dir, { kind: 'pageload', resume: true, manifest: m });
      assert.match(fs.readFileSync(path.join(dir, MANIFEST), 'utf8'), / $/);
    });

    it("the file system's refusal to make the folder is one line naming it", () => {
      assert.throws(
        () => openResults('/proc/satbench-nope/r', { kind: 'pageload' }),
        usage(/^\/proc\/satbench-nope\/r: E[A-Z]+: [a-z ]+ \(mkdir\)$/),
      );
    });

    it('--resume of a missing folder is an error and makes nothing', () => {
      const dir = path.join(tmp(), 'gone');
      assert.throws(
        () => openResults(dir, { kind: 'pageload', resume: true }),
        usage(/^--resume .*gone: no such folder$/),
      );
      assert.ok(!fs.existsSync(dir));
    });

    it('--resume drops a torn last line with a warning saying what it dropped; that run runs again', () => {
      const dir = tmp();
      const file = path.join(dir, 'results.jsonl');
      const r1 = { scenario: { profile: 'geo', loss_pct: 0, protocol: 'h1', site: 'kepler' }, run: 1, ok: true };
      fs.writeFileSync(file, JSON.stringify(r1) + '\n' + JSON.stringify({ ...r1, run: 2 }).slice(0, 40));
      const warnings = [];
      const { done, release } = openResults(dir, {
        kind: 'pageload',
        resume: true,
        onWarning: (w) => warnings.push(w),
      });
      release();
      assert.deepEqual([...done], ['geo|0|h1|kepler#1']);
      assert.deepEqual(warnings, [
        `warning: ${file}: dropped line 2, torn (40 bytes of the run being written when satbench stopped); that run runs again`,
      ]);
      assert.equal(fs.readFileSync(file, 'utf8'), JSON.stringify(r1) + '\n');
    });

    it('--resume drops the records of runs a signal interrupted, with a warning; they run again', () => {
      const dir = tmp();
      const file = path.join(dir, 'results.jsonl');
      const sc = { profile: 'geo', loss_pct: 0, protocol: 'h1', site: 'kepler' };
      const r1 = { scenario: sc, run: 1, ok: false, error: 'timeout' }; // a failed run is done
      const r2 = { scenario: sc, run: 2, ok: false, error: 'interrupted by SIGINT', interrupted: 'SIGINT' };
      fs.writeFileSync(file, `${JSON.stringify(r1)}\n${JSON.stringify(r2)}\n`);
      const warnings = [];
      const { done, release } = openResults(dir, {
        kind: 'pageload',
        resume: true,
        onWarning: (w) => warnings.push(w),
      });
      release();
      assert.deepEqual([...done], ['geo|0|h1|kepler#1']);
      assert.deepEqual(warnings, [
        `warning: ${file}: dropped 1 run(s) interrupted by a signal (line 2); they run again`,
      ]);
      assert.equal(fs.readFileSync(file, 'utf8'), `${JSON.stringify(r1)}\n`);
      assert.deepEqual(fs.readdirSync(dir), ['results.jsonl'], 'no temporary file left');
    });

    it('--resume still refuses a bad line that is not the last, naming file and line', () => {
      const dir = tmp();
      const file = path.join(dir, 'results.jsonl');
      const r1 = JSON.stringify({ scenario: { profile: 'geo' }, run: 1, ok: true });
      fs.writeFileSync(file, `${r1}\n{"scen\n${r1}\n`);
      assert.throws(
        () => openResults(dir, { kind: 'pageload', resume: true }),
        usage(/results\.jsonl: line 2 is not JSON$/),
      );
      assert.equal(fs.readFileSync(file, 'utf8'), `${r1}\n{"scen\n${r1}\n`, 'left as it was');
    });
  });
});
