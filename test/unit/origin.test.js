import assert from 'node:assert/strict';
import YAML from 'yaml';
import { h2oConfig, checkOrigin } from '../../harness/servers/origin.js';
import { loadProfile } from '../../harness/testbed/profiles.js';
import { tcpBufferSysctls } from '../../harness/testbed/testbed.js';

describe('origin settings', () => {
  it('writes an H2O config that serves the site like our origin', () => {
    const conf = YAML.parseAllDocuments(
      h2oConfig({ root: '/srv/a "b"', addr: '198.18.3.2', cert: '/c.pem', key: '/k.pem', accessLog: '/l' }),
    );
    assert.equal(conf.length, 1);
    // H2O takes repeated `listen` keys; YAML parsers keep the last, so count them in the text.
    const text = h2oConfig({ root: '/srv', addr: '198.18.3.2', cert: '/c.pem', key: '/k.pem' });
    assert.equal(text.match(/^listen:/gm).length, 2);
    assert.match(text, /port: 80\n/);
    assert.match(text, /port: 443\n  ssl:\n    certificate-file: "\/c.pem"/);
    assert.match(text, /compress: OFF/);
    assert.doesNotMatch(text, /type: quic/);
    assert.match(h2oConfig({ root: '/srv', addr: '198.18.3.2', cert: '/c', key: '/k', h3: true }), /type: quic/);
    const doc = YAML.parse(h2oConfig({ root: '/srv/a "b"', addr: '198.18.3.2', cert: '/c', key: '/k' }), {
      uniqueKeys: false,
    });
    assert.equal(doc.hosts.default.paths['/']['file.dir'], '/srv/a "b"', 'quotes in a path stay inside the string');
  });

  it('raises end-host socket buffers only where the path needs more than the defaults', () => {
    assert.deepEqual(tcpBufferSysctls(loadProfile('geo')), []);
    const large = tcpBufferSysctls(loadProfile('quic4sat-large')); // 250 Mbit/s × 650 ms ≈ 20 MB
    assert.equal(large.length, 2);
    assert.match(large[1], /^net\.ipv4\.tcp_wmem=4096 16384 4062500\d$/);
  });

  it('refuses an unknown origin before anything starts', async () => {
    await assert.rejects(checkOrigin('nginx', ['h1']), /--origin: unknown origin "nginx"; expected rust, h2o/);
  });
});
