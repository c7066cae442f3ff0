// A site archive (satbench record / import-har) as bench's site: every host
// it names at an address of its own on the server (so Chromium opens its
// own connections per origin, as on the Internet), served by our origin's
// replay mode, found by Chromium through the testbed's DNS (--dns gw|st)
// or its own host rules (--dns none).
import { UsageError } from '../core/errors.js';
import { baseProtocol } from '../core/protocols.js';
import { readArchive } from '../archive/format.js';
import { archiveOrigins, pageChain } from '../archive/match.js';
import { originAddress } from '../testbed/addressing.js';
import { checkDnsPlace } from '../servers/dns.js';

/**
 * The archive in `dir` as a bench site: {dir, page, hosts: [{name,
 * address}]}; `page` is the document the recorded page ended at (an
 * http → https redirect before it is not replayed: the run's protocol
 * decides the scheme). Throws a UsageError for a bad archive.
 */
export function archiveSite(dir) {
  const archive = readArchive(dir);
  const { hosts } = archiveOrigins(archive);
  return {
    dir,
    page: pageChain(archive).chain.at(-1).url,
    hosts: hosts.map((name, i) => ({ name, address: originAddress(i) })),
  };
}

/**
 * Pure: refuses what a replay of `site` cannot be: cleartext h1 for a page
 * over https (and TLS protocols for one over http), h3-pep over a QUIC PEP
 * connection per client connection (only the standing tunnel carries each
 * connection's destination to Proxy-GW), a place for DNS we do not have.
 */
export function checkArchiveScenarios(site, protocols, dns, { tunnel = 'warm' } = {}) {
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
        `--pep-tunnel ${tunnel}: a site archive's h3-pep needs the standing tunnel (warm), which carries each connection's destination to Proxy-GW`,
      );
  }
}

/** Pure: where Chromium goes for a replay (browser/chromium.js siteTarget's shape). */
export const archiveTarget = (site, dns) => ({
  url: site.page,
  hosts: site.hosts,
  mapHosts: dns === 'none',
  replay: true,
});
