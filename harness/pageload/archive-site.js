// A site archive (satbench record / import-har) as bench's site: every host
// it names at an address of its own on the server (so Chromium opens its
// own connections per origin, as on the Internet), served by our origin's
// replay mode, found by Chromium through the testbed's DNS (--dns gw|st)
// or its own host rules (--dns none).
import { readArchive } from '../archive/format.js';
import { archiveOrigins, pageChain } from '../archive/match.js';
import { originAddress } from '../testbed/addressing.js';

/**
 * The archive in `dir` as a bench site: {dir, page, device, hosts: [{name,
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
    // the device `satbench record --device` loaded it as (null: not recorded)
    device: archive.source.device ?? null,
    hosts: hosts.map((name, i) => ({ name, address: originAddress(i) })),
  };
}

/** Pure: where Chromium goes for a replay (browser/chromium.js siteTarget's shape). */
export const archiveTarget = (site, dns) => ({
  url: site.page,
  hosts: site.hosts,
  mapHosts: dns === 'none',
  replay: true,
});
