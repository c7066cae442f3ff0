// The kinds of records satbench knows, and the one question everything
// else asks: which kind is this record (or summary group, or meta)? A new
// kind is a module (see generic.js's defineKind for what it may say) and a
// line in KINDS. Records of a kind not in the list are summarised
// generically and listed apart in the report.
import { defineKind } from './generic.js';
import { pageload } from './pageload.js';
import { bulk } from './bulk.js';

// Records without a `kind` are page loads (results.jsonl before kinds
// existed); summary.json's groups of this kind carry no `kind` either.
export const DEFAULT_KIND = pageload;

// In the order the report shows them.
const KINDS = [pageload, bulk];

export const kinds = () => [...KINDS];

/** Registers a kind (tests, plugins); returns a function that removes it again. */
export function registerKind(kind) {
  if (KINDS.some((k) => k.name === kind.name)) throw new Error(`kind ${kind.name} is registered already`);
  KINDS.push(kind);
  return () => KINDS.splice(KINDS.indexOf(kind), 1);
}

// One generic kind per unknown name, so that its groups compare equal.
const unknown = new Map();

export function kindNamed(name = DEFAULT_KIND.name) {
  const known = KINDS.find((k) => k.name === name);
  if (known) return known;
  if (!unknown.has(name)) unknown.set(name, { ...defineKind({ name }), unknown: true });
  return unknown.get(name);
}

// The registered kind `command` (a campaign.json's: bench, bulk) writes, or null.
export const kindOfCommand = (command) => KINDS.find((k) => k.command === command) ?? null;

// The kind of a record, a summary group or a summary's meta.
export const kindOf = (x) => kindNamed(x?.kind ?? DEFAULT_KIND.name);

// The key of a group of `kind` (a name) and `scenario`.
export const groupKey = (kind, scenario) => kindNamed(kind).key(scenario);
export const keyOf = (x) => kindOf(x).key(x.scenario);
