// The comparison as JUnit XML for CI: a test suite per scenario, a test
// case per checked metric, a failure per failed check.
import { fmtP } from '../../core/stats.js';
import { escapeEntities as xml, fmtCliffsDelta, fmtPct, fmtValue } from './format.js';

// Pure: one check as a test case.
function testCase(row, label) {
  const detail = `baseline ${fmtValue(row.base.median, row.metric)} (n ${row.base.n}), current ${fmtValue(row.current.median, row.metric)} (n ${row.current.n}), ${fmtPct(row.change_pct)}, p ${fmtP(row.p)}, Cliff's delta ${fmtCliffsDelta(row.cliffs_delta)}`;
  const body =
    row.status === 'fail'
      ? `<failure message="${xml(row.failures.join('; '))}" type="regression">${xml(`${detail}\n${[...row.failures, ...row.warnings].join('\n')}`)}</failure>`
      : `<system-out>${xml(`${detail}${row.warnings.length ? `\n${row.warnings.join('\n')}` : ''}`)}</system-out>`;
  return `    <testcase classname="${xml(`satbench.${label}`)}" name="${xml(row.metric)}" time="0">${body}</testcase>`;
}

// Pure: the comparison (compareResults) as a JUnit XML document.
export function toJUnit(res) {
  const rowsByScenario = Map.groupBy(res.rows, (row) => row.label);
  const suites = [...rowsByScenario].map(([label, rows]) => {
    const failures = rows.filter((row) => row.status === 'fail').length;
    return `  <testsuite name="${xml(label)}" tests="${rows.length}" failures="${failures}" errors="0" skipped="0">\n${rows.map((row) => testCase(row, label)).join('\n')}\n  </testsuite>`;
  });
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="satbench compare" tests="${res.rows.length}" failures="${res.regressions}">\n${suites.join('\n')}\n</testsuites>\n`;
}
