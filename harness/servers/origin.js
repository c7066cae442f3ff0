// The origin server of a run, in the testbed's server namespace: ours
// (sites/origin, Rust: h1, h1s, h2 and h3) or H2O (Debian's 2.2.5: h1, h1s
// and h2; h3 only where the installed H2O has it). Both serve the same site
// directory with the certificate made for this testbed.
import fs from 'node:fs';
import path from 'node:path';
import { UsageError } from '../core/errors.js';
import { binPath, run, ROOT } from '../core/sys.js';
import { makeCertificate } from '../core/certificates.js';
import { baseProtocol } from '../core/protocols.js';
import { ADDRESSES, ORIGIN_HTTP_PORT, ORIGIN_PORT, SITE_HOST } from '../testbed/addressing.js';
import { startProcess } from '../testbed/testbed.js';

export const ORIGINS = ['rust', 'h2o'];

// The unpacked Debian package (harness/setup.sh), or SATBENCH_H2O.
export function h2oPath() {
  const p = process.env.SATBENCH_H2O || path.join(ROOT, '.tools/h2o/usr/bin/h2o');
  if (!fs.existsSync(p))
    throw new UsageError(
      `--origin h2o: ${p} is missing; harness/setup.sh (run by npm test and npm run bench) unpacks it`,
    );
  return p;
}

// H2O finds its share/ (mruby, helper scripts) through H2O_ROOT.
const h2oEnv = (bin) => ['env', `H2O_ROOT=${path.resolve(path.dirname(bin), '..')}`];

// Pure: an H2O configuration serving `root` like our origin does: h1 on
// ORIGIN_HTTP_PORT, h1 and h2 over TLS on ORIGIN_PORT (ALPN), h3 on
// ORIGIN_PORT/udp when asked; no compression (H2O's default), no push, no
// OCSP fetching (no Internet).
export function h2oConfig({ root, addr, cert, key, accessLog, h3 = false }) {
  const q = (s) => JSON.stringify(String(s)); // YAML accepts JSON strings
  const ssl = `  ssl:\n    certificate-file: ${q(cert)}\n    key-file: ${q(key)}\n    ocsp-update-interval: 0\n`;
  return [
    `listen:\n  host: ${q(addr)}\n  port: ${ORIGIN_HTTP_PORT}\n`,
    `listen:\n  host: ${q(addr)}\n  port: ${ORIGIN_PORT}\n${ssl}`,
    h3 ? `listen:\n  host: ${q(addr)}\n  port: ${ORIGIN_PORT}\n  type: quic\n${ssl}` : '',
    // As root H2O would switch to nobody, who cannot read a site in a 0700 directory.
    'user: root\n',
    'compress: OFF\n',
    'http2-casper: OFF\n',
    `hosts:\n  default:\n    paths:\n      /:\n        file.dir: ${q(root)}\n`,
    accessLog ? `access-log: ${q(accessLog)}\n` : '',
  ].join('');
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
        `listen:\n  host: 127.0.0.1\n  port: ${ORIGIN_PORT}\n  type: quic\nhosts:\n  default:\n    paths:\n      /:\n        file.dir: ${JSON.stringify(dir)}\n`,
      );
      const r = await run(h2oEnv(bin)[0], [...h2oEnv(bin).slice(1), bin, '-t', '-c', conf], { allowFail: true });
      h2oH3Cache.set(bin, !/unknown listen type/.test(r.stdout + r.stderr));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
  return h2oH3Cache.get(bin);
}

/** Fails before anything runs when `origin` cannot serve `protocols`. */
export async function checkOrigin(origin, protocols) {
  if (!ORIGINS.includes(origin))
    throw new UsageError(`--origin: unknown origin ${JSON.stringify(origin)}; expected ${ORIGINS.join(', ')}`);
  if (origin !== 'h2o') return;
  const bin = h2oPath();
  if (protocols.some((p) => baseProtocol(p) === 'h3') && !(await h2oSupportsH3(bin))) {
    const { stdout } = await run(bin, ['--version'], { allowFail: true });
    throw new UsageError(
      `--origin h2o: the installed H2O (${stdout.split('\n')[0].trim() || bin}) has no HTTP/3; ` +
        'drop h3 from --protocol or use --origin rust',
    );
  }
}

// The certificate of the testbed's server (our origin, H2O, satbulk): the
// site's name on the server's address, in tb.dir/tls (where the QUIC PEP
// looks for it to trust the origin).
export const originCertificate = (tb) =>
  makeCertificate({ name: SITE_HOST, ip: ADDRESSES.server, dir: path.join(tb.dir, 'tls') });

/**
 * Makes the testbed's certificate and starts `origin` serving `siteDir`
 * in the server namespace. `quicArgs` are extra `origin serve` flags (our
 * origin's QUIC transport). Returns {spki} for Chromium's pin and the
 * certificate's path (the QUIC PEP trusts the origin by it).
 */
export async function startOrigin(tb, { origin = 'rust', siteDir, quicArgs = [] }) {
  const tls = await originCertificate(tb);
  const logPath = path.join(tb.dir, 'origin.log');
  const accessLog = path.join(tb.dir, 'origin.requests.log');
  if (origin === 'h2o') {
    const bin = h2oPath();
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
        '--root',
        siteDir,
        '--addr',
        ADDRESSES.server,
        '--http-port',
        String(ORIGIN_HTTP_PORT),
        '--https-port',
        String(ORIGIN_PORT),
        '--cert',
        tls.cert,
        '--key',
        tls.key,
        '--log',
        accessLog,
        ...quicArgs,
      ],
      { logPath, what: 'the origin server' },
    );
  }
  return { spki: tls.spki, cert: tls.cert };
}
