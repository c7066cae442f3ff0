// What `satbench bench` and `satbench bulk` share: the options of a matrix
// and its settings, and the command's course: read the input, check all of
// it (the matrix too), only then ask for privileges, run the campaign, say
// where the results are. --resume DIR takes the matrix and settings saved
// in DIR (campaign/manifest.js) and refuses options that contradict them.
import path from 'node:path';
import { UsageError } from '../core/errors.js';
import { requireNetAdmin } from '../core/sys.js';
import { DEFAULTS } from '../core/defaults.js';
import { interruptedBy, exitCodeOf } from '../testbed/teardown.js';
import { percent } from '../core/units.js';
import { profileCache } from '../campaign/scenario.js';
import { checkOutDir } from '../campaign/results-dir.js';
import { newManifest, readManifest, contradictions, contradictionMessage } from '../campaign/manifest.js';
import { parse, print, note, integer, uniqueList, noOperands, LIMITS, TCP_OPTIONS } from './args.js';
import { PEP_OPTIONS } from './pep-options.js';

export const CAMPAIGN_OPTIONS = {
  preset: { type: 'string' },
  profile: { type: 'string' },
  loss: { type: 'string' },
  protocol: { type: 'string' },
  n: { type: 'string', short: 'n' },
  out: { type: 'string' },
  resume: { type: 'string' },
  seed: { type: 'string', default: String(DEFAULTS.seed) },
  link: { type: 'string', default: DEFAULTS.link },
  quic: { type: 'string' },
  ...TCP_OPTIONS,
  ...PEP_OPTIONS,
};

/** The matrix's axes both commands have: the options, else the preset's. */
export const matrixAxes = (v, preset) => ({
  profiles: v.profile !== undefined ? uniqueList(v.profile, '--profile') : preset.profiles,
  losses: v.loss !== undefined ? uniqueList(v.loss, '--loss', (x) => percent(x, '--loss')) : preset.losses,
  protocols: v.protocol !== undefined ? uniqueList(v.protocol, '--protocol') : preset.protocols,
  runs: v.n !== undefined ? integer(v.n, '-n', 1, LIMITS.runs) : preset.runs,
});

// parseArgs options without their defaults: what was typed, and the defaults alone.
const typedOnly = (config) => Object.fromEntries(Object.entries(config).map(([k, { default: _, ...o }]) => [k, o]));
const defaultsOf = (config) =>
  Object.fromEntries(Object.entries(config).flatMap(([k, o]) => ('default' in o ? [[k, o.default]] : [])));

/**
 * The folder, matrix and settings of a campaign and its manifest: from the
 * command line (the folder --out DIR or out/NAME-TIMESTAMP, checked, not
 * made), or with --resume DIR from DIR's campaign.json, where an option
 * given again must agree with it. `given`: the options typed, `v`: with
 * their defaults. Reads, creates nothing.
 */
export function campaignInput(argv, { given, v }, { name, config, input }) {
  if (v.resume && v.out && path.resolve(v.out) !== path.resolve(v.resume))
    throw new UsageError(
      `--out ${v.out}, --resume ${v.resume}: give one folder (--resume continues the campaign in it)`,
    );
  const typed = input(v); // every option checked, resumed or not
  if (!v.resume) {
    const outDir = v.out ?? `out/${name}-${new Date().toISOString().replace(/[:.]/g, '-')}`;
    checkOutDir(outDir);
    return { outDir, ...typed, manifest: newManifest({ command: name, argv, values: v, ...typed }) };
  }
  const saved = readManifest(v.resume, name);
  const bad = contradictions({
    saved: { ...defaultsOf(config), ...saved.options },
    given,
    input,
    ran: { matrix: saved.matrix, settings: saved.settings },
  });
  if (bad.length) throw new UsageError(contradictionMessage(v.resume, bad, config));
  return { outDir: v.resume, matrix: saved.matrix, settings: saved.settings, manifest: saved };
}

/**
 * Runs command `name` (bench, bulk): the command line parsed once;
 * `input(values)` → {matrix, settings} (throws on a bad option);
 * `check(matrix, settings, {profiles, given})` → the campaign's plan,
 * refusing what would fail later (`given`: the options as campaign.json
 * saves them, for errors that name where a setting came from), and its
 * `warnings` printed before the runs and kept in summary.json's meta; `run(plan,
 * io)` is the campaign and returns the summary, `show(summary)` prints its
 * table without --json, before the line saying where the results are.
 */
export async function campaignCommand(argv, { name, help, options, input, check, run, show = () => {} }) {
  const config = { ...CAMPAIGN_OPTIONS, ...options };
  const { values: given, positionals } = parse(argv, typedOnly(config));
  const v = { ...defaultsOf(config), ...given };
  noOperands(positionals, name);
  if (v.help) return note(help);
  const { outDir, matrix, settings, manifest } = campaignInput(argv, { given, v }, { name, config, input });
  const plan = await check(matrix, settings, { profiles: profileCache(), given: manifest.options });
  requireNetAdmin(name);
  const warnings = plan.warnings ?? [];
  for (const w of warnings) note(`warning: ${w}`);
  const summary = await run(plan, {
    outDir,
    resume: Boolean(v.resume),
    manifest,
    onProgress: note,
    meta: {
      preset: manifest.options.preset ?? null,
      argv: manifest.argv,
      ...(v.resume ? { resumed: argv } : {}),
      ...(warnings.length ? { warnings } : {}),
    },
  });
  const failed = summary.groups.reduce((a, g) => a + g.failed, 0);
  // the medians first, then where the rest is (as sitespeed.io ends)
  if (!v.json) show(summary);
  note(`results in ${outDir}/ (results.jsonl, summary.json, index.html); ${failed} failed run(s)`);
  if (v.json) print(summary);
  // A signal ended the matrix: its outputs are written for what finished.
  const signal = interruptedBy();
  if (signal) {
    note(`interrupted by ${signal}: continue the matrix with \`satbench ${name} --resume ${outDir}\``);
    process.exitCode = exitCodeOf(signal);
  }
}
