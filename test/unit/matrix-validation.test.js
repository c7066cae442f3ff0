// What bench and bulk refuse before anything runs: every refusal names the
// flag and says what it expected.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { UsageError } from '../../harness/core/errors.js';
import { validateBenchMatrix, checkBench, checkArchiveScenarios } from '../../harness/cli/bench-plan.js';
import { validateBulkMatrix, checkBulk } from '../../harness/cli/bulk-plan.js';
import { checkPepOptions, parsePepOptions, tunnelSource } from '../../harness/cli/pep-options.js';
import { checkCongestionControl, availableCongestionControls } from '../../harness/testbed/congestion-control.js';
import { profileCache, scenarioResolver } from '../../harness/campaign/scenario.js';
import { expandMatrix } from '../../harness/kinds/pageload.js';
import { pepKind } from '../../harness/core/protocols.js';
import { benchInput } from '../../harness/cli/bench.js';
import { BENCH_PRESETS, runsForBoundarySplit } from '../../harness/pageload/presets.js';
import { loadProfile, pathBdpBytes, configuredSummary } from '../../harness/testbed/profiles.js';

const BENCH = { profiles: ['geo'], losses: [0], protocols: ['h1', 'h3-pep'], sites: ['kepler'], runs: 2 };
const BULK = {
  profiles: ['geo'],
  losses: [0],
  protocols: ['quic', 'tcp-pep'],
  duration_s: 10,
  size_bytes: null,
  runs: 1,
};

// A UsageError whose message starts with the flag and matches `expected`.
const refusal = (flag, expected) => (e) => {
  assert.ok(e instanceof UsageError, `${e}`);
  assert.ok(e.message.startsWith(`${flag}`), `names ${flag}: ${e.message}`);
  assert.match(e.message, expected);
  return true;
};

describe('bench: matrix validation', () => {
  it('accepts the quick matrix', () => {
    assert.equal(validateBenchMatrix(BENCH), BENCH);
  });

  for (const [what, change, flag, expected] of [
    [
      'an unknown protocol',
      { protocols: ['h4'] },
      '--protocol',
      /unknown protocol "h4"; expected h1, h1s, h2, h3, h1-pep/,
    ],
    ['a loss over 100 %', { losses: [101] }, '--loss', /expected percentages between 0 and 100, got 101/],
    ['a negative loss', { losses: [-1] }, '--loss', /expected percentages between 0 and 100/],
    ['an unknown profile', { profiles: ['mars'] }, '--profile', /unknown profile "mars"; built-in profiles: .*geo/],
    [
      'an unknown site',
      { sites: ['nosuchsite'] },
      '--site',
      /neither a reference site \(kepler, .*\), a directory with an index.html nor a site archive/,
    ],
    ['no runs', { runs: 0 }, '-n', /expected a whole number of runs >= 1, got 0/],
    ['fractional runs', { runs: 1.5 }, '-n', /expected a whole number of runs >= 1/],
  ]) {
    it(`refuses ${what}`, () => {
      assert.throws(() => validateBenchMatrix({ ...BENCH, ...change }), refusal(flag, expected));
    });
  }

  it('takes a site folder with an index.html, and not one without', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-site-'));
    assert.throws(() => validateBenchMatrix({ ...BENCH, sites: [dir] }), refusal('--site', /index.html/));
    fs.writeFileSync(path.join(dir, 'index.html'), '<!doctype html>');
    validateBenchMatrix({ ...BENCH, sites: [dir] });
  });

  it("--alt-svc: the ifip2022 preset keeps Alt-Svc off h3 as the paper's testbed did; the option overrides it", () => {
    const values = { seed: '1', link: 'auto', timeout: '120', origin: 'rust' };
    const altSvc = (v) => benchInput({ ...values, ...v }).settings.altSvc;
    assert.equal(altSvc({ preset: 'ifip2022' }), 'tcp');
    assert.equal(altSvc({ preset: 'ifip2022', 'alt-svc': 'all' }), 'all');
    assert.equal(altSvc({ preset: 'quick' }), null, "quick leaves it to the origin's default, all");
  });

  it("the ifip2022 preset is the paper's set-up: access-model profiles, the QUIC PEP per connection; options override each part", () => {
    const values = { seed: '1', link: 'auto', timeout: '120' };
    const input = (v) => benchInput({ ...values, preset: 'ifip2022', ...v });
    const paper = input({});
    assert.deepEqual(paper.matrix.profiles, ['geo-dvb', 'leo-dvb']);
    assert.equal(paper.settings.pep.tunnel, 'per-connection');
    // satbench's own defaults, part by part
    const ours = input({ profile: 'geo,leo', 'pep-tunnel': 'warm', origin: 'rust', 'alt-svc': 'all' });
    assert.deepEqual(ours.matrix.profiles, ['geo', 'leo']);
    assert.equal(ours.settings.pep.tunnel, 'warm');
    assert.equal(ours.settings.origin, 'rust');
    // the quick preset keeps the standing tunnel
    assert.equal(benchInput({ ...values, preset: 'quick' }).settings.pep.tunnel, 'warm');
  });

  it('the starlink preset: three sites over starlink, starlink-motion and geo-hts, h1, h2, h3 and their PEPs, each with the end hosts on Cubic and on BBR; it passes the checks', async () => {
    const values = { seed: '1', link: 'auto', timeout: '120' };
    const both = benchInput({ ...values, preset: 'starlink' });
    assert.deepEqual(both.matrix.profiles, ['starlink', 'starlink-motion', 'geo-hts']);
    assert.deepEqual(both.matrix.sites, ['kepler', 'deutschmann-small', 'deutschmann-large']);
    assert.deepEqual(both.matrix.protocols, ['h1', 'h1-pep', 'h2', 'h2-pep', 'h3', 'h3-pep']);
    // Cubic and BBR per scenario (--cc-axis), the campaign's TCP and QUIC settings untouched
    assert.deepEqual(both.matrix.ccs, ['cubic', 'bbr']);
    assert.deepEqual([both.settings.tcp, both.settings.quic, both.settings.origin], [{}, {}, 'rust']);
    // one congestion control for the whole campaign, as before the axis
    const bbr = benchInput({ ...values, preset: 'starlink', cc: 'bbr', quic: 'cc=bbr' });
    assert.deepEqual([bbr.settings.tcp.cc, bbr.settings.quic.cc, bbr.matrix.ccs], ['bbr', 'bbr', undefined]);
    const kernel = ['reno', 'cubic', 'bbr'];
    const given = { preset: 'starlink' };
    await checkBench(both.matrix, both.settings, { given, congestionControls: kernel });
    // a kernel without BBR: the preset is named, not a --cc-axis nobody typed
    await assert.rejects(checkBench(both.matrix, both.settings, { given, congestionControls: ['reno', 'cubic'] }), {
      name: 'UsageError',
      message:
        '--preset starlink (its --cc-axis cubic,bbr): "bbr" is not available in this kernel; available: reno, cubic (newreno is reno)',
    });
  });

  it('gives the starlink preset runs enough for 10 loads with a handover inside, on average', () => {
    // a 1.5 s load over 15 s slots: 1 in 10 has one
    assert.equal(runsForBoundarySplit({ loadS: 1.5, periodS: 15 }), 100);
    assert.equal(runsForBoundarySplit({ loadS: 1.5, periodS: 15, smaller: 5 }), 50);
    // a load as long as a slot or longer always holds a boundary
    assert.equal(runsForBoundarySplit({ loadS: 20, periodS: 15 }), 10);
    assert.ok(BENCH_PRESETS.starlink.runs >= 10);
  });

  it('refuses settings that would fail only in the middle of the campaign', async () => {
    await assert.rejects(
      checkBench(BENCH, { h3Priorities: 'fifo' }),
      refusal('--h3-priorities', /expected rfc9218, incremental-last, off, got "fifo"/),
    );
    await assert.rejects(
      checkBench(BENCH, { origin: 'nginx' }),
      refusal('--origin', /unknown origin "nginx"; expected rust, h2o/),
    );
    // h3-pep runs the QUIC PEP: a TCP key is refused now, not at the first h3-pep run
    const tcpKey = parsePepOptions({ sat: 'sndbuf=1000' });
    await assert.rejects(
      checkBench(BENCH, { pep: tcpKey }),
      refusal('--pep-sat', /sndbuf is a TCP option; the QUIC PEP takes cc, /),
    );
    await checkBench({ ...BENCH, protocols: ['h1-pep'] }, { pep: tcpKey });
    await assert.rejects(checkBench(BENCH, { altSvc: 'h3' }), refusal('--alt-svc', /expected all or tcp, got "h3"/));
    // Careful Resume: only a run's second load finds a saved path at the origin
    const cr = { quic: { 'careful-resume': 'on' } };
    await assert.rejects(
      checkBench(BENCH, cr),
      refusal('--quic careful-resume=on', /a first view finds no saved path .*add --view revisit or repeat/),
    );
    await checkBench({ ...BENCH, views: ['first', 'revisit'] }, cr);
    await assert.rejects(
      checkBench({ ...BENCH, views: ['revisit'] }, { ...cr, origin: 'h2o' }),
      refusal('--quic', /H2O has no setting for careful-resume/),
    );
    await checkBench(BENCH, { h3Priorities: 'off', altSvc: 'tcp', pep: parsePepOptions({ sat: 'cc=bbr' }) });
  });

  // a preset's QUIC PEP mode that cannot run the matrix is named as the preset,
  // not as a --pep-tunnel the user did not type (issue 27)
  it("names the preset, not a flag nobody typed, when the preset's QUIC PEP mode cannot run the matrix", async () => {
    assert.equal(
      tunnelSource('per-connection', { preset: 'ifip2022' }),
      '--preset ifip2022, which runs the QUIC PEP per-connection,',
    );
    assert.equal(
      tunnelSource('per-connection', { preset: 'ifip2022', 'pep-tunnel': 'per-connection' }),
      '--pep-tunnel per-connection:',
    );
    assert.equal(tunnelSource('warm', { preset: 'quick' }), '--pep-tunnel warm:');
    const perConnection = parsePepOptions({ tunnel: 'per-connection' });
    const qpep = { ...BENCH, protocols: ['h1', 'h1-qpep'] };
    await assert.rejects(
      checkBench(qpep, { pep: perConnection }, { given: { preset: 'ifip2022' } }),
      refusal('--preset ifip2022, which runs the QUIC PEP per-connection, QPEP', /use --pep-tunnel warm$/),
    );
    await assert.rejects(
      checkBench(qpep, { pep: perConnection }, { given: { preset: 'ifip2022', 'pep-tunnel': 'per-connection' } }),
      refusal('--pep-tunnel per-connection: QPEP', /use --pep-tunnel warm$/),
    );
    const site = { dir: 'shop', page: 'https://shop.test/' };
    const tunnel = 'per-connection';
    assert.throws(
      () =>
        checkArchiveScenarios(site, ['h3', 'h3-pep'], 'gw', {
          tunnel,
          tunnelFrom: tunnelSource(tunnel, { preset: 'ifip2022' }),
        }),
      refusal(
        "--preset ifip2022, which runs the QUIC PEP per-connection, a site archive's h3-pep",
        /add --pep-tunnel warm$/,
      ),
    );
    assert.throws(
      () => checkArchiveScenarios(site, ['h3-pep'], 'gw', { tunnel }),
      refusal(
        "--pep-tunnel per-connection: a site archive's h3-pep needs the standing tunnel",
        /add --pep-tunnel warm$/,
      ),
    );
    checkArchiveScenarios(site, ['h3', 'h3-pep'], 'gw', { tunnel: 'warm' });
  });
});

describe('bulk: matrix validation', () => {
  it('accepts the default matrix and a profile-loss (null) one', () => {
    assert.equal(validateBulkMatrix(BULK), BULK);
    validateBulkMatrix({ ...BULK, losses: [null], duration_s: null, size_bytes: 1000 });
  });

  for (const [what, change, flag, expected] of [
    [
      'an unknown protocol',
      { protocols: ['h3'] },
      '--protocol',
      /unknown bulk protocol "h3"; expected quic, quic-pep, quic-masque, tcp/,
    ],
    ['no protocol', { protocols: [] }, '--protocol', /name at least one protocol/],
    ['a loss over 100 %', { losses: [200] }, '--loss', /expected percentages between 0 and 100, got 200/],
    ['an unknown profile', { profiles: ['mars'] }, '--profile', /unknown profile "mars"/],
    ['neither duration nor size', { duration_s: null }, 'give --duration or --size', /one of them/],
    ['both duration and size', { size_bytes: 5 }, 'give --duration or --size', /one of them/],
    ['a duration of 0', { duration_s: 0 }, '--duration', /expected seconds > 0, got 0/],
    ['a fractional size', { duration_s: null, size_bytes: 1.5 }, '--size', /expected a whole number of bytes >= 1/],
    ['no runs', { runs: 0 }, '-n', /expected a whole number of runs >= 1, got 0/],
  ]) {
    it(`refuses ${what}`, () => {
      assert.throws(() => validateBulkMatrix({ ...BULK, ...change }), refusal(flag, expected));
    });
  }

  it('refuses careful-resume=on in bulk where nothing resumes: no revisit, the warm tunnel, the receiver', () => {
    const REVISIT = { ...BULK, protocols: ['quic', 'quic-pep'], views: ['first', 'revisit'] };
    assert.throws(
      () => checkBulk(BULK, { quic: { 'careful-resume': 'on' } }),
      refusal('--quic careful-resume=on', /without --view revisit a bulk run makes one connection/),
    );
    checkBulk(REVISIT, { quic: { 'careful-resume': 'on' } });
    assert.throws(
      () => checkBulk(BULK, { pep: parsePepOptions({ sat: 'careful-resume=on' }) }),
      refusal('--pep-sat careful-resume=on', /without --view revisit/),
    );
    assert.throws(
      () => checkBulk(REVISIT, { pep: parsePepOptions({ sat: 'careful-resume=on' }) }),
      refusal('--pep-sat careful-resume=on', /the warm tunnel carries both connections .* --pep-tunnel per-connection/),
    );
    checkBulk(REVISIT, { pep: parsePepOptions({ sat: 'careful-resume=on', tunnel: 'per-connection' }) });
    assert.throws(
      () => checkBulk(REVISIT, { quicClient: { 'careful-resume': 'on' } }),
      refusal('--quic-client careful-resume=on', /Careful Resume is the sender's/),
    );
    checkBulk(BULK, { quic: { 'careful-resume': 'off' } });
  });

  it('refuses a bulk view it has not, and a revisit over what makes no second connection', () => {
    assert.throws(
      () => validateBulkMatrix({ ...BULK, views: ['repeat'] }),
      refusal('--view', /expected first or revisit .*got "repeat"/),
    );
    assert.throws(
      () => validateBulkMatrix({ ...BULK, views: ['revisit'] }),
      refusal(
        '--view revisit',
        /tcp-pep makes no second connection; a revisit is satbulk's QUIC \(quic, quic-pep, quic-masque\)/,
      ),
    );
    validateBulkMatrix({ ...BULK, protocols: ['quic'], views: ['revisit'] });
  });

  it('refuses --revisit-capacity without a revisit, on linkem, and on a profile without one fixed satellite rate', () => {
    const REVISIT = { ...BULK, protocols: ['quic'], views: ['revisit'], revisit_capacity: 0.5 };
    checkBulk(REVISIT, { link: 'netem' });
    assert.throws(
      () => validateBulkMatrix({ ...REVISIT, views: ['first'] }),
      refusal('--revisit-capacity', /only with --view revisit/),
    );
    assert.throws(
      () => checkBulk(REVISIT, { link: 'linkem' }),
      refusal('--revisit-capacity', /not with --link linkem/),
    );
    assert.throws(
      () => checkBulk({ ...REVISIT, profiles: ['starlink'] }, { link: 'auto' }),
      refusal('--revisit-capacity', /which only linkem emulates/),
    );
    assert.throws(
      () => validateBulkMatrix({ ...REVISIT, profiles: ['iridium'] }),
      refusal('--revisit-capacity', /iridium's satellite forward link has/),
    );
  });

  it('checks the PEP options against the chains the protocols use', async () => {
    const quicKey = parsePepOptions({ ground: 'ack-frequency' });
    assert.throws(
      () => checkBulk(BULK, { pep: quicKey }),
      refusal(
        '--pep-ground',
        /ack-frequency is a QUIC option; the split-TCP PEP takes cc, initial-window, sndbuf, rcvbuf/,
      ),
    );
    // an unknown preset is refused as it is read, whatever the protocols
    assert.throws(
      () => parsePepOptions({ preset: 'E' }),
      refusal('--pep-preset', /TCP PEP preset "E": expected one of paper, A, B, C, D/),
    );
    checkBulk(BULK, { pep: parsePepOptions({ preset: 'B' }) });
    // a preset without a split-TCP protocol would be ignored: refused
    const unused = refusal('--pep-preset A', /sets the split-TCP PEP, which no protocol of the matrix goes through/);
    assert.throws(
      () =>
        checkBulk({ ...BULK, protocols: ['quic', 'quic-pep', 'tcp-qpep'] }, { pep: parsePepOptions({ preset: 'A' }) }),
      unused,
    );
    await assert.rejects(
      checkBench({ ...BENCH, protocols: ['h1', 'h3-pep', 'h1-qpep'] }, { pep: parsePepOptions({ preset: 'A' }) }),
      unused,
    );
    assert.throws(
      () => checkBulk(BULK, { pep: parsePepOptions({ sat: 'initial-window=5000' }) }),
      refusal('--pep-sat', /initial window: expected a whole number of packets between 1 and 1000, got 5000/),
    );
    assert.throws(
      () => checkBulk({ ...BULK, protocols: ['quic-pep'] }, { pep: parsePepOptions({ sat: 'cc=reno' }) }),
      refusal('--pep-sat', /cc must be cubic, newreno, bbr or sat, got "reno"/),
    );
    // without a chain that uses them, the sides would be ignored: refused, like --pep-preset
    assert.throws(
      () => checkPepOptions(parsePepOptions({ sat: 'sndbuf=1' }), []),
      refusal('--pep-sat sndbuf=1', /sets the PEPs' hops, which no protocol of the matrix goes through/),
    );
    assert.throws(
      () => checkBulk({ ...BULK, protocols: ['quic', 'tcp-vpn'] }, { pep: parsePepOptions({ ground: 'cc=bbr' }) }),
      refusal('--pep-ground cc=bbr', /which no protocol of the matrix goes through/),
    );
    await assert.rejects(
      checkBench({ ...BENCH, protocols: ['h1', 'h3'] }, { pep: parsePepOptions({ sat: 'initial-window=10' }) }),
      refusal('--pep-sat initial-window=10', /no protocol of the matrix goes through/),
    );
    // a campaign preset's own satellite hops (quic4sat's) are not the user's: no PEP protocol, no refusal
    checkBulk({ ...BULK, protocols: ['quic', 'tcp'] }, { pep: parsePepOptions({}, { satByChain: { tcp: 'cc=bbr' } }) });
  });

  it('parses the PEP sides, naming the flag of a bad key or value', () => {
    assert.throws(
      () => parsePepOptions({ sat: 'window=3' }),
      refusal('--pep-sat', /unknown option "window"; expected cc, /),
    );
    assert.throws(
      () => parsePepOptions({ ground: 'bdp-bytes=lots' }),
      refusal('--pep-ground', /bdp-bytes expects a whole number/),
    );
  });
});

describe('scenarios resolved once', () => {
  it('reads each (profile, loss) once for the whole command, and resolves each scenario once', () => {
    const read = [];
    const profiles = profileCache((name, opts) => {
      read.push([name, opts.lossPct ?? null]);
      return loadProfile(name, opts);
    });
    const matrix = { ...BENCH, profiles: ['geo', 'leo'], losses: [0, 1] };
    validateBenchMatrix(matrix, { profiles });
    const plan = scenarioResolver({
      settings: { origin: 'rust', quic: { cc: 'bbr' } },
      profiles,
      facts: (s) => ({ pepKind: pepKind(s.protocol) }),
    });
    for (const item of expandMatrix(matrix)) plan(item.scenario);
    assert.deepEqual(read, [
      ['geo', null],
      ['leo', null],
      ['geo', 0],
      ['geo', 1],
      ['leo', 0],
      ['leo', 1],
    ]);
    const s = { profile: 'geo', loss_pct: 1, protocol: 'h3-pep', site: 'kepler' };
    const p = plan(s);
    assert.equal(plan({ ...s }), p, 'the same object for an equal scenario');
    assert.deepEqual(p.scenario, s);
    assert.ok(
      Math.abs(configuredSummary(p.profile).loss_pct - 1) < 0.01,
      'the scenario loss replaces the profile loss',
    );
    assert.equal(p.linkMbps, 20);
    assert.equal(p.bdpBytes, pathBdpBytes(loadProfile('geo', { lossPct: 1 })));
    assert.deepEqual([p.origin, p.quic, p.pepKind], ['rust', { cc: 'bbr' }, 'quic']);
  });
});

describe('--cc before anything is created', () => {
  const AVAILABLE = ['reno', 'cubic'];
  it('takes what the kernel has (newreno is reno), refuses the rest naming --cc', async () => {
    checkCongestionControl(undefined, AVAILABLE);
    checkCongestionControl('newreno', AVAILABLE);
    checkCongestionControl('bbr', null); // /proc unreadable: the testbed will say
    assert.throws(
      () => checkCongestionControl('bbr', AVAILABLE),
      refusal('--cc', /"bbr" is not available in this kernel; available: reno, cubic \(newreno is reno\)/),
    );
    assert.throws(() => checkCongestionControl('Cubic!', null), refusal('--cc', /expected a congestion control name/));
    const options = { congestionControls: AVAILABLE };
    await assert.rejects(checkBench(BENCH, { tcp: { cc: 'vegas' } }, options), refusal('--cc', /"vegas" is not/));
    assert.throws(() => checkBulk(BULK, { tcp: { cc: 'vegas' } }, options), refusal('--cc', /"vegas" is not/));
    assert.ok(availableCongestionControls().includes('cubic'), 'this kernel lists its own');
  });
});
