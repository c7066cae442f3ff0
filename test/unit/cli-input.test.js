// The command line checks its input before it asks for privileges: bad
// input gets one line naming the option and exit 2 even without
// CAP_NET_ADMIN, and good input then gets the line that says root is needed.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { unprivilegedSatbench as unprivileged } from '../integration/helpers.js';
import { makeRecords, scenarios, writeResultsDir } from '../fixtures.js';
import { HELP as BENCH } from '../../harness/cli/bench.js';
import { HELP as BULK } from '../../harness/cli/bulk.js';
import { HELP as TESTBED } from '../../harness/cli/testbed.js';
import { HELP as DOCTOR } from '../../harness/cli/doctor.js';
import { HELP as CLEANUP } from '../../harness/cli/cleanup.js';
import { HELP as PROFILES } from '../../harness/cli/profiles.js';
import { HELP as REPORT } from '../../harness/cli/report.js';
import { HELP as COMPARE } from '../../harness/cli/compare.js';
import { HELP as MERGE } from '../../harness/cli/merge.js';
import { HELP as RECORD } from '../../harness/cli/record.js';
import { HELP as IMPORT_HAR } from '../../harness/cli/import-har.js';

const THIS_FILE = fileURLToPath(import.meta.url);
// npm test runs with TMPDIR set to a folder of its own
const TMP = os.tmpdir().replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const outDir = () => path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-cli-')), 'r');

describe('satbench checks input before privileges', function () {
  this.timeout(60000);
  const cases = [
    ['bench', ['--protocol', 'h4'], /--protocol: unknown protocol "h4"/],
    // numbers bounded where they are parsed, lists without repeats, no empty value (issue 27)
    ['bench', ['--protocol', 'h1,h1'], /^satbench: --protocol: h1 is given twice \(as h1\)$/m],
    ['bench', ['--loss', '1,1.0'], /--loss: 1\.0 is given twice \(as 1\)/],
    ['bulk', ['--direction', 'down,down'], /--direction: down is given twice/],
    ['bench', ['--timeout', '3000000'], /--timeout: expected a whole number from 1 to 3600, got "3000000"/],
    ['bench', ['-n', '1e9'], /-n: expected a whole number from 1 to 10000, got "1e9"/],
    ['bulk', ['-n', '100000'], /-n: expected a whole number from 1 to 10000/],
    ['bench', ['--seed', '99999999999999999999'], /--seed: expected a whole number from 0 to 4294967295/],
    ['bench', ['--initcwnd', '5000'], /--initcwnd: expected a whole number from 1 to 1000, got "5000"/],
    ['bench', ['--quic', 'initial-mtu=100'], /--quic: initial-mtu must be between 1200 and 65527, got "100"/],
    ['bench', ['--out', ''], /^satbench: --out: given empty; give a value, or leave the option out$/m],
    ['bench', ['--resume', ''], /--resume: given empty/],
    ['bench', ['-n', ''], /^satbench: -n: given empty/m],
    ['bench', ['--profile', ''], /--profile: given empty/],
    ['bulk', ['--protocol', ''], /--protocol: given empty/],
    ['bench', ['--profile', ','], /--profile: name at least one/],
    [
      'bench',
      ['--protocol', 'h3-qpep'],
      /^satbench: --protocol: h3-qpep: QPEP carries TCP; HTTP\/3 through the QUIC PEP is h3-pep$/m,
    ],
    [
      'bench',
      ['--protocol', 'h4-qpep'],
      /--protocol: unknown protocol "h4-qpep"; expected .*h3-pep, h1-qpep, h1s-qpep, h2-qpep, h1-vpn/,
    ],
    [
      'bulk',
      ['--protocol', 'quic-qpep'],
      /--protocol: quic-qpep: QPEP carries TCP; QUIC through the QUIC PEP is quic-pep/,
    ],
    [
      'bench',
      ['--protocol', 'h1,h1-qpep', '--pep-tunnel', 'per-connection'],
      /--pep-tunnel per-connection: QPEP \(the -qpep protocols\) carries TCP over the standing tunnel; use --pep-tunnel warm/,
    ],
    ['bulk', ['--protocol', 'tcp-qpep', '--pep-tunnel', 'per-connection'], /--pep-tunnel per-connection: QPEP/],
    // the preset chose the mode: the refusal says so rather than naming an untyped flag
    [
      'bench',
      ['--preset', 'ifip2022', '--protocol', 'h1,h1-qpep'],
      /^satbench: --preset ifip2022, which runs the QUIC PEP per-connection, QPEP \(the -qpep protocols\) carries TCP over the standing tunnel; use --pep-tunnel warm$/m,
    ],
    ['bulk', ['--protocol', 'tcp-qpep', '--pep-sat', 'sndbuf=1'], /--pep-sat: sndbuf is a TCP option/],
    ['bulk', ['--protocol', 'udp-vpn'], /--protocol: unknown bulk protocol "udp-vpn"; expected .*tcp-vpn/],
    ['bench', ['--profile', 'mars'], /--profile: unknown profile "mars"/],
    ['bench', ['--site', 'nosuchsite'], /--site nosuchsite: neither a reference site/],
    ['bench', ['--quic', 'cc=vegas'], /--quic: cc must be cubic, newreno, bbr or sat, got "vegas"/],
    ['bench', ['--h3-priorities', 'fifo'], /--h3-priorities: expected rfc9218, incremental-last, off/],
    ['bench', ['--alt-svc', 'h3'], /--alt-svc: expected all or tcp, got "h3"/],
    ['bench', ['--shard', '3/2'], /--shard: expected i\/n with 1 <= i <= n/],
    ['bench', ['--pep-sat', 'window=1'], /--pep-sat: unknown option "window"/],
    ['bench', ['--protocol', 'h1-pep', '--pep-preset', 'Z'], /--pep-preset: TCP PEP preset "Z"/],
    ['bench', ['--pep-tunnel', 'foo'], /--pep-tunnel: expected warm or per-connection, got "foo"/],
    ['bulk', ['--pep-tunnel', 'cold'], /--pep-tunnel: expected warm or per-connection, got "cold"/],
    ['bench', ['--link', 'wire'], /--link/],
    ['bench', ['-n', '0'], /-n: expected a whole number from 1 to 10000, got "0"/],
    ['bulk', ['--protocol', 'h3'], /--protocol: unknown bulk protocol "h3"/],
    ['bulk', ['--duration', '0'], /--duration: expected a duration > 0/],
    ['bulk', ['--protocol', 'quic-pep', '--pep-sat', 'sndbuf=1'], /--pep-sat: sndbuf is a TCP option/],
    ['bulk', ['--quic-client', 'initial-window=x'], /--quic-client: initial-window expects a whole number/],
    ['bulk', ['--bin-ms', '0'], /--bin-ms: expected a whole number from 1 to 60000/],
    ['testbed', ['up', '--profile', 'geo', '--loss', '120'], /--loss: expected a percentage between 0 and 100/],
    ['testbed', ['probe', '--profile', 'geo', '--count', '3'], /--count: expected a whole number >= 20/],
    ['testbed', ['probe', '--profile', 'geo', '--duration', '1'], /--duration: expected a whole number >= 2/],
    ['testbed', ['probe', '--profile', 'geo', '--duration', '9', '--count', '30'], /--count or --duration, not both/],
    ['testbed', ['down'], /testbed down: name the testbed ids/],
    // a folder where a file is expected, and a file where a folder is
    [
      'bench',
      ['--profile', os.tmpdir()],
      new RegExp(`^satbench: --profile: ${TMP}: a folder, expected a profile file$`, 'm'),
    ],
    [
      'bulk',
      ['--profile', os.tmpdir()],
      new RegExp(`^satbench: --profile: ${TMP}: a folder, expected a profile file$`, 'm'),
    ],
    [
      'testbed',
      ['up', '--profile', os.tmpdir()],
      new RegExp(`^satbench: ${TMP}: a folder, expected a profile file$`, 'm'),
    ],
    [
      'testbed',
      ['up', '--profile', 'geo', '--pcap', THIS_FILE],
      /^satbench: --pcap .*cli-input\.test\.js: is a file, not a folder$/m,
    ],
    // operands a command does not take, and testbed ids that cannot be one
    ['testbed', ['status', 'all'], /^satbench: testbed status: unexpected "all"; options start with --/],
    ['testbed', ['up', 'leo', '--profile', 'geo'], /^satbench: testbed up: unexpected "leo"; options start with --/],
    ['testbed', ['probe', '--profile', 'geo', 'x'], /^satbench: testbed probe: unexpected "x"/],
    [
      'testbed',
      ['down', 'ab1', '../x'],
      /^satbench: testbed id "\.\.\/x": expected 1 to 12 characters, each a-z or 0-9$/m,
    ],
    [
      'cleanup',
      ['old'],
      /^satbench: cleanup: unexpected "old"; options start with -- \(see `satbench cleanup --help`\)$/m,
    ],
    // checked only when a run needed them, or after the output folder was made
    ['bench', ['--cc', 'vegas'], /^satbench: --cc: "vegas" is not available in this kernel; available: /],
    ['bulk', ['--cc', 'vegas'], /^satbench: --cc: "vegas" is not available in this kernel/],
    [
      'bench',
      ['--cc-axis', 'cubic,vegas'],
      /^satbench: --cc-axis: unknown congestion control "vegas"; expected cubic, /,
    ],
    [
      'bench',
      ['--cc-axis', 'cubic,bbr', '--cc', 'bbr'],
      /^satbench: --cc-axis sets the end hosts' TCP and our QUIC senders' congestion control per scenario; leave out --cc$/m,
    ],
    ['bulk', ['--pep-preset', 'Z'], /^satbench: --pep-preset: TCP PEP preset "Z": expected one of paper, A/],
    [
      'bench',
      ['--protocol', 'h1,h3-pep', '--pep-preset', 'A'],
      /^satbench: --pep-preset A: sets the split-TCP PEP, which no protocol of the matrix goes through/,
    ],
    ['bulk', ['--protocol', 'quic-pep', '--pep-preset', 'paper'], /^satbench: --pep-preset paper: sets the split-TCP/],
    // operands and options that do not exist
    ['bench', ['leo'], /^satbench: bench: unexpected "leo"; options start with --/],
    ['bulk', ['--profiel', 'geo'], /^satbench: Unknown option '--profiel'/],
    ['bench', ['--seed=-1'], /^satbench: --seed: expected a whole number from 0 to 4294967295, got "-1"/],
    ['bench', ['--seed', '-1'], /^satbench: Option '--seed' argument is ambiguous\. Did you forget/],
    ['bench', ['--timeout', '0'], /^satbench: --timeout: expected a whole number from 1 to 3600/],
    ['bulk', ['--size', '0'], /^satbench: --size: expected a size of at least 1 byte, got "0"/],
    ['bulk', ['--duration', '1', '--size', '1MB'], /^satbench: give --duration or --size, not both/],
  ];
  for (const [cmd, args, message] of cases) {
    it(`${cmd} ${args.join(' ')}: exit 2, one line naming the option`, async () => {
      const out = outDir();
      const own = ['testbed', 'cleanup'].includes(cmd) || args.includes('--out') || args.includes('--resume');
      const r = await unprivileged([cmd, ...args, ...(own ? [] : ['--out', out])]);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, message);
      assert.doesNotMatch(r.stderr, /needs root/);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      assert.ok(!fs.existsSync(out), 'nothing may be written');
    });
  }

  for (const args of [
    ['bench', '--profile', 'leo', '--protocol', 'h1,h3-pep', '-n', '1'],
    ['bulk', '--protocol', 'quic,tcp-pep', '--duration', '1'],
    ['bench', '--profile', 'geo', '--protocol', 'h1,h1-vpn,h3-vpn', '-n', '1'],
    ['bulk', '--protocol', 'tcp-vpn,quic-vpn', '--duration', '1'],
    ['bench', '--profile', 'geo', '--protocol', 'h1,h1-qpep,h1s-qpep,h2-qpep', '-n', '1'],
    ['bulk', '--protocol', 'tcp,tcp-qpep', '--duration', '1', '--pep-tunnel', 'warm'],
  ]) {
    it(`${args.join(' ')}: good input, then the one line saying root is needed`, async () => {
      const r = await unprivileged([...args, '--out', outDir()]);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, new RegExp(`^satbench: ${args[0]} builds network namespaces and needs root`));
    });
  }
  for (const args of [
    ['testbed', 'down', 'ab1', 'c2'],
    ['testbed', 'status'],
    ['cleanup', '--all'],
  ]) {
    it(`${args.join(' ')}: good input, then the one line saying root is needed`, async () => {
      const r = await unprivileged(args);
      assert.equal(r.code, 2, r.stderr);
      const command = args[0] === 'testbed' ? `testbed ${args[1]}` : args[0];
      assert.equal(
        r.stderr.split('\n')[0].split(' builds network namespaces and needs root')[0],
        `satbench: ${command}`,
      );
    });
  }

  it('has help for every command, beside its options: asked for, it is output (stdout, exit 0)', async () => {
    for (const cmd of [
      'bench',
      'bulk',
      'testbed',
      'doctor',
      'cleanup',
      'profiles',
      'report',
      'compare',
      'merge',
      'record',
      'import-har',
    ]) {
      const variants = cmd === 'bench' ? [['-h'], ['--out', outDir(), '--help']] : [];
      for (const args of [[cmd, '--help'], ...variants.map((v) => [cmd, ...v])]) {
        const r = await unprivileged(args);
        assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
        assert.match(r.stdout, new RegExp(`^Usage:[\\s\\S]*satbench ${cmd}`), cmd);
        assert.equal(r.stderr, '', args.join(' '));
      }
    }
    for (const args of [['--help'], ['-h'], ['help']]) {
      const r = await unprivileged(args);
      assert.equal(r.code, 0);
      assert.match(r.stdout, /^satbench — [\s\S]*Usage: satbench COMMAND/);
      assert.equal(r.stderr, '');
    }
  });

  it('satbench without a command: exit 2, the usage on stderr', async () => {
    const r = await unprivileged([]);
    assert.equal(r.code, 2);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /^satbench: name a command\n[\s\S]*Usage: satbench COMMAND[\s\S]*bench /);
    const u = await unprivileged(['benhc']);
    assert.equal(u.code, 2);
    assert.equal(u.stderr, 'satbench: unknown command "benhc"; see `satbench --help`\n');
    const t = await unprivileged(['testbed']);
    assert.equal(t.code, 2);
    assert.equal(t.stdout, '');
    assert.match(
      t.stderr,
      /^satbench: testbed: name a subcommand \(up, down, status or probe\)\n[\s\S]*Usage:\n  satbench testbed up /,
    );
  });
});

// report, compare and merge: a mistake in their input is one line, exit 2,
// and nothing is written (no report, no JUnit or Markdown file, no merged folder).
describe('report, compare and merge refuse bad input before writing anything', function () {
  this.timeout(60000);
  let tmp;
  let good;
  before(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-analysis-'));
    good = writeResultsDir(makeRecords(scenarios(), { runs: 3 }), { dir: path.join(tmp, 'good'), meta: { seed: 7 } });
    const bad = path.join(tmp, 'bad');
    fs.mkdirSync(bad);
    fs.writeFileSync(
      path.join(bad, 'summary.json'),
      JSON.stringify({ groups: [{ scenario: {}, metrics: { plt_ms: {} } }] }),
    );
    const other = writeResultsDir(makeRecords(scenarios(), { runs: 3, seed: 8 }), { dir: path.join(tmp, 'other') });
    fs.rmSync(path.join(other, 'summary.json'));
    fs.writeFileSync(
      path.join(tmp, 'typo.yaml'),
      'scenarios:\n  - match: { profile: goe }\n    metrics: { plt_ms: { max_median: 1 } }\n',
    );
    fs.writeFileSync(path.join(tmp, 'afile'), '');
    // a folder where results.jsonl or summary.json is expected
    fs.mkdirSync(path.join(tmp, 'folders', 'results.jsonl'), { recursive: true });
    fs.mkdirSync(path.join(tmp, 'folders2', 'summary.json'), { recursive: true });
    // a results.jsonl too big to read whole (sparse: no disk used)
    fs.mkdirSync(path.join(tmp, 'huge'));
    fs.writeFileSync(path.join(tmp, 'huge', 'results.jsonl'), '');
    fs.truncateSync(path.join(tmp, 'huge', 'results.jsonl'), 2 ** 30);
    // a summary.json whose meta.warnings is no list
    const warned = writeResultsDir(makeRecords(scenarios(), { runs: 3 }), {
      dir: path.join(tmp, 'warned'),
      meta: { seed: 7 },
    });
    const sf = path.join(warned, 'summary.json');
    fs.writeFileSync(
      sf,
      JSON.stringify({ ...JSON.parse(fs.readFileSync(sf, 'utf8')), meta: { seed: 7, warnings: 3 } }),
    );
  });
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));
  const at = (...p) => path.join(tmp, ...p);
  const cases = () => [
    [['report', at('nowhere')], /nowhere: not a folder/, [at('nowhere')]],
    [
      ['report', at('bad')],
      /bad\/summary\.json: groups\[0\]\.metrics\.plt_ms\.median is not a number/,
      [at('bad', 'index.html')],
    ],
    [['report', good, at('bad')], /report: name one results folder/, []],
    [
      ['compare', good, good, '--budget', at('typo.yaml'), '--junit', at('j.xml')],
      /typo\.yaml: scenarios\[0\]\.match\.profile: "goe" matches no scenario/,
      [at('j.xml')],
    ],
    [
      ['compare', good, good, '--markdown', at('no', 'c.md')],
      /--markdown .*c\.md: no folder .*no to write it in/,
      [at('no')],
    ],
    [['compare', good], /compare: name BASELINE and CURRENT/, []],
    [['merge', good, at('other'), '--out', at('m')], /other: its runs used seed 8, .*good's seed 7/, [at('m')]],
    [['merge', good, '--out', at('afile')], /--out .*afile: is a file; expected a new folder/, []],
    [['merge', good], /merge: name the folders to join and --out DIR/, []],
    [
      ['report', at('folders')],
      /folders\/results\.jsonl: a folder, expected a results\.jsonl \(one record a line\)$/m,
      [at('folders', 'index.html')],
    ],
    [['compare', at('folders2'), good], /folders2\/summary\.json: a folder, expected a summary\.json$/m, []],
    [
      ['compare', at('huge', 'results.jsonl'), good],
      /huge\/results\.jsonl: 1073741824 bytes, more than satbench reads whole/,
      [],
    ],
    [['merge', at('huge'), good, '--out', at('m2')], /huge\/results\.jsonl: 1073741824 bytes/, [at('m2')]],
    [
      ['report', at('warned')],
      /warned\/summary\.json: meta\.warnings is not a list of strings$/m,
      [at('warned', 'index.html')],
    ],
    [
      ['merge', good, at('warned'), '--out', at('m3')],
      /warned\/summary\.json: meta\.warnings is not a list/,
      [at('m3')],
    ],
  ];
  it('each: exit 2, one line naming the file or option, nothing written', async () => {
    for (const [args, message, absent] of cases()) {
      const r = await unprivileged(args);
      const what = args.join(' ');
      assert.equal(r.code, 2, `${what}: ${r.stderr}`);
      assert.match(r.stderr, message, what);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      assert.doesNotMatch(r.stderr, /internal error|\n\s+at /, what);
      for (const f of absent) assert.ok(!fs.existsSync(f), `${what}: wrote ${f}`);
    }
  });
});

// The options a help's usage lines name ("Usage: …", "satbench testbed up …"
// and their "[…]" continuation lines), and its other lines.
export function usageOptions(help) {
  const usage = [];
  const rest = [];
  let inUsage = false;
  for (const line of help.split('\n')) {
    if (/^Usage:/.test(line) || /^\s*satbench /.test(line)) inUsage = true;
    else if (!/^\s+[[|]/.test(line)) inUsage = false;
    (inUsage ? usage : rest).push(line);
  }
  const options = new Set();
  for (const line of usage) for (const m of line.matchAll(/(?:^|[\s[|])(--?[a-zA-Z][\w-]*)/g)) options.add(m[1]);
  return { options: [...options], rest };
}

describe('every option of a usage line is explained in its help', () => {
  const HELPS = {
    bench: BENCH,
    bulk: BULK,
    testbed: TESTBED,
    doctor: DOCTOR,
    cleanup: CLEANUP,
    profiles: PROFILES,
    report: REPORT,
    compare: COMPARE,
    merge: MERGE,
    record: RECORD,
    'import-har': IMPORT_HAR,
  };
  it('finds the options of usage lines, and an unexplained one', () => {
    const help =
      'Usage: satbench x [--a N] [-n RUNS]\n                  [--b] | --c\n  Does x.\n\nOptions:\n  --a N   a\n  -n RUNS   runs';
    const { options, rest } = usageOptions(help);
    assert.deepEqual(options, ['--a', '-n', '--b', '--c']);
    assert.deepEqual(unexplained(options, rest), ['--b', '--c']);
  });
  const unexplained = (options, rest) =>
    options.filter((o) => !rest.some((line) => new RegExp(`^\\s+${o}(?![\\w-])`).test(line)));
  for (const [cmd, help] of Object.entries(HELPS)) {
    it(`satbench ${cmd}`, () => {
      const { options, rest } = usageOptions(help);
      if (cmd !== 'report') assert.ok(options.length >= 1, 'a usage line with options');
      assert.deepEqual(unexplained(options, rest), [], `options in ${cmd}'s usage lines without a line of their own`);
    });
  }
});
