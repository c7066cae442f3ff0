// The origin server of a run, in the testbed's server namespace: ours
// (sites/origin, Rust: h1, h1s, h2 and h3) or H2O (h1, h1s, h2, and h3 when
// harness/setup.sh built it with quicly; Debian's 2.2.5 has no h3). Both
// serve the same site directory with the certificate made for this testbed.
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { UsageError } from '../core/errors.js';
import { binPath, run, ROOT } from '../core/sys.js';
import { makeCertificate } from '../core/certificates.js';
import { baseProtocol } from '../core/protocols.js';
import { originQuicArgs, oneOf } from '../core/quic-options.js';
import { cacheControl } from '../core/cache-policy.js';
import { ADDRESSES, ORIGIN_HTTP_PORT, ORIGIN_PORT, SITE_HOST } from '../testbed/addressing.js';
import { startProcess } from '../testbed/testbed.js';
import { H2O_LOG_FORMAT, summarizeOriginLog } from './origin-log.js';
import { carefulResumeLogPath } from '../core/careful-resume-files.js';

// h2o-patched: the same H2O with sites/origin/h2o-accept-hashkey-iv.patch
// (its HTTP/3 handshake without the two round trips OpenSSL 3 costs it).
export const ORIGINS = ['rust', 'h2o', 'h2o-patched'];
const isH2o = (origin) => origin.startsWith('h2o');

// Built by harness/setup.sh from the pinned commit, with HTTP/3 (quicly).
export const H2O_BUILT = path.join(ROOT, '.tools/h2o-quic/bin/h2o');
export const H2O_PATCHED = path.join(ROOT, '.tools/h2o-quic/bin/h2o-patched');
// Debian's 2.2.5, unpacked by harness/setup.sh: the fallback, without h3.
export const H2O_DEBIAN = path.join(ROOT, '.tools/h2o/usr/bin/h2o');

/** Whether --origin h2o has HTTP/3 here: harness/setup.sh built it, or SATBENCH_H2O names one (checkOrigin checks that one). */
export const h2oBuiltWithH3 = () => Boolean(process.env.SATBENCH_H2O) || fs.existsSync(H2O_BUILT);
/** Whether --origin h2o-patched can run here: harness/setup.sh built it. */
export const h2oPatchedBuilt = () => fs.existsSync(H2O_PATCHED);

/**
 * h2o: SATBENCH_H2O, else the H2O built with HTTP/3, else Debian's;
 * h2o-patched: the patched build only.
 */
export function h2oPath(origin = 'h2o') {
  const p =
    origin === 'h2o-patched'
      ? H2O_PATCHED
      : process.env.SATBENCH_H2O || (fs.existsSync(H2O_BUILT) ? H2O_BUILT : H2O_DEBIAN);
  if (!fs.existsSync(p))
    throw new UsageError(
      `--origin ${origin}: ${p} is missing; harness/setup.sh (run by npm test and npm run bench) builds it ` +
        'from SATBENCH_H2O_SOURCE or GitHub (see the README)',
    );
  return p;
}

// H2O finds its share/h2o (helper scripts) through H2O_ROOT, the folder above bin/.
const h2oEnv = (bin) => ['env', `H2O_ROOT=${path.resolve(path.dirname(bin), '..')}`];

// Our --quic congestion controllers under quicly's names; bbr and sat it lacks.
const H2O_CC = { newreno: 'reno', cubic: 'cubic' };

/** Pure: the QUIC congestion controllers `origin` takes, or null for ours (every --quic cc=). */
export const originQuicCcs = (origin) => (isH2o(origin) ? Object.keys(H2O_CC) : null);

/**
 * Pure: the `--quic` options (user's) as keys of H2O's QUIC listener, or a
 * UsageError naming what H2O cannot take: quicly has reno, cubic (and
 * pico) and an initial window in packets; the other keys are our origin's.
 */
export function h2oQuicListenerKeys(quic = {}) {
  const out = {};
  const ignored = [];
  for (const [key, value] of Object.entries(quic)) {
    if (key === 'cc') {
      if (!H2O_CC[value])
        throw new UsageError(
          `--quic cc=${value}: H2O (quicly) has no ${value}; with --origin h2o cc must be ${oneOf(Object.keys(H2O_CC))}`,
        );
      out.cc = H2O_CC[value];
    } else if (key === 'initial-window') out.initcwnd = Number(value);
    else ignored.push(key);
  }
  if (ignored.length)
    throw new UsageError(
      `--quic: H2O has no setting for ${ignored.join(', ')} (with --origin h2o only cc and initial-window apply)`,
    );
  return out;
}

/**
 * Pure: an H2O configuration (YAML) serving `root` like our origin does:
 * h1 on ORIGIN_HTTP_PORT, h1 and h2 over TLS on ORIGIN_PORT (ALPN), h3 on
 * ORIGIN_PORT/udp when `h3`; no compression (H2O's default), no push, no
 * OCSP fetching (no Internet). With h3, Alt-Svc as `altSvc` says (all
 * responses, or only TCP ones): the TCP listeners and the QUIC one each
 * get a host of their own, since H2O adds headers per host. `cache` (a
 * core/cache-policy.js policy) sets Cache-Control on every response; H2O's
 * file handler sends ETag and Last-Modified and answers conditional
 * requests with 304 by itself (file.etag is on by default).
 */
export function h2oConfig({ root, addr, cert, key, accessLog, h3 = false, quic = {}, altSvc = 'all', cache = null }) {
  const ssl = { 'certificate-file': cert, 'key-file': key, 'ocsp-update-interval': 0 };
  const paths = { '/': { 'file.dir': root } };
  const advertise = { 'header.add': `alt-svc: h3=":${ORIGIN_PORT}"` };
  // per host, beside Alt-Svc (H2O's header directives of a host)
  const caching = cache ? { 'header.set': `cache-control: ${cacheControl(cache)}` } : {};
  // One listener per mapping (Debian's 2.2.5 takes no sequence of them);
  // the cleartext one is global, so it serves the first host.
  const hosts = {
    [`tcp.${SITE_HOST}`]: {
      listen: { host: addr, port: ORIGIN_PORT, ssl },
      ...(h3 ? advertise : {}),
      ...caching,
      paths,
    },
  };
  if (h3)
    hosts[`quic.${SITE_HOST}`] = {
      listen: { host: addr, port: ORIGIN_PORT, type: 'quic', ssl, ...h2oQuicListenerKeys(quic) },
      ...(altSvc === 'all' ? advertise : {}),
      ...caching,
      paths,
    };
  const config = {
    // As root H2O would switch to nobody, who cannot read a site in a 0700 directory.
    user: 'root',
    compress: 'OFF',
    listen: { host: addr, port: ORIGIN_HTTP_PORT },
    ...(accessLog ? { 'access-log': { path: accessLog, format: H2O_LOG_FORMAT } } : {}),
    hosts,
  };
  // Plain mappings, no anchors: the same ssl and paths are written out twice.
  return YAML.stringify(config, { aliasDuplicateObjects: false });
}

const h2oH3Cache = new Map();

/**
 * Whether the installed H2O serves HTTP/3: asks it to check a config with
 * a QUIC listener (2.2.5 answers "unknown listen type: quic").
 */
export async function h2oSupportsH3(bin = h2oPath()) {
  if (!h2oH3Cache.has(bin)) {
    const dir = fs.mkdtempSync(path.join('/tmp', 'satbench-h2o-'));
    try {
      const conf = path.join(dir, 'h3.conf');
      // A QUIC listener alone: H2O reads the listener's type before anything else.
      fs.writeFileSync(
        conf,
        YAML.stringify({
          listen: { host: '127.0.0.1', port: ORIGIN_PORT, type: 'quic' },
          hosts: { default: { paths: { '/': { 'file.dir': dir } } } },
        }),
      );
      const r = await run(h2oEnv(bin)[0], [...h2oEnv(bin).slice(1), bin, '-t', '-c', conf], { allowFail: true });
      h2oH3Cache.set(bin, !/unknown listen type/.test(r.stdout + r.stderr));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
  return h2oH3Cache.get(bin);
}

/** The origin's name and version as the report's environment shows it. */
export async function originVersion(origin) {
  const bin = isH2o(origin) ? h2oPath(origin) : binPath('origin');
  const r = await run(bin, ['--version'], { allowFail: true });
  const patched = origin === 'h2o-patched' ? ' with h2o-accept-hashkey-iv.patch' : '';
  return { name: origin, path: bin, version: r.ok ? `${r.stdout.split('\n')[0].trim()}${patched}` : null };
}

/**
 * Fails before anything runs when `origin` cannot serve `protocols` with
 * these settings: H2O without HTTP/3 asked for h3, a --quic key H2O has no
 * setting for, --h3-priorities (our origin's scheduler) with H2O.
 */
export async function checkOrigin(origin, protocols, { quic = {}, h3Priorities = null } = {}) {
  if (!ORIGINS.includes(origin))
    throw new UsageError(`--origin: unknown origin ${JSON.stringify(origin)}; expected ${ORIGINS.join(', ')}`);
  if (!isH2o(origin)) return;
  h2oQuicListenerKeys(quic);
  if (h3Priorities !== null)
    throw new UsageError("--h3-priorities: our origin's setting; H2O orders HTTP/3 responses its own way");
  const bin = h2oPath(origin);
  if (protocols.some((p) => baseProtocol(p) === 'h3') && !(await h2oSupportsH3(bin))) {
    const { version } = await originVersion(origin);
    throw new UsageError(
      `--origin ${origin}: the installed H2O (${version ?? bin}) has no HTTP/3 (harness/setup.sh builds one from ` +
        'SATBENCH_H2O_SOURCE or GitHub; see the README); drop h3 from --protocol or use --origin rust',
    );
  }
}

// The certificate of the testbed's server (our origin, H2O, satbulk): the
// site's name on the server's address, in tb.dir/tls (where the QUIC PEP
// looks for it to trust the origin).
export const originCertificate = (tb) =>
  makeCertificate({ name: SITE_HOST, ip: ADDRESSES.server, dir: path.join(tb.dir, 'tls') });

const originLogPath = (tb) => path.join(tb.dir, 'origin.requests.log');
// Our origin's connection log (--conn-log): a line per TLS or QUIC
// connection, servers/connection-log.js. H2O keeps none.
export const originConnLogPath = (tb) => path.join(tb.dir, 'origin.connections.log');

/**
 * The text of `file` from byte `from` to byte `to` (one load's slice of a
 * log a server appends to), or null when there is no such file.
 */
export function readLogSlice(file, { from = 0, to = Infinity } = {}) {
  try {
    return fs.readFileSync(file).subarray(from, to).toString('utf8');
  } catch {
    return null;
  }
}

/** How many bytes `file` holds so far (0 without one): where a slice of what is appended next starts. */
export function logBytes(file) {
  return fs.statSync(file, { throwIfNoEntry: false })?.size ?? 0;
}

/**
 * What the origin of testbed `tb` logged so far (summarizeOriginLog), or
 * null without a log; `from`, `to`: the bytes of it (originLogBytes), one
 * load's of a pair.
 */
export function readOriginLog(tb, slice = {}) {
  const text = readLogSlice(originLogPath(tb), slice);
  return text === null ? null : summarizeOriginLog(text);
}

/** How many bytes the origin of testbed `tb` logged so far: where readOriginLog of what it logs next starts. */
export const originLogBytes = (tb) => logBytes(originLogPath(tb));

/**
 * Makes the testbed's certificate and starts `origin` serving `siteDir`
 * (or replaying `archive`, pageload/archive-site.js: our origin only)
 * in the server namespace, with the scenario's QUIC transport (`quic`, the
 * user's --quic; `bdpBytes` sizes our origin's windows), `h3Priorities` and
 * `altSvc`, and the `cache` policy (core/cache-policy.js; null: the
 * origin's own, an archive's recorded headers). With careful-resume=on our
 * origin logs Careful Resume to servers/careful-resume-log.js's file. Returns {spki} for Chromium's pin and the certificate's path
 * (the QUIC PEP trusts the origin by it).
 */
export async function startOrigin(
  tb,
  {
    origin = 'rust',
    siteDir,
    archive = null,
    quic = {},
    bdpBytes = null,
    h3Priorities = null,
    altSvc = null,
    cache = null,
  },
) {
  const tls = await originCertificate(tb);
  const logPath = path.join(tb.dir, 'origin.log');
  const accessLog = originLogPath(tb);
  if (isH2o(origin)) {
    const bin = h2oPath(origin);
    const conf = path.join(tb.dir, 'h2o.conf');
    fs.writeFileSync(
      conf,
      h2oConfig({
        root: siteDir,
        addr: ADDRESSES.server,
        cert: tls.cert,
        key: tls.key,
        accessLog,
        h3: await h2oSupportsH3(bin),
        quic,
        altSvc: altSvc ?? 'all',
        cache,
      }),
    );
    await startProcess(tb.state, 'origin', ['ip', 'netns', 'exec', tb.ns.server, ...h2oEnv(bin), bin, '-c', conf], {
      logPath,
      what: 'the H2O origin',
      readyInLog: /ready to serve requests/,
    });
  } else {
    await startProcess(
      tb.state,
      'origin',
      [
        'ip',
        'netns',
        'exec',
        tb.ns.server,
        binPath('origin'),
        'serve',
        // an archive: every host it recorded, each on its own address, each
        // with a certificate made for tls.key (one SPKI pin for all)
        ...(archive
          ? ['--archive', archive.dir, '--addr', archive.hosts.map((h) => h.address).join(',')]
          : ['--root', siteDir, '--addr', ADDRESSES.server, '--cert', tls.cert]),
        '--http-port',
        String(ORIGIN_HTTP_PORT),
        '--https-port',
        String(ORIGIN_PORT),
        '--key',
        tls.key,
        '--log',
        accessLog,
        '--conn-log',
        originConnLogPath(tb),
        ...originQuicArgs(quic, { bdpBytes }),
        ...(quic['careful-resume'] === 'on' ? ['--careful-resume-log', carefulResumeLogPath(tb, 'origin')] : []),
        ...(h3Priorities ? ['--h3-priorities', h3Priorities] : []),
        ...(altSvc ? ['--alt-svc', altSvc] : []),
        ...(cache ? ['--cache', cache] : []),
      ],
      { logPath, what: 'the origin server' },
    );
  }
  return { spki: tls.spki, cert: tls.cert };
}
