import assert from 'node:assert/strict';
import YAML from 'yaml';
import { h2oConfig, h2oQuicListenerKeys, checkOrigin } from '../../harness/servers/origin.js';
import { H2O_LOG_FORMAT, parseOriginLogLine, summarizeOriginLog } from '../../harness/servers/origin-log.js';
import { BENCH_PRESETS, presetOrigin } from '../../harness/pageload/presets.js';
import { loadProfile } from '../../harness/testbed/profiles.js';
import { tcpBufferSysctls } from '../../harness/testbed/testbed.js';

describe('origin settings', () => {
  it('writes an H2O config that serves the site like our origin', () => {
    const args = { root: '/srv/a "b"', addr: '198.18.3.2', cert: '/c.pem', key: '/k.pem', accessLog: '/l' };
    const tcpOnly = YAML.parse(h2oConfig(args));
    assert.deepEqual(tcpOnly.listen, { host: '198.18.3.2', port: 80 }, 'cleartext h1, for every host');
    assert.deepEqual(Object.keys(tcpOnly.hosts), ['tcp.satbench.test'], 'no QUIC listener without h3');
    const tcp = tcpOnly.hosts['tcp.satbench.test'];
    assert.deepEqual(tcp.listen, {
      host: '198.18.3.2',
      port: 443,
      ssl: { 'certificate-file': '/c.pem', 'key-file': '/k.pem', 'ocsp-update-interval': 0 },
    });
    assert.equal(tcp.paths['/']['file.dir'], '/srv/a "b"', 'quotes in a path stay inside the string');
    assert.equal(tcp['header.add'], undefined, 'no Alt-Svc for an HTTP/3 that is not served');
    assert.equal(tcpOnly.compress, 'OFF');
    assert.deepEqual(tcpOnly['access-log'], { path: '/l', format: H2O_LOG_FORMAT });
    assert.doesNotMatch(h2oConfig({ ...args, h3: true }), /&|\*a/, 'no YAML anchors or aliases');

    const all = YAML.parse(h2oConfig({ ...args, h3: true }));
    const quic = all.hosts['quic.satbench.test'];
    assert.equal(quic.listen.type, 'quic');
    assert.equal(quic.listen.port, 443);
    assert.deepEqual(quic.listen.ssl, tcp.listen.ssl, 'the same certificate over QUIC');
    assert.equal(quic['header.add'], 'alt-svc: h3=":443"');
    assert.equal(all.hosts['tcp.satbench.test']['header.add'], 'alt-svc: h3=":443"');
    const tcpAltSvc = YAML.parse(h2oConfig({ ...args, h3: true, altSvc: 'tcp' }));
    assert.equal(tcpAltSvc.hosts['quic.satbench.test']['header.add'], undefined, '--alt-svc tcp: none over h3');
    assert.equal(tcpAltSvc.hosts['tcp.satbench.test']['header.add'], 'alt-svc: h3=":443"');
    const tuned = YAML.parse(h2oConfig({ ...args, h3: true, quic: { cc: 'newreno', 'initial-window': '32' } }));
    assert.equal(tuned.hosts['quic.satbench.test'].listen.cc, 'reno');
    assert.equal(tuned.hosts['quic.satbench.test'].listen.initcwnd, 32);
  });

  it('sets the cache policy on every H2O host, and none without one', () => {
    const args = { root: '/srv', addr: '198.18.3.2', cert: '/c.pem', key: '/k.pem', h3: true };
    assert.equal(YAML.parse(h2oConfig(args)).hosts['tcp.satbench.test']['header.set'], undefined);
    for (const [cache, value] of [
      ['none', 'no-store'],
      ['revalidate', 'no-cache'],
      ['max-age=600', 'max-age=600'],
      ['immutable', 'max-age=31536000, immutable'],
    ]) {
      const hosts = YAML.parse(h2oConfig({ ...args, cache })).hosts;
      for (const host of ['tcp.satbench.test', 'quic.satbench.test'])
        assert.equal(hosts[host]['header.set'], `cache-control: ${value}`, `${cache} ${host}`);
      assert.equal(hosts['quic.satbench.test']['header.add'], 'alt-svc: h3=":443"', 'Alt-Svc kept beside it');
    }
  });

  it("maps --quic onto H2O's QUIC listener and names what H2O has no setting for", () => {
    assert.deepEqual(h2oQuicListenerKeys({}), {});
    assert.deepEqual(h2oQuicListenerKeys({ cc: 'cubic', 'initial-window': '10' }), { cc: 'cubic', initcwnd: 10 });
    assert.throws(
      () => h2oQuicListenerKeys({ cc: 'bbr' }),
      /--quic cc=bbr: H2O \(quicly\) has no bbr; .*newreno or cubic/,
    );
    assert.throws(() => h2oQuicListenerKeys({ cc: 'sat' }), /has no sat/);
    assert.throws(
      () => h2oQuicListenerKeys({ 'ack-frequency': true, 'bdp-bytes': '1000', cc: 'cubic' }),
      /--quic: H2O has no setting for ack-frequency, bdp-bytes \(with --origin h2o only cc and initial-window apply\)/,
    );
  });

  it("reads both origins' request logs the same way", () => {
    const ours = [
      '2026-05-01T12:00:00.123Z h3 GET / 200 5120 u=0',
      '2026-05-01T12:00:00.200Z h3 GET /img/a.png 200 100 u=2,i',
      '2026-05-01T12:00:00.300Z h3 GET /missing 404 9',
      '2026-05-01T12:00:00.400Z h3 GET https://cdn.example.test/x.js?v=2 404 0 u=1 unmatched',
      '2026-05-01T12:00:00.500Z h2 GET https://www.example.test/y 404 0 unmatched',
      '',
    ].join('\n');
    assert.deepEqual(summarizeOriginLog(ours), {
      requests: 5,
      protocols: { h3: 4, h2: 1 },
      statuses: { 200: 2, 404: 3 },
      unmatched: ['https://cdn.example.test/x.js?v=2', 'https://www.example.test/y'],
    });
    const h2o = [
      '2026-11-24T06:19:36.123Z HTTP/2 GET / 200 16',
      '2026-11-24T06:19:36.125Z HTTP/1.1 GET / 304 -',
      '2026-11-24T06:19:36.130Z HTTP/3 GET /a.css 200 90',
      'garbage',
    ].join('\n');
    assert.deepEqual(parseOriginLogLine(h2o.split('\n')[1]), {
      protocol: 'http/1.1',
      method: 'GET',
      path: '/',
      status: 304,
      bytes: 0,
      unmatched: false,
    });
    assert.deepEqual(summarizeOriginLog(h2o), {
      requests: 3,
      protocols: { h2: 1, 'http/1.1': 1, h3: 1 },
      statuses: { 200: 2, 304: 1 },
      unmatched: [],
    });
  });

  it("runs a preset's own origin only where it can serve the preset, else the next best built here", () => {
    // ifip2022's is the paper's H2O without the OpenSSL 3 handshake bug
    assert.equal(presetOrigin(BENCH_PRESETS.ifip2022, { h2oWithH3: true, patched: true }), 'h2o-patched');
    assert.equal(presetOrigin(BENCH_PRESETS.ifip2022, { h2oWithH3: true, patched: false }), 'h2o');
    assert.equal(presetOrigin(BENCH_PRESETS.ifip2022, { h2oWithH3: false, patched: false }), 'rust');
    assert.equal(presetOrigin(BENCH_PRESETS.quick, { h2oWithH3: true, patched: true }), 'rust');
  });

  it('raises end-host socket buffers only where the path needs more than the defaults', () => {
    assert.deepEqual(tcpBufferSysctls(loadProfile('geo')), []);
    const large = tcpBufferSysctls(loadProfile('quic4sat-large')); // 250 Mbit/s × 650 ms ≈ 20 MB
    assert.equal(large.length, 2);
    assert.match(large[1], /^net\.ipv4\.tcp_wmem=4096 16384 4062500\d$/);
  });

  it('refuses an unknown origin before anything starts', async () => {
    await assert.rejects(checkOrigin('nginx', ['h1']), /--origin: unknown origin "nginx"; expected rust, h2o/);
    await assert.rejects(checkOrigin('h2o', ['h1'], { quic: { cc: 'bbr' } }), /H2O \(quicly\) has no bbr/);
    await assert.rejects(
      checkOrigin('h2o', ['h3'], { h3Priorities: 'off' }),
      /--h3-priorities: our origin's setting; H2O orders HTTP\/3 responses its own way/,
    );
  });
});
