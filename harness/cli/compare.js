// `satbench compare BASELINE CURRENT`: judge CURRENT against BASELINE and a
// budget; exit 1 on a regression.
import fs from 'node:fs';
import path from 'node:path';
import { UsageError } from '../core/errors.js';
import { replaceFile } from '../results/store.js';
import { loadResultSet } from '../analysis/result-set.js';
import { readBudget, defaultBudget, describeLimits } from '../analysis/compare/budget.js';
import { compareResults } from '../analysis/compare/judge.js';
import { formatText } from '../analysis/compare/text.js';
import { toMarkdown } from '../analysis/compare/markdown.js';
import { toJUnit } from '../analysis/compare/junit.js';
import { parse, print, help } from './args.js';

export const HELP = `Usage: satbench compare BASELINE CURRENT [--budget FILE] [--junit FILE] [--markdown FILE] [--json]
  BASELINE and CURRENT are results folders (their results.jsonl is used, else summary.json),
  results.jsonl files or summary.json files. For every scenario in both and every metric with
  a limit: the ratio of medians, the two-sided Mann–Whitney U p-value, Cliff's delta.
  A slowdown (higher times, lower rates) fails when it is over the budget's max_slowdown_pct
  AND significant (p < alpha; with a summary.json side: the medians' 95 % intervals do not
  overlap); a median over max_median or under min_median fails outright. A scenario on one
  side only, or run with other CPU or device emulation on the two, is warned about.
  Without --budget, the limits of the kinds present: ${describeLimits(defaultBudget().metrics)}.

Options:
  --budget FILE     YAML or JSON: {alpha, metrics: {METRIC: {max_median, min_median, max_slowdown_pct}},
                    scenarios: [{match: {profile, loss_pct, protocol, site}, metrics: {…}}]}
  --junit FILE      write JUnit XML (a test suite per scenario, a test case per metric)
  --markdown FILE   write a summary for a pull-request comment
  --json            print the comparison as JSON
Exit 0 when nothing regressed, 1 when a check failed, 2 when an input is unusable.`;

// Where --junit or --markdown will write: checked before anything is read
// or written, so that a typo in a folder name fails at once, in one line.
export function checkOutputFile(file, flag) {
  if (file === undefined) return;
  const dir = path.dirname(path.resolve(file));
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory())
    throw new UsageError(`${flag} ${file}: no folder ${dir} to write it in`);
  if (fs.existsSync(file) && fs.statSync(file).isDirectory())
    throw new UsageError(`${flag} ${file}: is a folder; expected a file name`);
}

// Whole or not at all (a pull-request comment or a CI report half written is worse than none).
function writeOutput(file, flag, text) {
  try {
    replaceFile(file, text);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    throw new UsageError(`${flag} ${e.message}`);
  }
}

export async function compareCommand(argv) {
  const { values: v, positionals } = parse(argv, {
    budget: { type: 'string' },
    junit: { type: 'string' },
    markdown: { type: 'string' },
  });
  if (v.help) return help(HELP);
  if (positionals.length !== 2)
    throw new UsageError('compare: name BASELINE and CURRENT (results folders, results.jsonl or summary.json)');
  checkOutputFile(v.junit, '--junit');
  checkOutputFile(v.markdown, '--markdown');
  const budget = v.budget ? readBudget(v.budget) : null; // null: the limits of the kinds present
  const res = compareResults(loadResultSet(positionals[0]), loadResultSet(positionals[1]), budget);
  if (v.junit) writeOutput(v.junit, '--junit', toJUnit(res));
  if (v.markdown) writeOutput(v.markdown, '--markdown', toMarkdown(res));
  if (v.json) print(res);
  else process.stdout.write(formatText(res) + '\n');
  process.exitCode = res.failed ? 1 : 0;
}
