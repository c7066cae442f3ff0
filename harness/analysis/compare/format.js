// How compare writes a value, a change, a p-value in words, Cliff's delta
// and a side's runs, in the verdict's messages and its writers (text,
// Markdown, JUnit; a p-value in a table column is core/stats.js's fmtP),
// and the entity escaping the Markdown and JUnit writers share.
const unit = (metric) => (metric.endsWith('_ms') ? ' ms' : metric.endsWith('_bytes') ? ' B' : '');

// A metric's value rounded, with its unit ("7704 ms"); "–" for none.
export const fmtValue = (v, metric) => (v === null || v === undefined ? '–' : `${Math.round(v)}${unit(metric)}`);

// A change in percent with its sign ("+30.0 %"); "–" for none.
export const fmtPct = (x) => (x === null ? '–' : `${x >= 0 ? '+' : ''}${x.toFixed(1)} %`);

// A p-value in a sentence ("p < 0.001", "p = 0.042").
export const pInWords = (p) => (p < 0.001 ? 'p < 0.001' : `p = ${p.toFixed(3)}`);

// Cliff's delta to two decimals; "–" for none.
export const fmtCliffsDelta = (d) => (d === null ? '–' : d.toFixed(2));

// How many runs a side had (" (80 runs)"); nothing for a summary.json.
export const runsNote = (side) => (side.runs !== null ? ` (${side.runs} runs)` : '');

const ENTITIES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

// The five characters XML predefines entities for, written as those
// entities: what JUnit's XML needs in attributes and text, and what the
// Markdown cells use (markdown.js says why).
export const escapeEntities = (s) => String(s).replace(/[&<>"']/g, (c) => ENTITIES[c]);
