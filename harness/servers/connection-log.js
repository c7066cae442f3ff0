// The servers' connection logs, read back after a load: one JSON line per
// TLS or QUIC connection a server accepted, written once its handshake was
// done (our origin's and Proxy-ST's `--conn-log`), e.g.
// {"time":"…","remote":"198.18.1.2:40000","handshake":"resumed","protocol":"h3",
//  "psk_offered":true,"resumed":true,"early_offered":true,"early_accepted":true,"early_requests":3}
// H2O writes none: its records have no `handshakes.origin`.

// The counts of a set of connections, in the record's order.
const COUNTS = ['connections', 'full', 'resumed', 'early_offered', 'early_accepted', 'early_requests'];

const zeros = () => Object.fromEntries(COUNTS.map((k) => [k, 0]));

/** Pure: one log line → its connection, or null for a line that is none. */
export function parseConnectionLine(line) {
  let c;
  try {
    c = JSON.parse(line);
  } catch {
    return null;
  }
  if (typeof c?.protocol !== 'string' || typeof c.resumed !== 'boolean') return null;
  return {
    protocol: c.protocol,
    resumed: c.resumed,
    early_offered: c.early_offered === true,
    early_accepted: c.early_accepted === true,
    early_requests: Number.isInteger(c.early_requests) ? c.early_requests : 0,
  };
}

function add(counts, c) {
  counts.connections += 1;
  counts[c.resumed ? 'resumed' : 'full'] += 1;
  if (c.early_offered) counts.early_offered += 1;
  if (c.early_accepted) counts.early_accepted += 1;
  counts.early_requests += c.early_requests;
}

/**
 * Pure: a connection log's text (one load's slice of it) → the record's
 * counts: {connections, full, resumed, early_offered, early_accepted,
 * early_requests, by_protocol: {h3: {…the same counts}, h2: {…}, …}}, with a
 * protocol only when a connection of it was accepted.
 */
export function summarizeConnectionLog(text) {
  const out = { ...zeros(), by_protocol: {} };
  for (const line of text.split('\n')) {
    const c = parseConnectionLine(line);
    if (!c) continue;
    add(out, c);
    add((out.by_protocol[c.protocol] ??= zeros()), c);
  }
  return out;
}

/**
 * Pure: the record's `handshakes` from each server's slice of its log
 * (null: that server keeps none, or none ran): {origin, proxy_st} with only
 * the servers that keep one; null when none does.
 */
export function handshakesRecord({ origin = null, proxySt = null }) {
  const out = {};
  if (origin !== null) out.origin = summarizeConnectionLog(origin);
  if (proxySt !== null) out.proxy_st = summarizeConnectionLog(proxySt);
  return Object.keys(out).length ? out : null;
}
