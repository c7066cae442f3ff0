// Which DNS server a namespace's programs ask: `ip netns exec NS` binds
// /etc/netns/NS/resolv.conf over /etc/resolv.conf for what it runs, so
// Chromium in the client namespace resolves through the testbed's DNS
// server (servers/dns.js) without touching the host's own resolver.
import fs from 'node:fs';
import path from 'node:path';
import { parseNamespace } from './addressing.js';

export const NETNS_ETC = '/etc/netns';

/** Pure: resolv.conf asking `nameserver` only, once, without search domains. */
export const resolvConf = (nameserver) => `nameserver ${nameserver}\noptions attempts:1\n`;

/** Writes /etc/netns/NS/resolv.conf. */
export function setResolver(ns, nameserver) {
  const dir = path.join(NETNS_ETC, ns);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'resolv.conf'), resolvConf(nameserver));
}

/** Removes /etc/netns/NS (a testbed's teardown, for each of its namespaces). */
export function removeResolver(ns) {
  fs.rmSync(path.join(NETNS_ETC, ns), { recursive: true, force: true });
}

/** The /etc/netns entries named like a testbed's namespace. */
export function leftoverResolvers() {
  try {
    return fs.readdirSync(NETNS_ETC).filter((n) => parseNamespace(n));
  } catch {
    return [];
  }
}
