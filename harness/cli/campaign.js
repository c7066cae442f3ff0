// What `satbench bench` and `satbench bulk` share: the options of a matrix
// and its settings, and the command's course: read the input, check all of
// it (the matrix too), only then ask for privileges, run the campaign, say
// where the results are.
import { requireNetAdmin } from '../core/sys.js';
import { percent } from '../core/units.js';
import { profileCache } from '../campaign/scenario.js';
import { parse, print, note, integer, list, TCP_OPTIONS, PEP_OPTIONS } from './args.js';

export const CAMPAIGN_OPTIONS = {
  preset: { type: 'string' },
  profile: { type: 'string' },
  loss: { type: 'string' },
  protocol: { type: 'string' },
  n: { type: 'string', short: 'n' },
  out: { type: 'string' },
  resume: { type: 'string' },
  seed: { type: 'string', default: '1' },
  link: { type: 'string', default: 'auto' },
  quic: { type: 'string' },
  ...TCP_OPTIONS,
  ...PEP_OPTIONS,
};

/** The matrix's axes both commands have: the options, else the preset's. */
export const matrixAxes = (v, preset) => ({
  profiles: v.profile ? list(v.profile) : preset.profiles,
  losses: v.loss ? list(v.loss).map((x) => percent(x, '--loss')) : preset.losses,
  protocols: v.protocol ? list(v.protocol) : preset.protocols,
  runs: v.n ? integer(v.n, '-n', 1) : preset.runs,
});

// Where a campaign's results go: --resume DIR, --out DIR or out/NAME-TIMESTAMP.
const outDirOf = (v, name) => v.resume ?? v.out ?? `out/${name}-${new Date().toISOString().replace(/[:.]/g, '-')}`;

/**
 * Runs command `name` (bench, bulk): `input(values)` → {matrix, settings}
 * (throws on a bad option), `check(matrix, settings, {profiles})` refuses
 * what would fail later, `run(matrix, options)` is the campaign and returns
 * the summary, `show(summary)` prints it without --json.
 */
export async function campaignCommand(argv, { name, help, options, input, check, run, show = () => {} }) {
  const { values: v } = parse(argv, { ...CAMPAIGN_OPTIONS, ...options });
  if (v.help) return note(help);
  const { matrix, settings } = input(v);
  const profiles = profileCache();
  await check(matrix, settings, { profiles });
  requireNetAdmin(name);
  const outDir = outDirOf(v, name);
  const summary = await run(matrix, {
    ...settings,
    outDir,
    resume: Boolean(v.resume),
    onProgress: note,
    meta: { preset: v.preset ?? null, argv },
    profiles,
  });
  const failed = summary.groups.reduce((a, g) => a + g.failed, 0);
  note(`results in ${outDir}/ (results.jsonl, summary.json, index.html); ${failed} failed run(s)`);
  if (v.json) print(summary);
  else show(summary);
}
