// `satbench report DIR`: (re)write DIR/index.html from DIR's results.
import { UsageError } from '../core/errors.js';
import { reportFolder } from '../report/outputs.js';
import { parse, note, help } from './args.js';

export const HELP = `Usage: satbench report DIR
  Write DIR/index.html, one self-contained file (no network when opened), from
  DIR/results.jsonl (or DIR/summary.json alone: then without distributions and runs).
  summary.json is rewritten when it is missing or does not match results.jsonl.`;

export async function reportCommand(argv) {
  const { values: v, positionals } = parse(argv, {});
  if (v.help) return help(HELP);
  if (positionals.length !== 1) throw new UsageError('report: name one results folder (satbench report DIR)');
  const r = reportFolder(positionals[0]);
  note(`wrote ${r.file}${r.rewrote ? ' (and summary.json, from results.jsonl)' : ''}`);
}
