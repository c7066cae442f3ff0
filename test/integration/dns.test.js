// An archive's names and addresses in a real testbed: dnsmasq in gw or st
// answers them, the client's resolver asks it (through /etc/netns), the
// origins' addresses on the server are reachable, and nothing is left.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createTestbed, inNs } from '../../harness/testbed/testbed.js';
import { loadProfile } from '../../harness/testbed/profiles.js';
import { originAddress } from '../../harness/testbed/addressing.js';
import { NETNS_ETC } from '../../harness/testbed/resolver.js';
import { startDns } from '../../harness/servers/dns.js';
import { SHORT, writeProfile } from './helpers.js';

// One lookup from the client, timed: getent asks the resolver
// /etc/resolv.conf names, which `ip netns exec` takes from /etc/netns.
async function lookup(tb, name) {
  const t0 = process.hrtime.bigint();
  const r = await inNs(tb.ns.client, 'getent', ['ahostsv4', name], { allowFail: true });
  return { address: r.stdout.split(/\s+/)[0] || null, ms: Number(process.hrtime.bigint() - t0) / 1e6 };
}

describe('DNS for a replayed archive (integration)', function () {
  it('answers from gw across the satellite link, or from st before it, and the origins are reachable', async () => {
    const hosts = [
      { name: 'www.example.test', address: originAddress(0) },
      { name: 'cdn.example.test', address: originAddress(1) },
    ];
    const rtt = {};
    for (const place of ['gw', 'st']) {
      const tb = await createTestbed({
        profile: loadProfile(writeProfile(SHORT)), // 20 ms round trip over the satellite link
        link: 'linkem',
        serverAddresses: hosts.map((h) => h.address),
      });
      try {
        await startDns(tb, { place, hosts });
        assert.ok(fs.existsSync(`${NETNS_ETC}/${tb.ns.client}/resolv.conf`));
        const times = [];
        for (const h of hosts) {
          const r = await lookup(tb, h.name);
          assert.equal(r.address, h.address, `${place}: ${h.name}`);
          times.push(r.ms);
        }
        rtt[place] = Math.min(...times);
        assert.equal((await lookup(tb, 'unknown.example.test')).address, null, 'only the archive is answered');
        const ping = await inNs(tb.ns.client, 'ping', ['-c', '1', '-W', '2', originAddress(1)], { allowFail: true });
        assert.ok(ping.ok, `${place}: the second origin's address answers: ${ping.stdout}${ping.stderr}`);
        assert.match(fs.readFileSync(`${tb.dir}/dns.log`, 'utf8'), /query\[A\] www\.example\.test/);
      } finally {
        await tb.destroy();
      }
      assert.ok(!fs.existsSync(`${NETNS_ETC}/${tb.ns.client}`), 'the resolver goes with the testbed');
    }
    // gw's answers cross the 20 ms satellite round trip, st's do not.
    assert.ok(rtt.gw >= 18, `a lookup in gw took ${rtt.gw.toFixed(1)} ms`);
    assert.ok(rtt.st < rtt.gw - 10, `st ${rtt.st.toFixed(1)} ms, gw ${rtt.gw.toFixed(1)} ms`);
  });
});
