// results.jsonl: a record's line is whole or absent (a short or failed
// write is cut back, with one line saying why), and a torn last line is
// told apart from a bad line, named with the command that repairs it, and
// dropped by --resume's repair.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { UsageError } from '../../harness/core/errors.js';
import {
  appendFlushed,
  dropTornLine,
  parseResults,
  readResults,
  replaceFile,
  tornMessage,
  MANIFEST,
} from '../../harness/results/store.js';

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-store-'));
const rec = (run, extra = {}) => ({ scenario: { profile: 'geo', protocol: 'h1' }, run, ok: true, ...extra });
const jsonl = (...records) => records.map((r) => JSON.stringify(r) + '\n').join('');
const usage = (pattern) => (e) => e instanceof UsageError && pattern.test(e.message) && !e.message.includes('\n');

// node:fs, but writeSync writes `room` bytes in all and then fails as a full disk does.
function fullDiskFs(room, { truncateFails = false } = {}) {
  const calls = { writes: [], truncated: null };
  return {
    calls,
    fsx: {
      ...fs,
      writeSync(fd, buf, off, len) {
        calls.writes.push(len);
        if (room === 0) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
        const n = Math.min(room, len);
        room -= n;
        return fs.writeSync(fd, buf, off, n);
      },
      ftruncateSync(fd, len) {
        if (truncateFails) throw Object.assign(new Error('EIO: i/o error, ftruncate'), { code: 'EIO' });
        calls.truncated = len;
        return fs.ftruncateSync(fd, len);
      },
    },
  };
}

describe('results.jsonl', () => {
  describe('parseResults', () => {
    it('reads whole records, with or without the last newline', () => {
      const text = jsonl(rec(1), rec(2));
      assert.deepEqual(parseResults(text, 'f'), { records: [rec(1), rec(2)], torn: null });
      assert.deepEqual(parseResults(text.trimEnd(), 'f').records, [rec(1), rec(2)]);
      assert.deepEqual(parseResults('', 'f'), { records: [], torn: null });
    });

    it('tells a torn last line (cut short, NULs of a crash) from a bad line before it', () => {
      const whole = jsonl(rec(1), rec(2));
      const cut = JSON.stringify(rec(3)).slice(0, 25);
      const torn = parseResults(whole + cut, 'f');
      assert.deepEqual(torn.records, [rec(1), rec(2)]);
      assert.deepEqual(torn.torn, { line: 3, offset: Buffer.byteLength(whole), bytes: 25 });
      // trailing blank lines do not hide it; a crash can leave NULs instead of text
      assert.equal(parseResults(whole + '\0\0\0\n\n', 'f').torn.line, 3);
      assert.throws(() => parseResults(jsonl(rec(1)) + cut + '\n' + jsonl(rec(2)), 'f'), {
        message: 'f: line 2 is not JSON',
      });
    });

    it('keeps a whole last line that is no record an error, not a torn line', () => {
      assert.throws(() => parseResults(jsonl(rec(1)) + '{"run":2}\n', 'f'), {
        message: 'f: line 2 has no "scenario" object',
      });
      assert.throws(() => parseResults(jsonl(rec(1), { scenario: {}, ok: 'yes' }), 'f'), {
        message: 'f: line 2: "ok" is not true or false',
      });
    });

    it('counts bytes, not characters, to the torn line', () => {
      const whole = jsonl(rec(1, { site: 'café ☕' }));
      assert.equal(parseResults(whole + '{"scen', 'f').torn.offset, Buffer.byteLength(whole));
    });
  });

  describe('readResults', () => {
    it('names a torn last line and the command that repairs it', () => {
      const dir = tmp();
      const file = path.join(dir, 'results.jsonl');
      fs.writeFileSync(file, jsonl(rec(1)) + '{"scenario":{"pro');
      assert.throws(
        () => readResults(file),
        usage(
          new RegExp(
            `^${file}: line 2 is torn \\(the run being written when satbench stopped\\); \`sed -i '2d' ${file}\` drops it$`,
          ),
        ),
      );
      fs.writeFileSync(path.join(dir, MANIFEST), JSON.stringify({ command: 'bulk' }));
      assert.throws(
        () => readResults(file),
        usage(new RegExp(`line 2 is torn .*; \`satbench bulk --resume ${dir}\` drops it and runs that run again$`)),
      );
    });

    it('quotes a path with spaces in the command it gives', () => {
      assert.equal(
        tornMessage('my out/results.jsonl', { line: 4 }, null),
        "my out/results.jsonl: line 4 is torn (the run being written when satbench stopped); `sed -i '4d' 'my out/results.jsonl'` drops it",
      );
    });
  });

  describe('dropTornLine (--resume)', () => {
    it('cuts a torn last line off, leaving the whole records', () => {
      const file = path.join(tmp(), 'results.jsonl');
      const whole = jsonl(rec(1), rec(2));
      fs.writeFileSync(file, whole + '{"scenario":');
      assert.deepEqual(dropTornLine(file), { line: 3, bytes: 12 });
      assert.equal(fs.readFileSync(file, 'utf8'), whole);
      assert.equal(dropTornLine(file), null, 'nothing more to drop');
      assert.equal(fs.readFileSync(file, 'utf8'), whole);
    });

    it('ends a whole last record that lacks its newline, so the next one starts a line', () => {
      const file = path.join(tmp(), 'results.jsonl');
      fs.writeFileSync(file, jsonl(rec(1)).trimEnd());
      assert.equal(dropTornLine(file), null);
      appendFlushed(file, rec(2));
      assert.deepEqual(readResults(file), [rec(1), rec(2)]);
      assert.equal(dropTornLine(path.join(tmp(), 'none.jsonl')), null);
    });
  });

  describe('appendFlushed', () => {
    it('appends one whole line per record', () => {
      const file = path.join(tmp(), 'results.jsonl');
      appendFlushed(file, rec(1));
      appendFlushed(file, rec(2));
      assert.equal(fs.readFileSync(file, 'utf8'), jsonl(rec(1), rec(2)));
    });

    it('goes on after a short write', () => {
      const file = path.join(tmp(), 'results.jsonl');
      let first = true;
      const fsx = {
        ...fs,
        writeSync: (fd, buf, off, len) => fs.writeSync(fd, buf, off, first ? ((first = false), 10) : len),
      };
      appendFlushed(file, rec(1), fsx);
      assert.deepEqual(readResults(file), [rec(1)]);
    });

    it('on a full disk: cuts its part back, keeps the records before it, one line naming the file and the cause', () => {
      const dir = tmp();
      const file = path.join(dir, 'results.jsonl');
      fs.writeFileSync(path.join(dir, MANIFEST), JSON.stringify({ command: 'bench' }));
      appendFlushed(file, rec(1));
      const before = fs.statSync(file).size;
      const { fsx, calls } = fullDiskFs(30);
      assert.throws(
        () => appendFlushed(file, rec(2), fsx),
        usage(
          new RegExp(
            `^${file}: writing a run's record failed \\(ENOSPC: no space left on device\\); the records before it are intact; free space, then continue with \`satbench bench --resume ${dir}\`$`,
          ),
        ),
      );
      assert.equal(calls.writes.length, 2, 'a short write of 30 bytes, then ENOSPC');
      assert.equal(calls.truncated, before);
      assert.deepEqual(readResults(file), [rec(1)]);
    });

    it('says so when its part could not be cut back either; the reader then names the torn line', () => {
      const file = path.join(tmp(), 'results.jsonl');
      appendFlushed(file, rec(1));
      const { fsx } = fullDiskFs(30, { truncateFails: true });
      assert.throws(() => appendFlushed(file, rec(2), fsx), usage(/ENOSPC.*; its line may be torn; free space/));
      assert.throws(() => readResults(file), usage(/line 2 is torn/));
    });

    it('a file that cannot be opened is one line too', () => {
      const file = path.join(tmp(), 'gone', 'results.jsonl');
      assert.throws(() => appendFlushed(file, rec(1)), usage(/results\.jsonl: writing a run's record failed \(ENOENT/));
    });
  });

  describe('replaceFile', () => {
    it('replaces a file whole', () => {
      const file = path.join(tmp(), 'summary.json');
      replaceFile(file, 'old');
      replaceFile(file, 'new');
      assert.equal(fs.readFileSync(file, 'utf8'), 'new');
      assert.deepEqual(fs.readdirSync(path.dirname(file)), ['summary.json']);
    });

    it('a file where its folder goes: one line naming the target and that file, expected a folder', () => {
      const dir = tmp();
      fs.writeFileSync(path.join(dir, 'har'), 'a file where the folder goes');
      for (const file of [path.join(dir, 'har', 'x.har.gz'), path.join(dir, 'har', 'deeper', 'x.har.gz')])
        assert.throws(
          () => replaceFile(file, 'data'),
          usage(
            new RegExp(
              `^${file}: writing it failed \\(${path.join(dir, 'har')} is a file, expected a folder\\); nothing was written$`,
            ),
          ),
        );
    });
  });
});
