// `satbench profiles`: the built-in link profiles.
import { loadProfile, listBuiltinProfiles, configuredSummary } from '../testbed/profiles.js';
import { parse, print, help, noOperands } from './args.js';

export const HELP = `Usage: satbench profiles [--json]
  List the built-in link profiles with their configured RTT, rates and loss (a slot
  process's long-run loss included: its handovers' bursts and a moving terminal's outages).

Options:
  --json   print them as JSON (name, description, configured values)`;

export async function profilesCommand(argv) {
  const { values: v, positionals } = parse(argv, {});
  if (v.help) return help(HELP);
  noOperands(positionals, 'profiles');
  const list = listBuiltinProfiles().map((name) => {
    const p = loadProfile(name);
    return { name, description: p.description.trim(), configured: configuredSummary(p) };
  });
  if (v.json) return print(list);
  for (const p of list) process.stdout.write(`${profileLine(p)}\n`);
}

const r3 = (x) => Math.round(x * 1000) / 1000;

/** Pure: one profile's line: RTT, rates and the forward loss, with what a slot process adds to it. */
export function profileLine({ name, configured: c }) {
  const slot = c.slot_loss_pct?.forward;
  const parts = slot ? ` (handovers ${r3(slot.handovers)}${slot.outages ? `, outages ${r3(slot.outages)}` : ''})` : '';
  return `${name.padEnd(26)} RTT ${String(c.rtt_ms).padStart(4)} ms  ${c.forward_mbps ?? '∞'}/${c.return_mbps ?? '∞'} Mbit/s  loss ${r3(c.loss_pct)} %${parts}`;
}
