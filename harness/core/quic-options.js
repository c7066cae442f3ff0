// The QUIC transport options every tool of ours takes (origin serve,
// satbulk, quic-pep's --accept-side/--connect-side), from the one table the
// Rust side reads too: transport/quic-options.json (key, kind, values,
// help). Here: reading them from the user (--quic, --quic-client,
// --pep-sat, --pep-ground), checking them and writing them back out as the
// tools' flags.
import fs from 'node:fs';
import path from 'node:path';
import { UsageError } from './errors.js';
import { ROOT } from './sys.js';

export const QUIC_OPTIONS_FILE = path.join(ROOT, 'transport/quic-options.json');
export const QUIC_OPTIONS = JSON.parse(fs.readFileSync(QUIC_OPTIONS_FILE, 'utf8')).options;
export const QUIC_KEYS = QUIC_OPTIONS.map((o) => o.key);
const SPEC = new Map(QUIC_OPTIONS.map((o) => [o.key, o]));

/** Pure: an option's kind (choice, count or flag), or null for a key that is no QUIC option. */
export const quicOptionKind = (key) => SPEC.get(key)?.kind ?? null;

// Pure: "a, b or c", as the Rust tools list choices.
export const oneOf = (values) =>
  values.length < 2 ? values.join('') : `${values.slice(0, -1).join(', ')} or ${values.at(-1)}`;

/**
 * Pure: checks one option's value against its kind and returns it as given
 * (a flag: true or false; a count: a whole number or its digits; a choice:
 * one of its values). `where` starts the message: "--quic", "QUIC PEP
 * satellite hop".
 */
export function checkQuicOption(key, value, where) {
  const spec = SPEC.get(key);
  if (!spec)
    throw new UsageError(`${where}: unknown QUIC option ${JSON.stringify(key)}; expected ${QUIC_KEYS.join(', ')}`);
  if (spec.kind === 'flag') {
    if (value !== true && value !== false)
      throw new UsageError(`${where}: ${key} takes no value, got ${JSON.stringify(value)}`);
  } else if (spec.kind === 'choice') {
    if (!spec.values.includes(value))
      throw new UsageError(`${where}: ${key} must be ${oneOf(spec.values)}, got ${JSON.stringify(value)}`);
  } else if (!(Number.isSafeInteger(value) && value >= 0) && !/^\d+$/.test(String(value))) {
    throw new UsageError(`${where}: ${key} expects a whole number, got ${JSON.stringify(value)}`);
  } else {
    // the bounds the Rust tools apply too (transport/quic-options.json): refused now, not by every run's origin
    const n = Number(value);
    const { min = 0, max = Number.MAX_SAFE_INTEGER } = spec;
    const range = 'max' in spec ? `between ${min} and ${max}` : n < min ? `at least ${min}` : `at most ${max}`;
    if (!(n >= min && n <= max))
      throw new UsageError(`${where}: ${key} must be ${range}, got ${JSON.stringify(value)}`);
  }
  return value;
}

// Pure: "KEY=VALUE,KEY" → [[KEY, 'VALUE'], [KEY, true]] (a key alone is a flag).
export function keyValueItems(text) {
  return String(text)
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean)
    .map((item) => {
      const [key, ...rest] = item.split('=');
      return [key, rest.length ? rest.join('=') : true];
    });
}

/** Pure: "cc=bbr,initial-window=32,ack-frequency" → {cc: 'bbr', 'initial-window': '32', 'ack-frequency': true}. */
export function parseQuicOptions(text, flag) {
  return Object.fromEntries(keyValueItems(text).map(([k, v]) => [k, checkQuicOption(k, v, flag)]));
}

/** Pure: options → the tools' `--quic-KEY [VALUE]` flags (a flag set to false is left out). */
export function quicFlags(opts = {}) {
  return Object.entries(opts).flatMap(([k, v]) =>
    v === false || v == null ? [] : v === true ? [`--quic-${k}`] : [`--quic-${k}`, String(v)],
  );
}

/**
 * Pure: the flags of `origin serve` and `satbulk` for a scenario: the
 * flow-control windows sized to the path's bandwidth-delay product
 * (`bdpBytes`, none when the path has no rate), then the user's options,
 * which win.
 */
export function originQuicArgs(quic = {}, { bdpBytes = null } = {}) {
  return quicFlags({ ...(bdpBytes ? { 'bdp-bytes': String(bdpBytes) } : {}), ...quic });
}

/**
 * Pure: options → quic-pep's --accept-side / --connect-side value,
 * "cc=newreno,initial-window=100,ack-frequency"; "" when nothing is set.
 */
export function quicSideText(opts = {}, where = 'QUIC options') {
  return Object.entries(opts)
    .filter(([, v]) => v !== undefined && v !== null)
    .map(([k, v]) => [k, checkQuicOption(k, v, where)])
    .filter(([, v]) => v !== false)
    .map(([k, v]) => (v === true ? k : `${k}=${v}`))
    .join(',');
}
