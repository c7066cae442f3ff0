// The DNS server of a replayed site archive (`--dns gw|st`): Debian's
// dnsmasq, chosen because its package (dnsmasq-base) installs no system
// service, it answers from a hosts file alone (--no-resolv: nothing goes
// upstream, there is no Internet here) and logs every query, which shows
// where the lookups went. In gw every lookup crosses the satellite link;
// in st it stays on the terminal's side, as operators deploy resolvers.
import fs from 'node:fs';
import path from 'node:path';
import { UsageError } from '../core/errors.js';
import { ADDRESSES, LINK_PLAN } from '../testbed/addressing.js';
import { startProcess } from '../testbed/testbed.js';

export const DNS_PLACES = ['gw', 'st', 'none'];

// The address the client reaches each place by: st's side of the lan
// link, gw's side of the satellite link.
const LISTEN = {
  st: LINK_PLAN.find((l) => l.name === 'lan').bAddr,
  gw: ADDRESSES.gw,
};

export function checkDnsPlace(place) {
  if (!DNS_PLACES.includes(place))
    throw new UsageError(`--dns: expected ${DNS_PLACES.join(', ')}, got ${JSON.stringify(place)}`);
  return place;
}

/** Pure: a hosts file, "ADDRESS NAME" per line, for [{name, address}]. */
export const hostsFile = (hosts) => hosts.map(({ name, address }) => `${address} ${name}\n`).join('');

/** Pure: dnsmasq's command line answering from `hostsPath` on `listen` only. */
export function dnsmasqArgs({ listen, hostsPath }) {
  return [
    '--keep-in-foreground',
    '--log-facility=-', // to stderr, the helper's log
    '--log-queries',
    '--no-resolv',
    '--no-hosts',
    '--no-poll',
    `--addn-hosts=${hostsPath}`,
    `--listen-address=${listen}`,
    '--bind-interfaces',
    '--port=53',
    '--cache-size=0', // every lookup of a run is answered afresh
    '--user=root',
    '--pid-file=',
  ];
}

/**
 * Starts dnsmasq in testbed `tb`'s `place` (gw or st) answering `hosts`
 * ([{name, address}]) and points the client's resolver at it. Returns the
 * address it listens on.
 */
export async function startDns(tb, { place, hosts }) {
  const listen = LISTEN[place];
  const hostsPath = path.join(tb.dir, 'dns.hosts');
  fs.writeFileSync(hostsPath, hostsFile(hosts));
  await startProcess(
    tb.state,
    'dns',
    ['ip', 'netns', 'exec', tb.ns[place], 'dnsmasq', ...dnsmasqArgs({ listen, hostsPath })],
    { logPath: path.join(tb.dir, 'dns.log'), what: `dnsmasq in ${place}`, readyInLog: /started, version/ },
  );
  tb.setResolver('client', listen);
  return listen;
}
