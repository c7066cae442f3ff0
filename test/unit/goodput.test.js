import assert from 'node:assert/strict';
import fs from 'node:fs';
import {
  binEvents,
  cumulative,
  bytesAt,
  timeToBytes,
  timeToRate,
  binMbps,
  downloadMetrics,
  judgeRun,
  judgeGroup,
  meanCurve,
  pepRatio,
  condenseTrace,
  OBJECTIVE_SIZES,
} from '../../harness/results/goodput.js';
import { BULK_PRESETS } from '../../harness/bulk/presets.js';
import { bulkInput } from '../../harness/cli/bulk.js';
import {
  objectivesFor,
  QUIC4SAT_DOWNLOAD_OBJECTIVES_S,
  QUIC4SAT_UPLOAD_OBJECTIVES_S,
} from '../../harness/results/objectives.js';
import { expandBulkMatrix, transferTimeoutS } from '../../harness/bulk/matrix.js';
import { validateBulkMatrix } from '../../harness/cli/bulk-plan.js';
import { satbulkGetArgs, everyConnectionEnded } from '../../harness/bulk/satbulk.js';
import { scenarioName } from '../../harness/bulk/run.js';
import { browserDownload } from '../../harness/bulk/browser.js';
import { formatBulkSummary } from '../../harness/bulk/summary-table.js';
import { parsePepSide, tcpPepSide, quicPepSide } from '../../harness/pep/options.js';
import { summarize } from '../../harness/analysis/summary.js';

const near = (a, b, eps = 1e-9) => assert.ok(Math.abs(a - b) <= eps, `${a} ≉ ${b}`);

describe('goodput: binning', () => {
  it('puts each arrival in the bin of its time, from t0', () => {
    const { bins, bytes } = binEvents(
      [
        { t_ms: 0, bytes: 10 },
        { t_ms: 99.9, bytes: 5 },
        { t_ms: 100, bytes: 7 },
        { t_ms: 350, bytes: 1 },
      ],
      100,
    );
    assert.deepEqual(bins, [15, 7, 0, 1]);
    assert.equal(bytes, 23);
  });

  it('with an end, leaves later arrivals out and covers exactly [0, end)', () => {
    const { bins, bytes } = binEvents(
      [
        { t_ms: 50, bytes: 3 },
        { t_ms: 999, bytes: 4 },
        { t_ms: 1000, bytes: 100 },
      ],
      100,
      1000,
    );
    assert.equal(bins.length, 10);
    assert.equal(bins[9], 4);
    assert.equal(bytes, 7);
    assert.deepEqual(binEvents([], 100, 250).bins, [0, 0, 0]);
  });

  it('counts arrivals before t0 in the first bin', () => {
    assert.deepEqual(binEvents([{ t_ms: -3, bytes: 2 }], 100).bins, [2]);
  });

  it('goodput per bin in Mbit/s and the cumulative curve', () => {
    assert.deepEqual(binMbps([250000, 0], 100), [20, 0]);
    assert.deepEqual(cumulative([1, 2, 3]), [1, 3, 6]);
  });
});

describe('goodput: bytes by a time, time to a size', () => {
  const bins = [0, 100, 200, 300]; // bins of 100 ms

  it('interpolates within the bin holding the time', () => {
    assert.equal(bytesAt(bins, 100, 0), 0);
    assert.equal(bytesAt(bins, 100, 150), 50);
    assert.equal(bytesAt(bins, 100, 300), 300);
    assert.equal(bytesAt(bins, 100, 400), 600);
  });

  it('past the bins: the total if the download completed, else unknown', () => {
    assert.equal(bytesAt(bins, 100, 1000, { complete: true }), 600);
    assert.equal(bytesAt(bins, 100, 1000), null);
  });

  it('finds when the N-th byte arrived', () => {
    assert.equal(timeToBytes(bins, 100, 100), 200);
    assert.equal(timeToBytes(bins, 100, 50), 150);
    assert.equal(timeToBytes(bins, 100, 450), 350);
    assert.equal(timeToBytes(bins, 100, 600), 400);
    assert.equal(timeToBytes(bins, 100, 601), null);
    assert.equal(timeToBytes(bins, 100, 0), 0);
  });

  it('uses the first and last arrival when known', () => {
    // all 600 bytes between 250 ms (first byte) and 330 ms (last byte)
    const b = [0, 0, 300, 300];
    assert.equal(timeToBytes(b, 100, 600, { firstMs: 250, lastMs: 330 }), 330);
    assert.equal(timeToBytes(b, 100, 300, { firstMs: 250, lastMs: 330 }), 300);
    assert.equal(timeToBytes(b, 100, 150, { firstMs: 250, lastMs: 330 }), 275);
    assert.equal(bytesAt(b, 100, 320, { firstMs: 250, lastMs: 330 }), 300 + 300 * (20 / 30));
    // a first or last arrival outside the bin changes nothing
    assert.equal(timeToBytes(b, 100, 150, { firstMs: 50, lastMs: 900 }), 250);
  });
});

describe('goodput: time to 90 % of the link rate', () => {
  // 20 Mbit/s = 250,000 bytes per 100 ms bin
  const full = 250000;

  it('is the start of the first window whose mean reaches 90 %', () => {
    const bins = [10000, 50000, 100000, 200000, full, full, full, full, full, full];
    // window of 5 bins from 300 ms: (200000 + 4 × 250000) / 5 = 240000 ≥ 225000
    assert.equal(timeToRate(bins, 100, 20), 300);
    assert.equal(timeToRate(bins, 100, 20, { windowMs: 100 }), 400); // 200000 alone is under 90 %
    assert.equal(timeToRate(bins, 100, 20, { fraction: 0.99 }), 400);
  });

  it('ignores one full bin in a slow stretch', () => {
    const bins = [0, full, 0, 0, 0, 0, 0, 0];
    assert.equal(timeToRate(bins, 100, 20), null);
    assert.equal(timeToRate(bins, 100, 20, { windowMs: 100 }), 100);
  });

  it('is null without a link rate or enough bins', () => {
    assert.equal(timeToRate([full], 100, null), null);
    assert.equal(timeToRate([full, full], 100, 20), null);
  });
});

describe('goodput: metrics of a download', () => {
  it('a timed download: marks within its duration, sizes it reached', () => {
    const bins = new Array(30).fill(250000); // 3 s at 20 Mbit/s from t0
    const m = downloadMetrics(
      {
        bins,
        bin_ms: 100,
        bytes: 7.5e6,
        duration_ms: 3000,
        complete: true,
        connect_ms: 30,
        ttfb_ms: 0,
        requested_bytes: null,
      },
      { linkMbps: 20 },
    );
    assert.equal(m.bytes_at_1s, 2.5e6);
    assert.equal(m.bytes_at_3s, 7.5e6);
    assert.ok(!('bytes_at_5s' in m), 'no guess past the end of a timed download');
    assert.equal(m.time_to_2mb_ms, 800);
    assert.ok(!('time_to_10mb_ms' in m));
    assert.equal(m.time_to_90pct_rate_ms, 0);
    near(m.mean_goodput_mbps, 20);
    assert.equal(m.connect_ms, 30);
  });

  it('a sized download that completed: later marks are its size; times end at its last byte', () => {
    const m = downloadMetrics({
      bins: [0, 1e6, 1e6],
      bin_ms: 100,
      bytes: 2e6,
      duration_ms: 250,
      complete: true,
      ttfb_ms: 100,
      requested_bytes: 2e6,
    });
    assert.equal(m.bytes_at_10s, 2e6);
    assert.equal(m.time_to_2mb_ms, 250);
    assert.ok(!('time_to_90pct_rate_ms' in m), 'no link rate, no time to it');
  });

  it("the objective sizes are the draft's 2, 10 and 100 MB", () => {
    assert.deepEqual(OBJECTIVE_SIZES, [2e6, 10e6, 100e6]);
  });
});

describe('goodput: objectives', () => {
  const obj = { sizes: [2e6, 10e6, 100e6], limits_s: [3, 5, 20] };

  it('judges one run: a size never reached is missed', () => {
    const r = judgeRun({ time_to_2mb_ms: 2500, time_to_10mb_ms: 5100 }, obj);
    assert.deepEqual(
      r.map((x) => x.met),
      [true, false, false],
    );
    assert.deepEqual(
      r.map((x) => x.time_s),
      [2.5, 5.1, null],
    );
  });

  it('judges a scenario by the median run; failed runs count as missing', () => {
    const runs = [{ time_to_2mb_ms: 2000 }, { time_to_2mb_ms: 2900 }, { time_to_2mb_ms: 4000 }];
    const g = judgeGroup(runs, obj);
    assert.equal(g[0].median_s, 2.9);
    assert.equal(g[0].met, true);
    assert.equal(g[0].runs_met, 2);
    const withFailures = judgeGroup(runs, obj, 2);
    assert.equal(withFailures[0].runs, 5);
    assert.equal(withFailures[0].median_s, 4);
    assert.equal(withFailures[0].met, false);
    assert.equal(g[2].median_s, null);
    assert.equal(g[2].met, false);
  });

  it('knows the quic4sat profiles, and only those with objectives', () => {
    assert.deepEqual(objectivesFor('quic4sat-large').limits_s, [3, 5, 8]);
    assert.equal(objectivesFor('quic4sat-large').direction, 'down');
    assert.equal(objectivesFor('quic4sat-variable-medium'), null);
    assert.equal(objectivesFor('geo'), null);
    // uploads: the draft sets them for small alone
    assert.deepEqual(objectivesFor('quic4sat-small', 'up').limits_s, [10, 50, 420]);
    assert.equal(objectivesFor('quic4sat-small', 'up').direction, 'up');
    assert.equal(objectivesFor('quic4sat-medium', 'up'), null);
    assert.equal(objectivesFor('geo', 'up'), null);
  });

  it('the quic4sat preset uploads where the draft has upload objectives, --direction where it says', () => {
    const input = (v) => bulkInput({ link: 'auto', seed: '1', 'bin-ms': '100', ...v });
    const preset = expandBulkMatrix(input({ preset: 'quic4sat', protocol: 'quic-pep', n: '1' }).matrix);
    const ups = preset.filter((i) => i.scenario.direction === 'up').map((i) => i.scenario.profile);
    assert.deepEqual(ups, ['quic4sat-small']);
    assert.equal(preset.length, 7);
    // a download's scenario has no direction (records from before uploads keep their keys)
    assert.ok(preset.filter((i) => i.scenario.direction !== 'up').every((i) => !('direction' in i.scenario)));
    const both = expandBulkMatrix(
      input({ preset: 'quic4sat', protocol: 'quic-pep', n: '1', direction: 'up,down' }).matrix,
    );
    assert.equal(both.length, 12);
    assert.deepEqual(input({}).matrix.directions, ['down']);
  });

  it('the quic4sat preset names its satellite hop per chain, and --pep-sat replaces it', () => {
    // what parseArgs gives bulkInput when the command line is silent
    const input = (v) => bulkInput({ link: 'auto', seed: '1', 'bin-ms': '100', ...v });
    const { settings } = input({ preset: 'quic4sat' });
    assert.deepEqual(settings.pep.sat_by_chain, {
      quic: { cc: 'sat', 'ack-eliciting-threshold': '20' },
      tcp: { cc: 'bbr' },
    });
    assert.equal(input({ preset: 'quic4sat', 'pep-sat': 'cc=newreno' }).settings.pep.sat_by_chain, undefined);
    assert.equal(input({}).settings.pep.sat_by_chain, undefined);
  });

  it('the objectives are those of reference/quic4sat-scenarios.json', () => {
    const file = new URL('../../reference/quic4sat-scenarios.json', import.meta.url);
    const ref = JSON.parse(fs.readFileSync(file, 'utf8'));
    for (const s of ref.scenarios) {
      assert.deepEqual(QUIC4SAT_DOWNLOAD_OBJECTIVES_S[s.name], s.objectives_s?.download ?? null, s.name);
      assert.deepEqual(QUIC4SAT_UPLOAD_OBJECTIVES_S[s.name] ?? null, s.objectives_s?.upload ?? null, s.name);
      assert.ok(BULK_PRESETS.quic4sat.profiles.includes(`quic4sat-${s.name}`), s.name);
    }
  });
});

describe('goodput: curves over runs', () => {
  it('averages bin by bin; a shorter run adds no bytes after its end', () => {
    const c = meanCurve([
      { bin_ms: 100, bins: [100, 300] },
      { bin_ms: 100, bins: [300] },
    ]);
    assert.deepEqual(c.t_ms, [100, 200]);
    assert.deepEqual(c.mean_bytes, [200, 350]);
    assert.deepEqual(c.median_bytes, [200, 350]);
    near(c.mean_mbps[0], (200 * 8) / 1e5);
    near(c.mean_mbps[1], (150 * 8) / 1e5);
    assert.equal(c.runs, 2);
    assert.equal(meanCurve([]), null);
    assert.equal(
      meanCurve([
        { bin_ms: 100, bins: [1] },
        { bin_ms: 50, bins: [1] },
      ]).runs,
      1,
    );
  });

  it('the PEP ratio is bytes with over bytes without, bin by bin', () => {
    const pep = meanCurve([{ bin_ms: 100, bins: [0, 200, 200] }]);
    const plain = meanCurve([{ bin_ms: 100, bins: [0, 100] }]);
    assert.deepEqual(pepRatio(pep, plain).ratio, [null, 2]);
    assert.equal(pepRatio(pep, null), null);
  });
});

describe('goodput: sender trace', () => {
  const line = (o) => ({
    conn: 1,
    proto: 'tcp',
    t_ms: 0,
    unix_ms: 1000,
    bytes_sent: 0,
    app_bytes: 0,
    cwnd: 14480,
    ssthresh: null,
    rtt_ms: 30,
    lost_packets: 0,
    congestion_events: null,
    final: false,
    ...o,
  });

  it("keeps the busiest connection, on the client's clock, and when slow start ended", () => {
    const lines = [
      line({ conn: 1, unix_ms: 1100, app_bytes: 10 }),
      line({ conn: 2, unix_ms: 1100, app_bytes: 0, cwnd: 100 }),
      line({ conn: 1, unix_ms: 1200, app_bytes: 5000, cwnd: 60000 }),
      line({ conn: 1, unix_ms: 1300, app_bytes: 9000, cwnd: 40000, ssthresh: 40000, lost_packets: 3, final: true }),
    ];
    const t = condenseTrace(lines, 1000);
    assert.equal(t.connections, 2);
    assert.deepEqual(t.t_ms, [100, 200, 300]);
    assert.deepEqual(t.cwnd, [14480, 60000, 40000]);
    assert.equal(t.max_cwnd, 60000);
    assert.equal(t.slow_start_exit_ms, 300);
    assert.equal(t.lost_packets, 3);
    assert.equal(t.time_base, 'client_t0');
    assert.equal(condenseTrace([]), null);
  });

  it('QUIC slow start ends at the first congestion event', () => {
    const t = condenseTrace([
      line({ proto: 'quic', congestion_events: 0 }),
      line({ proto: 'quic', t_ms: 100, congestion_events: 1 }),
    ]);
    assert.equal(t.slow_start_exit_ms, 100);
    assert.equal(t.time_base, 'accept');
  });
});

describe("bulk: waiting for the sender's last trace line", () => {
  it('waits until every connection has its final line', () => {
    assert.equal(everyConnectionEnded([]), false);
    assert.equal(
      everyConnectionEnded([
        { conn: 1, final: false },
        { conn: 1, final: true },
      ]),
      true,
    );
    assert.equal(
      everyConnectionEnded([
        { conn: 1, final: true },
        { conn: 2, final: false },
      ]),
      false,
    );
  });
});

describe('bulk: matrix and arguments', () => {
  const m = {
    profiles: ['geo'],
    losses: [0, 1],
    protocols: ['quic', 'tcp'],
    runs: 2,
    duration_s: 10,
    size_bytes: null,
  };

  it('expands run-major, the amount in the scenario', () => {
    const items = expandBulkMatrix(m);
    assert.equal(items.length, 8);
    assert.deepEqual(items[0], { scenario: { profile: 'geo', loss_pct: 0, protocol: 'quic', duration_s: 10 }, run: 1 });
    assert.equal(items[4].run, 2);
    const sized = expandBulkMatrix({ ...m, losses: [null], duration_s: null, size_bytes: 100e6, runs: 1 });
    assert.deepEqual(sized[0].scenario, { profile: 'geo', loss_pct: null, protocol: 'quic', size_bytes: 100e6 });
  });

  it('an upload is a scenario of its own, named so', () => {
    const items = expandBulkMatrix({ ...m, losses: [0], runs: 1, directions: ['down', 'up'] });
    assert.deepEqual(
      items.map((i) => i.scenario.direction ?? 'down'),
      ['down', 'down', 'up', 'up'],
    );
    assert.equal(scenarioName(items[2].scenario), 'geo loss 0 % quic 10 s up');
    assert.equal(scenarioName(items[0].scenario), 'geo loss 0 % quic 10 s');
  });

  it('validates before anything runs', () => {
    assert.doesNotThrow(() => validateBulkMatrix(m));
    assert.throws(() => validateBulkMatrix({ ...m, directions: ['sideways'] }), /--direction: expected down or up/);
    assert.throws(() => validateBulkMatrix({ ...m, directions: [] }), /--direction: name down, up or both/);
    assert.throws(
      () => validateBulkMatrix({ ...m, protocols: ['browser-h2'], directions: ['up'] }),
      /--direction up: browser-h2 only downloads/,
    );
    assert.throws(() => validateBulkMatrix({ ...m, protocols: ['h3'] }), /unknown bulk protocol "h3"/);
    assert.throws(() => validateBulkMatrix({ ...m, size_bytes: 5 }), /--duration or --size/);
    assert.throws(() => validateBulkMatrix({ ...m, duration_s: null }), /--duration or --size/);
    assert.throws(() => validateBulkMatrix({ ...m, losses: [101] }), /--loss/);
    assert.throws(() => validateBulkMatrix({ ...m, profiles: ['nowhere'] }), /unknown profile/);
    assert.throws(() => validateBulkMatrix({ ...m, runs: 0 }), /-n/);
  });

  it('satbulk get arguments', () => {
    const q = satbulkGetArgs(
      { protocol: 'quic-pep', duration_s: 15 },
      { addr: '198.18.1.1:443', ca: '/c.pem', timeoutS: 45, quicArgs: ['--bdp-bytes', '1450000'] },
    );
    assert.deepEqual(q, [
      'get',
      'quic',
      '--addr',
      '198.18.1.1:443',
      '--json',
      '--bin-ms',
      '100',
      '--duration',
      '15',
      '--timeout',
      '45',
      '--ca',
      '/c.pem',
      '--name',
      'satbench.test',
      '--bdp-bytes',
      '1450000',
    ]);
    const t = satbulkGetArgs({ protocol: 'tcp-pep', size_bytes: 2e6 }, { addr: '198.18.3.2:5201', binMs: 50 });
    assert.deepEqual(t, ['get', 'tcp', '--addr', '198.18.3.2:5201', '--json', '--bin-ms', '50', '--bytes', '2000000']);
    const up = satbulkGetArgs({ protocol: 'tcp', size_bytes: 2e6, direction: 'up' }, { addr: 'a:1' });
    assert.deepEqual(up.slice(6, 10), ['100', '--direction', 'up', '--bytes']);
  });

  it('gives a sized download four times its time at the link rate', () => {
    assert.equal(transferTimeoutS({ duration_s: 15 }, 20), 45);
    assert.equal(transferTimeoutS({ size_bytes: 100e6 }, 10), 380);
    assert.equal(transferTimeoutS({ size_bytes: 100e6 }, null), 600);
  });

  it('PEP hop settings', () => {
    const side = parsePepSide('cc=newreno,initial-window=100', '--pep-sat');
    assert.deepEqual(side, { cc: 'newreno', 'initial-window': '100' });
    assert.deepEqual(tcpPepSide(side), { cc: 'newreno', 'initial-window': 100 });
    assert.deepEqual(quicPepSide(side), side);
    assert.throws(() => parsePepSide('window=3', '--pep-sat'), /unknown option "window"/);
    assert.throws(() => parsePepSide('initial-window=lots', '--pep-sat'), /whole number/);
    assert.throws(() => tcpPepSide({ 'ack-frequency': true }), /QUIC option/);
    assert.throws(() => quicPepSide({ sndbuf: '1' }), /TCP option/);
  });
});

describe('bulk: a browser download from DevTools events', () => {
  const pageUrl = 'https://satbench.test/bulk.html';
  const fileUrl = 'https://satbench.test/size-2000.bin';
  const events = (extra = {}) => ({
    requests: [
      { id: 'p', url: pageUrl, ts: 10 },
      { id: 'f', url: fileUrl, ts: 10.1 },
    ],
    responses: {
      p: { protocol: 'h2', timing: { requestTime: 10.001, connectEnd: 60 } },
      f: { protocol: 'h2', status: 200 },
    },
    data: [
      ['f', 10.15, 1000],
      ['f', 10.25, 1000],
      ['p', 10.05, 500],
    ],
    finished: { f: 10.26 },
    failed: {},
    ...extra,
  });

  it("bins the file's bytes from the page request", () => {
    const d = browserDownload(events(), { pageUrl, fileUrl, binMs: 100, sizeBytes: 2000 });
    assert.deepEqual(d.bins, [0, 1000, 1000]);
    assert.equal(d.bytes, 2000);
    assert.ok(d.complete);
    near(d.ttfb_ms, 150, 1e-6);
    near(d.duration_ms, 250, 1e-6);
    near(d.connect_ms, 61, 1e-6);
    near(d.file_request_ms, 100, 1e-6);
    assert.equal(d.protocol, 'h2');
    assert.equal(d.error, null);
  });

  it("starts at the page's requestTime when the network stack stamped it before requestWillBeSent", () => {
    // the request (and its connection) began 8 ms before the event's stamp:
    // a 30 ms connect must not read as 22 ms
    const e = events();
    e.responses.p.timing = { requestTime: 9.992, connectEnd: 30 };
    const d = browserDownload(e, { pageUrl, fileUrl, binMs: 100, sizeBytes: 2000 });
    near(d.connect_ms, 30, 1e-6);
    near(d.ttfb_ms, 158, 1e-6);
    near(d.file_request_ms, 108, 1e-6);
  });

  it('starts at the navigation when Chromium connected before the request it was given to', () => {
    // the loading predictor opened the connection at the navigation's start,
    // 6 ms before the request: connectEnd (24 ms after requestTime) hides it
    const e = { ...events(), navStart: 9.994 };
    e.responses.p.timing = { requestTime: 10, connectEnd: 24 };
    const d = browserDownload(e, { pageUrl, fileUrl, binMs: 100, sizeBytes: 2000 });
    near(d.connect_ms, 30, 1e-6);
    near(d.ttfb_ms, 156, 1e-6);
  });

  it('a timed download counts only its duration; the abort at its end is no failure', () => {
    const d = browserDownload(events({ failed: { f: { error: 'net::ERR_ABORTED', ts: 10.5 } } }), {
      pageUrl,
      fileUrl,
      binMs: 100,
      durationMs: 200,
    });
    assert.deepEqual(d.bins, [0, 1000]);
    assert.equal(d.bytes, 1000);
    assert.equal(d.error, null);
    assert.ok(d.complete);
  });

  it('a failure before the end is one', () => {
    const d = browserDownload(events({ failed: { f: { error: 'net::ERR_CONNECTION_RESET', ts: 10.2 } } }), {
      pageUrl,
      fileUrl,
      binMs: 100,
      durationMs: 1000,
    });
    assert.match(d.error, /ERR_CONNECTION_RESET/);
    assert.equal(d.complete, false);
    const sized = browserDownload(
      events({ data: [['f', 10.15, 1000]], failed: { f: { error: 'net::ERR_ABORTED', ts: 10.2 } } }),
      { pageUrl, fileUrl, binMs: 100, sizeBytes: 2000 },
    );
    assert.match(sized.error, /ERR_ABORTED/);
    assert.equal(
      browserDownload({ ...events(), requests: [] }, { pageUrl, fileUrl, binMs: 100 }).error,
      'the download page was not requested',
    );
  });
});

describe('bulk: summary', () => {
  const rec = (protocol, run, bins, extra = {}) => ({
    kind: 'bulk',
    scenario: { profile: 'quic4sat-medium', loss_pct: null, protocol, size_bytes: 100e6 },
    run,
    ok: true,
    error: null,
    link_rate_mbps: 50,
    goodput: { bin_ms: 1000, bins },
    metrics: { time_to_2mb_ms: 2000 * bins.length, bytes_at_1s: bins[0] },
    ...extra,
  });
  const records = [
    rec('quic', 1, [1e6, 2e6]),
    rec('quic', 2, [1e6, 2e6]),
    rec('quic-pep', 1, [2e6, 4e6]),
    rec('quic-pep', 2, [2e6, 4e6]),
    { ...rec('quic-pep', 3, []), ok: false, error: 'boom', metrics: null, goodput: null },
    {
      scenario: { profile: 'geo', loss_pct: 0, protocol: 'h1', site: 'kepler' },
      run: 1,
      ok: true,
      metrics: { plt_ms: 1 },
    },
  ];
  const groups = summarize(records); // curves, objectives and PEP ratios come with the statistics

  it('adds the curve, the objectives and the PEP ratio to bulk groups only', () => {
    const pageload = groups.find((g) => !g.kind);
    assert.ok(!('curve' in pageload), 'page-load groups keep their shape');
    const quic = groups.find((g) => g.kind === 'bulk' && g.scenario.protocol === 'quic');
    const pep = groups.find((g) => g.kind === 'bulk' && g.scenario.protocol === 'quic-pep');
    assert.deepEqual(quic.curve.mean_bytes, [1e6, 3e6]);
    assert.equal(quic.metrics.bytes_at_1s.median, 1e6);
    assert.equal(quic.link_rate_mbps, 50);
    assert.deepEqual(pep.vs_no_pep.ratio, [2, 2]);
    assert.equal(pep.vs_no_pep.protocol, 'quic');
    assert.equal(pep.failed, 1);
    assert.equal(pep.objectives.scenario, 'medium');
    // 2 MB in 4 s twice and one failed run: the median misses 3 s by 1 s
    assert.deepEqual(pep.objectives.results[0], {
      bytes: 2e6,
      limit_s: 3,
      median_s: 4,
      met: false,
      runs_met: 0,
      runs: 3,
      over_s: 1,
    });
  });

  it('prints a table of the medians', () => {
    const text = formatBulkSummary({ groups });
    assert.match(text, /quic-pep/);
    assert.match(text, /2MB≤3s missed/);
    assert.equal(text.split('\n').length, 3);
  });
});
