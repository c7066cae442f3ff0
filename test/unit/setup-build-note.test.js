// harness/setup.sh says what the release build is about to build, and how
// long it takes, before cargo builds silently; nothing when the build is a
// no-op (harness/rust-build-note.sh).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from '../../harness/core/sys.js';

const SCRIPT = path.join(ROOT, 'harness/rust-build-note.sh');
// as setup.sh runs it: strict mode, the note in a command substitution
const note = (root) =>
  execFileSync(
    'bash',
    ['-c', 'set -euo pipefail; source "$1"; x=$(rust_build_note "$2"); printf %s "$x"', '-', SCRIPT, root],
    {
      encoding: 'utf8',
    },
  );

function write(root, rel, text, mtimeS, mode = 0o644) {
  const file = path.join(root, rel);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text, { mode });
  fs.utimesSync(file, mtimeS, mtimeS);
}

describe('setup: the note before the release build', () => {
  it('names the first build and its rough time, a rebuild and what changed, and nothing for a no-op', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-setup-'));
    write(root, 'Cargo.toml', '[workspace]\nmembers = [\n    "netem/linkem",\n    "bulk",\n]\n', 1000);
    write(root, 'Cargo.lock', '', 1000);
    write(root, 'netem/linkem/src/main.rs', '', 1000);
    write(root, 'bulk/src/lib.rs', '', 1000);
    // a fresh clone: no binary yet
    assert.match(
      note(root),
      /^building the Rust workspace in release mode \(netem\/linkem bulk\): the first build takes roughly 4 minutes on 2 cores/,
    );
    write(root, 'target/release/linkem', '', 2000, 0o755);
    write(root, 'target/release/satbulk', '', 3000, 0o755);
    write(root, 'target/release/liblinkem.rlib', '', 500); // not an executable
    assert.equal(note(root), '', 'every binary newer than the sources: cargo has nothing to do');
    // a test changed: the release build does not read it
    write(root, 'bulk/tests/t.rs', '', 5000);
    assert.equal(note(root), '');
    // newer than one binary but older than the last build (cargo relinked only what it changed): nothing to say
    write(root, 'bulk/src/lib.rs', 'x', 2500);
    assert.equal(note(root), '');
    write(root, 'bulk/src/lib.rs', 'x', 3500); // newer than every binary
    assert.match(note(root), /^rebuilding the Rust workspace in release mode \(bulk\/src\/lib\.rs changed\)/);
    write(root, 'bulk/src/lib.rs', 'x', 1000);
    write(root, 'Cargo.lock', 'y', 3500);
    assert.match(note(root), /^rebuilding .*\(Cargo\.lock changed\)/);
  });
});
