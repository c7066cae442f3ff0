#!/usr/bin/env node
// The satbench command: picks the command's module (harness/cli/, each with
// its options and help) and turns its errors into exit codes. Errors the
// user can fix print one line and exit 2.
import { UsageError } from './core/errors.js';
import { terminalSafeLines } from './core/terminal.js';
import { help } from './cli/args.js';
import { installSignalHandlers } from './testbed/teardown.js';
import * as testbed from './cli/testbed.js';
import * as doctor from './cli/doctor.js';
import * as cleanup from './cli/cleanup.js';
import * as profiles from './cli/profiles.js';
import * as bench from './cli/bench.js';
import * as bulk from './cli/bulk.js';
import * as report from './cli/report.js';
import * as compare from './cli/compare.js';
import * as merge from './cli/merge.js';
import * as record from './cli/record.js';
import * as importHar from './cli/import-har.js';
import * as sites from './cli/sites.js';

const HELP = `satbench — web page loads over emulated satellite links, in a real Chromium

Usage: satbench COMMAND [OPTIONS]

Commands:
  doctor                      check every prerequisite and say how to fix what is missing
  testbed up|down|status|probe  build, remove, list or measure an emulated testbed
  profiles                    list the built-in link profiles
  sites [DIR...]              list the reference sites and the site archives in DIR (default ./archives)
  cleanup [--all]             remove testbeds (namespaces, processes) left behind
  bench                       load pages in Chromium over a matrix of scenarios
  report DIR                  (re)write DIR/index.html from DIR's results
  compare BASELINE CURRENT    judge CURRENT against BASELINE and a budget (exit 1 on regression)
  merge DIR... --out DIR      join the shards of a matrix into one result and report
  bulk                        downloads over QUIC, TCP and Chromium, with and without PEPs: goodput over time
  record URL --out DIR        store a live page, every response of every origin, as a site archive
  import-har FILE --out DIR   make a site archive from a HAR file saved with content

Run \`satbench COMMAND --help\` for a command's options.`;

// Each command: its function and its help.
const COMMANDS = {
  doctor: [doctor.doctorCommand, doctor.HELP],
  testbed: [testbed.testbedCommand, testbed.HELP],
  profiles: [profiles.profilesCommand, profiles.HELP],
  cleanup: [cleanup.cleanupCommand, cleanup.HELP],
  bench: [bench.benchCommand, bench.HELP],
  report: [report.reportCommand, report.HELP],
  compare: [compare.compareCommand, compare.HELP],
  merge: [merge.mergeCommand, merge.HELP],
  bulk: [bulk.bulkCommand, bulk.HELP],
  record: [record.recordCommand, record.HELP],
  'import-har': [importHar.importHarCommand, importHar.HELP],
  sites: [sites.sitesCommand, sites.HELP],
};

// -h or --help among a command's arguments (before a `--`).
const asksHelp = (args) => {
  const end = args.indexOf('--');
  return (end < 0 ? args : args.slice(0, end)).some((a) => a === '-h' || a === '--help');
};

async function main([cmd, ...rest]) {
  // Help that was asked for is output (stdout, exit 0); without a command it is a usage error.
  if (['-h', '--help', 'help'].includes(cmd)) return help(HELP);
  if (cmd === undefined) throw new UsageError(`name a command\n\n${HELP}`);
  if (!Object.hasOwn(COMMANDS, cmd))
    throw new UsageError(`unknown command ${JSON.stringify(cmd)}; see \`satbench --help\``);
  const [run, text] = COMMANDS[cmd];
  if (asksHelp(rest)) return help(text);
  // A signal tears down what the command built (testbed/teardown.js), for as long as it runs.
  const uninstall = installSignalHandlers();
  try {
    return await run(rest);
  } finally {
    uninstall();
  }
}

main(process.argv.slice(2)).catch((e) => {
  // a message may quote input (a file's key, a folder's name): printed terminal-safe
  if (e instanceof UsageError) {
    process.stderr.write(`satbench: ${terminalSafeLines(e.message)}\n`);
  } else {
    process.stderr.write(`satbench: internal error: ${terminalSafeLines(e.stack || e)}\n`);
  }
  process.exitCode = 2;
});
