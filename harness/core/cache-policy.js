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
// sites and site directories have no original: each origin serves them as it
// does by itself (ours: no-store; H2O: no Cache-Control, its validators only,
// so heuristic freshness).
const SITE_POLICIES = { kepler: 'revalidate' };

/** Pure: `value` checked (none, revalidate, max-age=SECONDS, immutable), or a UsageError of one line. */
export function parseCachePolicy(value) {
  if (['none', 'revalidate', 'immutable'].includes(value) || /^max-age=\d{1,10}$/.test(value)) return value;
  throw new UsageError(
    `--cache: expected none, revalidate, max-age=SECONDS or immutable, got ${JSON.stringify(value)}`,
  );
}

/**
 * Pure: the policy a run of `site` serves with: `given` (--cache), else the
 * site's own; null (the origin's own; an archive's recorded headers) for a
 * site that states none.
 */
export function sitePolicy(site, { given = null, archive = false } = {}) {
  if (given !== null) return given;
  if (archive) return null;
  return SITE_POLICIES[site] ?? null;
}

/** Pure: the Cache-Control value of `policy`. */
export function cacheControl(policy) {
  if (policy === 'none') return 'no-store';
  if (policy === 'revalidate') return 'no-cache';
  if (policy === 'immutable') return `max-age=${YEAR_S}, immutable`;
  return policy; // max-age=S, as the header writes it
}
