// Which part of the report shows a kind's records. A kind names its part by
// key (harness/kinds/: `report`); this table renders each key. A new part
// is a module in this folder and its line here.
import { pageloadReport } from './pageload/part.js';
import { bulkReport } from './bulk.js';
import { kindMedianTable } from './median-table.js';

const PARTS = {
  pageload: () => pageloadReport,
  bulk: () => bulkReport,
  medians: kindMedianTable,
};

/** The report part of a registered `kind`: build, nav, sections, failures, and optional runs/runsTitle, warnings, data, lead, withoutRecords. */
export function partOf(kind) {
  const part = PARTS[kind.report];
  if (!part) throw new Error(`kind ${kind.name}: no report part "${kind.report}" (harness/report/parts.js)`);
  return part(kind);
}
