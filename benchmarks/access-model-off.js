#!/usr/bin/env node
// npm run bench:access-model-off — with the access model off, does linkem
// decide every packet of today's profiles as it did before the model was
// added? For every built-in profile without an access model, as
// configured and with bench's --loss 1, each link's linkem config (as the
// harness writes it) is driven through linkem's pipeline with one fixed
// trace by the `verdicts` example, and its line (deliveries, drops and a
// digest of every verdict) is printed; with --against BIN (the same example
// built from an older commit) both lines are compared. --verdicts BIN takes
// an example already built from this tree instead of building it.
// benchmarks/starlink-probe.js runs the same check (linkDecisions).
// Usage: node benchmarks/access-model-off.js [--against BIN] [--verdicts BIN] [--packets 200000] [--json]
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { ROOT } from '../harness/core/sys.js';
import { LINKS, listBuiltinProfiles, loadProfile } from '../harness/testbed/profiles.js';
import { linkemConfig } from '../harness/testbed/link-backends.js';

/** Builds the `verdicts` example of this tree; its path. */
export function buildVerdicts() {
  execFileSync('cargo', ['build', '--release', '-q', '-p', 'linkem', '--example', 'verdicts'], {
    cwd: ROOT,
    stdio: 'inherit',
  });
  return path.join(ROOT, 'target/release/examples/verdicts');
}

// Profiles with an access model or a slot process are newer than the check.
const hasAccess = (p) =>
  LINKS.some((l) => ['forward', 'return'].some((d) => p.links[l][d].access || p.links[l][d].slots));

/**
 * Each link config of the profiles the check covers, decided by `ours`
 * (and `against`, when given: `same` says whether both decided alike):
 * [{profile, loss, link, ours, same?}].
 */
export function linkDecisions({ ours, against = null, packets = 200000 }) {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-access-model-off-'));
  const verdicts = (bin, file) => execFileSync(bin, [file, String(packets)], { encoding: 'utf8' }).trim();
  const rows = [];
  try {
    for (const name of listBuiltinProfiles()) {
      if (hasAccess(loadProfile(name))) continue;
      for (const lossPct of [null, 1]) {
        const p = loadProfile(name, { lossPct });
        for (const link of LINKS) {
          const cfg = linkemConfig({
            name: link === 'satellite' ? 'sat' : 'inet',
            seed: 1,
            a: { netns: 'a', dev: 'a' },
            b: { netns: 'b', dev: 'b' },
            forward: p.links[link].forward,
            ret: p.links[link].return,
            statsPath: path.join(work, 'stats.json'),
          });
          const file = path.join(work, `${name}-${lossPct ?? 'as-is'}-${link}.json`);
          fs.writeFileSync(file, JSON.stringify(cfg));
          const row = { profile: name, loss: lossPct === null ? 'as configured' : `--loss ${lossPct}`, link };
          row.ours = verdicts(ours, file);
          if (against) row.same = row.ours === verdicts(against, file);
          rows.push(row);
        }
      }
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  return rows;
}

/** Pure: the check's last line: how many link configs decided the same. */
export const decisionsLine = (rows) => {
  const differ = rows.filter((r) => !r.same).length;
  return `${rows.length - differ} of ${rows.length} link configs decided the same, ${differ} differ`;
};

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values: o } = parseArgs({
    options: {
      against: { type: 'string' },
      verdicts: { type: 'string' },
      packets: { type: 'string', default: '200000' },
      json: { type: 'boolean' },
    },
  });
  const rows = linkDecisions({ ours: o.verdicts ?? buildVerdicts(), against: o.against, packets: o.packets });
  if (o.json) process.stdout.write(JSON.stringify(rows, null, 2) + '\n');
  else {
    console.log(`linkem verdicts, ${o.packets} packets per direction${o.against ? `, against ${o.against}` : ''}`);
    for (const r of rows) {
      const same = r.same === undefined ? '' : r.same ? 'same  ' : 'DIFFER';
      console.log(`${same} ${r.profile} (${r.loss}) ${r.link}: ${r.ours}`);
    }
    if (o.against) {
      console.log(decisionsLine(rows));
      process.exitCode = rows.every((r) => r.same) ? 0 : 1;
    }
  }
}
