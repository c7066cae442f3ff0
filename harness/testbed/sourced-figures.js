// The published figures a profile is built from, as `testbed probe` sets
// them beside what the profile configures and what was measured: read from
// the repository's own reference/ folder (the figures with their
// citations; reference/README.md), never from outside it.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REFERENCE_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../reference');

// The reference file that holds each profile's sourced figures.
export const PROFILE_REFERENCES = { starlink: 'starlink-measurements.json' };

// Which probe row each figure of a reference file's `figures` goes beside,
// and how it reads there: a value, a bound (`at_least`: the source's lower
// end; `at_most`: its "up to"), a range or a step.
const FIGURE_ROWS = {
  slot_period_s: { row: 'period_s', reads: 'value' },
  boundary_offsets_in_minute_s: { row: 'boundary', reads: 'offsets' },
  handover_spike_rtt_ms: { row: 'spike_ms', reads: 'at_least' },
  handover_loss_max: { row: 'peak_loss_pct', reads: 'at_most', scale: 100 },
  mean_successive_rtt_jitter_ms: { row: 'successive_jitter_ms', reads: 'value' },
  worst_slot_step_rtt_ms: { row: 'slot_step_ms', reads: 'step' },
  download_mbit: { row: 'forward_mbps', reads: 'range' },
};

// Pure: a figure as the probe's table shows it.
function figureText(f, { reads, scale = 1 }) {
  const v = (x) => Math.round(x * scale * 1000) / 1000;
  if (reads === 'at_least') return `≥ ${v(f.value)}`;
  if (reads === 'at_most') return `≤ ${v(f.value)}`;
  if (reads === 'range') return `${v(f.range[0])}–${v(f.range[1])}`;
  if (reads === 'step') return `${v(f.value[0])} → ${v(f.value[1])} worst`;
  if (reads === 'offsets') return `${f.value.map(v).join(', ')} past min`;
  return String(v(f.value));
}

/**
 * Pure: a reference file's figures by the probe row they go beside
 * ({row: {text, value, range, source, status}}), and the sources they cite
 * ({key: citation}); `file` is where it was read, relative to the
 * repository. Figures no probe row measures are left out.
 */
export function sourcedFigures(reference, file) {
  const figures = {};
  const cited = new Set();
  for (const [key, how] of Object.entries(FIGURE_ROWS)) {
    const f = reference.figures?.[key];
    if (!f) continue;
    cited.add(f.read_from);
    figures[how.row] = {
      figure: key,
      text: figureText(f, how),
      reads: how.reads,
      ...(f.value !== undefined && { value: f.value }),
      ...(f.range && { range: f.range }),
      ...(how.scale && { scale: how.scale }),
      source: f.read_from,
      ...(f.status && { status: f.status }),
    };
  }
  const sources = Object.fromEntries(
    [...cited].map((k) => {
      const s = reference.sources?.[k] ?? {};
      const where = [s.url, s.read_via && `read via ${s.read_via}`, s.note].filter(Boolean).join('; ');
      return [k, where ? `${s.cite}, ${where}` : (s.cite ?? k)];
    }),
  );
  return { file, about: reference.about ?? null, figures, sources };
}

/** The sourced figures of profile `name` (sourcedFigures), or null when reference/ holds none for it. */
export function loadSourcedFigures(name, { dir = REFERENCE_DIR } = {}) {
  const file = PROFILE_REFERENCES[name];
  if (!file) return null;
  return sourcedFigures(JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')), `reference/${file}`);
}
