// `satbench merge DIR... --out DIR`: join the shards of a matrix.
import { UsageError } from '../core/errors.js';
import { terminalSafe } from '../core/terminal.js';
import { mergeFolders } from '../report/outputs.js';
import { parse, print, note, help } from './args.js';

export const HELP = `Usage: satbench merge DIR... --out DIR [--json]
  Join results folders (the shards of one matrix: bench --shard I/N) into DIR: results.jsonl
  in the matrix's order, summary.json and index.html, with the Lighthouse reports and the
  runs' HARs (DIR/lighthouse/, DIR/har/; not the qlogs or failed runs' logs). Refuses
  different matrices or seeds and runs present twice, checked from the runs themselves when
  a folder has no summary.json (an interrupted shard); warns about missing shards.

Options:
  --out DIR   the merged folder; must not hold a results.jsonl yet
  --json      print the merged summary.json`;

export async function mergeCommand(argv) {
  const { values: v, positionals } = parse(argv, { out: { type: 'string' } });
  if (v.help) return help(HELP);
  if (!positionals.length || !v.out) throw new UsageError('merge: name the folders to join and --out DIR');
  const r = mergeFolders(positionals, v.out);
  for (const w of r.warnings) note(terminalSafe(`warning: ${w}`)); // a warning names folders and their meta
  note(
    `merged ${r.records} runs from ${positionals.length} folder(s) into ${v.out}/ (results.jsonl, summary.json, index.html)`,
  );
  if (v.json) print(r.summary);
}
