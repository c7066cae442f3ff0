// A table as the commands print it on a terminal: a header row and data
// rows, each column as wide as its widest cell, two spaces between
// columns, no trailing blanks. `bulk` and `bench` print their medians so.

/** Pure: `rows` (the first is the header; cells of any type, shown with String) as lines of text. */
export function formatTable(rows) {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => String(r[i] ?? '').length)));
  return rows
    .map((r) =>
      widths
        .map((w, i) => String(r[i] ?? '').padEnd(w))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}
