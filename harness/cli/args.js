// What every command shares: parsing its options (an unknown or malformed
// one is a UsageError), printing, and the option values more than one
// command reads (--cc/--initcwnd, comma lists, numbers, --device's help;
// the PEP options are pep-options.js).
import { parseArgs } from 'node:util';
import { UsageError, optionFlag } from '../core/errors.js';
import { DEVICES } from '../browser/devices.js';

/**
 * --help, --json and `options`; positionals allowed, anything else
 * refused, and so is an option given empty (`--out ''` would write into the
 * current folder, `-n ''` quietly mean the preset's runs).
 */
export function parse(argv, options) {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: { help: { type: 'boolean', short: 'h' }, json: { type: 'boolean' }, ...options },
      allowPositionals: true,
      strict: true,
    });
  } catch (e) {
    // node's message may take several lines (an ambiguous "--seed -1"): one line
    throw new UsageError(e.message.replace(/\s*\n\s*/g, ' '));
  }
  for (const [k, v] of Object.entries(parsed.values))
    if (v === '' || (Array.isArray(v) && v.includes('')))
      throw new UsageError(`${optionFlag(k, options[k])}: given empty; give a value, or leave the option out`);
  return parsed;
}

/** A command that takes no operands refuses them (`satbench bench leo` would run the preset). */
export function noOperands(positionals, command) {
  if (positionals.length)
    throw new UsageError(
      `${command}: unexpected ${JSON.stringify(positionals[0])}; options start with -- (see \`satbench ${command} --help\`)`,
    );
}

export const print = (obj) => process.stdout.write(JSON.stringify(obj, null, 2) + '\n');
export const note = (msg) => process.stderr.write(`${msg}\n`);
// Help the user asked for is the command's output: stdout.
export const help = (text) => process.stdout.write(`${text}\n`);

// Pure: --device's help (bench, record): a line per device of devices.js,
// what it emulates, each on a new line indented by `indent` spaces.
export const deviceLines = (indent) =>
  Object.entries(DEVICES)
    .map(
      ([name, d]) =>
        `\n${' '.repeat(indent)}${name}: ${d.width}×${d.height} CSS px, pixel ratio ${d.deviceScaleFactor}${d.touch ? ', touch' : ''}, ${d.userAgent ? `a ${d.mobile ? 'mobile ' : ''}user agent of its own` : "Chromium's user agent"}`,
    )
    .join('');

/** A whole number of `min` or more (and at most `max`: bounded where it is parsed, not where it fails). */
export function integer(v, flag, min, max = Number.MAX_SAFE_INTEGER) {
  const n = Number(v);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new UsageError(
      `${flag}: expected a whole number ${max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `from ${min} to ${max}`}, got ${JSON.stringify(v)}`,
    );
  return n;
}

// The bounds of the campaigns' numbers: a run count node can hold the
// matrix of, a seed every link emulator takes (linkem's is a u64, run i
// uses seed + i), a page-load timeout a timer can hold (an hour), the end
// hosts' initial window the testbed accepts (testbed.js tcpPlan).
export const LIMITS = { runs: 10_000, seed: 2 ** 32 - 1, timeoutS: 3600, initcwnd: 1000, binMs: 60_000 };

/**
 * A comma list of `flag`, each item read by `read`, with no value twice
 * (`--protocol h1,h1` would run one scenario twice under the same run
 * numbers; `--loss 1,1.0` too). Returns the values read.
 */
export function uniqueList(v, flag, read = (x) => x) {
  const items = list(v);
  if (!items.length) throw new UsageError(`${flag}: name at least one`);
  const seen = new Map(); // value → the item as typed
  for (const x of items) {
    const value = read(x);
    if (seen.has(value)) throw new UsageError(`${flag}: ${x} is given twice (as ${seen.get(value)})`);
    seen.set(value, x);
  }
  return [...seen.keys()];
}

export const list = (v) =>
  v
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);

// The end hosts' TCP (--cc, --initcwnd), shared by testbed, bench and bulk.
export const TCP_OPTIONS = { cc: { type: 'string' }, initcwnd: { type: 'string' } };
export function tcpOptions(v) {
  const tcp = {};
  if (v.cc) tcp.cc = v.cc;
  if (v.initcwnd) tcp.initcwnd = tcp.initrwnd = integer(v.initcwnd, '--initcwnd', 1, LIMITS.initcwnd);
  return tcp;
}
