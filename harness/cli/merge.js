// `satbench merge DIR... --out DIR`: join the shards of a matrix.
import { UsageError } from '../core/errors.js';
import { mergeFolders } from '../analysis/merge.js';
import { parse, print, note } from './args.js';

export const HELP = `Usage: satbench merge DIR... --out DIR [--json]
  Join results folders (the shards of one matrix: bench --shard I/N) into DIR: results.jsonl
  in the matrix's order, summary.json and index.html. Refuses different matrices or seeds
  and runs present twice; warns about missing shards.`;

export async function mergeCommand(argv) {
  const { values: v, positionals } = parse(argv, { out: { type: 'string' } });
  if (v.help) return note(HELP);
  if (!positionals.length || !v.out) throw new UsageError('merge: name the folders to join and --out DIR');
  const r = mergeFolders(positionals, v.out);
  for (const w of r.warnings) note(`warning: ${w}`);
  note(
    `merged ${r.records} runs from ${positionals.length} folder(s) into ${v.out}/ (results.jsonl, summary.json, index.html)`,
  );
  if (v.json) print(r.summary);
}
