// Which recorded response answers a request, and which origins and hosts
// an archive serves. The Rust origin's replay applies the same rule; both
// follow sites/README.md ("Matching a request").
import { archiveUrl, originOf, withoutQuery } from './urls.js';
import { headerValue } from './headers.js';

/**
 * Pure: the entry of `archive` that answers (method, url), or null: the
 * first entry with the same method and the same URL, else the first with
 * the same method and the same URL up to its query string (a request's
 * cache-busting or session parameter differs between loads). A HEAD
 * request that no HEAD entry answers by a rule takes a GET entry by that
 * rule (a server answers HEAD with GET's headers). An entry with a 1xx
 * status is no final response and answers nothing. `url` is compared in
 * archive form (see urls.js). sites/archive-conformance.json holds the
 * cases both sides test.
 */
export function matchEntry(archive, method, url) {
  const want = archiveUrl(url);
  if (want === null) return null;
  const methods = method === 'HEAD' ? ['HEAD', 'GET'] : [method];
  for (const same of [(u) => u === want, (u) => withoutQuery(u) === withoutQuery(want)])
    for (const m of methods) {
      const hit = archive.entries.find((e) => e.method === m && e.status >= 200 && same(e.url));
      if (hit) return hit;
    }
  return null;
}

// Redirects a page load follows at most (Chromium's limit).
const MAX_REDIRECTS = 20;

/**
 * Pure: the entries a load of the archive's page goes through, its
 * redirects and then its document ({chain}), or where that breaks off:
 * {chain, unanswered: URL no entry answers} or {chain, loop: true}.
 */
export function pageChain(archive) {
  const chain = [];
  let url = archive.page;
  for (;;) {
    const entry = matchEntry(archive, 'GET', url);
    if (!entry) return { chain, unanswered: archiveUrl(url) ?? url };
    if (chain.includes(entry) || chain.length > MAX_REDIRECTS) return { chain, loop: true };
    chain.push(entry);
    const location = entry.status >= 300 && entry.status < 400 ? headerValue(entry.headers, 'location') : null;
    if (!location) return { chain };
    // a Location that is no URL answers nothing, like one no entry has
    url = URL.parse(location, entry.url)?.href ?? location;
  }
}

/**
 * Pure: the archive's origins ("scheme://host:port") and host names, each
 * once, in the order they are first seen: the page's first, then the
 * entries', then those of the requests in `missing` (the page asks them
 * too, and a replay answers them).
 */
export function archiveOrigins(archive) {
  const urls = [archive.page, ...archive.entries.map((e) => e.url), ...archive.missing.map((m) => m.url)];
  return {
    origins: [...new Set(urls.map(originOf))],
    hosts: [...new Set(urls.map((u) => new URL(u).hostname))],
  };
}
