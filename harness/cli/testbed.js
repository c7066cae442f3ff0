// `satbench testbed up|down|status|probe`: build, remove, list or measure
// an emulated testbed.
import { UsageError, withFlag } from '../core/errors.js';
import { requireNetAdmin } from '../core/sys.js';
import { refuseFileOnPath } from '../core/folders.js';
import { percent } from '../core/units.js';
import { round } from '../core/stats.js';
import { loadProfile, configuredSummary } from '../testbed/profiles.js';
import { checkLinkBackend } from '../testbed/link-backends.js';
import { createTestbed, destroyTestbed, listTestbeds, strayStateEntries, STATE_DIR } from '../testbed/testbed.js';
import { validateId } from '../testbed/addressing.js';
import { probeTestbed } from '../testbed/probe.js';
import { interruptedBy } from '../testbed/teardown.js';
import { parse, print, note, noOperands, integer, tcpOptions, LIMITS, TCP_OPTIONS } from './args.js';

export const HELP = `Usage:
  satbench testbed up --profile NAME [--loss PCT] [--link auto|linkem|netem] [--seed N]
                      [--name ID] [--cc NAME] [--initcwnd N] [--pcap DIR] [--json]
      Build a testbed and leave it running: client ─ st ═ satellite ═ gw ─ internet ─ server,
      namespaces sbt-ID-client, sbt-ID-st, sbt-ID-gw, sbt-ID-server (198.18.0.0/15).
  satbench testbed down ID... | --all
      Remove testbeds: their processes, namespaces and state.
  satbench testbed status [--json]
      List the testbeds on this machine.
  satbench testbed probe --profile NAME [--loss PCT] [--link ...] [--seed N] [--count N | --duration S] [--json]
      Build a testbed, measure RTT (median, p99 over --count echoes, at least 20), TCP connect
      time (20 handshakes), one-way delay per direction (1-byte UDP datagrams; min, p10, median,
      p90, p99, max), a burst after idle per direction (first and last datagram's delay,
      completion, added delay against an ideal link), loss and throughput, print them beside
      the configured values and what the profile's access model would add, and remove the
      testbed.

Options:
  --profile NAME|FILE  a built-in profile (see \`satbench profiles\`) or a .yaml/.json file
  --loss PCT           random loss on the satellite link, in percent: both directions, or
                       those of the profile's satellite.loss_on; replaces the profile's loss there
  --link BACKEND       auto (kernel netem when the kernel has it, else linkem), linkem, netem
  --seed N             seed of the emulator's random loss and jitter (default 1)
  --name ID            up: the testbed's id, 1 to 12 characters a-z or 0-9 (default: a new one)
  --count N            probe: RTT echoes to send, at least 20 (default 20)
  --duration S         probe: send RTT echoes for S seconds (every 20 ms) and summarise the series:
                       median, p5/p95, the period of its handovers found from the series, the
                       spike and the loss at a boundary, beside what a slot process configures
  --all                down: remove every testbed on this machine
  --cc NAME            TCP congestion control of every namespace (default cubic; newreno = reno)
  --initcwnd N         TCP initial congestion and receive window of the end hosts (default 10)
  --pcap DIR           linkem writes a pcap of each side of each link under DIR
  --json               print JSON`;

const OPTIONS = {
  profile: { type: 'string' },
  loss: { type: 'string' },
  link: { type: 'string', default: 'auto' },
  seed: { type: 'string', default: '1' },
  name: { type: 'string' },
  ...TCP_OPTIONS,
  pcap: { type: 'string' },
  count: { type: 'string' },
  duration: { type: 'string' },
  all: { type: 'boolean' },
};

const SUBCOMMANDS = ['up', 'down', 'status', 'probe'];

// --pcap's folder, checked before the testbed is built: linkem makes it.
function pcapDir(dir) {
  if (!dir) throw new UsageError('--pcap: expected a folder');
  refuseFileOnPath(dir, '--pcap');
  return dir;
}

// The testbed `up` and `probe` build, checked before anything runs.
function testbedOptions(v) {
  if (!v.profile) throw new UsageError('--profile is required (see `satbench profiles`)');
  checkLinkBackend(v.link);
  const lossPct = v.loss === undefined ? undefined : percent(v.loss, '--loss');
  return {
    profile: loadProfile(v.profile, { lossPct }),
    link: v.link,
    seed: integer(v.seed, '--seed', 0, LIMITS.seed),
    id: v.name === undefined ? undefined : withFlag('--name', () => validateId(v.name)),
    tcp: tcpOptions(v),
    pcapDir: v.pcap === undefined ? undefined : pcapDir(v.pcap),
  };
}

export async function testbedCommand(argv) {
  const [sub, ...rest] = argv;
  const { values: v, positionals } = parse(rest, OPTIONS);
  if (v.help || sub === '--help' || sub === '-h') return note(HELP);
  // as `satbench` alone: no subcommand is a usage error, not help asked for
  if (!sub) throw new UsageError(`testbed: name a subcommand (up, down, status or probe)\n\n${HELP}`);
  if (!SUBCOMMANDS.includes(sub))
    throw new UsageError(`testbed: unknown subcommand ${JSON.stringify(sub)}; expected up, down, status or probe`);
  if (sub === 'down') {
    if (!v.all && !positionals.length)
      throw new UsageError('testbed down: name the testbed ids (see `satbench testbed status`) or pass --all');
    for (const id of positionals) validateId(id);
  } else noOperands(positionals, `testbed ${sub}`);
  const opts = sub === 'up' || sub === 'probe' ? testbedOptions(v) : null;
  if (v.count !== undefined && v.duration !== undefined)
    throw new UsageError('testbed probe: give --count or --duration, not both');
  const count = sub === 'probe' && v.count !== undefined ? integer(v.count, '--count', 20) : 20;
  const durationS = sub === 'probe' && v.duration !== undefined ? integer(v.duration, '--duration', 2) : null;
  requireNetAdmin(`testbed ${sub}`);
  if (sub === 'status') return status(v);
  if (sub === 'down') return down(v.all, positionals);
  if (sub === 'up') return up(opts, v).catch(unlessInterrupted);
  return probe(opts, { rttCount: count, durationS }, v).catch(unlessInterrupted);
}

// A build or probe a signal cut short fails as a consequence: the signal's
// teardown (testbed/teardown.js) ends the process with the signal's status.
function unlessInterrupted(e) {
  if (interruptedBy()) return new Promise(() => {});
  throw e;
}

async function status(v) {
  const list = await listTestbeds();
  for (const name of strayStateEntries())
    note(`${STATE_DIR}/${name} is no testbed's (a stray entry); \`satbench cleanup\` removes it`);
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
}

async function down(all, ids) {
  const known = (await listTestbeds()).map((t) => t.id);
  if (all && !known.length)
    throw new UsageError('testbed down: name the testbed ids (see `satbench testbed status`) or pass --all');
  for (const id of all ? known : ids) {
    if (!known.includes(id)) throw new UsageError(`no testbed ${id} (see \`satbench testbed status\`)`);
    await destroyTestbed(id);
    note(`removed testbed ${id}`);
  }
}

async function up(opts, v) {
  const tb = await createTestbed({ ...opts, detached: true });
  const info = {
    id: tb.id,
    backend: tb.backend,
    profile: tb.profile.name,
    namespaces: tb.ns,
    configured: configuredSummary(tb.profile),
  };
  if (v.json) print(info);
  else {
    process.stdout.write(`testbed ${tb.id} is up (profile ${tb.profile.name}, link ${tb.backend})\n`);
    for (const [node, ns] of Object.entries(tb.ns)) process.stdout.write(`  ${node.padEnd(6)} ip netns exec ${ns} …\n`);
    process.stdout.write(`remove it with: satbench testbed down ${tb.id}\n`);
  }
  // Until the user has been told, a signal takes it down again.
  tb.detach();
}

async function probe(opts, probeOptions, v) {
  const tb = await createTestbed(opts);
  try {
    const result = await probeTestbed(tb, probeOptions, (step) => note(`probe ${tb.profile.name}: ${step}`));
    result.link_stats = await tb.linkStats();
    if (v.json) print(result);
    else process.stdout.write(formatProbe(result) + '\n');
  } finally {
    await tb.destroy();
  }
}

// Pure: `testbed probe`'s table, configured beside measured (and, for a
// profile built from published figures, those figures between them, with
// their citations after the table). The configured side adds, after "+", what the satellite access model would
// add to the ideal link (a range: the wait for a frame boundary).
export function formatProbe(r) {
  const c = r.configured;
  const m = r.measured;
  const adds = c.access_adds_ms;
  const range = (a) => `${round(a.min, 1)}–${round(a.max, 1)}`;
  const plus = (a) => (a ? ` +${range(a)}` : '');
  const qs = (d, count = `n ${d.n}`) =>
    ['min', 'p10', 'median', 'p90', 'p99', 'max'].map((k) => `${k} ${d[k] ?? '-'}`).join('  ') + `  (${count})`;
  const rows = [
    ['', 'configured', 'measured'],
    ['RTT ms (median / p99)', c.rtt_ms, `${m.rtt_ms.median} / ${m.rtt_ms.p99}`],
  ];
  if (m.connect_ms)
    rows.push([
      'TCP connect ms',
      `${c.connect_ms}${plus(adds?.connect)}`,
      qs(m.connect_ms, `${m.connect_ms.connected} of ${m.connect_ms.sent} connected`),
    ]);
  for (const dir of ['forward', 'return'])
    rows.push([`one-way ${dir} ms`, `${c.one_way_ms[dir]}${plus(adds?.one_way[dir])}`, qs(m.one_way_ms[dir])]);
  for (const dir of ['forward', 'return']) {
    const b = m.burst?.[dir];
    if (!b) continue;
    const cb = c.burst[dir];
    rows.push(
      [
        `burst ${dir} ms`,
        `${cb.ideal_ms.completion}${plus(adds?.burst[dir])}`,
        `first ${b.first_ms ?? '-'}  last ${b.last_ms ?? '-'}  completion ${b.completion_ms ?? '-'}` +
          `  (${b.received} of ${b.sent})`,
      ],
      [`burst ${dir} added ms`, adds?.burst[dir] ? range(adds.burst[dir]) : 0, b.added_ms ?? '-'],
    );
  }
  const ser = m.rtt_series;
  // A row's third element names it for the sourced figure it goes beside.
  if (ser) {
    const cs = c.slots;
    const step = ser.largest_slot_step_ms;
    rows.push(
      [
        'RTT series ms',
        '',
        `median ${ser.median_ms}  p5 ${ser.p5_ms}  p95 ${ser.p95_ms}  (${ser.received} of ${ser.n})`,
      ],
      ['successive jitter ms', '', ser.successive_jitter_ms ?? '-', 'successive_jitter_ms'],
      ['handover period s', cs?.period_s ?? 'none', ser.period_s ?? 'none found', 'period_s'],
    );
    const [co, so] = [cs?.outages, ser.outages];
    // runs of lost echoes of 200 ms and more (rtt-series.js outageRuns)
    if (co || so?.count)
      rows.push(
        ['outages per min', co?.per_minute ?? 'none', `${so.per_minute}  (${so.count} seen)`],
        [
          'outage ms median / max',
          co ? `${co.median_ms} / ${co.longest_ms}` : '-',
          so.count ? `${so.median_ms} / ${so.longest_ms}` : '-',
        ],
        ['outage loss %', co?.loss_pct ?? '-', so.loss_pct],
      );
    if (ser.period_s !== null)
      rows.push(
        [
          'boundary at s',
          cs?.boundary_at_s !== undefined ? `${cs.boundary_at_s} past min` : '',
          `${ser.boundary_phase_s} into the series (${ser.boundaries} boundaries)`,
          'boundary',
        ],
        [
          'slot RTT ms',
          cs ? cs.slot_rtt_ms.join('–') : '-',
          `${Math.min(...ser.slot_medians_ms)}–${Math.max(...ser.slot_medians_ms)}` +
            (step ? `, largest step ${step.from} → ${step.to}` : ''),
          'slot_step_ms',
        ],
        ['boundary spike ms', cs?.spike_ms ?? '-', ser.spike_ms ?? '-', 'spike_ms'],
        [
          `loss % ${ser.window_ms} ms after`,
          cs?.boundary_loss_pct ?? '-',
          `${ser.boundary_loss_pct}  (${ser.boundary_lost} of ${ser.boundary_echoes}; elsewhere ${ser.other_loss_pct})`,
        ],
        ['peak loss % in 100 ms', cs?.peak_loss_pct ?? '-', ser.peak_loss_pct ?? '-', 'peak_loss_pct'],
      );
  }
  rows.push(
    ['forward Mbit/s', c.forward_mbps ?? 'unlimited', m.forward_mbps ?? '-', 'forward_mbps'],
    ['return Mbit/s', c.return_mbps ?? 'unlimited', m.return_mbps ?? '-'],
    ['loss % forward', c.loss_pct, `${m.loss_pct} (of ${m.loss_samples.forward})`],
    ['loss % return', c.return_loss_pct, `${m.return_loss_pct} (of ${m.loss_samples.return})`],
  );
  const notes = ['forward', 'return']
    .filter((dir) => m.burst?.[dir])
    .map((dir) => {
      const b = c.burst[dir];
      return `burst ${dir}: ${b.packets} × ${b.packet_bytes} B after ${b.idle_ms} ms idle, against an ideal link (one-way delay + the bytes at the rate)`;
    });
  // With sourced figures, a column of them between configured and
  // measured, and their citations after the table.
  const src = r.sourced;
  const sourcedText = (id) => {
    const f = id && src?.figures[id];
    return f ? `${f.text} [${f.source}]${f.status ? ' *' : ''}` : '';
  };
  const width = src ? Math.max(8, ...rows.map(([, , , id]) => sourcedText(id).length)) + 2 : 0;
  const line = ([a, b, d, id], i) =>
    `  ${String(a).padEnd(24)}${String(b).padEnd(18)}${src ? (i ? sourcedText(id) : 'sourced').padEnd(width) : ''}${d}`;
  const cited = src
    ? [
        `sourced: ${src.file} (published measurements, not the operator's data):`,
        ...Object.entries(src.sources).map(([k, cite]) => `  [${k}] ${cite}`),
        ...Object.values(src.figures)
          .filter((f) => f.status)
          .map((f) => `  * ${f.figure}: ${f.status}`),
      ]
    : [];
  return (
    `profile ${r.profile}, link ${r.link}\n` +
    rows.map(line).join('\n') +
    [...notes, ...cited].map((n) => `\n  ${n}`).join('')
  );
}
