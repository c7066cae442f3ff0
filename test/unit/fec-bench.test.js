// benchmarks/fec.js's pure parts: the medians per (fec, loss) and the table.
import assert from 'node:assert/strict';
import { summarise, tableLines, lossLabel, LOSSES } from '../../benchmarks/fec.js';

const run = (fec, loss, seed, over) => ({
  fec,
  loss,
  seed,
  sources: 1000,
  sources_lost: 10,
  repaired_share: 1,
  left_share: 0,
  overhead: 0.3,
  encode_mbps: 1000,
  decode_mbps: 2000,
  ...over,
});

describe('the FEC benchmark', () => {
  it('takes each metric’s median over the runs of one fec and loss', () => {
    const rows = summarise([
      run('8/10', 'random:1', 1, { sources_lost: 8, left_share: 0.002, encode_mbps: 900 }),
      run('8/10', 'random:1', 2, { sources_lost: 12, left_share: 0, encode_mbps: 1100 }),
      run('8/10', 'random:1', 3, { sources_lost: 10, left_share: 0.001, encode_mbps: 5000 }),
      run('4/6', 'random:1', 1, { repaired_share: 0.5 }),
    ]);
    assert.equal(rows.length, 2);
    const [a, b] = rows;
    assert.deepEqual(
      { fec: a.fec, loss: a.loss, runs: a.runs, lost: a.hop_lost_share, left: a.left_share, enc: a.encode_mbps },
      { fec: '8/10', loss: 'random:1', runs: 3, lost: 0.01, left: 0.001, enc: 1100 },
    );
    assert.equal(b.fec, '4/6');
    assert.equal(b.repaired_share, 0.5);
  });

  it('prints one aligned line per row under a header', () => {
    const lines = tableLines(summarise([run('16/20', 'burst:5:4', 1, { left_share: 0.01234 })]));
    assert.equal(lines.length, 2);
    assert.equal(lines[0].length, lines[1].length);
    assert.match(
      lines[1],
      /^16\/20 {2}bursts 5 %, mean 4 pkts\s+1\.00 %\s+100\.0 %\s+1\.234 %\s+30\.0 %\s+1000\s+2000$/,
    );
  });

  it('names every default loss model', () => {
    assert.deepEqual(
      LOSSES.map(lossLabel).filter((l) => l.includes('undefined')),
      [],
    );
    assert.equal(lossLabel('gemodel:1.7:93.5'), 'gemodel p 1.7 % r 93.5 %');
  });
});
