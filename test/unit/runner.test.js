// The test runner ends when the tests are done: a failed test that leaves
// a timer or a child open cannot keep it alive (.mocharc.json "exit"), so
// a failing CI run fails in seconds instead of at CI's time limit.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from '../../harness/core/sys.js';

describe('the test runner', () => {
  it('exits non-zero within seconds when a failed test leaves an interval and a child open', async function () {
    this.timeout(30000);
    const pidFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-runner-')), 'pid');
    // mocha as npm test runs it: from the repository, with its .mocharc.json
    const mocha = spawn(
      process.execPath,
      [path.join(ROOT, 'node_modules/mocha/bin/mocha.js'), 'test/unit/open-handle.fixture.js'],
      { cwd: ROOT, env: { ...process.env, OPEN_HANDLE_PID_FILE: pidFile }, stdio: 'ignore' },
    );
    const LIMIT_MS = 10000;
    const code = await new Promise((resolve) => {
      const hung = setTimeout(() => {
        mocha.kill('SIGKILL');
        resolve('still running');
      }, LIMIT_MS);
      mocha.once('exit', (c) => {
        clearTimeout(hung);
        resolve(c);
      });
    });
    const ended = Date.now();
    // the test ran when the fixture wrote its child's PID (the file's time: a poll could miss a quick exit)
    const lastTest = fs.existsSync(pidFile) ? fs.statSync(pidFile).mtimeMs : null;
    if (lastTest) {
      try {
        process.kill(Number(fs.readFileSync(pidFile, 'utf8')), 'SIGKILL');
      } catch {
        /* gone with mocha */
      }
    }
    assert.equal(code, 1, `mocha, after its one failing test: ${code}`);
    assert.ok(lastTest, 'the fixture never ran');
    assert.ok(ended - lastTest < 3000, `mocha exited ${ended - lastTest} ms after its last test`);
  });
});
