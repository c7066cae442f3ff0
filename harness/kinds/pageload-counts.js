// What a page load found already there, per scenario: the medians, over
// its ok runs, of the record's cache counts (`cache_use`, from
// pageload/gather/cache-use.js) and of its handshake counts per server
// (`handshakes`: our origin's, and Proxy-ST's when a QUIC PEP chain ran;
// written from the servers' connection logs). A repeat or revisit view is
// told from its pair's first view by these. summary.json's page-load groups
// carry them as `cache_use` and `handshakes`, each count with the `n` of
// runs that recorded it; a group whose records have none gets no field
// (records from before the counts existed show nothing, not zeros).
import { median } from '../core/stats.js';

export const CACHE_COUNTS = ['from_cache', 'revalidated', 'fetched'];
export const HANDSHAKE_COUNTS = ['connections', 'full', 'resumed', 'early_offered', 'early_accepted', 'early_requests'];
// the servers a record's `handshakes` may name, in the order shown
export const HANDSHAKE_SERVERS = ['origin', 'proxy_st'];

const isCount = (v) => typeof v === 'number' && Number.isFinite(v);

/**
 * Pure: the medians of `names` over the objects of `values` that are
 * objects ({n, name: median or null}), or null when none is.
 */
function countMedians(values, names) {
  const here = values.filter((v) => v && typeof v === 'object');
  if (!here.length) return null;
  const out = { n: here.length };
  for (const name of names) {
    const xs = here.map((v) => v[name]).filter(isCount);
    out[name] = xs.length ? median(xs) : null;
  }
  return out;
}

/**
 * Pure: a page-load group's count medians from its records:
 * `{cache_use?, handshakes?: {origin?, proxy_st?}}`, each present only
 * when some ok record carried it.
 */
export function countStats(records) {
  const ok = records.filter((r) => r.ok);
  const out = {};
  const cache = countMedians(
    ok.map((r) => r.cache_use),
    CACHE_COUNTS,
  );
  if (cache) out.cache_use = cache;
  const handshakes = {};
  for (const server of HANDSHAKE_SERVERS) {
    const m = countMedians(
      ok.map((r) => r.handshakes?.[server]),
      HANDSHAKE_COUNTS,
    );
    if (m) handshakes[server] = m;
  }
  if (Object.keys(handshakes).length) out.handshakes = handshakes;
  return out;
}
