import assert from 'node:assert/strict';
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
  resumeFloorMs,
} from '../../harness/results/goodput.js';

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

describe("goodput: Careful Resume's floor", () => {
  // geo: 20 Mbit/s (2500 B/ms), 580 ms, a BDP of 1.45 MB
  const geo = { ttfbMs: 1167, rttMs: 580, rateBps: 20e6, iwBytes: 12_000 };
  it('is the initial window at ttfb, half the saved window over the next round trip, then the link rate', () => {
    near(
      resumeFloorMs({ ...geo, savedBytes: 1.45e6, sizeBytes: 10e6 }),
      1167 + 1160 + (10e6 - 12_000 - 725_000) / 2500,
    );
    // a size within the jump arrives at the jump's paced rate
    near(resumeFloorMs({ ...geo, savedBytes: 1.45e6, sizeBytes: 12_000 + 362_500 }), 1167 + 580 + 290);
    assert.equal(resumeFloorMs({ ...geo, savedBytes: 1.45e6, sizeBytes: 10_000 }), 1167);
  });
  it('never jumps beyond the path: a saved window of twice the BDP or none gives the link rate from the second round trip', () => {
    const full = 1167 + 580 + (10e6 - 12_000) / 2500;
    near(resumeFloorMs({ ...geo, savedBytes: 2.9e6, sizeBytes: 10e6 }), full);
    near(resumeFloorMs({ ...geo, sizeBytes: 10e6 }), full);
    near(resumeFloorMs({ ...geo, savedBytes: 5.8e6, sizeBytes: 10e6 }), full);
  });
});
