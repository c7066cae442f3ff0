// compare's writers (harness/analysis/compare/text.js, markdown.js,
// junit.js) on a hand-made comparison: a failed, a warned and a passed
// check, a scenario missing and one added, hostile text in labels and
// messages. The expected outputs are what `satbench compare` has always
// written, byte for byte.
import assert from 'node:assert/strict';
import { formatText } from '../../harness/analysis/compare/text.js';
import { toMarkdown, markdownCell, markdownCode } from '../../harness/analysis/compare/markdown.js';
import { toJUnit } from '../../harness/analysis/compare/junit.js';
import { escapeEntities, fmtValue, fmtPct, pInWords } from '../../harness/analysis/compare/format.js';

const row = (over) => ({
  key: 'k',
  kind: 'pageload',
  scenario: {},
  metric: 'plt_ms',
  limits: {},
  base: { n: 20, median: 7704.4, ci95: null, runs: 20, failed: 0 },
  current: { n: 20, median: 10016, ci95: null, runs: 20, failed: 0 },
  ratio: 1.3,
  change_pct: 30,
  worse_pct: 30,
  p: 0.0004,
  test: 'Mann–Whitney U (normal)',
  cliffs_delta: 1,
  magnitude: 'large',
  significant: true,
  warnings: [],
  failures: [],
  status: 'ok',
  ...over,
});

const res = {
  baseline: { path: 'a', source: 'a/results.jsonl', runs: 80 },
  current: { path: 'b', source: 'b/summary.json', runs: null },
  alpha: 0.05,
  significance: 'Mann–Whitney U, two-sided',
  rows: [
    row({
      label: 'geo loss 0 % h3 <i>x</i>|y',
      status: 'fail',
      failures: ['30.0 % slower, over the 10 % allowed, and significant (p < 0.001)'],
      warnings: ['a "quoted" & \'single\'\nline'],
    }),
    row({
      label: 'leo h1',
      metric: 'transfer_bytes',
      status: 'warn',
      change_pct: -2.04,
      p: 0.25,
      cliffs_delta: -0.1,
      magnitude: 'negligible',
      warnings: ['12.0 % slower, over the 10 % allowed, but not significant (p = 0.250)'],
    }),
    row({
      label: 'leo h1',
      metric: 'goodput_mbps',
      change_pct: null,
      p: null,
      cliffs_delta: null,
      magnitude: null,
      base: { n: 0, median: null },
      current: { n: 3, median: 17.6 },
    }),
  ],
  missing: ['geo h2 <b>'],
  emulation_differs: [{ label: 'geo h1 <i>', baseline: 'desktop, CPU not slowed', current: 'mobile, CPU 4× slower' }],
  added: ['leo h3|pep'],
  regressions: 1,
  failed_scenarios: ['geo loss 0 % h3 <i>x</i>|y'],
  failed: true,
};

const passing = {
  ...res,
  rows: [res.rows[2]],
  missing: [],
  emulation_differs: [],
  added: [],
  regressions: 0,
  failed_scenarios: [],
  failed: false,
};

// toMarkdown(res), line by line.
const MARKDOWN = [
  '### satbench: ❌ 1 regression(s) in 1 scenario(s)',
  '',
  'Baseline `a/results.jsonl` (80 runs), current `b/summary.json`. A slowdown fails only when it is over the budget and significant (Mann–Whitney U, two-sided, p < 0.05); a median past a ceiling or floor fails outright.',
  '',
  "| | scenario | metric | baseline | current | change | p | Cliff's δ | notes |",
  '|---|---|---|---:|---:|---:|---:|---|---|',
  '| ❌ | geo loss 0 % h3 &lt;i&gt;x&lt;/i&gt;\\|y | plt_ms | 7704 ms | 10016 ms | +30.0 % | <0.001 | 1.00 large | 30.0 % slower, over the 10 % allowed, and significant (p &lt; 0.001); a &quot;quoted&quot; &amp; &#39;single&#39; line |',
  '| ⚠️ | leo h1 | transfer_bytes | 7704 B | 10016 B | -2.0 % | 0.250 | -0.10 negligible | 12.0 % slower, over the 10 % allowed, but not significant (p = 0.250) |',
  '',
  '<details><summary>1 check(s) passed</summary>',
  '',
  "| | scenario | metric | baseline | current | change | p | Cliff's δ | notes |",
  '|---|---|---|---:|---:|---:|---:|---|---|',
  '| ✅ | leo h1 | goodput_mbps | – | 18 | – | – | – |  |',
  '',
  '</details>',
  '',
  'In the baseline but not in the current results: geo h2 &lt;b&gt;',
  '',
  'Emulated otherwise (baseline → current): geo h1 &lt;i&gt; (desktop, CPU not slowed → mobile, CPU 4× slower)',
  '',
  'New, without a baseline: leo h3\\|pep',
  '',
];

describe('compare writers', () => {
  it('formats values, changes and p-values', () => {
    assert.equal(fmtValue(7704.5, 'plt_ms'), '7705 ms');
    assert.equal(fmtValue(838304, 'transfer_bytes'), '838304 B');
    assert.equal(fmtValue(17.6, 'goodput_mbps'), '18');
    assert.equal(fmtValue(null, 'plt_ms'), '–');
    assert.equal(fmtPct(-2.04), '-2.0 %');
    assert.equal(fmtPct(0), '+0.0 %');
    assert.equal(fmtPct(null), '–');
    assert.equal(pInWords(0.0009), 'p < 0.001');
    assert.equal(pInWords(0.04213), 'p = 0.042');
  });

  it('text: a line per check, failures and warnings under it, the verdict last', () => {
    assert.equal(
      formatText(res),
      [
        'baseline a/results.jsonl (80 runs)',
        'current  b/summary.json',
        'significance: Mann–Whitney U, two-sided, alpha 0.05',
        '',
        'FAIL geo loss 0 % h3 <i>x</i>|y  plt_ms                 7704 ms → 10016 ms    +30.0 %  p <0.001  δ 1.00 large',
        '       ✗ 30.0 % slower, over the 10 % allowed, and significant (p < 0.001)',
        '       ! a "quoted" & \'single\'\\x0aline',
        'warn leo h1                      transfer_bytes          7704 B → 10016 B      -2.0 %  p 0.250   δ -0.10 negligible',
        '       ! 12.0 % slower, over the 10 % allowed, but not significant (p = 0.250)',
        'ok   leo h1                      goodput_mbps                 – → 18                –  p –       δ –',
        'warn  geo h2 <b>: in the baseline, not in the current results',
        'warn  geo h1 <i>: emulated otherwise: baseline desktop, CPU not slowed, current mobile, CPU 4× slower',
        'note  leo h3|pep: new, no baseline to compare with',
        '',
        'REGRESSED: 1 check(s) failed in 1 scenario(s): geo loss 0 % h3 <i>x</i>|y',
      ].join('\n'),
    );
    assert.match(formatText(passing), /\nok {3}leo h1 {4}goodput_mbps .*\n\nok: nothing regressed \(1 checks\)$/);
    // a scenario's label comes from the results: printed terminal-safe
    const hostile = { ...passing, rows: passing.rows.map((row) => ({ ...row, label: 'leo\x1b[2J h1' })) };
    assert.match(formatText(hostile), /\nok {3}leo\\x1b\[2J h1 {2}goodput_mbps /);
  });

  it('Markdown: escapes every cell, folds the passed checks away', () => {
    assert.equal(markdownCell('<a href="x">|\n&'), '&lt;a href=&quot;x&quot;&gt;\\| &amp;');
    // a site's name cannot put an image, a link, code or emphasis into the comment
    assert.equal(
      markdownCell('![x](https://t.test/p.png) [a](javascript:alert(1)) `c` *e* _u_ ~~s~~ plt_ms \\[b]'),
      '!\\[x\\](https://t.test/p.png) \\[a\\](javascript:alert(1)) \\`c\\` \\*e\\* \\_u\\_ \\~\\~s\\~\\~ plt_ms \\\\\\[b\\]',
    );
    // a source is shown literally, in a code span its backticks cannot end
    assert.equal(markdownCode('a/r.jsonl'), '`a/r.jsonl`');
    assert.equal(markdownCode('x`y<b>&'), '``x`y<b>&``');
    assert.equal(markdownCode('`x'), '`` `x ``');
    assert.equal(escapeEntities(`<>&"'`), '&lt;&gt;&amp;&quot;&#39;');
    assert.equal(toMarkdown(res), MARKDOWN.join('\n'));
    // No failed or warned check, none missing or added: the heading says so, and only the folded table is left.
    assert.equal(
      toMarkdown(passing),
      ['### satbench: ✅ no regression', ...MARKDOWN.slice(1, 4), ...MARKDOWN.slice(9, 17)].join('\n'),
    );
  });

  it('JUnit: a suite per scenario, a case per check, escaped as XML', () => {
    assert.equal(
      toJUnit(res),
      [
        '<?xml version="1.0" encoding="UTF-8"?>',
        '<testsuites name="satbench compare" tests="3" failures="1">',
        '  <testsuite name="geo loss 0 % h3 &lt;i&gt;x&lt;/i&gt;|y" tests="1" failures="1" errors="0" skipped="0">',
        '    <testcase classname="satbench.geo loss 0 % h3 &lt;i&gt;x&lt;/i&gt;|y" name="plt_ms" time="0"><failure message="30.0 % slower, over the 10 % allowed, and significant (p &lt; 0.001)" type="regression">baseline 7704 ms (n 20), current 10016 ms (n 20), +30.0 %, p &lt;0.001, Cliff&#39;s delta 1.00',
        '30.0 % slower, over the 10 % allowed, and significant (p &lt; 0.001)',
        'a &quot;quoted&quot; &amp; &#39;single&#39;',
        'line</failure></testcase>',
        '  </testsuite>',
        '  <testsuite name="leo h1" tests="2" failures="0" errors="0" skipped="0">',
        '    <testcase classname="satbench.leo h1" name="transfer_bytes" time="0"><system-out>baseline 7704 B (n 20), current 10016 B (n 20), -2.0 %, p 0.250, Cliff&#39;s delta -0.10',
        '12.0 % slower, over the 10 % allowed, but not significant (p = 0.250)</system-out></testcase>',
        '    <testcase classname="satbench.leo h1" name="goodput_mbps" time="0"><system-out>baseline – (n 0), current 18 (n 3), –, p –, Cliff&#39;s delta –</system-out></testcase>',
        '  </testsuite>',
        '</testsuites>',
        '',
      ].join('\n'),
    );
  });
});
