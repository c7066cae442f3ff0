// The (scenario, run) pairs of a benchmark matrix, and its shards.
import { UsageError } from '../core/errors.js';

// Every (scenario, run) of the matrix: the page-load kind's (merge orders by it).
export { expandMatrix } from '../kinds/pageload.js';

// `--shard i/n`: which slice of the matrix this machine runs.
export function parseShard(text) {
  const m = /^(\d+)\/(\d+)$/.exec(String(text).trim());
  const index = m ? Number(m[1]) : NaN;
  const count = m ? Number(m[2]) : NaN;
  if (!m || count < 1 || index < 1 || index > count)
    throw new UsageError(`--shard: expected i/n with 1 <= i <= n (e.g. 2/4), got ${JSON.stringify(text)}`);
  return { index, count };
}

// Pure: shard i of n of the matrix's (scenario, run) items. Counted
// scenario by scenario (scenario j's run r is item j·runs + r − 1) and dealt
// round-robin: the shards differ by one item at most, and each scenario's
// runs are spread over all shards, so a slower CI machine shifts every
// scenario alike instead of a few. Each shard keeps the matrix's run-major
// order. Any kind's items (bench's, bulk's): a scenario is told apart by all
// of its fields, as its expansion writes them (a bulk upload from its download).
export function shardItems(items, shard) {
  if (!shard) return items;
  const key = (x) => JSON.stringify(x.scenario);
  const order = new Map();
  for (const x of items) if (!order.has(key(x))) order.set(key(x), order.size);
  const runs = Math.max(...items.map((x) => x.run));
  return items.filter((x) => (order.get(key(x)) * runs + x.run - 1) % shard.count === shard.index - 1);
}
