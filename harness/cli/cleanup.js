// `satbench cleanup`: remove the testbeds no running satbench owns.
import { requireNetAdmin } from '../core/sys.js';
import { cleanup } from '../testbed/testbed.js';
import { parse, print, note } from './args.js';

export const HELP = `Usage: satbench cleanup [--all] [--json]
  Remove the testbeds no running satbench owns: those \`testbed up\` left and those of
  crashed or killed runs (namespaces, the processes in them, state). --all removes every
  testbed, including those of runs still going.`;

export async function cleanupCommand(argv) {
  const { values: v } = parse(argv, { all: { type: 'boolean' } });
  if (v.help) return note(HELP);
  requireNetAdmin('cleanup');
  const r = await cleanup({ all: v.all });
  if (v.json) return print({ removed: r.removed, kept: r.kept.map((t) => t.id) });
  note(r.removed.length ? `removed testbeds: ${r.removed.join(' ')}` : 'nothing to clean up');
  for (const t of r.kept) note(`kept testbed ${t.id}: owned by running process ${t.owner_pid} (--all removes it too)`);
}
