// Pure: a run's filmstrip (issue 28's contract: a folder of JPEGs named
// `<ms>.jpg`, ms since navigation start) as the report shows it, as in
// WebPageTest: a cell every `step` ms showing the last frame captured by
// then, the cells where the page changed marked; and which runs' views the
// report inlines (the rest are linked as files of the results folder).

const FRAME_NAME = /^(\d{1,9})\.jpe?g$/;

/** Pure: the frames among a folder's file names, [{ms, name}] by time; other names are left out. */
export function framesOf(names) {
  return names
    .map((name) => FRAME_NAME.exec(name))
    .filter(Boolean)
    .map((m) => ({ ms: Number(m[1]), name: m[0] }))
    .sort((a, b) => a.ms - b.ms || (a.name < b.name ? -1 : 1));
}

/**
 * Pure: the frames that show a change, [{ms, name, ...}]: a frame whose
 * content (`key`, e.g. a hash of its bytes) equals the one before it is
 * left out, so that a capture at fixed steps costs no more than one at
 * each visual change.
 */
export function visualChanges(frames, key) {
  const out = [];
  for (const f of frames) if (!out.length || key(out.at(-1)) !== key(f)) out.push(f);
  return out;
}

// Cell steps a filmstrip may use (WebPageTest's), and how many cells it
// shows at most: a 7 s GEO load gets a cell every 200 ms.
export const STEPS_MS = [100, 200, 250, 500, 1000, 2000, 5000, 10000];
export const MAX_CELLS = 40;

/** Pure: the finest step of STEPS_MS that shows 0…`endMs` in MAX_CELLS cells at most. */
export function filmstripStep(endMs) {
  return STEPS_MS.find((s) => Math.ceil(endMs / s) + 1 <= MAX_CELLS) ?? STEPS_MS.at(-1);
}

/**
 * Pure: the cells of a filmstrip of `frameMs` (the frames' times, in
 * order) from 0 to `endMs` (the last cell at or after it) every `step` ms:
 * [{ms, frame, changed}], `frame` the index of the last frame at or before
 * the cell's time (-1 before the first), `changed` when it differs from the
 * previous cell's.
 */
export function filmstripCells(frameMs, { step, endMs }) {
  const cells = [];
  let f = -1;
  const count = Math.max(1, Math.ceil(endMs / step) + 1);
  for (let i = 0; i < count; i++) {
    const ms = i * step;
    while (f + 1 < frameMs.length && frameMs[f + 1] <= ms) f++;
    cells.push({ ms, frame: f, changed: i === 0 ? f >= 0 : f !== cells[i - 1].frame });
  }
  return cells;
}

/**
 * Pure: what the report inlines of the runs' views (waterfalls, frames):
 * `items` [{id, median, bytes}] in order of preference, a median run's
 * always, any other while the total stays within `budgetBytes`. Returns a
 * Set of ids.
 */
export function toInline(items, budgetBytes) {
  const chosen = new Set();
  let total = 0;
  for (const r of items) {
    if (!r.median && total + r.bytes > budgetBytes) continue;
    chosen.add(r.id);
    total += r.bytes;
  }
  return chosen;
}
