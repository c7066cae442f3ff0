// Text from input made safe for a terminal: what it would act on is shown, not obeyed.
import assert from 'node:assert/strict';
import { terminalSafe, terminalSafeLines } from '../../harness/core/terminal.js';

describe('terminal-safe text', () => {
  it('writes control characters, C1 controls and bidirectional overrides as visible escapes', () => {
    assert.equal(terminalSafe('a\x1b[2Jb\r\nc\0\x7f\x9b1m'), 'a\\x1b[2Jb\\x0d\\x0ac\\x00\\x7f\\x9b1m');
    assert.equal(terminalSafe('evil\u202egnp.exe'), 'evil\\u202egnp.exe');
    assert.equal(terminalSafe(404), '404');
  });

  it('keeps tab and the text people write, and a message its lines', () => {
    assert.equal(terminalSafe('Grüße\t東京 – ok'), 'Grüße\t東京 – ok');
    assert.equal(terminalSafeLines('one\x1b]0;x\x07\ntwo'), 'one\\x1b]0;x\\x07\ntwo');
  });
});
