// Records test/har-events.json, the fixture of test/unit/har-gather.test.js:
// the DevTools events of real page loads (h3 and h1 over a short-delay
// testbed, our origin serving a four-object page) as gather/har.js records
// them, beside what each load's record says; and (`failed`) an h2 load of
// a page with two requests that fail before any response: an image from a
// port nothing listens on, a script over cleartext (mixed content, blocked).
// Run once, as root, when the events Chromium sends change:
// node test/integration/capture-har-events.js
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SHORT, tinySite, writeProfile } from './helpers.js';
import { createTestbed } from '../../harness/testbed/testbed.js';
import { loadProfile } from '../../harness/testbed/profiles.js';
import { loadPage } from '../../harness/pageload/load.js';
import { startOrigin } from '../../harness/servers/origin.js';
import har from '../../harness/pageload/gather/har.js';

const OUT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'har-events.json');

// helpers.js's three-object page, with a deferred script
function site() {
  const dir = tinySite();
  fs.writeFileSync(path.join(dir, 'a.js'), `window.filler = "${'x'.repeat(20000)}";\n`);
  fs.writeFileSync(
    path.join(dir, 'index.html'),
    '<!doctype html><html><head><link rel="stylesheet" href="s.css"><script src="a.js" defer></script></head>' +
      '<body><h1>Over the satellite</h1><img src="p.gif" width="1" height="1"></body></html>',
  );
  return dir;
}

// site()'s page, and two requests that fail before any response
function failingSite() {
  const dir = site();
  fs.writeFileSync(
    path.join(dir, 'index.html'),
    '<!doctype html><html><head><link rel="stylesheet" href="s.css"><script src="http://satbench.test/a.js"></script></head>' +
      '<body><h1>Over the satellite</h1><img src="p.gif" width="1" height="1"><img src="https://satbench.test:9/gone.gif"></body></html>',
  );
  return dir;
}

// The loads of `protocols` of the page in `siteDir`, each as gather/har.js
// records it, over a fresh short-delay testbed; a failing page's run is no
// valid measurement, but its HAR is built all the same.
async function capture(siteDir, protocols, { failing = false } = {}) {
  const tb = await createTestbed({ profile: loadProfile(writeProfile(SHORT)), link: 'linkem' });
  try {
    const { spki } = await startOrigin(tb, { siteDir });
    const loads = [];
    for (const protocol of protocols) {
      const g = har();
      const rec = await loadPage({ clientNs: tb.ns.client, protocol, spki, timeoutMs: 60000, gatherers: [g] });
      if ((!rec.ok && !failing) || !rec.har)
        throw new Error(`${protocol}: ${rec.error ?? JSON.stringify(rec.not_captured)}`);
      const { navigation, resources, metrics, protocol_seen, errors } = rec;
      loads.push({ protocol, events: g.events, record: { navigation, resources, metrics, protocol_seen, errors } });
    }
    return loads;
  } finally {
    await tb.destroy();
  }
}

const loads = await capture(site(), ['h3', 'h1']);
const [failed] = await capture(failingSite(), ['h2'], { failing: true });
fs.writeFileSync(OUT, JSON.stringify({ captured: new Date().toISOString(), loads, failed }) + '\n');
console.log(`wrote ${OUT}`);
