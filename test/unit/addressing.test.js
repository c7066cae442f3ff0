import assert from 'node:assert/strict';
import { UsageError } from '../../harness/core/errors.js';
import {
  LINK_PLAN,
  ROUTES,
  originAddress,
  NODES,
  ADDRESSES,
  FORWARDING,
  namespacesOf,
  parseNamespace,
  randomId,
} from '../../harness/testbed/addressing.js';

const toInt = (ip) => ip.split('.').reduce((acc, o) => acc * 256 + Number(o), 0);
const inPrefix = (ip, net, len) => toInt(ip) >>> (32 - len) === toInt(net) >>> (32 - len);

describe('address plan', () => {
  it('numbers every link inside 198.18.0.0/15 with both ends on one subnet, no address twice', () => {
    const seen = new Set();
    for (const l of LINK_PLAN) {
      for (const addr of [l.aAddr, l.bAddr]) {
        assert.ok(inPrefix(addr, '198.18.0.0', 15), `${addr} outside 198.18.0.0/15`);
        assert.ok(!seen.has(addr), `${addr} used twice`);
        seen.add(addr);
      }
      assert.ok(inPrefix(l.aAddr, l.bAddr, l.prefix), `${l.name}: ends on different subnets`);
    }
  });

  it('chains client ─ st ═ gw ─ server, emulating the satellite and internet links', () => {
    assert.deepEqual(
      LINK_PLAN.map((l) => [l.a, l.b, l.emulated]),
      [
        ['client', 'st', null],
        ['st', 'gw', 'satellite'],
        ['gw', 'server', 'internet'],
      ],
    );
    assert.deepEqual(FORWARDING, ['st', 'gw']);
    assert.equal(ADDRESSES.client, LINK_PLAN[0].aAddr);
    assert.equal(ADDRESSES.server, LINK_PLAN[2].bAddr);
  });

  it('routes every hop through a neighbour on a connected subnet, over the right device', () => {
    for (const node of NODES) {
      for (const r of ROUTES[node]) {
        const link = LINK_PLAN.find((l) => l.dev === r.dev && (l.a === node || l.b === node));
        assert.ok(link, `${node}: no link ${r.dev}`);
        const peer = link.a === node ? link.bAddr : link.aAddr;
        assert.equal(r.via, peer, `${node}: route ${r.to} should go via the peer of ${r.dev}`);
      }
    }
    // The client reaches the server and the server the client.
    const hop = (node, dst) => {
      const connected = LINK_PLAN.find((l) => (l.a === node || l.b === node) && inPrefix(dst, l.aAddr, l.prefix));
      if (connected) return connected.a === node ? connected.b : connected.a;
      const r = ROUTES[node].find(
        (x) => x.to === 'default' || inPrefix(dst, x.to.split('/')[0], Number(x.to.split('/')[1])),
      );
      const link = LINK_PLAN.find((l) => l.dev === r.dev && (l.a === node || l.b === node));
      return link.a === node ? link.b : link.a;
    };
    const walk = (from, dst, to) => {
      const pathTaken = [from];
      while (pathTaken.at(-1) !== to && pathTaken.length < 6) pathTaken.push(hop(pathTaken.at(-1), dst));
      return pathTaken;
    };
    assert.deepEqual(walk('client', ADDRESSES.server, 'server'), ['client', 'st', 'gw', 'server']);
    assert.deepEqual(walk('server', ADDRESSES.client, 'client'), ['server', 'gw', 'st', 'client']);
    // A replayed archive's origins live on the server, each at its own address.
    for (const i of [0, 249, 250, 1000])
      assert.deepEqual(walk('client', originAddress(i), 'server'), ['client', 'st', 'gw', 'server'], originAddress(i));
  });

  it("numbers an archive's origins inside their block, and refuses too many", () => {
    assert.equal(originAddress(0), '198.19.1.1');
    assert.equal(originAddress(249), '198.19.1.250');
    assert.equal(originAddress(250), '198.19.2.1');
    const seen = new Set(Array.from({ length: 600 }, (_, i) => originAddress(i)));
    assert.equal(seen.size, 600);
    for (const a of seen) assert.ok(inPrefix(a, '198.19.0.0', 16), a);
    assert.throws(() => originAddress(250 * 250), /at most 62500 origins/);
  });

  it('names namespaces with a per-testbed prefix and recognises only its own', () => {
    assert.deepEqual(namespacesOf('ab12'), {
      client: 'sbt-ab12-client',
      st: 'sbt-ab12-st',
      gw: 'sbt-ab12-gw',
      server: 'sbt-ab12-server',
    });
    assert.deepEqual(parseNamespace('sbt-ab12-gw'), { id: 'ab12', node: 'gw' });
    assert.equal(parseNamespace('sbt-ab12-router'), null);
    assert.equal(parseNamespace('other-ns'), null);
    for (const bad of ['Bad_Id', 'a b', '../x', 'abcdefghijklm', ''])
      assert.throws(
        () => namespacesOf(bad),
        (e) =>
          e instanceof UsageError &&
          e.message === `testbed id ${JSON.stringify(bad)}: expected 1 to 12 characters, each a-z or 0-9`,
        bad,
      );
    assert.match(randomId(), /^[a-z0-9]{6}$/);
  });
});
