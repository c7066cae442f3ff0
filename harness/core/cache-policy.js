// The origin's cache policy (`bench --cache`): the Cache-Control every
// object of the site is served with, so a repeat or revisit view finds in
// the browser's cache what a real site lets it keep. Our origin takes it as
// `origin serve --cache` (sites/origin/src/cache.rs says the same values);
// H2O gets the header set on every response. Without --cache: what the site
// says (siteCachePolicy).
import { UsageError } from './errors.js';

export const CACHE_POLICIES = ['none', 'revalidate', 'max-age=S', 'immutable'];

// One year, as sites that version their file names send with immutable.
const YEAR_S = 31_536_000;

// What each reference site's original asks of caches: the ETSI Kepler page's
// server has every object revalidated on each use (issue 30). The synthetic
// sites have no original; they keep no-store, what our origin always sent.
const SITE_POLICIES = { kepler: 'revalidate' };
const UNSTATED = 'none';

/** Pure: `value` checked (none, revalidate, max-age=SECONDS, immutable), or a UsageError of one line. */
export function parseCachePolicy(value) {
  if (['none', 'revalidate', 'immutable'].includes(value) || /^max-age=\d{1,10}$/.test(value)) return value;
  throw new UsageError(
    `--cache: expected none, revalidate, max-age=SECONDS or immutable, got ${JSON.stringify(value)}`,
  );
}

/**
 * Pure: the policy a run of `site` serves with: `given` (--cache), else the
 * site's own; null for a site archive without --cache (its recorded headers).
 */
export function sitePolicy(site, { given = null, archive = false } = {}) {
  if (given !== null) return given;
  if (archive) return null;
  return SITE_POLICIES[site] ?? UNSTATED;
}

/** Pure: the Cache-Control value of `policy`. */
export function cacheControl(policy) {
  if (policy === 'none') return 'no-store';
  if (policy === 'revalidate') return 'no-cache';
  if (policy === 'immutable') return `max-age=${YEAR_S}, immutable`;
  return policy; // max-age=S, as the header writes it
}
