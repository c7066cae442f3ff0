// `satbench merge DIR… --out DIR`: join the shards of one matrix (bench
// --shard i/n on several machines) into one result and report. mergeSets
// decides (pure); harness/report/outputs.js mergeFolders reads and writes.
import path from 'node:path';
import { UsageError } from '../core/errors.js';
import { kindOf, kinds } from '../kinds/index.js';
import { RESULTS, SUMMARY } from '../results/store.js';

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

// What of a machine's environment is worth a warning when shards differ.
const envFingerprint = (e) =>
  e
    ? {
        git: e.git?.commit ?? null,
        chromium: e.chromium?.version ?? null,
        kernel: e.kernel ?? null,
        satbench: e.satbench ?? null,
        origin: e.origin?.version ?? null,
      }
    : null;

/**
 * Pure: sets are [{dir, records, meta}]. Refuses slices of different
 * matrices or seeds and any run present twice; warns about missing shards
 * and machines that differ. Records come out in the matrix's order where
 * their kind has one (page loads), the rest in the shards' order.
 */
// The campaign's seed a record ran with: run i of a matrix uses seed + i.
const baseSeed = (r) => (Number.isInteger(r.seed) && Number.isInteger(r.run) ? r.seed - r.run : undefined);

/**
 * Pure: why record `r` is not a run of `matrix` (meta.matrix of bench or
 * bulk), or null when it is one: each scenario field among its axis's
 * values and each setting the same (the kind's matrixAxes and
 * matrixScalars: a bulk download's duration or size), the run within -n.
 */
export function outsideMatrix(r, matrix, kind = kindOf(r)) {
  const s = r.scenario ?? {};
  for (const [axis, spec] of Object.entries(kind.matrixAxes)) {
    // a field, or [field, what its absence means]
    const [field, absent = null] = [spec].flat();
    const values = matrix[axis];
    const value = s[field] ?? absent;
    if (Array.isArray(values) && !values.some((v) => String(v) === String(value)))
      return `${field} ${JSON.stringify(value)} is not one of ${JSON.stringify(values)}`;
  }
  for (const k of kind.matrixScalars)
    if (matrix[k] !== undefined && String(matrix[k] ?? null) !== String(s[k] ?? null))
      return `${k} ${JSON.stringify(s[k] ?? null)} is not ${JSON.stringify(matrix[k])}`;
  if (Number.isInteger(matrix.runs) && !(r.run >= 1 && r.run <= matrix.runs))
    return `run ${JSON.stringify(r.run)} is not within 1–${matrix.runs}`;
  return null;
}

// Pure: a set's seed, from its records (each record's seed minus its run)
// and its summary.json's meta.seed, which must all agree.
function seedOf(s) {
  let seed = s.meta.seed;
  let from = `${s.dir}'s seed`;
  for (const r of s.records) {
    const b = baseSeed(r);
    if (b === undefined) continue;
    if (seed === undefined) {
      seed = b;
      from = `${kindOf(r).label(r.scenario)} run ${r.run}'s`;
    } else if (b !== seed)
      throw new UsageError(
        `${path.join(s.dir, RESULTS)}: ${kindOf(r).label(r.scenario)} run ${r.run} ran with seed ${r.seed} (campaign seed ${b}), ${from} is ${seed}; a folder holds one matrix and seed`,
      );
  }
  return seed;
}

/**
 * Pure: sets are [{dir, records, meta}] (meta: summary.json's, {} when a
 * folder has none, as an interrupted shard has). Refuses slices of
 * different matrices or seeds, checked from the records themselves, and
 * any run present twice; warns about missing shards and machines that
 * differ. Records come out in the matrix's order where their kind has one
 * (page loads), the rest in the shards' order.
 */
export function mergeSets(sets, { now = new Date().toISOString() } = {}) {
  if (!sets.length) throw new UsageError('merge: name the result folders to join');
  const first = sets.find((s) => Object.keys(s.meta).length) ?? sets[0];
  const withMatrix = sets.find((s) => s.meta.matrix !== undefined);
  for (const s of sets) {
    if (withMatrix && s.meta.matrix !== undefined && !same(withMatrix.meta.matrix, s.meta.matrix))
      throw new UsageError(
        `${s.dir}: its matrix ${JSON.stringify(s.meta.matrix)} differs from ${withMatrix.dir}'s ${JSON.stringify(withMatrix.meta.matrix)}; merge joins shards of one matrix`,
      );
  }
  // Seeds and the matrix from the records: a folder without summary.json
  // (an interrupted shard) is checked as closely as one with it.
  let seed;
  let seedDir;
  for (const s of sets) {
    const own = seedOf(s);
    if (own === undefined) continue;
    if (seed === undefined) [seed, seedDir] = [own, s.dir];
    else if (own !== seed)
      throw new UsageError(
        `${s.dir}: its runs used seed ${own}, ${seedDir}'s seed ${seed}; merge joins shards of one matrix and seed`,
      );
  }
  // the matrix is its campaign's kind's (meta.kind; page loads have none)
  const matrixKind = withMatrix && kindOf(withMatrix.meta);
  if (withMatrix)
    for (const s of sets)
      for (const r of s.records) {
        const why = kindOf(r) === matrixKind && outsideMatrix(r, withMatrix.meta.matrix, matrixKind);
        if (why)
          throw new UsageError(
            `${path.join(s.dir, RESULTS)}: ${kindOf(r).label(r.scenario)} run ${r.run} is not in ${withMatrix.dir}'s matrix (${why}); merge joins shards of one matrix`,
          );
      }
  const warnings = [];
  if (!withMatrix)
    warnings.push(
      `no folder has a ${SUMMARY} with the matrix: the runs' seeds were checked, not whether they belong to one matrix`,
    );
  const shards = sets.map((s) => s.meta.shard).filter(Boolean);
  if (shards.length) {
    const count = shards[0].count;
    if (shards.some((x) => x.count !== count))
      throw new UsageError(
        `merge: the folders are shards of different splits (${shards.map((x) => `${x.index}/${x.count}`).join(', ')})`,
      );
    const seen = new Set();
    for (const s of sets.filter((x) => x.meta.shard)) {
      if (seen.has(s.meta.shard.index))
        throw new UsageError(`${s.dir}: shard ${s.meta.shard.index}/${count} is given twice`);
      seen.add(s.meta.shard.index);
    }
    const missing = Array.from({ length: count }, (_, i) => i + 1).filter((i) => !seen.has(i));
    if (missing.length)
      warnings.push(`shard(s) ${missing.map((i) => `${i}/${count}`).join(', ')} missing: this result is incomplete`);
  }
  const fps = sets.map((s) => envFingerprint(s.meta.environment));
  if (fps.some((f) => f && fps[0] && !same(f, fps[0])))
    warnings.push(
      'the shards ran on differing software (see Environment: merged from); their results may not be comparable',
    );

  const where = new Map();
  const records = [];
  for (const s of sets) {
    for (const r of s.records) {
      const kind = kindOf(r);
      const k = `${kind.key(r.scenario)}#${r.run}`;
      if (where.has(k))
        throw new UsageError(`${s.dir}: ${kind.label(r.scenario)} run ${r.run} is also in ${where.get(k)}`);
      where.set(k, s.dir);
      records.push(r);
    }
  }
  // A kind whose matrix gives an order (page loads) is put in it; the rest
  // keep the shards' order, after.
  const orders = new Map(kinds().map((k) => [k, k.matrixOrder(withMatrix?.meta.matrix)]));
  const at = (r) => orders.get(kindOf(r))?.(r) ?? Infinity;
  if ([...orders.values()].some(Boolean)) records.sort((a, b) => at(a) - at(b) || 0); // stable
  // each shard timed its own CPU benchmark, maybe on its own machine: kept per shard
  const { shard: _shard, warnings: _w, cpu_benchmark: _b, ...rest } = first.meta;
  const meta = {
    ...rest,
    ...(withMatrix ? { matrix: withMatrix.meta.matrix } : {}),
    ...(seed !== undefined ? { seed } : {}),
    generated: now,
    merged_from: sets.map((s) => ({
      dir: s.dir,
      shard: s.meta.shard ?? null,
      generated: s.meta.generated ?? null,
      environment: envFingerprint(s.meta.environment),
      cpu_benchmark: s.meta.cpu_benchmark ?? null,
    })),
  };
  if (warnings.length) meta.warnings = warnings;
  return { records, meta, warnings };
}
