// The testbed's address plan: four namespaces in a chain, addresses from
// 198.18.0.0/15 (RFC 2544's benchmarking range). Every testbed uses the same
// addresses inside its own namespaces; only the namespace names differ, so
// several testbeds coexist.
//
//   client ─lan─ st ═sat═ gw ─inet─ server
import { UsageError } from '../core/errors.js';

export const NODES = ['client', 'st', 'gw', 'server'];
export const NAMESPACE_PREFIX = 'sbt-';
const ID_PATTERN = /^[a-z0-9]{1,12}$/;
const NAMESPACE_PATTERN = /^sbt-([a-z0-9]{1,12})-(client|st|gw|server)$/;

// Each link: its two ends, the interface name in both namespaces, and
// the /30 (or /24) it is numbered from. `emulated` links carry a profile.
export const LINK_PLAN = [
  {
    name: 'lan',
    dev: 'lan0',
    a: 'client',
    b: 'st',
    aAddr: '198.18.1.2',
    bAddr: '198.18.1.1',
    prefix: 24,
    emulated: null,
  },
  {
    name: 'sat',
    dev: 'sat0',
    a: 'st',
    b: 'gw',
    aAddr: '198.18.2.1',
    bAddr: '198.18.2.2',
    prefix: 30,
    emulated: 'satellite',
  },
  {
    name: 'inet',
    dev: 'inet0',
    a: 'gw',
    b: 'server',
    aAddr: '198.18.3.1',
    bAddr: '198.18.3.2',
    prefix: 30,
    emulated: 'internet',
  },
];

export const ADDRESSES = { client: '198.18.1.2', server: '198.18.3.2', st: '198.18.2.1', gw: '198.18.2.2' };

// The name the browser and the download clients ask for; every origin's
// certificate carries it, and the client resolves it to the server (or to
// the QUIC PEP in st).
export const SITE_HOST = 'satbench.test';

// The origin's ports on the server: HTTPS (h1s and h2 over TCP, h3 over
// UDP) and cleartext HTTP (h1). The PEPs stand in for it on the same ports:
// the QUIC PEP listens on ORIGIN_PORT, the split-TCP PEP and QPEP
// intercept ORIGIN_TCP_PORTS.
export const ORIGIN_PORT = 443;
export const ORIGIN_HTTP_PORT = 80;
export const ORIGIN_TCP_PORTS = Object.freeze([ORIGIN_HTTP_PORT, ORIGIN_PORT]);

// Routes beyond the connected ones; `default` routes carry the TCP
// initial windows of the end hosts.
// The origins of a replayed site archive each get an address of their own
// on the server (so Chromium opens its own connections per origin, as on
// the Internet), from this block; gw routes it to the server.
export const ORIGINS_SUBNET = '198.19.0.0/16';
const MAX_ORIGINS = 250 * 250;

/** Pure: the server address of an archive's `i`-th origin (0-based): 198.19.1.1, …, 198.19.1.250, 198.19.2.1, … */
export function originAddress(i) {
  if (!Number.isInteger(i) || i < 0 || i >= MAX_ORIGINS)
    throw new UsageError(`origin ${i}: a site archive may have at most ${MAX_ORIGINS} origins`);
  return `198.19.${1 + Math.floor(i / 250)}.${1 + (i % 250)}`;
}

export const ROUTES = {
  client: [{ to: 'default', via: '198.18.1.1', dev: 'lan0' }],
  st: [{ to: 'default', via: '198.18.2.2', dev: 'sat0' }],
  gw: [
    { to: '198.18.1.0/24', via: '198.18.2.1', dev: 'sat0' },
    { to: ORIGINS_SUBNET, via: '198.18.3.2', dev: 'inet0' },
  ],
  server: [{ to: 'default', via: '198.18.3.1', dev: 'inet0' }],
};
export const FORWARDING = ['st', 'gw'];

export const isValidId = (id) => typeof id === 'string' && ID_PATTERN.test(id);

// A user's mistake (`testbed up --name`), so one line, no stack trace.
export function validateId(id) {
  if (!isValidId(id))
    throw new UsageError(`testbed id ${JSON.stringify(id)}: expected 1 to 12 characters, each a-z or 0-9`);
  return id;
}

export function namespacesOf(id) {
  validateId(id);
  return Object.fromEntries(NODES.map((n) => [n, `${NAMESPACE_PREFIX}${id}-${n}`]));
}

// The testbed a namespace belongs to, or null when it is not one of ours.
export function parseNamespace(name) {
  const m = NAMESPACE_PATTERN.exec(name);
  return m ? { id: m[1], node: m[2] } : null;
}

export function randomId() {
  return Math.random().toString(36).slice(2, 8).padEnd(6, '0');
}
