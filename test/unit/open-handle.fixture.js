// Not a test of the suite (its name does not end in .test.js): the spec
// runner.test.js runs mocha on, as a failing test that leaves a timer and a
// child process open. The child's PID goes to $OPEN_HANDLE_PID_FILE, so
// that runner.test.js can end it.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';

describe('a test that fails and leaves handles open', () => {
  it('fails, with an interval and a child still running', () => {
    setInterval(() => {}, 1000);
    const child = spawn('sleep', ['300'], { stdio: ['ignore', 'pipe', 'pipe'] });
    fs.writeFileSync(process.env.OPEN_HANDLE_PID_FILE, String(child.pid));
    assert.fail('on purpose');
  });
});
