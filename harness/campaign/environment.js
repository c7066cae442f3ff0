// What a result depends on besides the scenario: software versions, the
// machine, Chromium's flags, the link profiles. bench and bulk record it in
// summary.json's meta.environment; the report shows it. Gathering only:
// every probe that fails gives null rather than an error.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT, run } from '../core/sys.js';
import { PROTOCOLS, baseProtocol, pepKind } from '../core/protocols.js';
import { chromePath, chromiumArgs } from '../browser/chromium.js';
import { PEP_ADDRESSES } from '../pep/quic-chain.js';
import { configuredSummary } from '../testbed/profiles.js';
import { profileCache } from './scenario.js';
import { originVersion } from '../servers/origin.js';

export const LIBRARIES = ['puppeteer-core', 'chart.js', 'lighthouse', 'yaml'];

// Pure: "Chromium 142.0.7444.59 built on Debian …" → "142.0.7444.59".
export function parseChromiumVersion(text) {
  return /(\d+\.\d+\.\d+\.\d+)/.exec(text ?? '')?.[1] ?? null;
}

// Pure: Chromium's command line per protocol, with placeholders where each
// run puts its own profile folder and certificate pin; a revisit view's
// (`views`, bench's) under "PROTOCOL revisit".
export function chromiumFlags(protocols, views = []) {
  const out = {};
  for (const proto of protocols) {
    // bulk runs Chromium only for browser-h1/h2/h3; satbulk for the rest
    const p = proto.startsWith('browser-') ? proto.slice('browser-'.length) : proto;
    if (!PROTOCOLS.includes(baseProtocol(p))) continue;
    // h3-pep sends the site's name to Proxy-ST; the split-TCP PEP and QPEP are transparent
    const serverAddr = pepKind(p) === 'quic' ? PEP_ADDRESSES.st : undefined;
    const args = { userDataDir: '<fresh folder per run>', spki: "<SPKI pin of the run's certificate>", serverAddr };
    out[proto] = chromiumArgs(p, args);
    if (views.includes('revisit')) out[`${proto} revisit`] = chromiumArgs(p, { ...args, netBenchmarking: true });
  }
  return out;
}

const readJson = (f) => {
  try {
    return JSON.parse(fs.readFileSync(f, 'utf8'));
  } catch {
    return null;
  }
};

function osName() {
  try {
    return /^PRETTY_NAME="?([^"\n]*)"?$/m.exec(fs.readFileSync('/etc/os-release', 'utf8'))?.[1] ?? null;
  } catch {
    return null;
  }
}

async function git() {
  const head = await run('git', ['-C', ROOT, 'rev-parse', 'HEAD'], { allowFail: true });
  if (!head.ok) return null;
  const status = await run('git', ['-C', ROOT, 'status', '--porcelain', '--untracked-files=no'], { allowFail: true });
  return { commit: head.stdout.trim(), dirty: status.ok ? status.stdout.trim() !== '' : null };
}

function profileSummaries(names, profiles) {
  const out = {};
  for (const name of names) {
    try {
      const p = profiles(name);
      out[name] = { description: p.description?.trim() ?? '', configured: configuredSummary(p), links: p.links };
    } catch {
      out[name] = null;
    }
  }
  return out;
}

// `profiles`: the command's profile reader (campaign/scenario.js), so that
// no profile file is read again.
// `origin`: bench's origin server (rust or h2o), whose version is recorded.
export async function gatherEnvironment(matrix, { profiles = profileCache(), origin = null } = {}) {
  const chrome = chromePath();
  const ver = fs.existsSync(chrome)
    ? await run(chrome, ['--version', '--no-sandbox'], { allowFail: true, timeoutMs: 20000 })
    : null;
  const libraries = {};
  for (const l of LIBRARIES)
    libraries[l] = readJson(path.join(ROOT, 'node_modules', l, 'package.json'))?.version ?? null;
  const cpus = os.cpus();
  return {
    satbench: readJson(path.join(ROOT, 'package.json'))?.version ?? null,
    git: await git(),
    node: process.version,
    libraries,
    chromium: { path: chrome, version: parseChromiumVersion(ver?.stdout) },
    kernel: `${os.type()} ${os.release()} ${os.arch()}`,
    os: osName(),
    cpu: { model: cpus[0]?.model ?? null, cores: cpus.length, memory_gib: Math.round(os.totalmem() / 2 ** 30) },
    ...(origin ? { origin: await originVersion(origin) } : {}),
    chromium_flags: chromiumFlags(matrix.protocols, matrix.views),
    profiles: profileSummaries(matrix.profiles, profiles),
  };
}
