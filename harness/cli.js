#!/usr/bin/env node
// The satbench command. Parses arguments, calls the module that does the
// work, prints. Errors the user can fix print one line and exit 2.
import { parseArgs } from 'node:util';
import { UsageError } from './core/errors.js';
import { requireNetAdmin } from './core/sys.js';
import { loadProfile, listBuiltinProfiles, configuredSummary } from './testbed/profiles.js';
import { percent } from './core/units.js';
import { createTestbed, destroyTestbed, listTestbeds, cleanup } from './testbed/testbed.js';
import { probeTestbed } from './testbed/probe.js';
import { checks, formatChecks } from './cli/doctor.js';
import { checkLinkBackend } from './testbed/link-backends.js';

const HELP = {
  main: `satbench — web page loads over emulated satellite links, in a real Chromium

Usage: satbench COMMAND [OPTIONS]

Commands:
  doctor                      check every prerequisite and say how to fix what is missing
  testbed up|down|status|probe  build, remove, list or measure an emulated testbed
  profiles                    list the built-in link profiles
  cleanup [--all]             remove testbeds (namespaces, processes) left behind
  bench                       load pages in Chromium over a matrix of scenarios
  report DIR                  (re)write DIR/index.html from DIR's results
  compare BASELINE CURRENT    judge CURRENT against BASELINE and a budget (exit 1 on regression)
  merge DIR... --out DIR      join the shards of a matrix into one result and report
  bulk                        downloads over QUIC, TCP and Chromium, with and without PEPs: goodput over time

Run \`satbench COMMAND --help\` for a command's options.`,
  testbed: `Usage:
  satbench testbed up --profile NAME [--loss PCT] [--link auto|linkem|netem] [--seed N]
                      [--name ID] [--cc NAME] [--initcwnd N] [--pcap DIR] [--json]
      Build a testbed and leave it running: client ─ st ═ satellite ═ gw ─ internet ─ server,
      namespaces sbt-ID-client, sbt-ID-st, sbt-ID-gw, sbt-ID-server (198.18.0.0/15).
  satbench testbed down ID... | --all
      Remove testbeds: their processes, namespaces and state.
  satbench testbed status [--json]
      List the testbeds on this machine.
  satbench testbed probe --profile NAME [--loss PCT] [--link ...] [--seed N] [--count N] [--json]
      Build a testbed, measure RTT (median, p99 over --count echoes, at least 20), one-way
      delay per direction (1-byte UDP datagrams), loss and throughput, print them beside the
      configured values, and remove the testbed.

Options:
  --profile NAME|FILE  a built-in profile (see \`satbench profiles\`) or a .yaml/.json file
  --loss PCT           random loss on the satellite link, both directions, in percent;
                       replaces the profile's satellite loss
  --link BACKEND       auto (kernel netem when the kernel has it, else linkem), linkem, netem
  --seed N             seed of the emulator's random loss and jitter (default 1)
  --cc NAME            TCP congestion control of every namespace (default cubic; newreno = reno)
  --initcwnd N         TCP initial congestion and receive window of the end hosts (default 10)
  --pcap DIR           linkem writes a pcap of each side of each link under DIR
  --json               print JSON`,
  cleanup: `Usage: satbench cleanup [--all] [--json]
  Remove the testbeds no running satbench owns: those \`testbed up\` left and those of
  crashed or killed runs (namespaces, the processes in them, state). --all removes every
  testbed, including those of runs still going.`,
  doctor: `Usage: satbench doctor [--json]
  Check root or CAP_NET_ADMIN, ip netns, /dev/net/tun, tc, nftables, iperf3, ethtool,
  Chromium and its version, the Rust binaries, TCP congestion controls and kernel netem.
  Exit 0 when everything required is there, 1 otherwise.`,
  bench: `Usage: satbench bench [--preset NAME] [--profile LIST] [--loss LIST] [--protocol LIST]
                      [--site NAME|DIR] [-n RUNS] [--out DIR] [--resume DIR] [--seed N]
                      [--link auto|linkem|netem] [--timeout SECONDS] [--origin rust|h2o]
                      [--quic LIST] [--h3-priorities P] [--cc NAME] [--initcwnd N] [--pep-preset NAME]
                      [--pep-sat LIST] [--pep-ground LIST] [--qlog] [--shard I/N] [--lighthouse]
                      [--json]
  Load a page in a fresh Chromium over every scenario of the matrix (profiles × losses ×
  protocols × sites), RUNS times each, a fresh testbed and origin per run. Writes
  DIR/results.jsonl (a line per run, flushed as it ends), DIR/summary.json, DIR/index.html.

Options:
  --preset NAME     quick (the default: kepler, leo and geo, loss 0, h1, h1-pep, h3, h3-pep, 5 runs) or
                    ifip2022 (the paper's matrix); the options below override its parts
  --profile LIST    link profiles, comma-separated (see \`satbench profiles\`)
  --loss LIST       satellite-link loss in percent, comma-separated (0,0.01,0.1,1)
  --protocol LIST   h1 (HTTP/1.1 cleartext), h1s (HTTP/1.1 over TLS), h2, h3, and each with
                    -pep (h1-pep, …, h3-pep): through the PEP chain in st and gw
  --site NAME|DIR   a reference site (kepler, deutschmann-small, deutschmann-large,
                    kuhn-a, kuhn-b) or a directory with an index.html
  -n RUNS           runs per scenario
  --out DIR         where results go (default out/bench-TIMESTAMP)
  --resume DIR      continue an interrupted matrix in DIR without repeating finished runs
  --timeout S       a page load taking longer fails that run (default 120)
  --origin NAME     rust (ours: h1, h1s, h2, h3; the default) or h2o (Debian's H2O 2.2.5:
                    h1, h1s, h2; h3 only if the installed H2O has it)
  --quic LIST       our origin's QUIC transport, KEY=VALUE comma-separated: cc=cubic|newreno|bbr,
                    initial-window=PACKETS (10), initial-mtu=BYTES, ack-frequency,
                    ack-eliciting-threshold=N, max-ack-delay-ms=MS, bdp-bytes=BYTES (flow-control
                    windows are 2 × this; default: the profile's rate × RTT), idle-timeout-ms=MS
  --h3-priorities P how our origin orders HTTP/3 responses: rfc9218 (the default: Chromium's
                    urgency first, non-incremental ones whole and in request order),
                    incremental-last (non-incremental first, the rest round-robin) or off
                    (all round-robin, as a server that ignores priorities)
  --cc NAME         TCP congestion control of the end hosts (default cubic; newreno = reno)
  --initcwnd N      TCP initial congestion and receive window of the end hosts (default 10)
  --pep-preset NAME for the -pep protocols over TCP, the split-TCP PEP's preset: paper (the
                    default: satellite hop NewReno, initial window 100; ground hops Cubic, 10)
                    or A, B, C, D (Kuhn et al. 2020, Table III)
  --pep-sat LIST    the PEPs' satellite hop, KEY=VALUE comma-separated: cc, initial-window, and
                    the --quic keys (h3-pep) or sndbuf, rcvbuf (h1-pep, h1s-pep, h2-pep)
  --pep-ground LIST the PEPs' client and server hops, the same keys
  --qlog            the QUIC PEPs write a qlog per connection under DIR/qlog/SCENARIO-runN/
  --shard I/N       run only slice I of N of the matrix (every N-th run, round-robin);
                    \`satbench merge\` joins the slices
  --lighthouse      with each scenario's first run, a separate Lighthouse load (performance
                    only, no throttling: the link is the throttle); DIR/lighthouse/*.report.{json,html}
  --json            print summary.json to stdout
Exit 0 when the matrix ran (failed runs are counted and reported), 2 on a harness error.`,
  report: `Usage: satbench report DIR
  Write DIR/index.html, one self-contained file (no network when opened), from
  DIR/results.jsonl (or DIR/summary.json alone: then without distributions and runs).
  summary.json is rewritten when it is missing or does not match results.jsonl.`,
  compare: `Usage: satbench compare BASELINE CURRENT [--budget FILE] [--junit FILE] [--markdown FILE] [--json]
  BASELINE and CURRENT are results folders (their results.jsonl is used, else summary.json),
  results.jsonl files or summary.json files. For every scenario in both and every metric with
  a limit: the ratio of medians, the two-sided Mann–Whitney U p-value, Cliff's delta.
  A slowdown (higher times, lower rates) fails when it is over the budget's max_slowdown_pct
  AND significant (p < alpha; with a summary.json side: the medians' 95 % intervals do not
  overlap); a median over max_median or under min_median fails outright.
  Without --budget: 10 % on response_start_ms, fcp_ms, plt_ms.

Options:
  --budget FILE     YAML or JSON: {alpha, metrics: {METRIC: {max_median, min_median, max_slowdown_pct}},
                    scenarios: [{match: {profile, loss_pct, protocol, site}, metrics: {…}}]}
  --junit FILE      write JUnit XML (a test suite per scenario, a test case per metric)
  --markdown FILE   write a summary for a pull-request comment
  --json            print the comparison as JSON
Exit 0 when nothing regressed, 1 when a check failed, 2 when an input is unusable.`,
  merge: `Usage: satbench merge DIR... --out DIR [--json]
  Join results folders (the shards of one matrix: bench --shard I/N) into DIR: results.jsonl
  in the matrix's order, summary.json and index.html. Refuses different matrices or seeds
  and runs present twice; warns about missing shards.`,
  bulk: `Usage: satbench bulk [--preset NAME] [--profile LIST] [--loss LIST] [--protocol LIST]
                     [--duration S | --size BYTES] [-n RUNS] [--out DIR] [--resume DIR] [--seed N]
                     [--link auto|linkem|netem] [--bin-ms MS] [--quic LIST] [--quic-client LIST]
                     [--cc NAME] [--initcwnd N] [--pep-preset NAME] [--pep-sat LIST]
                     [--pep-ground LIST] [--json]
  Download over every scenario of the matrix (profiles × losses × protocols), RUNS times each,
  a fresh testbed per run, and count the bytes received per --bin-ms from just before connecting.
  Writes DIR/results.jsonl (a line per run, kind "bulk", flushed as it ends), DIR/summary.json
  (per scenario: medians of bytes at 1, 3, 5, 10 s, time to 90 % of the link rate, time to 2, 10,
  100 MB, the goodput curve averaged over runs, the PEP/no-PEP ratio, objectives) and index.html.

Options:
  --preset NAME     ifip2022-goodput (geo, leo; loss 0, 0.01, 0.1, 1 %; 15 s; quic, quic-pep, tcp,
                    tcp-pep; 10 runs) or quic4sat (the six quic4sat-* profiles, 100 MB, 3 runs, the
                    draft's objectives met or missed). Without: geo, loss 0, quic and tcp, 10 s, 3 runs
  --protocol LIST   quic, tcp (satbulk, end to end), quic-pep, tcp-pep (through the PEP chains),
                    browser-h1, browser-h2, browser-h3 (Chromium fetching one large file)
  --duration S      download for S seconds (10, 15s, 500ms)
  --size BYTES      download BYTES (100MB, 2000000); replaces --duration
  --loss LIST       satellite-link loss in percent; default: the profile's own
  --bin-ms MS       bin length of the goodput curve (default 100)
  --quic LIST       the sender's QUIC (satbulk, and the origin for browser-h3), KEY=VALUE
                    comma-separated: cc=cubic|newreno|bbr, initial-window=PACKETS,
                    initial-mtu=BYTES, ack-frequency, ack-eliciting-threshold=N, max-ack-delay-ms=MS,
                    bdp-bytes=BYTES (default: the profile's rate × RTT), idle-timeout-ms=MS
  --quic-client LIST  the receiver's QUIC, the same keys (its flow-control windows, ACK frequency)
  --cc NAME         TCP congestion control of the end hosts (default cubic; newreno = reno)
  --initcwnd N      TCP initial congestion and receive window of the end hosts (default 10)
  --pep-preset NAME the split-TCP PEP's preset: paper (default: satellite hop NewReno, IW 100),
                    A, B, C, D (Kuhn et al. 2020)
  --pep-sat LIST    the PEPs' satellite hop, KEY=VALUE: cc, initial-window, and the QUIC keys
                    above (quic-pep) or sndbuf, rcvbuf (tcp-pep)
  --pep-ground LIST the PEPs' client and server hops, the same keys
  --out DIR         where results go (default out/bulk-TIMESTAMP); --resume DIR continues one
  --json            print summary.json to stdout (else a table of the medians)
Exit 0 when the matrix ran (failed runs are counted and reported), 2 on a harness error.`,
  profiles: `Usage: satbench profiles [--json]
  List the built-in link profiles with their configured RTT, rates and loss.`,
};

function parse(argv, options) {
  try {
    return parseArgs({
      args: argv,
      options: { help: { type: 'boolean', short: 'h' }, json: { type: 'boolean' }, ...options },
      allowPositionals: true,
      strict: true,
    });
  } catch (e) {
    throw new UsageError(e.message);
  }
}

const print = (obj) => process.stdout.write(JSON.stringify(obj, null, 2) + '\n');
const note = (msg) => process.stderr.write(`${msg}\n`);

function integer(v, flag, min) {
  const n = Number(v);
  if (!Number.isInteger(n) || n < min)
    throw new UsageError(`${flag}: expected a whole number >= ${min}, got ${JSON.stringify(v)}`);
  return n;
}

const TESTBED_OPTIONS = {
  profile: { type: 'string' },
  loss: { type: 'string' },
  link: { type: 'string', default: 'auto' },
  seed: { type: 'string', default: '1' },
  name: { type: 'string' },
  cc: { type: 'string' },
  initcwnd: { type: 'string' },
  pcap: { type: 'string' },
  count: { type: 'string' },
  all: { type: 'boolean' },
};

// The end hosts' TCP (--cc, --initcwnd), shared by testbed and bench.
function tcpOptions(v) {
  const tcp = {};
  if (v.cc) tcp.cc = v.cc;
  if (v.initcwnd) tcp.initcwnd = tcp.initrwnd = integer(v.initcwnd, '--initcwnd', 1);
  return tcp;
}

function testbedOptions(v) {
  if (!v.profile) throw new UsageError('--profile is required (see `satbench profiles`)');
  checkLinkBackend(v.link);
  const lossPct = v.loss === undefined ? undefined : percent(v.loss, '--loss');
  return {
    profile: loadProfile(v.profile, { lossPct }),
    link: v.link,
    seed: integer(v.seed, '--seed', 0),
    id: v.name,
    tcp: tcpOptions(v),
    pcapDir: v.pcap,
  };
}

async function testbed(argv) {
  const [sub, ...rest] = argv;
  const { values: v, positionals } = parse(rest, TESTBED_OPTIONS);
  if (v.help || !sub || sub === '--help' || sub === '-h') return note(HELP.testbed);
  if (!['up', 'down', 'status', 'probe'].includes(sub))
    throw new UsageError(`testbed: unknown subcommand ${JSON.stringify(sub)}; expected up, down, status or probe`);
  requireNetAdmin(`testbed ${sub}`);
  if (sub === 'status') {
    const list = await listTestbeds();
    if (v.json) return print(list);
    if (!list.length) return note('no testbeds');
    for (const t of list) {
      const procs = t.processes.map((p) => `${p.role}:${p.pid}${p.alive ? '' : '(gone)'}`).join(' ');
      const owner =
        t.owner_pid === null ? 'detached (testbed up)' : `owner pid ${t.owner_pid}${t.owner_alive ? '' : ' (gone)'}`;
      process.stdout.write(
        `${t.id}  profile ${t.profile ?? '?'}  link ${t.backend ?? '?'}  ${owner}  namespaces ${t.namespaces.length}/4  ${procs}\n`,
      );
    }
    return;
  }
  if (sub === 'down') {
    const known = (await listTestbeds()).map((t) => t.id);
    const ids = v.all ? known : positionals;
    if (!ids.length)
      throw new UsageError('testbed down: name the testbed ids (see `satbench testbed status`) or pass --all');
    for (const id of ids) {
      if (!known.includes(id)) throw new UsageError(`no testbed ${id} (see \`satbench testbed status\`)`);
      await destroyTestbed(id);
      note(`removed testbed ${id}`);
    }
    return;
  }
  const opts = testbedOptions(v);
  if (sub === 'up') {
    const tb = await createTestbed({ ...opts, detached: true });
    const info = {
      id: tb.id,
      backend: tb.backend,
      profile: tb.profile.name,
      namespaces: tb.ns,
      configured: configuredSummary(tb.profile),
    };
    if (v.json) return print(info);
    process.stdout.write(`testbed ${tb.id} is up (profile ${tb.profile.name}, link ${tb.backend})\n`);
    for (const [node, ns] of Object.entries(tb.ns)) process.stdout.write(`  ${node.padEnd(6)} ip netns exec ${ns} …\n`);
    process.stdout.write(`remove it with: satbench testbed down ${tb.id}\n`);
    return;
  }
  // probe
  const count = v.count === undefined ? 20 : integer(v.count, '--count', 20);
  const tb = await createTestbed(opts);
  try {
    const result = await probeTestbed(tb, { rttCount: count }, (step) => note(`probe ${tb.profile.name}: ${step}`));
    result.link_stats = await tb.linkStats();
    if (v.json) print(result);
    else process.stdout.write(formatProbe(result) + '\n');
  } finally {
    await tb.destroy();
  }
}

function formatProbe(r) {
  const c = r.configured;
  const m = r.measured;
  const rows = [
    ['', 'configured', 'measured'],
    ['RTT ms (median / p99)', c.rtt_ms, `${m.rtt_ms.median} / ${m.rtt_ms.p99}`],
    ['one-way forward ms', c.one_way_ms.forward, `${m.one_way_ms.forward.median} / ${m.one_way_ms.forward.p99}`],
    ['one-way return ms', c.one_way_ms.return, `${m.one_way_ms.return.median} / ${m.one_way_ms.return.p99}`],
    ['forward Mbit/s', c.forward_mbps ?? 'unlimited', m.forward_mbps ?? '-'],
    ['return Mbit/s', c.return_mbps ?? 'unlimited', m.return_mbps ?? '-'],
    ['loss % forward', c.loss_pct, `${m.loss_pct} (of ${m.loss_samples.forward})`],
    ['loss % return', c.return_loss_pct, `${m.return_loss_pct} (of ${m.loss_samples.return})`],
  ];
  return (
    `profile ${r.profile}, link ${r.link}\n` +
    rows.map(([a, b, d]) => `  ${String(a).padEnd(24)}${String(b).padEnd(14)}${d}`).join('\n')
  );
}

const list = (v) =>
  v
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);

// The PEP chains' settings (--pep-preset, --pep-sat, --pep-ground), shared by bench and bulk.
async function pepOptions(v) {
  const { parsePepSide } = await import('./bulk/bulk.js');
  return {
    preset: v['pep-preset'] ?? null,
    sat: v['pep-sat'] ? parsePepSide(v['pep-sat'], '--pep-sat') : {},
    ground: v['pep-ground'] ? parsePepSide(v['pep-ground'], '--pep-ground') : {},
  };
}

async function benchCommand(argv) {
  const { values: v } = parse(argv, {
    preset: { type: 'string', default: 'quick' },
    profile: { type: 'string' },
    loss: { type: 'string' },
    protocol: { type: 'string' },
    site: { type: 'string' },
    n: { type: 'string', short: 'n' },
    out: { type: 'string' },
    resume: { type: 'string' },
    seed: { type: 'string', default: '1' },
    link: { type: 'string', default: 'auto' },
    timeout: { type: 'string', default: '120' },
    origin: { type: 'string', default: 'rust' },
    quic: { type: 'string' },
    cc: { type: 'string' },
    initcwnd: { type: 'string' },
    shard: { type: 'string' },
    lighthouse: { type: 'boolean' },
    'pep-preset': { type: 'string' },
    'pep-sat': { type: 'string' },
    'pep-ground': { type: 'string' },
    'h3-priorities': { type: 'string' },
    qlog: { type: 'boolean' },
  });
  if (v.help) return note(HELP.bench);
  const H3_PRIORITIES = ['rfc9218', 'incremental-last', 'off'];
  if (v['h3-priorities'] && !H3_PRIORITIES.includes(v['h3-priorities'])) {
    throw new UsageError(
      `--h3-priorities: expected ${H3_PRIORITIES.join(', ')}, got ${JSON.stringify(v['h3-priorities'])}`,
    );
  }
  const { PRESETS } = await import('./pageload/presets.js');
  const preset = PRESETS[v.preset];
  if (!preset)
    throw new UsageError(
      `--preset: unknown preset ${JSON.stringify(v.preset)}; presets: ${Object.keys(PRESETS).join(', ')}`,
    );
  checkLinkBackend(v.link);
  requireNetAdmin('bench');
  const matrix = {
    profiles: v.profile ? list(v.profile) : preset.profiles,
    losses: v.loss ? list(v.loss).map((x) => percent(x, '--loss')) : preset.losses,
    protocols: v.protocol ? list(v.protocol) : preset.protocols,
    sites: v.site ? [v.site] : preset.sites,
    runs: v.n ? integer(v.n, '-n', 1) : preset.runs,
  };
  const outDir = v.resume ?? v.out ?? `out/bench-${new Date().toISOString().replace(/[:.]/g, '-')}`;
  const { bench } = await import('./pageload/bench.js');
  const { parseQuicOptions } = await import('./servers/origin.js');
  const summary = await bench(matrix, {
    outDir,
    link: v.link,
    seed: integer(v.seed, '--seed', 0),
    resume: Boolean(v.resume),
    timeoutMs: integer(v.timeout, '--timeout', 1) * 1000,
    onProgress: note,
    meta: { preset: v.preset, argv },
    origin: v.origin,
    quic: v.quic ? parseQuicOptions(v.quic, '--quic') : {},
    tcp: tcpOptions(v),
    pep: { ...(await pepOptions(v)), qlog: Boolean(v.qlog) },
    h3Priorities: v['h3-priorities'] ?? null,
    shard: v.shard ? (await import('./campaign/matrix.js')).parseShard(v.shard) : null,
    lighthouse: Boolean(v.lighthouse),
  });
  const failed = summary.groups.reduce((a, g) => a + g.failed, 0);
  note(`results in ${outDir}/ (results.jsonl, summary.json, index.html); ${failed} failed run(s)`);
  if (v.json) print(summary);
}

async function reportCommand(argv) {
  const { values: v, positionals } = parse(argv, {});
  if (v.help) return note(HELP.report);
  if (positionals.length !== 1) throw new UsageError('report: name one results folder (satbench report DIR)');
  const { reportFolder } = await import('./analysis/outputs.js');
  const r = reportFolder(positionals[0]);
  note(`wrote ${r.file}${r.rewrote ? ' (and summary.json, from results.jsonl)' : ''}`);
}

async function compareCommand(argv) {
  const { values: v, positionals } = parse(argv, {
    budget: { type: 'string' },
    junit: { type: 'string' },
    markdown: { type: 'string' },
  });
  if (v.help) return note(HELP.compare);
  if (positionals.length !== 2)
    throw new UsageError('compare: name BASELINE and CURRENT (results folders, results.jsonl or summary.json)');
  const fs = await import('node:fs');
  const { loadResultSet } = await import('./analysis/outputs.js');
  const { compareResults, readBudget, DEFAULT_BUDGET, formatText, toMarkdown, toJUnit } =
    await import('./analysis/compare.js');
  const budget = v.budget ? readBudget(v.budget) : DEFAULT_BUDGET;
  const res = compareResults(loadResultSet(positionals[0]), loadResultSet(positionals[1]), budget);
  if (v.junit) fs.writeFileSync(v.junit, toJUnit(res));
  if (v.markdown) fs.writeFileSync(v.markdown, toMarkdown(res));
  if (v.json) print(res);
  else process.stdout.write(formatText(res) + '\n');
  process.exitCode = res.failed ? 1 : 0;
}

async function mergeCommand(argv) {
  const { values: v, positionals } = parse(argv, { out: { type: 'string' } });
  if (v.help) return note(HELP.merge);
  if (!positionals.length || !v.out) throw new UsageError('merge: name the folders to join and --out DIR');
  const { mergeFolders } = await import('./analysis/merge.js');
  const r = mergeFolders(positionals, v.out);
  for (const w of r.warnings) note(`warning: ${w}`);
  note(
    `merged ${r.records} runs from ${positionals.length} folder(s) into ${v.out}/ (results.jsonl, summary.json, index.html)`,
  );
  if (v.json) print(r.summary);
}

// `--duration`: seconds without a unit, or with one (500ms, 15s).
function seconds(v, flag, durationMs) {
  const n = /^\s*\d+(\.\d+)?\s*$/.test(v) ? Number(v) : durationMs(v, flag) / 1000;
  if (!(n > 0)) throw new UsageError(`${flag}: expected a duration > 0, got ${JSON.stringify(v)}`);
  return n;
}

async function bulkCommand(argv) {
  const { values: v } = parse(argv, {
    preset: { type: 'string' },
    profile: { type: 'string' },
    loss: { type: 'string' },
    protocol: { type: 'string' },
    duration: { type: 'string' },
    size: { type: 'string' },
    n: { type: 'string', short: 'n' },
    out: { type: 'string' },
    resume: { type: 'string' },
    seed: { type: 'string', default: '1' },
    link: { type: 'string', default: 'auto' },
    'bin-ms': { type: 'string', default: '100' },
    quic: { type: 'string' },
    'quic-client': { type: 'string' },
    cc: { type: 'string' },
    initcwnd: { type: 'string' },
    'pep-preset': { type: 'string' },
    'pep-sat': { type: 'string' },
    'pep-ground': { type: 'string' },
  });
  if (v.help) return note(HELP.bulk);
  const { durationMs, sizeBytes } = await import('./core/units.js');
  const { BULK_PRESETS, BULK_DEFAULTS } = await import('./bulk/presets.js');
  const preset = v.preset ? BULK_PRESETS[v.preset] : BULK_DEFAULTS;
  if (!preset)
    throw new UsageError(
      `--preset: unknown bulk preset ${JSON.stringify(v.preset)}; presets: ${Object.keys(BULK_PRESETS).join(', ')}`,
    );
  if (v.duration && v.size) throw new UsageError('give --duration or --size, not both');
  checkLinkBackend(v.link);
  const size = v.size ? Math.round(sizeBytes(v.size, '--size')) : null;
  const duration = v.duration ? seconds(v.duration, '--duration', durationMs) : null;
  const matrix = {
    profiles: v.profile ? list(v.profile) : preset.profiles,
    losses: v.loss ? list(v.loss).map((x) => percent(x, '--loss')) : preset.losses,
    protocols: v.protocol ? list(v.protocol) : preset.protocols,
    duration_s: size ? null : (duration ?? preset.duration_s),
    size_bytes: duration ? null : (size ?? preset.size_bytes),
    runs: v.n ? integer(v.n, '-n', 1) : preset.runs,
  };
  const { parseQuicOptions } = await import('./servers/origin.js');
  const { bulk, formatBulkSummary } = await import('./bulk/bulk.js');
  const pep = await pepOptions(v);
  requireNetAdmin('bulk');
  const outDir = v.resume ?? v.out ?? `out/bulk-${new Date().toISOString().replace(/[:.]/g, '-')}`;
  const summary = await bulk(matrix, {
    outDir,
    link: v.link,
    seed: integer(v.seed, '--seed', 0),
    resume: Boolean(v.resume),
    binMs: integer(v['bin-ms'], '--bin-ms', 1),
    onProgress: note,
    meta: { preset: v.preset ?? null, argv },
    quic: v.quic ? parseQuicOptions(v.quic, '--quic') : {},
    quicClient: v['quic-client'] ? parseQuicOptions(v['quic-client'], '--quic-client') : {},
    tcp: tcpOptions(v),
    pep,
  });
  const failed = summary.groups.reduce((a, g) => a + g.failed, 0);
  note(`results in ${outDir}/ (results.jsonl, summary.json, index.html); ${failed} failed run(s)`);
  if (v.json) print(summary);
  else process.stdout.write(formatBulkSummary(summary) + '\n');
}

async function main(argv) {
  const [cmd, ...rest] = argv;
  switch (cmd) {
    case undefined:
    case '-h':
    case '--help':
    case 'help':
      return note(HELP.main);
    case 'testbed':
      return testbed(rest);
    case 'doctor': {
      const { values: v } = parse(rest, {});
      if (v.help) return note(HELP.doctor);
      const list = await checks();
      if (v.json) print(list);
      else process.stdout.write(formatChecks(list) + '\n');
      process.exitCode = list.every((c) => c.ok || !c.required) ? 0 : 1;
      return;
    }
    case 'cleanup': {
      const { values: v } = parse(rest, { all: { type: 'boolean' } });
      if (v.help) return note(HELP.cleanup);
      requireNetAdmin('cleanup');
      const r = await cleanup({ all: v.all });
      if (v.json) return print({ removed: r.removed, kept: r.kept.map((t) => t.id) });
      note(r.removed.length ? `removed testbeds: ${r.removed.join(' ')}` : 'nothing to clean up');
      for (const t of r.kept)
        note(`kept testbed ${t.id}: owned by running process ${t.owner_pid} (--all removes it too)`);
      return;
    }
    case 'profiles': {
      const { values: v } = parse(rest, {});
      if (v.help) return note(HELP.profiles);
      const list = listBuiltinProfiles().map((name) => {
        const p = loadProfile(name);
        return { name, description: p.description.trim(), configured: configuredSummary(p) };
      });
      if (v.json) return print(list);
      for (const p of list) {
        const c = p.configured;
        process.stdout.write(
          `${p.name.padEnd(26)} RTT ${String(c.rtt_ms).padStart(4)} ms  ${c.forward_mbps ?? '∞'}/${c.return_mbps ?? '∞'} Mbit/s  loss ${Math.round(c.loss_pct * 1000) / 1000} %\n`,
        );
      }
      return;
    }
    case 'bulk':
      return bulkCommand(rest);
    case 'bench':
      return benchCommand(rest);
    case 'report':
      return reportCommand(rest);
    case 'compare':
      return compareCommand(rest);
    case 'merge':
      return mergeCommand(rest);
    default:
      throw new UsageError(`unknown command ${JSON.stringify(cmd)}; see \`satbench --help\``);
  }
}

main(process.argv.slice(2)).catch((e) => {
  if (e instanceof UsageError) {
    process.stderr.write(`satbench: ${e.message}\n`);
  } else {
    process.stderr.write(`satbench: internal error: ${e.stack || e}\n`);
  }
  process.exitCode = 2;
});
