// `satbench bench`: page loads in Chromium over a matrix of scenarios.
// Every option is checked (the matrix too) before privileges are, and
// before anything runs.
import { UsageError } from '../core/errors.js';
import { DEFAULTS } from '../core/defaults.js';
import { parseQuicOptions } from '../core/quic-options.js';
import { checkLinkBackend } from '../testbed/link-backends.js';
import { parseShard } from '../campaign/matrix.js';
import { BENCH_PRESETS, presetOrigin } from '../pageload/presets.js';
import { checkBench } from './bench-plan.js';
import { bench } from '../pageload/bench.js';
import { formatBenchSummary } from '../pageload/summary-table.js';
import { checkEmulation, MAX_CPU_SLOWDOWN } from '../browser/emulation.js';
import { CONTENT_MS } from '../pageload/gather/har.js';
import { PAGE_COMPLETE } from '../pageload/gather/visual.js';
import { deviceLines, integer, tcpOptions, uniqueList, LIMITS } from './args.js';
import { DEFAULT_VIEWS } from '../core/views.js';
import { refuseCcBeside } from '../core/cc-axis.js';
import { pepOptions } from './pep-options.js';
import { campaignCommand, matrixAxes } from './campaign.js';

export const HELP = `Usage: satbench bench [--preset NAME] [--profile LIST] [--loss LIST] [--protocol LIST]
                      [--site NAME|DIR] [--view LIST] [-n RUNS] [--out DIR] [--resume DIR] [--seed N]
                      [--link auto|linkem|netem] [--timeout SECONDS] [--origin rust|h2o|h2o-patched]
                      [--quic LIST] [--h3-priorities P] [--alt-svc WHERE] [--cache POLICY] [--dns WHERE]
                      [--cc NAME | --cc-axis LIST] [--initcwnd N] [--pep-preset NAME]
                      [--pep-sat LIST] [--pep-ground LIST] [--pep-tunnel MODE] [--qlog] [--shard I/N]
                      [--cpu-slowdown N] [--device NAME] [--lighthouse] [--visual] [--har-content] [--json]
  Load a page in a fresh Chromium over every scenario of the matrix (profiles × losses ×
  protocols × sites × views × --cc-axis), RUNS times each, a fresh testbed and origin per run. Writes
  DIR/results.jsonl (a line per run, flushed as it ends), DIR/summary.json, DIR/index.html,
  and each run's HAR 1.2, gzipped, as DIR/har/SCENARIO-runN.har.gz (its record's "har").

Options:
  --preset NAME     quick (the default: kepler, leo and geo, loss 0, h1, h1-pep, h1-qpep, h3,
                    h3-pep, 5 runs), ifip2022 (the paper's matrix on its set-up: geo-dvb and
                    leo-dvb, --pep-tunnel per-connection, --origin h2o-patched where built,
                    --alt-svc tcp) or starlink (kepler, deutschmann-small and -large over
                    starlink, starlink-motion and geo-hts, h1, h2, h3 and each -pep,
                    ${BENCH_PRESETS.starlink.runs} runs: enough to split kepler's
                    by a handover during the load, each with --cc-axis ${BENCH_PRESETS.starlink.ccs.join(',')}:
                    twice the runs of one; --cc-axis cubic halves them); the options below
                    override its parts
  --profile LIST    link profiles, comma-separated (see \`satbench profiles\`)
  --loss LIST       satellite-link loss in percent, comma-separated (0,0.01,0.1,1); both
                    directions, or those of the profile's satellite.loss_on (geo-dvb: return)
  --protocol LIST   h1 (HTTP/1.1 cleartext), h1s (HTTP/1.1 over TLS), h2, h3, and each with
                    -pep (h1-pep, …, h3-pep): through the PEP chain in st and gw, or with
                    -vpn (h1-vpn, …, h3-vpn): through an OpenVPN tunnel between st and gw, no PEP;
                    h1, h1s, h2 also with -qpep (h1-qpep, h1s-qpep, h2-qpep): QPEP, their TCP
                    connections carried over the QUIC PEP's standing tunnel (HTTP/3 there is h3-pep)
  --site NAME|DIR   a reference site (kepler, deutschmann-small, deutschmann-large,
                    kuhn-a, kuhn-b), a directory with an index.html, or a site archive
                    (satbench record / import-har): every origin it recorded replayed by our
                    origin, each at an address of its own, over h1s, h2, h3 (h1 for an http page)
  --view LIST       first (the default: a fresh Chromium and profile), repeat (WebPageTest's
                    repeat view: after a first load Chromium is closed and started again on the
                    same profile, its disk cache, Alt-Svc and HSTS kept, and the page loaded
                    again) or revisit (the same Chromium loads the page again after its
                    connections are closed, its TLS session cache kept); comma-separated. A
                    repeat or revisit run records both loads: the pair's first view and the
                    second (each record names the other in "paired_with")
  -n RUNS           runs per scenario
  --out DIR         where results go (default out/bench-TIMESTAMP); a failed run's helper logs
                    (linkem, the origin, both proxies) are kept in DIR/logs/SCENARIO-runN/
  --resume DIR      continue an interrupted matrix in DIR without repeating finished runs
  --seed N          seed of the link emulator's random loss and jitter; run i uses N + i (default ${DEFAULTS.seed})
  --link BACKEND    link emulation: auto (the default: the kernel's netem when it has it and
                    the profile needs nothing netem lacks, else linkem), linkem (ours,
                    userspace) or netem
  --timeout S       a page load taking longer fails that run (default ${DEFAULTS.timeoutMs / 1000})
  --origin NAME     rust (ours: h1, h1s, h2, h3; the default, but ifip2022's is h2o-patched where built),
                    h2o (H2O 2.3.0-DEV with HTTP/3 over quicly, built by the set-up into
                    .tools/h2o-quic; where it could not be built, Debian's 2.2.5: h1, h1s, h2) or
                    h2o-patched (the same H2O without the two round trips its HTTP/3 handshake
                    loses on OpenSSL 3: sites/origin/README.md)
  --quic LIST       the origin's QUIC transport, KEY=VALUE comma-separated: cc=cubic|newreno|bbr|sat,
                    initial-window=PACKETS (10), initial-mtu=BYTES, ack-frequency,
                    ack-eliciting-threshold=N, max-ack-delay-ms=MS, bdp-bytes=BYTES (flow-control
                    windows are 2 × this; default: the profile's rate × RTT), idle-timeout-ms=MS,
                    careful-resume=on|off (Careful Resume, RFC 9959: a
                    client's next connection starts from what its previous one measured; the
                    record's careful_resume);
                    H2O takes only cc=cubic|newreno and initial-window (the others are refused)
  --h3-priorities P how our origin orders HTTP/3 responses: rfc9218 (the default: Chromium's
                    urgency first, non-incremental ones whole and in request order),
                    incremental-last (non-incremental first, the rest round-robin) or off
                    (all round-robin, as a server that ignores priorities); not with H2O
  --alt-svc WHERE   which of the origin's responses advertise HTTP/3 (Alt-Svc): all (the
                    default, as large HTTP/3 sites do; Chromium then knows the origin can
                    prioritize and requests every image at once) or tcp (only TCP ones; over h3
                    Chromium then keeps at most 6 images in flight, as in Kosek et al.'s
                    testbed; the ifip2022 preset's choice)
  --cache POLICY    the Cache-Control of every object (what a repeat or revisit view may reuse):
                    none (no-store), revalidate (no-cache: kept, revalidated with a conditional
                    request on every use), max-age=SECONDS (used without a request meanwhile),
                    immutable (max-age=31536000, immutable); default: what the site says
                    (kepler: revalidate; a site archive: its recorded headers; the other sites:
                    the origin's own, no-store for ours, none for H2O). Both origins send ETag
                    and Last-Modified and answer a current conditional request with 304
  --dns WHERE       a site archive's DNS server: gw (the default: every lookup crosses the
                    satellite link), st (a resolver on the terminal's side) or none (Chromium
                    maps the names itself, no lookups)
  --cc NAME         TCP congestion control of the end hosts (default cubic; newreno = reno)
  --cc-axis LIST    the end hosts' congestion control as a matrix axis: cubic, newreno, bbr,
                    comma-separated; each sets, for its scenarios, the end hosts' TCP (as --cc)
                    and our origin's QUIC (as --quic cc=), so not with either of them
  --initcwnd N      TCP initial congestion and receive window of the end hosts (default 10)
  --pep-preset NAME for the -pep protocols over TCP, the split-TCP PEP's preset: paper (the
                    default: satellite hop NewReno, initial window 100; ground hops Cubic, 10)
                    or A, B, C, D (Kuhn et al. 2020, Table III)
  --pep-sat LIST    the PEPs' satellite hop, KEY=VALUE comma-separated: cc, initial-window, and
                    the --quic keys (h3-pep, -qpep: the tunnel) or sndbuf, rcvbuf (h1-pep, h1s-pep,
                    h2-pep); careful-resume=on: Proxy-GW resumes each connection from Proxy-ST
                    from the path the previous one measured (per-connection: the next client
                    connection's; warm: a re-dialled tunnel); fec=K/N (h3-pep, -qpep,
                    h3-masque): forward error correction between Proxy-ST and Proxy-GW, N − K
                    repair packets after every K datagrams (Reed–Solomon), the record's pep.fec;
                    masque=datagram|stream (h3-masque alone): the inner packets cross as HTTP
                    Datagrams (the default: unreliable, Chromium's QUIC sees the hop's losses)
                    or as capsules on the request stream (reliable and in order: the tunnel
                    recovers a loss, Chromium sees delay), the record's pep.masque.mode
  --pep-ground LIST the PEPs' client and server hops, the same keys but careful-resume, fec
                    and masque
                    (-qpep: cc is also Proxy-GW's TCP congestion control towards the server)
  --pep-tunnel MODE the QUIC PEP's satellite hop: warm (the default: one standing ST↔GW
                    connection, up before the load, shared by every client connection, cc=sat
                    from the satellite link's rate × RTT) or per-connection (one per client
                    connection, NewReno with initial window 100, as Kosek et al. and ifip2022;
                    not with -qpep)
  --qlog            the QUIC PEPs write a qlog per connection under DIR/qlog/SCENARIO-runN/
  --shard I/N       run only slice I of N of the matrix (every N-th run, round-robin);
                    \`satbench merge\` joins the slices
  --cpu-slowdown N  DevTools' CPU throttling of every page load (and Lighthouse's): the page's CPU
                    work takes N times as long (a number from 1 to ${MAX_CPU_SLOWDOWN}; default ${DEFAULTS.cpuSlowdown}, none)
  --device NAME     the device every page load (and Lighthouse's) emulates (default ${DEFAULTS.device}):${deviceLines(20)}
  --lighthouse      with each scenario's first run, a separate Lighthouse load (performance
                    only, with the runs' --cpu-slowdown and --device and no network throttling:
                    the link is the throttle); DIR/lighthouse/*.report.{json,html}
  --har-content     each run's HAR keeps the response bodies, fetched from Chromium after the load
                    (${CONTENT_MS / 1000} s at most), as DevTools' "Save all as HAR with content": what
                    \`satbench import-har\` needs (a kepler run's HAR: 485 kB gzipped instead of 10 kB)
  --visual          every load records a DevTools trace of screenshots (First Visual Change,
                    Speed Index, Visual Complete 85/95/99 %, Last Visual Change; the filmstrip in
                    DIR/filmstrip/SCENARIO-runN/), CLS and TBT, and waits after the load event
                    until the page is quiet for ${PAGE_COMPLETE.quietMs / 1000} s (at most ${PAGE_COMPLETE.maxWaitMs / 1000} s)
  --json            print summary.json to stdout
Exit 0 when the matrix ran (failed runs are counted and reported), 2 on a harness error.`;

// Besides the options of every campaign (cli/campaign.js).
const OPTIONS = {
  preset: { type: 'string', default: 'quick' },
  site: { type: 'string' },
  view: { type: 'string' },
  'cc-axis': { type: 'string' },
  timeout: { type: 'string', default: String(DEFAULTS.timeoutMs / 1000) },
  origin: { type: 'string' },
  shard: { type: 'string' },
  lighthouse: { type: 'boolean' },
  'har-content': { type: 'boolean' },
  visual: { type: 'boolean' },
  'h3-priorities': { type: 'string' },
  'alt-svc': { type: 'string' },
  cache: { type: 'string' },
  dns: { type: 'string' },
  qlog: { type: 'boolean' },
  'cpu-slowdown': { type: 'string', default: String(DEFAULTS.cpuSlowdown) },
  device: { type: 'string', default: DEFAULTS.device },
};

/** The matrix and the settings of the command line (a UsageError names a bad option). */
export function benchInput(v) {
  const preset = BENCH_PRESETS[v.preset];
  if (!preset)
    throw new UsageError(
      `--preset: unknown preset ${JSON.stringify(v.preset)}; presets: ${Object.keys(BENCH_PRESETS).join(', ')}`,
    );
  checkLinkBackend(v.link);
  const { profiles, losses, protocols, runs } = matrixAxes(v, preset);
  const quic = v.quic ? parseQuicOptions(v.quic, '--quic') : {};
  const tcp = tcpOptions(v);
  // --cc-axis, else the preset's unless --cc or --quic cc= names the campaign's one
  const ccs =
    v['cc-axis'] !== undefined
      ? uniqueList(v['cc-axis'], '--cc-axis')
      : tcp.cc === undefined && quic.cc === undefined
        ? (preset.ccs ?? null)
        : null;
  refuseCcBeside(v['cc-axis'] !== undefined ? ccs : null, { tcp, quic });
  // in summary.json's key order of old, views (and ccs, only with the axis) added before runs
  const matrix = {
    profiles,
    losses,
    protocols,
    sites: v.site ? [v.site] : preset.sites,
    views: v.view !== undefined ? uniqueList(v.view, '--view') : (preset.views ?? DEFAULT_VIEWS),
    ...(ccs ? { ccs } : {}),
    runs,
  };
  const settings = {
    link: v.link,
    seed: integer(v.seed, '--seed', 0, LIMITS.seed),
    timeoutMs: integer(v.timeout, '--timeout', 1, LIMITS.timeoutS) * 1000,
    origin: v.origin ?? presetOrigin(preset),
    quic,
    tcp,
    pep: { ...pepOptions({ ...v, 'pep-tunnel': v['pep-tunnel'] ?? preset.pepTunnel }), qlog: Boolean(v.qlog) },
    h3Priorities: v['h3-priorities'] ?? null,
    altSvc: v['alt-svc'] ?? preset.altSvc ?? null,
    cache: v.cache ?? null,
    dns: v.dns ?? null,
    shard: v.shard ? parseShard(v.shard) : null,
    lighthouse: Boolean(v.lighthouse),
    harContent: Boolean(v['har-content']),
    emulation: checkEmulation({ cpuSlowdown: v['cpu-slowdown'], device: v.device }),
    visual: Boolean(v.visual),
  };
  return { matrix, settings };
}

export function benchCommand(argv) {
  return campaignCommand(argv, {
    name: 'bench',
    help: HELP,
    options: OPTIONS,
    input: benchInput,
    check: checkBench,
    run: bench,
    show: (summary) => process.stdout.write(formatBenchSummary(summary) + '\n'),
  });
}
