// `satbench bench`'s campaign checked once into its plan: the matrix and
// the settings (the command line's, or those campaign.json saved) with
// every default applied from core/defaults.js, the PEP chains' typed sides
// and each site archive read. The campaign loop and every run read this
// plan; nothing below checks or parses the settings again. Every problem
// is a UsageError that names the flag and what it expects.
import path from 'node:path';
import fs from 'node:fs';
import { UsageError, withFlag } from '../core/errors.js';
import { DEFAULTS } from '../core/defaults.js';
import {
  PROTOCOLS,
  PEP_PROTOCOLS,
  QPEP_PROTOCOLS,
  MASQUE_PROTOCOLS,
  VPN_PROTOCOLS,
  baseProtocol,
  pepKind,
  refuseQuicOverQpep,
} from '../core/protocols.js';
import { checkOrigin, originQuicCcs } from '../servers/origin.js';
import { checkCcAxis, checkCongestionControl, availableCongestionControls } from '../testbed/congestion-control.js';
import { profileCache } from '../campaign/scenario.js';
import { archiveSite } from '../pageload/archive-site.js';
import { checkDnsPlace } from '../servers/dns.js';
import { isArchive } from '../archive/format.js';
import { listSites } from '../../sites/generate.js';
import { checkEmulation } from '../browser/emulation.js';
import { checkViews, DEFAULT_VIEWS } from '../core/views.js';
import { ccAxisSource } from '../core/cc-axis.js';
import { parseCachePolicy } from '../core/cache-policy.js';
import { checkPepOptions, parsePepOptions, tunnelSource } from './pep-options.js';

// How our origin may order HTTP/3 responses (--h3-priorities); rfc9218 is its default.
export const H3_PRIORITIES = ['rfc9218', 'incremental-last', 'off'];
// Which of our origin's responses carry Alt-Svc (--alt-svc); all is its default.
export const ALT_SVC = ['all', 'tcp'];

/** Pure but for reading the profiles and looking for site folders. */
export function validateBenchMatrix(m, { profiles = profileCache() } = {}) {
  const protocols = [...PROTOCOLS, ...PEP_PROTOCOLS, ...QPEP_PROTOCOLS, ...VPN_PROTOCOLS, ...MASQUE_PROTOCOLS];
  for (const p of m.protocols) {
    refuseQuicOverQpep(p);
    if (!protocols.includes(p))
      throw new UsageError(`--protocol: unknown protocol ${JSON.stringify(p)}; expected ${protocols.join(', ')}`);
  }
  for (const l of m.losses)
    if (!(l >= 0 && l <= 100)) throw new UsageError(`--loss: expected percentages between 0 and 100, got ${l}`);
  for (const p of m.profiles) withFlag('--profile', () => profiles(p)); // unknown names fail here, before anything runs
  const known = listSites();
  for (const s of m.sites) {
    if (!known.includes(s) && !fs.existsSync(path.join(s, 'index.html')) && !isArchive(s)) {
      throw new UsageError(
        `--site ${s}: neither a reference site (${known.join(', ')}), a directory with an index.html nor a site archive (archive.json)`,
      );
    }
  }
  checkViews(m.views ?? DEFAULT_VIEWS);
  if (!Number.isInteger(m.runs) || m.runs < 1)
    throw new UsageError(`-n: expected a whole number of runs >= 1, got ${m.runs}`);
  return m;
}

/**
 * Pure: refuses what a replay of `site` cannot be: cleartext h1 for a page
 * over https (and TLS protocols for one over http), h3-pep over a QUIC PEP
 * connection per client connection (only the standing tunnel carries each
 * connection's destination to Proxy-GW), a place for DNS we do not have.
 */
export function checkArchiveScenarios(
  site,
  protocols,
  dns,
  { tunnel = 'warm', tunnelFrom = tunnelSource(tunnel) } = {},
) {
  checkDnsPlace(dns);
  const https = new URL(site.page).protocol === 'https:';
  for (const p of protocols) {
    const base = baseProtocol(p);
    if (https && base === 'h1')
      throw new UsageError(
        `--protocol ${p}: ${site.dir} is a page over https (${site.page}); cleartext h1 cannot replay it, use h1s`,
      );
    if (!https && base !== 'h1')
      throw new UsageError(
        `--protocol ${p}: ${site.dir} is a page over cleartext http (${site.page}); only h1 replays it`,
      );
    if (p === 'h3-pep' && tunnel !== 'warm')
      throw new UsageError(
        `${tunnelFrom} a site archive's h3-pep needs the standing tunnel, which carries each connection's destination to Proxy-GW; add --pep-tunnel warm`,
      );
  }
}

/**
 * Pure: a warning per site archive recorded as another device than the
 * one bench emulates (`archives` as checkBench makes them): the page may
 * ask that device for other images, styles or a page of its own, which
 * the archive lacks. An archive that does not say its device is not warned
 * about.
 */
export function archiveDeviceWarnings(archives, device) {
  return Object.entries(archives)
    .filter(([, site]) => site.device !== null && site.device !== device)
    .map(
      ([name, site]) =>
        `--site ${name}: recorded as device ${site.device}, replayed as ${device}: requests the archive lacks ` +
        `go unanswered; record it again with \`satbench record --device ${device}\` or run with --device ${site.device}`,
    );
}

/**
 * The matrix and the settings together: the origin can serve the
 * protocols, the PEP options suit the chains the protocols use, the HTTP/3
 * priorities are known, the kernel has the end hosts' --cc (each of
 * --cc-axis, which the origin's QUIC has too), a site archive
 * can be replayed as asked, the CPU slowdown and device are ones we emulate. Asks H2O about HTTP/3 when it is the origin;
 * needs no privileges. `settings` as benchInput makes them; a key left out
 * takes its default. Returns the plan: {kind, matrix, settings (complete),
 * pepChains ({tcp, quic, qpep, vpn}: the typed sides of each chain the
 * protocols use), archives ({[site]: archiveSite}), profiles (the reader
 * that parsed each profile once), warnings (lines to print before the runs
 * and keep in summary.json's meta)}.
 */
export async function checkBench(matrix, settings = {}, options = {}) {
  const profiles = options.profiles ?? profileCache();
  const {
    link = DEFAULTS.link,
    seed = DEFAULTS.seed,
    timeoutMs = DEFAULTS.timeoutMs,
    origin = DEFAULTS.origin,
    quic = {},
    h3Priorities = null,
    altSvc = null,
    cache = null,
    dns = null,
    tcp = {},
    pep = parsePepOptions({}),
    shard = null,
    lighthouse = false,
    harContent = false,
    emulation = {},
    visual = DEFAULTS.visual,
  } = settings;
  validateBenchMatrix(matrix, { profiles });
  const available = options.congestionControls ?? availableCongestionControls();
  checkCongestionControl(tcp.cc, available);
  if (matrix.ccs)
    checkCcAxis(matrix.ccs, {
      available,
      origin,
      originCcs: originQuicCcs(origin),
      from: ccAxisSource(matrix.ccs, options.given),
    });
  if (h3Priorities !== null && !H3_PRIORITIES.includes(h3Priorities))
    throw new UsageError(`--h3-priorities: expected ${H3_PRIORITIES.join(', ')}, got ${JSON.stringify(h3Priorities)}`);
  if (altSvc !== null && !ALT_SVC.includes(altSvc))
    throw new UsageError(`--alt-svc: expected ${ALT_SVC.join(' or ')}, got ${JSON.stringify(altSvc)}`);
  if (cache !== null) parseCachePolicy(cache);
  // each run starts a fresh origin: only a run's second load (repeat,
  // revisit) finds a saved path there
  const views = matrix.views ?? DEFAULT_VIEWS;
  if (quic['careful-resume'] === 'on' && views.every((v) => v === 'first'))
    throw new UsageError(
      '--quic careful-resume=on: a first view finds no saved path (each run starts a fresh origin); add --view revisit or repeat',
    );
  const tunnelFrom = tunnelSource(pep.tunnel, options.given);
  const pepChains = checkPepOptions(pep, matrix.protocols.map(pepKind).filter(Boolean), { tunnelFrom });
  await checkOrigin(origin, matrix.protocols, { quic, h3Priorities });
  const archives = Object.fromEntries(
    matrix.sites.filter((s) => !listSites().includes(s) && isArchive(s)).map((s) => [s, archiveSite(path.resolve(s))]),
  );
  const sites = Object.values(archives);
  if (dns !== null && !sites.length)
    throw new UsageError(`--dns ${dns}: only for a site archive (--site DIR with an archive.json)`);
  if (sites.length && origin !== 'rust')
    throw new UsageError(`--origin ${origin}: a site archive is replayed by our origin only (--origin rust)`);
  const archiveDns = dns ?? DEFAULTS.archiveDns;
  for (const site of sites)
    checkArchiveScenarios(site, matrix.protocols, archiveDns, { tunnel: pep.tunnel, tunnelFrom });
  const checkedEmulation = checkEmulation(emulation);
  return {
    kind: 'pageload',
    matrix,
    settings: {
      link,
      seed,
      timeoutMs,
      origin,
      quic,
      h3Priorities,
      altSvc,
      cache,
      dns: sites.length ? archiveDns : null,
      tcp,
      pep,
      shard,
      lighthouse,
      harContent,
      emulation: checkedEmulation,
      visual,
    },
    pepChains,
    archives,
    profiles,
    warnings: archiveDeviceWarnings(archives, checkedEmulation.device),
  };
}
