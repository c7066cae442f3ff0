// The archive rules both sides share, case by case from
// sites/archive-conformance.json; sites/origin/src/archive.rs runs the same
// cases against the Rust origin's replay.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { UsageError } from '../../harness/core/errors.js';
import { matchEntry, archiveOrigins } from '../../harness/archive/match.js';
import { archiveUrl } from '../../harness/archive/urls.js';
import { readArchive, ARCHIVE_FILE } from '../../harness/archive/format.js';

const FILE = fileURLToPath(new URL('../../sites/archive-conformance.json', import.meta.url));
const { matching, reading } = JSON.parse(fs.readFileSync(FILE, 'utf8'));

// `archive` with the value at `at` (a path of keys) set to `to`, or removed.
function changed(archive, { at, to, remove }) {
  if (!at) return archive;
  if (at.length === 0) return to;
  const copy = structuredClone(archive);
  const parent = at.slice(0, -1).reduce((v, k) => v[k], copy);
  if (remove) delete parent[at.at(-1)];
  else parent[at.at(-1)] = to;
  return copy;
}

describe('archive rules shared with the Rust origin (sites/archive-conformance.json)', () => {
  it('has cases of every kind', () => {
    const requests = matching.flatMap((m) => m.requests);
    assert.ok(requests.some((r) => r.answer === null) && requests.some((r) => r.answer !== null));
    assert.ok(reading.cases.some((c) => c.accepted) && reading.cases.some((c) => c.refused));
    assert.ok(
      [...requests, ...reading.cases].some((c) => c.was),
      'a case where the sides disagreed before',
    );
  });

  matching.forEach((m, i) => {
    describe(`matching, archive ${i} (page ${m.archive.page})`, () => {
      it('holds entries in archive form', () => {
        for (const e of m.archive.entries) assert.equal(archiveUrl(e.url), e.url);
      });
      it('serves its origins and hosts', () => {
        assert.deepEqual(archiveOrigins(m.archive), { origins: m.origins, hosts: m.hosts });
      });
      for (const r of m.requests)
        it(`${r.method} ${r.url} → ${r.answer ?? 'none'}: ${r.why}`, () => {
          const hit = matchEntry(m.archive, r.method, r.url);
          assert.equal(hit ? m.archive.entries.indexOf(hit) : null, r.answer);
        });
    });
  });

  describe('reading', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-conformance-'));
    for (const body of reading.bodies) {
      fs.mkdirSync(path.dirname(path.join(dir, body)), { recursive: true });
      fs.writeFileSync(path.join(dir, body), body);
    }
    after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, ARCHIVE_FILE);

    for (const c of reading.cases) {
      const what = c.at ? `${JSON.stringify(c.at)} ${c.remove ? 'removed' : `→ ${JSON.stringify(c.to)}`}` : 'as it is';
      it(`${what}: ${c.accepted ? 'accepted' : `refused, naming ${c.refused}`} (${c.why})`, () => {
        assert.ok(c.accepted !== (c.refused !== undefined), 'a case is accepted or refused');
        fs.writeFileSync(file, JSON.stringify(changed(reading.archive, c)));
        if (c.accepted) readArchive(dir);
        else
          assert.throws(
            () => readArchive(dir),
            (e) => e instanceof UsageError && e.message.startsWith(`${file}: ${c.refused}: expected `),
          );
      });
    }
  });
});
