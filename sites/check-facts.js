#!/usr/bin/env node
// node sites/check-facts.js [DIR]: does the built Kepler replica (default: the
// one ensureSite builds) follow reference/kepler-content-facts.json? Prints, per
// file kind, how many files follow each fact and every fact not followed; exits
// 1 when any is not.
import { ensureSite } from './generate.js';
import { checkSite } from './facts.js';
import facts from '../reference/kepler-content-facts.json' with { type: 'json' };

const dir = process.argv[2] ?? (await ensureSite('kepler'));
const { kinds, failures } = checkSite(dir, facts);
console.log(`${dir} against reference/kepler-content-facts.json`);
for (const [kind, k] of Object.entries(kinds)) {
  const parts = Object.entries(k.facts).map(([f, c]) => `${f} ${c.holds}/${c.of}`);
  console.log(`  ${kind} (${k.files} files): ${parts.join(', ')}`);
}
for (const f of failures) console.log(`  not followed: ${f}`);
console.log(failures.length ? `${failures.length} facts not followed` : 'every fact followed');
process.exitCode = failures.length ? 1 : 0;
