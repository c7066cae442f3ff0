#!/usr/bin/env node
// The satbench command: picks the command's module (harness/cli/, each with
// its options and help) and turns its errors into exit codes. Errors the
// user can fix print one line and exit 2.
import { UsageError } from './core/errors.js';
import { note } from './cli/args.js';
import { testbedCommand } from './cli/testbed.js';
import { doctorCommand } from './cli/doctor.js';
import { cleanupCommand } from './cli/cleanup.js';
import { profilesCommand } from './cli/profiles.js';
import { benchCommand } from './cli/bench.js';
import { bulkCommand } from './cli/bulk.js';
import { reportCommand } from './cli/report.js';
import { compareCommand } from './cli/compare.js';
import { mergeCommand } from './cli/merge.js';

const HELP = `satbench — web page loads over emulated satellite links, in a real Chromium

Usage: satbench COMMAND [OPTIONS]

Commands:
  doctor                      check every prerequisite and say how to fix what is missing
  testbed up|down|status|probe  build, remove, list or measure an emulated testbed
  profiles                    list the built-in link profiles
  cleanup [--all]             remove testbeds (namespaces, processes) left behind
  bench                       load pages in Chromium over a matrix of scenarios
  report DIR                  (re)write DIR/index.html from DIR's results
  compare BASELINE CURRENT    judge CURRENT against BASELINE and a budget (exit 1 on regression)
  merge DIR... --out DIR      join the shards of a matrix into one result and report
  bulk                        downloads over QUIC, TCP and Chromium, with and without PEPs: goodput over time

Run \`satbench COMMAND --help\` for a command's options.`;

const COMMANDS = {
  doctor: doctorCommand,
  testbed: testbedCommand,
  profiles: profilesCommand,
  cleanup: cleanupCommand,
  bench: benchCommand,
  report: reportCommand,
  compare: compareCommand,
  merge: mergeCommand,
  bulk: bulkCommand,
};

async function main([cmd, ...rest]) {
  if (cmd === undefined || ['-h', '--help', 'help'].includes(cmd)) return note(HELP);
  if (!Object.hasOwn(COMMANDS, cmd))
    throw new UsageError(`unknown command ${JSON.stringify(cmd)}; see \`satbench --help\``);
  return COMMANDS[cmd](rest);
}

main(process.argv.slice(2)).catch((e) => {
  if (e instanceof UsageError) {
    process.stderr.write(`satbench: ${e.message}\n`);
  } else {
    process.stderr.write(`satbench: internal error: ${e.stack || e}\n`);
  }
  process.exitCode = 2;
});
