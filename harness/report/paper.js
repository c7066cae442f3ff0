// The paper's medians (Kosek et al., IFIP Networking 2022, Table II) that
// the report puts beside ours, from reference/ifip2022-table2.json.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));

export function loadReference() {
  return JSON.parse(fs.readFileSync(path.join(HERE, '../../reference/ifip2022-table2.json'), 'utf8'));
}

// The access-model profiles are the paper's links with its testbed's
// satellite access layer (netem/profiles/*-dvb.yaml): the same scenario.
const PAPER_PROFILE = { 'geo-dvb': 'geo', 'leo-dvb': 'leo' };

// The paper's median for a scenario, or null: the kepler page over the
// paper's geo or leo profile (or its access model) at one of its losses and
// protocols.
export function paperMedian(reference, s, paperKey) {
  if (!reference || s.site !== 'kepler') return null;
  const profile = PAPER_PROFILE[s.profile] ?? s.profile;
  return reference.medians?.[profile]?.[s.protocol]?.[String(s.loss_pct)]?.[paperKey] ?? null;
}
