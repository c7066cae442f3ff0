// A made-up third kind of record, written as a new kind would be: DNS
// lookups over the link, one metric. This file and its registration (a
// line in harness/kinds/index.js's KINDS; test/unit/kinds.test.js calls
// registerKind instead) are all that summary, compare, merge and the
// report need.
import { defineKind } from '../harness/kinds/generic.js';

export const dns = defineKind({
  name: 'dns',
  title: 'DNS lookups',
  label: (s) => `${s.profile} loss ${s.loss_pct} % ${s.resolver}`,
  metricNames: () => ['lookup_ms'],
  budgetMatch: ['profile', 'loss_pct', 'resolver'],
});
