// `satbench profiles`: the built-in link profiles.
import { loadProfile, listBuiltinProfiles, configuredSummary } from '../testbed/profiles.js';
import { parse, print, help, noOperands } from './args.js';

export const HELP = `Usage: satbench profiles [--json]
  List the built-in link profiles with their configured RTT, rates and loss.

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
  for (const p of list) {
    const c = p.configured;
    process.stdout.write(
      `${p.name.padEnd(26)} RTT ${String(c.rtt_ms).padStart(4)} ms  ${c.forward_mbps ?? '∞'}/${c.return_mbps ?? '∞'} Mbit/s  loss ${Math.round(c.loss_pct * 1000) / 1000} %\n`,
    );
  }
}
