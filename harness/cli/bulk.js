// `satbench bulk`: downloads over QUIC, TCP and Chromium, with and without
// PEPs, over a matrix of scenarios. Every option is checked (the matrix
// too) before privileges are, and before anything runs.
import { UsageError } from '../core/errors.js';
import { DEFAULTS } from '../core/defaults.js';
import { durationMs, sizeBytes } from '../core/units.js';
import { parseQuicOptions } from '../core/quic-options.js';
import { checkLinkBackend } from '../testbed/link-backends.js';
import { parseShard } from '../campaign/matrix.js';
import { BULK_PRESETS, BULK_DEFAULTS } from '../bulk/presets.js';
import { checkBulk } from './bulk-plan.js';
import { bulk } from '../bulk/bulk.js';
import { formatBulkSummary } from '../bulk/summary-table.js';
import { integer, uniqueList, tcpOptions, LIMITS } from './args.js';
import { pepOptions } from './pep-options.js';
import { campaignCommand, matrixAxes } from './campaign.js';

export const HELP = `Usage: satbench bulk [--preset NAME] [--profile LIST] [--loss LIST] [--protocol LIST]
                     [--duration S | --size BYTES] [--direction LIST] [--view LIST] [--revisit-capacity F]
                     [-n RUNS] [--out DIR]
                     [--resume DIR] [--seed N]
                     [--link auto|linkem|netem] [--bin-ms MS] [--quic LIST] [--quic-client LIST]
                     [--cc NAME] [--initcwnd N] [--pep-preset NAME] [--pep-sat LIST]
                     [--pep-ground LIST] [--pep-tunnel MODE] [--qlog] [--shard I/N] [--json]
  Download (or upload) over every scenario of the matrix (profiles × losses × protocols ×
  directions), RUNS times each, a fresh testbed per run, and count the bytes received per
  --bin-ms from just before the client connects.
  Writes DIR/results.jsonl (a line per run, kind "bulk", flushed as it ends), DIR/summary.json
  (per scenario: medians of bytes at 1, 3, 5, 10 s, time to 90 % of the link rate, time to 2, 10,
  100 MB, the goodput curve averaged over runs, the PEP/no-PEP ratio (tcp-qpep also over tcp-vpn
  and tcp-pep, quic-masque also over quic-pep), objectives) and index.html.

Options:
  --preset NAME     ifip2022-goodput (geo, leo; loss 0, 0.01, 0.1, 1 %; 15 s; quic, quic-pep, tcp,
                    tcp-pep; 10 runs) or quic4sat (the six quic4sat-* profiles, 100 MB down, and
                    100 MB up where the draft sets upload objectives (small), 3 runs, the draft's
                    objectives met or missed). Without: geo, loss 0, quic and tcp, 10 s down, 3 runs
  --profile LIST    link profiles, comma-separated (see \`satbench profiles\`)
  -n RUNS           runs per scenario
  --protocol LIST   quic, tcp (satbulk, end to end), quic-pep, tcp-pep (through the PEP chains),
                    tcp-qpep (QPEP: the TCP connection carried over the QUIC PEP's standing tunnel),
                    quic-masque (satbulk's QUIC, end to end, carried in CONNECT-UDP between
                    Proxy-ST and Proxy-GW, as h3-masque: the record's pep.masque),
                    quic-vpn, tcp-vpn (through an OpenVPN tunnel between st and gw, no PEP),
                    browser-h1, browser-h2, browser-h3 (Chromium fetching one large file)
  --duration S      download for S seconds (10, 15s, 500ms)
  --size BYTES      download BYTES (100MB, 2000000); replaces --duration
  --direction LIST  down (the server sends; the default), up (the client sends, over the return
                    link; the server counts from the client's t0), or down,up. Not with browser-*
  --view LIST       first (the default: one connection) or revisit (quic, quic-pep, quic-masque:
                    when the transfer is over satbulk get makes a second connection from the same
                    endpoint, resuming the first's TLS session and address-validation token, and
                    that transfer is measured; the record's first_connection has the first's
                    metrics; through quic-masque both cross in one proxying request, the same
                    flow), or first,revisit
  --revisit-capacity F  with --view revisit: between the two connections the satellite link's
                    rate becomes F × the profile's, both ways (0.5: the path lost half its
                    capacity; the queue keeps its size). Careful Resume's safety case. Needs the
                    netem link backend and a profile with one fixed satellite rate
  --loss LIST       satellite-link loss in percent; default: the profile's own
  --bin-ms MS       bin length of the goodput curve (default ${DEFAULTS.binMs})
  --seed N          seed of the link emulator's random loss and jitter; run i uses N + i (default ${DEFAULTS.seed})
  --link BACKEND    link emulation: auto (the default: the kernel's netem when it has it and
                    the profile needs nothing netem lacks, else linkem), linkem or netem
  --quic LIST       the sender's QUIC (satbulk, and the origin for browser-h3), KEY=VALUE
                    comma-separated: cc=cubic|newreno|bbr|sat, initial-window=PACKETS,
                    initial-mtu=BYTES, ack-frequency, ack-eliciting-threshold=N, max-ack-delay-ms=MS,
                    bdp-bytes=BYTES (default: the profile's rate × RTT), idle-timeout-ms=MS;
                    careful-resume=on (Careful Resume at satbulk serve: with --view revisit the
                    second connection starts from what the first measured; the record's
                    careful_resume)
  --quic-client LIST  the receiver's QUIC, the same keys (its flow-control windows, ACK frequency)
  --cc NAME         TCP congestion control of the end hosts (default cubic; newreno = reno)
  --initcwnd N      TCP initial congestion and receive window of the end hosts (default 10)
  --pep-preset NAME the split-TCP PEP's preset: paper (default: satellite hop NewReno, IW 100),
                    A, B, C, D (Kuhn et al. 2020)
  --pep-sat LIST    the PEPs' satellite hop, KEY=VALUE: cc, initial-window, and the QUIC keys
                    above (quic-pep, quic-masque, tcp-qpep: the tunnel) or sndbuf, rcvbuf
                    (tcp-pep). The QUIC PEP's cc: sat (ours, the warm tunnel's default; assumes
                    the profile's rate × RTT is the link's: starts there, no slow start, ignores a
                    loss of under 2 % of the window), bbr (quinn's, experimental; models rate and
                    RTT from ACKs), newreno, cubic (loss-based: slow start into the queue, random
                    loss cuts the window). The split-TCP PEP's: the kernel's (reno, cubic, bbr).
                    --preset quic4sat gives the QUIC PEP cc=sat,ack-eliciting-threshold=20 and
                    the split-TCP PEP cc=bbr unless --pep-sat is given. fec=K/N (quic-pep,
                    quic-masque, tcp-qpep): forward error correction between Proxy-ST and
                    Proxy-GW, N − K repair packets after every K datagrams (Reed–Solomon), the
                    record's pep.fec
  --pep-ground LIST the PEPs' client and server hops, the same keys but fec (tcp-qpep: cc is also
                    Proxy-GW's TCP congestion control towards the server)
  --pep-tunnel MODE the QUIC PEP's satellite hop: warm (the default: one standing ST↔GW
                    connection, up before the load, shared by every client connection, cc=sat
                    from the satellite link's rate × RTT) or per-connection (one per client
                    connection, NewReno with initial window 100, as Kosek et al.; not with tcp-qpep
                    or quic-masque)
  --qlog            the QUIC PEPs (quic-pep, quic-masque, tcp-qpep) write a qlog per connection
                    under DIR/qlog/SCENARIO-runN/; with careful-resume=on the Careful Resume log
                    goes there too (careful-resume-SERVER.jsonl: a line per resumed connection
                    with its qlog events, recovery:careful_resume_phase_updated)
  --out DIR         where results go (default out/bulk-TIMESTAMP); a failed run's helper logs
                    (linkem, both proxies, satbulk) are kept in DIR/logs/SCENARIO-runN/
  --resume DIR      continue an interrupted matrix in DIR without repeating finished runs
  --shard I/N       run only slice I of N of the matrix (every N-th run, round-robin);
                    \`satbench merge\` joins the slices
  --json            print summary.json to stdout (else a table of the medians)
Exit 0 when the matrix ran (failed runs are counted and reported), 2 on a harness error.`;

// Besides the options of every campaign (cli/campaign.js).
const OPTIONS = {
  duration: { type: 'string' },
  size: { type: 'string' },
  'bin-ms': { type: 'string', default: String(DEFAULTS.binMs) },
  direction: { type: 'string' },
  view: { type: 'string' },
  'revisit-capacity': { type: 'string' },
  'quic-client': { type: 'string' },
  qlog: { type: 'boolean' },
  shard: { type: 'string' },
};

// `--duration`: seconds without a unit, or with one (500ms, 15s).
export function seconds(v, flag) {
  const n = /^\s*\d+(\.\d+)?\s*$/.test(v) ? Number(v) : durationMs(v, flag) / 1000;
  if (!(n > 0)) throw new UsageError(`${flag}: expected a duration > 0, got ${JSON.stringify(v)}`);
  return n;
}

// `--revisit-capacity`: a factor of the satellite link's rate.
export function capacityFactor(v) {
  const n = /^\s*\d+(\.\d+)?\s*$/.test(v) ? Number(v) : NaN;
  if (!(n > 0 && n <= 10))
    throw new UsageError(
      `--revisit-capacity: expected a factor of the satellite link's rate above 0 and at most 10 (0.5: half), got ${JSON.stringify(v)}`,
    );
  return n;
}

/** The matrix and the settings of the command line (a UsageError names a bad option). */
export function bulkInput(v) {
  const preset = v.preset ? BULK_PRESETS[v.preset] : BULK_DEFAULTS;
  if (!preset)
    throw new UsageError(
      `--preset: unknown bulk preset ${JSON.stringify(v.preset)}; presets: ${Object.keys(BULK_PRESETS).join(', ')}`,
    );
  if (v.duration && v.size) throw new UsageError('give --duration or --size, not both');
  checkLinkBackend(v.link);
  const size = v.size ? Math.round(sizeBytes(v.size, '--size')) : null;
  if (size !== null && !(size >= 1))
    throw new UsageError(`--size: expected a size of at least 1 byte, got ${JSON.stringify(v.size)}`);
  const duration = v.duration ? seconds(v.duration, '--duration') : null;
  const { profiles, losses, protocols, runs } = matrixAxes(v, preset);
  const matrix = {
    profiles,
    losses,
    protocols,
    directions: v.direction !== undefined ? uniqueList(v.direction, '--direction') : preset.directions,
    ...(v.view !== undefined ? { views: uniqueList(v.view, '--view') } : {}),
    ...(v['revisit-capacity'] !== undefined ? { revisit_capacity: capacityFactor(v['revisit-capacity']) } : {}),
    // the preset uploads where the draft has upload objectives; --direction says where itself
    ...(preset.uploads_where_objectives && !v.direction ? { uploads_where_objectives: true } : {}),
    duration_s: size ? null : (duration ?? preset.duration_s),
    size_bytes: duration ? null : (size ?? preset.size_bytes),
    runs,
  };
  const settings = {
    link: v.link,
    seed: integer(v.seed, '--seed', 0, LIMITS.seed),
    binMs: integer(v['bin-ms'], '--bin-ms', 1, LIMITS.binMs),
    quic: v.quic ? parseQuicOptions(v.quic, '--quic') : {},
    quicClient: v['quic-client'] ? parseQuicOptions(v['quic-client'], '--quic-client') : {},
    tcp: tcpOptions(v),
    pep: { ...pepOptions(v, preset.pep_sat ?? null), qlog: Boolean(v.qlog) },
    shard: v.shard ? parseShard(v.shard) : null,
  };
  return { matrix, settings };
}

export function bulkCommand(argv) {
  return campaignCommand(argv, {
    name: 'bulk',
    help: HELP,
    options: OPTIONS,
    input: bulkInput,
    check: checkBulk,
    run: bulk,
    show: (summary) => process.stdout.write(formatBulkSummary(summary) + '\n'),
  });
}
