import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { archivesIn } from '../../harness/cli/sites.js';

// A one-entry archive of https://a.test/ in `dir`.
function writeTinyArchive(dir) {
  fs.mkdirSync(path.join(dir, 'bodies'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'bodies/0001'), '<p>a</p>');
  fs.writeFileSync(
    path.join(dir, 'archive.json'),
    JSON.stringify({
      format: 'satbench-archive',
      version: 1,
      page: 'https://a.test/',
      created: '2026-11-24T00:00:00.000Z',
      source: { tool: 'record', from: 'https://a.test/' },
      entries: [
        {
          method: 'GET',
          url: 'https://a.test/',
          status: 200,
          headers: [['content-type', 'text/html']],
          body: 'bodies/0001',
        },
      ],
      missing: [{ method: 'GET', url: 'https://b.test/x.js', reason: 'failed: net::ERR_CONNECTION_REFUSED' }],
    }),
  );
}

describe('satbench sites', () => {
  it('finds the archives a folder is or holds, and says why one is not usable', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-sites-'));
    writeTinyArchive(path.join(root, 'one'));
    fs.mkdirSync(path.join(root, 'broken'));
    fs.writeFileSync(path.join(root, 'broken/archive.json'), '{"format": "other"}');
    fs.mkdirSync(path.join(root, 'not-an-archive'));
    const found = archivesIn(root).sort((a, b) => a.dir.localeCompare(b.dir));
    assert.equal(found.length, 2);
    assert.match(found[0].error, /broken\/archive\.json: /);
    assert.deepEqual(found[1], {
      dir: path.join(root, 'one'),
      page: 'https://a.test/',
      origins: 2,
      entries: 1,
      missing: 1,
    });
    assert.deepEqual(archivesIn(path.join(root, 'one')), [found[1]], 'a folder that is an archive');
  });
});
