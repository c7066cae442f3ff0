#!/usr/bin/env node
// The satbench command. Parses arguments, calls the module that does the
// work, prints. Errors the user can fix print one line and exit 2.
import { parseArgs } from 'node:util';
import { UsageError } from './errors.js';
import { requireNetAdmin } from './sys.js';
import { loadProfile, listBuiltinProfiles, configuredSummary } from './profiles.js';
import { percent } from './units.js';
import { createTestbed, destroyTestbed, listTestbeds, cleanup } from './testbed.js';
import { probeTestbed } from './probe.js';
import { checks, formatChecks } from './doctor.js';
import { checkLinkBackend } from './link-backends.js';

const HELP = {
  main: `satbench — web page loads over emulated satellite links, in a real Chromium

Usage: satbench COMMAND [OPTIONS]

Commands:
  doctor                      check every prerequisite and say how to fix what is missing
  testbed up|down|status|probe  build, remove, list or measure an emulated testbed
  profiles                    list the built-in link profiles
  cleanup [--all]             remove testbeds (namespaces, processes) left behind
  bench                       load pages in Chromium over a matrix of scenarios

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
                      [--link auto|linkem|netem] [--timeout SECONDS] [--json]
  Load a page in a fresh Chromium over every scenario of the matrix (profiles × losses ×
  protocols × sites), RUNS times each, a fresh testbed and origin per run. Writes
  DIR/results.jsonl (a line per run, flushed as it ends), DIR/summary.json, DIR/index.html.

Options:
  --preset NAME     quick (the default: kepler, leo and geo, loss 0, h1 and h3, 5 runs) or
                    ifip2022 (the paper's matrix); the options below override its parts
  --profile LIST    link profiles, comma-separated (see \`satbench profiles\`)
  --loss LIST       satellite-link loss in percent, comma-separated (0,0.01,0.1,1)
  --protocol LIST   h1 (HTTP/1.1 cleartext), h1s (HTTP/1.1 over TLS), h2, h3
  --site NAME|DIR   a reference site (kepler, deutschmann-small, deutschmann-large,
                    kuhn-a, kuhn-b) or a directory with an index.html
  -n RUNS           runs per scenario
  --out DIR         where results go (default out/bench-TIMESTAMP)
  --resume DIR      continue an interrupted matrix in DIR without repeating finished runs
  --timeout S       a page load taking longer fails that run (default 120)
  --json            print summary.json to stdout
Exit 0 when the matrix ran (failed runs are counted and reported), 2 on a harness error.`,
  profiles: `Usage: satbench profiles [--json]
  List the built-in link profiles with their configured RTT, rates and loss.`,
};

function parse(argv, options) {
  try {
    return parseArgs({ args: argv, options: { help: { type: 'boolean', short: 'h' }, json: { type: 'boolean' }, ...options }, allowPositionals: true, strict: true });
  } catch (e) {
    throw new UsageError(e.message);
  }
}

const print = (obj) => process.stdout.write(JSON.stringify(obj, null, 2) + '\n');
const note = (msg) => process.stderr.write(`${msg}\n`);

function integer(v, flag, min) {
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw new UsageError(`${flag}: expected a whole number >= ${min}, got ${JSON.stringify(v)}`);
  return n;
}

const TESTBED_OPTIONS = {
  profile: { type: 'string' }, loss: { type: 'string' }, link: { type: 'string', default: 'auto' },
  seed: { type: 'string', default: '1' }, name: { type: 'string' }, cc: { type: 'string' },
  initcwnd: { type: 'string' }, pcap: { type: 'string' }, count: { type: 'string' }, all: { type: 'boolean' },
};

function testbedOptions(v) {
  if (!v.profile) throw new UsageError('--profile is required (see `satbench profiles`)');
  checkLinkBackend(v.link);
  const lossPct = v.loss === undefined ? undefined : percent(v.loss, '--loss');
  const tcp = {};
  if (v.cc) tcp.cc = v.cc;
  if (v.initcwnd) tcp.initcwnd = tcp.initrwnd = integer(v.initcwnd, '--initcwnd', 1);
  return {
    profile: loadProfile(v.profile, { lossPct }),
    link: v.link,
    seed: integer(v.seed, '--seed', 0),
    id: v.name,
    tcp,
    pcapDir: v.pcap,
  };
}

async function testbed(argv) {
  const [sub, ...rest] = argv;
  const { values: v, positionals } = parse(rest, TESTBED_OPTIONS);
  if (v.help || !sub || sub === '--help' || sub === '-h') return note(HELP.testbed);
  if (!['up', 'down', 'status', 'probe'].includes(sub)) throw new UsageError(`testbed: unknown subcommand ${JSON.stringify(sub)}; expected up, down, status or probe`);
  requireNetAdmin(`testbed ${sub}`);
  if (sub === 'status') {
    const list = await listTestbeds();
    if (v.json) return print(list);
    if (!list.length) return note('no testbeds');
    for (const t of list) {
      const procs = t.processes.map((p) => `${p.role}:${p.pid}${p.alive ? '' : '(gone)'}`).join(' ');
      const owner = t.owner_pid === null ? 'detached (testbed up)' : `owner pid ${t.owner_pid}${t.owner_alive ? '' : ' (gone)'}`;
      process.stdout.write(`${t.id}  profile ${t.profile ?? '?'}  link ${t.backend ?? '?'}  ${owner}  namespaces ${t.namespaces.length}/4  ${procs}\n`);
    }
    return;
  }
  if (sub === 'down') {
    const known = (await listTestbeds()).map((t) => t.id);
    const ids = v.all ? known : positionals;
    if (!ids.length) throw new UsageError('testbed down: name the testbed ids (see `satbench testbed status`) or pass --all');
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
    const info = { id: tb.id, backend: tb.backend, profile: tb.profile.name, namespaces: tb.ns, configured: configuredSummary(tb.profile) };
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
  return `profile ${r.profile}, link ${r.link}\n` + rows.map(([a, b, d]) => `  ${String(a).padEnd(24)}${String(b).padEnd(14)}${d}`).join('\n');
}

const list = (v) => v.split(',').map((x) => x.trim()).filter(Boolean);

async function benchCommand(argv) {
  const { values: v } = parse(argv, {
    preset: { type: 'string', default: 'quick' }, profile: { type: 'string' }, loss: { type: 'string' }, protocol: { type: 'string' },
    site: { type: 'string' }, n: { type: 'string', short: 'n' }, out: { type: 'string' }, resume: { type: 'string' },
    seed: { type: 'string', default: '1' }, link: { type: 'string', default: 'auto' }, timeout: { type: 'string', default: '120' },
  });
  if (v.help) return note(HELP.bench);
  const { PRESETS } = await import('./presets.js');
  const preset = PRESETS[v.preset];
  if (!preset) throw new UsageError(`--preset: unknown preset ${JSON.stringify(v.preset)}; presets: ${Object.keys(PRESETS).join(', ')}`);
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
  const { bench } = await import('./bench.js');
  const summary = await bench(matrix, {
    outDir, link: v.link, seed: integer(v.seed, '--seed', 0), resume: Boolean(v.resume),
    timeoutMs: integer(v.timeout, '--timeout', 1) * 1000, onProgress: note,
    meta: { preset: v.preset, argv },
  });
  const failed = summary.groups.reduce((a, g) => a + g.failed, 0);
  note(`results in ${outDir}/ (results.jsonl, summary.json, index.html); ${failed} failed run(s)`);
  if (v.json) print(summary);
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
      for (const t of r.kept) note(`kept testbed ${t.id}: owned by running process ${t.owner_pid} (--all removes it too)`);
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
        process.stdout.write(`${p.name.padEnd(26)} RTT ${String(c.rtt_ms).padStart(4)} ms  ${c.forward_mbps ?? '∞'}/${c.return_mbps ?? '∞'} Mbit/s  loss ${Math.round(c.loss_pct * 1000) / 1000} %\n`);
      }
      return;
    }
    case 'bench':
      return benchCommand(rest);
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
