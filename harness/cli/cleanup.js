// `satbench cleanup`: remove what no running satbench uses: testbeds,
// stray entries of the state folder, Chromium profile folders, and put
// back the host settings satbench changed.
import { requireNetAdmin } from '../core/sys.js';
import { cleanup } from '../testbed/testbed.js';
import { restoreHostSettings } from '../testbed/host-settings.js';
import { removeStaleProfiles } from '../browser/chromium.js';
import { parse, print, note, noOperands } from './args.js';

export const HELP = `Usage: satbench cleanup [--all] [--json]
  Remove the testbeds no running satbench owns: those \`testbed up\` left and those of
  crashed or killed runs (namespaces, the processes in them, state), stray entries in the
  state folder and the Chromium profile folders of satbench processes that are gone, and
  put back the host's net.ipv4.tcp_allowed_congestion_control when no satbench runs.
  --all removes every testbed and profile, including those of runs still going.

Options:
  --all    also remove the testbeds of satbench runs still going
  --json   print what was removed and kept as JSON`;

export async function cleanupCommand(argv) {
  const { values: v, positionals } = parse(argv, { all: { type: 'boolean' } });
  if (v.help) return note(HELP);
  noOperands(positionals, 'cleanup');
  requireNetAdmin('cleanup');
  const r = await cleanup({ all: v.all });
  // after the testbeds: a Chromium of a killed run ran in one of them
  const profiles = removeStaleProfiles({ all: v.all });
  const host = restoreHostSettings();
  if (v.json)
    return print({ removed: r.removed, kept: r.kept.map((t) => t.id), stray: r.stray, profiles, host_settings: host });
  if (r.removed.length) note(`removed testbeds: ${r.removed.join(' ')}`);
  if (r.stray.length) note(`removed stray entries of the state folder: ${r.stray.join(' ')}`);
  if (profiles.length) note(`removed Chromium profiles: ${profiles.join(' ')}`);
  for (const [k, val] of Object.entries(host ?? {})) note(`put back ${k} = ${val}`);
  if (!r.removed.length && !r.stray.length && !profiles.length && !host) note('nothing to clean up');
  for (const t of r.kept) note(`kept testbed ${t.id}: owned by running process ${t.owner_pid} (--all removes it too)`);
}
