// The report part that is one table of medians, a row per group: what a
// kind without its own sections shows (its `report` is 'medians'), and (as
// "Other results") what records of unregistered kinds show.
import { h, medianList } from './render.js';

/** A medians part under `title`; `nav`: whether the table of contents links to it. */
export function medianTableReport({ id, title, note, nav = true }) {
  return {
    build: (groups, { kindOf }) => ({ groups: groups.map((g) => ({ ...g, label: kindOf(g).label(g.scenario) })) }),
    nav: (part) => (nav && part.groups.length ? `<a href="#${h(id)}">${h(title)}</a>` : ''),
    sections: (part) =>
      part.groups.length
        ? `<section id="${h(id)}"><h2>${h(title)}</h2>
<p class="legend-note">${h(note)}</p>
<table><thead><tr><th>scenario</th><th>runs</th><th>failed</th><th>medians</th></tr></thead><tbody>
${part.groups
  .map(
    (g) =>
      `<tr><td>${h(g.label)}</td><td class="num">${h(g.runs)}</td><td class="num">${h(g.failed)}</td><td>${medianList(g.metrics)}</td></tr>`,
  )
  .join('\n')}
</tbody></table></section>`
        : '',
    // its runs have no anchors to link a failure to; the totals count them
    failures: () => [],
  };
}

// A registered kind's medians part, under its title.
export const kindMedianTable = (kind) =>
  medianTableReport({ id: kind.name, title: kind.title ?? kind.name, note: `${kind.name}: medians of each metric.` });

// The part of every record whose kind is not registered.
export const OTHER_RESULTS = medianTableReport({
  id: 'other',
  title: 'Other results',
  note: 'Records of other kinds (e.g. bulk transfers): medians of each metric.',
  nav: false,
});
