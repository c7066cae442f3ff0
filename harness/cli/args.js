// What every command shares: parsing its options (an unknown or malformed
// one is a UsageError), printing, and the option values more than one
// command reads (--cc/--initcwnd, comma lists, numbers; the PEP options are
// pep-options.js).
import { parseArgs } from 'node:util';
import { UsageError } from '../core/errors.js';

/** --help, --json and `options`; positionals allowed, anything else refused. */
export function parse(argv, options) {
  try {
    return parseArgs({
      args: argv,
      options: { help: { type: 'boolean', short: 'h' }, json: { type: 'boolean' }, ...options },
      allowPositionals: true,
      strict: true,
    });
  } catch (e) {
    // node's message may take several lines (an ambiguous "--seed -1"): one line
    throw new UsageError(e.message.replace(/\s*\n\s*/g, ' '));
  }
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

export function integer(v, flag, min) {
  const n = Number(v);
  if (!Number.isInteger(n) || n < min)
    throw new UsageError(`${flag}: expected a whole number >= ${min}, got ${JSON.stringify(v)}`);
  return n;
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
  if (v.initcwnd) tcp.initcwnd = tcp.initrwnd = integer(v.initcwnd, '--initcwnd', 1);
  return tcp;
}
