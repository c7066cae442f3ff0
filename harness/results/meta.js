// summary.json's meta.settings read back: what a campaign's settings were,
// whichever satbench wrote the file. Every kind now writes them under
// `settings` (campaign/run-plan.js); bench's summaries from before that
// carry them flat in meta, and are still read.
const FLAT_BENCH_SETTINGS = ['origin', 'quic', 'h3_priorities', 'alt_svc', 'dns', 'tcp', 'pep', 'lighthouse'];

/** Pure: the campaign settings of a summary's `meta` ({} when it has none). */
export function campaignSettings(meta = {}) {
  const flat = FLAT_BENCH_SETTINGS.filter((k) => meta?.[k] !== undefined).map((k) => [k, meta[k]]);
  return { ...Object.fromEntries(flat), ...(meta?.settings ?? {}) };
}
