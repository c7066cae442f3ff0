// `satbench profiles`: the built-in link profiles.
import { loadProfile, listBuiltinProfiles, configuredSummary } from '../testbed/profiles.js';
import { parse, print, note } from './args.js';

export const HELP = `Usage: satbench profiles [--json]
  List the built-in link profiles with their configured RTT, rates and loss.`;

export async function profilesCommand(argv) {
  const { values: v } = parse(argv, {});
  if (v.help) return note(HELP);
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
