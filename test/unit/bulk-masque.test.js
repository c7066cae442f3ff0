// Bulk's quic-masque: satbulk's QUIC carried end to end through the MASQUE
// chain (h3-masque's): the matrix and plan that reach it, the TPROXY rule
// that must catch satbulk's QUIC port, and the record that says whether the
// download went through the tunnel.
import assert from 'node:assert/strict';
import { BULK_PROTOCOLS, REVISIT_PROTOCOLS, bulkPepKind } from '../../harness/bulk/matrix.js';
import { validateBulkMatrix, checkBulk } from '../../harness/cli/bulk-plan.js';
import { parsePepOptions } from '../../harness/cli/pep-options.js';
import { satbulkGetArgs, SATBULK_QUIC_PORT } from '../../harness/bulk/satbulk.js';
import { crossedTunnel } from '../../harness/bulk/run.js';
import { pepRecord } from '../../harness/pep/chain.js';
import { transparentNftRuleset } from '../../harness/pep/quic-chain.js';
import { variantPairs } from '../../harness/kinds/pep-variants.js';
import { summarize } from '../../harness/analysis/summary.js';
import { bulkRecord } from '../fixtures.js';

const profiles = () => ({});
const matrix = (protocols, extra = {}) => ({
  profiles: [],
  losses: [],
  runs: 1,
  duration_s: 1,
  size_bytes: null,
  protocols,
  ...extra,
});

// Proxy-ST's and Proxy-GW's counters after a satbulk download through the tunnel
const masqueStats = (over = {}) => ({
  st: {
    masque: {
      connections: 1,
      requests: 1,
      proxied: 1,
      refused: {},
      failed: 0,
      datagrams: { up: 300, down: 2000 },
      bytes: { up: 20000, down: 2500000 },
      dropped: 0,
      ...over,
    },
  },
  gw: { masque: { proxied: 1 } },
});

describe('bulk: quic-masque', () => {
  it("is satbulk's QUIC through the MASQUE chain", () => {
    assert.ok(BULK_PROTOCOLS.includes('quic-masque'));
    assert.equal(bulkPepKind('quic-masque'), 'masque');
    assert.deepEqual(validateBulkMatrix(matrix(['quic', 'quic-masque']), { profiles }).protocols, [
      'quic',
      'quic-masque',
    ]);
    // satbulk get speaks QUIC, to the server's own address (the chain gives none of its own)
    assert.deepEqual(
      satbulkGetArgs({ protocol: 'quic-masque', duration_s: 2 }, { addr: 'a:1', ca: '/c' }).slice(0, 2),
      ['get', 'quic'],
    );
  });

  it('gets the MASQUE chain its --pep-sat, fec=K/N too, and refuses --pep-tunnel per-connection', () => {
    const plan = checkBulk(matrix(['quic-masque']), { pep: parsePepOptions({ sat: 'fec=8/10,cc=bbr' }) }, { profiles });
    assert.deepEqual(Object.keys(plan.pepChains), ['masque']);
    assert.deepEqual(plan.pepChains.masque.sat, { fec: '8/10', cc: 'bbr' });
    assert.throws(
      () => checkBulk(matrix(['quic-masque']), { pep: parsePepOptions({ tunnel: 'per-connection' }) }, { profiles }),
      {
        name: 'UsageError',
        message:
          '--pep-tunnel per-connection: the MASQUE chain (h3-masque, quic-masque) carries every client flow over one standing HTTP/3 connection to Proxy-GW; use --pep-tunnel warm',
      },
    );
  });

  it("intercepts satbulk's QUIC port in st, not only the origin's", () => {
    const rules = transparentNftRuleset({ listen: '198.18.1.1:443', ports: [SATBULK_QUIC_PORT] });
    assert.match(rules, /udp dport \{ 4434 \} meta mark set 0x3 tproxy ip to 198\.18\.1\.1:443 accept/);
    assert.doesNotMatch(rules, /dport \{ 443 \}/);
  });

  it('counts a download only if it crossed the tunnel, and says why not', () => {
    const chain = { kind: 'masque', settings: { mode: 'datagram' } };
    const through = pepRecord(chain, masqueStats());
    assert.equal(through.masque.requests_opened, 1);
    assert.deepEqual(crossedTunnel('quic-masque', through), { ok: true, error: null });
    assert.deepEqual(crossedTunnel('quic-masque', pepRecord(chain, masqueStats({ requests: 0, proxied: 0 }))), {
      ok: false,
      error: 'not through the MASQUE tunnel: no proxying request',
    });
    assert.match(
      crossedTunnel('quic-masque', pepRecord(chain, masqueStats({ refused: { 403: 1 } }))).error,
      /Proxy-GW refused proxying requests: 1 × 403/,
    );
    // quic-pep's client connects to Proxy-ST itself: nothing to check there
    assert.deepEqual(crossedTunnel('quic-pep', { kind: 'quic', relayed: {} }), { ok: true, error: null });
  });

  it('is compared with quic and with quic-pep, in the summary too', () => {
    assert.deepEqual(
      variantPairs(['quic', 'quic-pep', 'quic-masque']).map((p) => `${p.a}/${p.b} ${p.kind}`),
      ['quic-pep/quic PEP vs no PEP', 'quic-masque/quic MASQUE vs no PEP', 'quic-masque/quic-pep MASQUE vs QUIC PEP'],
    );
    const groups = summarize([
      bulkRecord('quic', [1e6, 1e6]),
      bulkRecord('quic-pep', [2e6, 4e6]),
      bulkRecord('quic-masque', [1e6, 2e6]),
    ]);
    const m = groups.find((g) => g.scenario.protocol === 'quic-masque');
    assert.deepEqual([m.vs_no_pep.protocol, m.vs_no_pep.ratio], ['quic', [1, 1.5]]);
    assert.deepEqual(
      m.vs_variants.map((v) => [v.protocol, v.ratio]),
      [['quic-pep', [0.5, 0.5]]],
    );
  });

  it('makes a revisit, as quic and quic-pep do', () => {
    assert.ok(REVISIT_PROTOCOLS.includes('quic-masque'));
    assert.deepEqual(validateBulkMatrix(matrix(['quic-masque'], { views: ['revisit'] }), { profiles }).views, [
      'revisit',
    ]);
  });
});
