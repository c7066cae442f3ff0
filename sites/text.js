// Natural-looking content for the generated sites: prose, style sheets and
// scripts built from small vocabularies with the seeded generator.
import { Rng } from './prng.js';

const WORDS = (
  'orbit planet ellipse sun focus area equal time period square cube distance mean motion comet star sky ' +
  'telescope lens mirror light night observation table tables record observer latitude longitude angle ' +
  'degree minute second arc measure measured measurement precise error small large first second third ' +
  'law laws harmony world model sphere circle motion moves moving slow fast near far from with without ' +
  'the the the the of of of of and and and a a an to to in in is is was was are were by for on at as ' +
  'that this these which when where while it its their his new old Mars Earth Venus Jupiter Saturn Mercury ' +
  'Moon Prague Graz Linz Tycho observatory data page link satellite delay round trip packet window ' +
  'congestion proxy gateway terminal browser object request response header body frame image style sheet ' +
  'between across through over under above beyond toward during after before since until every each some ' +
  'many more most less least only also very still again once twice often never always perhaps indeed ' +
  'shows gives finds takes makes holds keeps follows describes explains predicts computes reports reaches ' +
  'calculation geometry physics optics theory book chapter volume edition printer letter friend emperor ' +
  'court year years month months day days hour hours century'
).split(' ');

/** Prose of about `len` characters (never more), wrapped at `width` columns. */
export function prose(len, seed, { width = 72 } = {}) {
  const r = new Rng(`${seed}|prose`);
  const lines = [];
  let line = '',
    total = 0,
    sentenceLeft = 0,
    first = true;
  for (;;) {
    if (sentenceLeft === 0) sentenceLeft = 6 + r.int(13);
    let w = r.pick(WORDS);
    if (first) {
      w = w[0].toUpperCase() + w.slice(1);
      first = false;
    }
    sentenceLeft--;
    if (sentenceLeft === 0) {
      w += '.';
      first = true;
      if (r.int(5) === 0) w += '\n';
    } else if (r.int(9) === 0) w += ',';
    const add = (line ? ' ' : '') + w;
    if (line.length + add.length > width) {
      if (total + line.length + 1 > len) break;
      lines.push(line);
      total += line.length + 1;
      line = w;
    } else line += add;
    if (line.endsWith('\n')) {
      if (total + line.length + 1 > len) break;
      lines.push(line);
      total += line.length + 1;
      line = '';
    }
  }
  const out = lines.join('\n') + (lines.length ? '\n' : '');
  return out.length <= len ? out : out.slice(0, len);
}

const FONTS = [
  'Verdana, Arial, sans-serif',
  'Georgia, serif',
  'Tahoma, Geneva, sans-serif',
  '"Times New Roman", serif',
  'Arial, Helvetica, sans-serif',
  '"Courier New", monospace',
];
const PROPS = [
  (r) => `font-family: ${r.pick(FONTS)}`,
  (r) => `font-size: ${8 + r.int(12)}px`,
  (r) => `font-weight: ${r.pick(['normal', 'bold', '300', '600'])}`,
  (r) => `font-style: ${r.pick(['normal', 'italic'])}`,
  (r) => `color: #${hex(r)}`,
  (r) => `background-color: #${hex(r)}`,
  (r) => `line-height: ${(1 + r.int(8) / 10).toFixed(1)}`,
  (r) => `letter-spacing: ${r.int(3)}px`,
  (r) => `margin: ${r.int(6)}px ${r.int(10)}px`,
  (r) => `padding: ${r.int(4)}px`,
  (r) => `text-align: ${r.pick(['left', 'center', 'right', 'justify'])}`,
  (r) => `text-decoration: ${r.pick(['none', 'underline'])}`,
  (r) => `border-bottom: 1px ${r.pick(['solid', 'dotted', 'dashed'])} #${hex(r)}`,
];
function hex(r) {
  return (r.u32() & 0xffffff).toString(16).padStart(6, '0');
}

/** Style rules of about `len` characters (never more); class names start with `prefix`. */
export function css(len, seed, prefix = 'k') {
  const r = new Rng(`${seed}|css`);
  let out = '',
    i = 0;
  for (;;) {
    const n = 2 + r.int(4);
    const props = [];
    for (let j = 0; j < n; j++) props.push(r.pick(PROPS)(r));
    const sel = r.int(4) === 0 ? `.${prefix}${i} a, .${prefix}${i} span` : `.${prefix}${i}`;
    const rule = `${sel} {\n  ${props.join(';\n  ')};\n}\n`;
    if (out.length + rule.length > len) break;
    out += rule;
    i++;
  }
  return out;
}

/**
 * Exactly `count` style rules of about `len` characters in all (more when
 * `count` rules cannot be that short); rule i's selector is `selector(i)`.
 * Rules a line each (`a { b: c; d: e }`, or `a{b:c}` when very small) when
 * the budget is small, else a declaration a line. `repeat`: every rule has
 * the first one's declarations (as many as fit).
 */
export function cssRules(count, len, seed, selector, { repeat = false } = {}) {
  const r = new Rng(`${seed}|cssrules`);
  let out = '';
  let first = null;
  for (let i = 0; i < count; i++) {
    const budget = (len - out.length) / (count - i);
    const sel = selector(i);
    const tight = budget < 32;
    const compact = budget < 60;
    const rule = (props) =>
      tight
        ? `${sel}{${props.map((p) => p.replace(': ', ':')).join(';')}}\n`
        : compact
          ? `${sel} { ${props.join('; ')} }\n`
          : `${sel} {\n  ${props.join(';\n  ')};\n}\n`;
    // the first declaration: the shortest of a few draws when the budget is tight
    const draws = Array.from({ length: tight ? 6 : 1 }, () => r.pick(PROPS)(r));
    const props = [repeat && first ? first[0] : draws.reduce((a, b) => (b.length < a.length ? b : a))];
    for (;;) {
      if (repeat && first) {
        // the same declarations in every rule: a sheet that compresses well
        if (props.length >= first.length || rule([...props, first[props.length]]).length > budget) break;
        props.push(first[props.length]);
        continue;
      }
      const next = r.pick(PROPS)(r);
      if (props.length >= 8 || rule([...props, next]).length > budget) break;
      props.push(next);
    }
    first ??= props;
    out += rule(props);
  }
  return out;
}

const IDENTS = [
  'orbit',
  'anomaly',
  'radius',
  'period',
  'angle',
  'area',
  'focus',
  'mean',
  'sweep',
  'node',
  'epoch',
  'axis',
  'phase',
  'delay',
  'rate',
  'frame',
];

/** Script of about `len` characters (never more): small functions and a call or two. */
export function js(len, seed, name = 'site') {
  const r = new Rng(`${seed}|js`);
  let out = `(function () {\n  'use strict';\n  var ns = (window.satbench = window.satbench || {});\n`;
  const end = `  ns.loaded = (ns.loaded || 0) + 1;\n  ns[${JSON.stringify(name)}] = true;\n})();\n`;
  let i = 0;
  for (;;) {
    const a = r.pick(IDENTS);
    let b = r.pick(IDENTS);
    while (b === a) b = r.pick(IDENTS);
    const k = (r.int(900) / 100 + 0.1).toFixed(2);
    const body = r.pick([
      `    var x = ${a} * (1 - ${b} * ${b}) / (1 + ${b} * Math.cos(${k}));\n    return x + ${r.int(10)};\n`,
      `    var s = 0;\n    for (var i = 0; i < ${2 + r.int(20)}; i++) { s += Math.sin(${a} + i * ${k}) * ${b}; }\n    return s;\n`,
      `    if (${a} > ${b}) { return ${a} - ${b} * ${k}; }\n    return Math.sqrt(Math.abs(${a} * ${b})) + ${k};\n`,
      `    var o = { ${a}: ${a}, ${b}: ${b}, k: ${k} };\n    return JSON.stringify(o).length;\n`,
    ]);
    const fn = `  ns.${a}${i} = function (${a}, ${b}) {\n${body}  };\n`;
    if (out.length + fn.length + end.length > len) break;
    out += fn;
    i++;
  }
  return out + end;
}

const LOWER_WORDS = [...new Set(WORDS.filter((w) => /^[a-z]+$/.test(w)))];
const LONGEST_WORD = Math.max(...LOWER_WORDS.map((w) => w.length));

/** One line of exactly `len` characters: lower-case words, one space between them. */
export function wordLine(len, seed) {
  const r = new Rng(`${seed}|words`);
  const words = [];
  let left = len;
  const cost = (w) => w.length + (words.length ? 1 : 0);
  // random words while more than the longest one would be left, never leaving
  // a single character (no word fits it), then the word that fills the rest
  while (left > LONGEST_WORD + (words.length ? 1 : 0)) {
    const w = r.pick(LOWER_WORDS);
    if (left - cost(w) === 1) continue;
    left -= cost(w);
    words.push(w);
  }
  if (left > 0) {
    const fits = LOWER_WORDS.filter((w) => cost(w) === left);
    if (!fits.length) throw new Error(`no word of ${left - (words.length ? 1 : 0)} letters`);
    words.push(r.pick(fits));
  }
  return words.join(' ');
}
