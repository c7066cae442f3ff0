import assert from 'node:assert/strict';
import { nodeIsNewEnough, formatChecks } from '../../harness/cli/doctor.js';
import { satbench } from '../integration/helpers.js';

describe('doctor', () => {
  it('knows which Node.js is new enough', () => {
    assert.equal(nodeIsNewEnough('v20.20.2'), false);
    assert.equal(nodeIsNewEnough('v22.18.0'), false);
    assert.equal(nodeIsNewEnough('v22.19.0'), true);
    assert.equal(nodeIsNewEnough('v24.1.0'), true);
  });

  it('says what to do about each missing prerequisite', () => {
    const text = formatChecks([
      {
        name: 'chromium',
        ok: false,
        required: true,
        detail: '/usr/bin/chromium not found',
        fix: 'apt-get install chromium',
      },
      { name: 'tc', ok: true, required: true, detail: 'tc 6.1.0', fix: null },
      { name: 'kernel netem', ok: false, required: false, detail: 'no sch_netem', fix: 'optional' },
    ]);
    assert.match(text, /^FAIL  chromium/m);
    assert.match(text, /→ apt-get install chromium/);
    assert.match(text, /^ok    tc/m);
    assert.match(text, /^note  kernel netem/m);
  });

  it("prints a check's detail terminal-safe (a program's output, a path from the environment)", () => {
    const text = formatChecks([{ name: 'chromium', ok: true, required: true, detail: 'v1\x1b[2J\nok', fix: null }]);
    assert.equal(text, 'ok    chromium  v1\\x1b[2J\\x0aok');
  });

  it('refuses a stray word, in one line', async function () {
    this.timeout(20000);
    const r = await satbench(['doctor', 'extra']);
    assert.equal(r.code, 2, r.stderr);
    assert.equal(
      r.stderr,
      'satbench: doctor: unexpected "extra"; options start with -- (see `satbench doctor --help`)\n',
    );
    assert.equal(r.stdout, '');
  });
});
