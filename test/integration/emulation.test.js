// bench --cpu-slowdown and --device on real page loads: a page that times
// a fixed piece of JavaScript and reads its own viewport and user agent,
// and sends what it saw back as the query of an image it loads (Resource
// Timing keeps the URL in the record). Lighthouse loads with the same
// settings. Short delays, as the other integration tests.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { satbench, SHORT, records, tinySite, writeProfile, leftBehind } from './helpers.js';

// The page's own work, timed in the page: the median of five rounds.
const PAGE = `<!doctype html><html><head><meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body><h1>How fast, how wide</h1><script>
function work() { let x = 1; for (let i = 0; i < 2000000; i++) x = (x * 1103515245 + 12345 + i) % 2147483647; return x; }
const rounds = [];
for (let r = 0; r < 5; r++) { const t0 = performance.now(); work(); rounds.push(performance.now() - t0); }
rounds.sort((a, b) => a - b);
const seen = { work_ms: rounds[2], width: innerWidth, height: innerHeight, dpr: devicePixelRatio,
  touch: navigator.maxTouchPoints, ua: navigator.userAgent, mobile: navigator.userAgentData ? navigator.userAgentData.mobile : null };
const img = document.createElement('img');
img.src = 'p.gif?' + encodeURIComponent(JSON.stringify(seen));
document.body.appendChild(img);
</script></body></html>`;

// What the page saw, from the image URL in the record's resources.
function seenBy(rec) {
  const beacon = rec.resources.find((r) => new URL(r.name).pathname === '/p.gif' && new URL(r.name).search);
  assert.ok(beacon, `no report from the page among ${rec.resources.map((r) => r.name).join(', ')}`);
  return JSON.parse(decodeURIComponent(new URL(beacon.name).search.slice(1)));
}

describe('CPU and device emulation (integration, real Chromium)', function () {
  this.timeout(400000);

  it('--cpu-slowdown 4 makes the page’s own work slower; --device mobile gives it the mobile viewport and user agent, in Lighthouse’s load too', async () => {
    const site = tinySite();
    fs.writeFileSync(path.join(site, 'index.html'), PAGE);
    const profile = writeProfile(SHORT);
    const base = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-emulation-')));
    const common = ['bench', '--profile', profile, '--protocol', 'h2', '--site', site, '-n', '1'];

    const plain = await satbench([...common, '--out', path.join(base, 'plain')], { timeoutMs: 180000 });
    assert.equal(plain.code, 0, plain.stderr);
    // the table of medians, then where the results are
    assert.match(
      plain.stdout,
      /^Medians in ms over each scenario's successful runs:\nprofile +loss +protocol +site +Response Start +FCP +Speed Index +LCP +PLT +runs +failed\n.* h2 /,
    );
    assert.match(
      plain.stderr,
      /results in .*plain\/ \(results\.jsonl, summary\.json, index\.html\); 0 failed run\(s\)\n$/,
    );
    const [a] = records(path.join(base, 'plain'));
    assert.equal(a.ok, true, a.error);
    assert.deepEqual(a.emulation, { cpu_slowdown: 1, device: 'desktop' });
    const desktop = seenBy(a);
    assert.deepEqual([desktop.width, desktop.height, desktop.dpr, desktop.touch], [1280, 1024, 1, 0]);
    assert.match(desktop.ua, /HeadlessChrome\/\d+/, "Chromium's own user agent");
    assert.equal(desktop.mobile, false);
    assert.equal(typeof a.machine.cpu_busy_pct, 'number', JSON.stringify(a.machine));
    // the run's own Chromium was found and its work counted (the page's loop alone is ~100 ms of CPU)
    assert.ok(
      a.machine.browser_cpu_pct > 0 && a.machine.browser_cpu_pct <= a.machine.cpu_busy_pct,
      JSON.stringify(a.machine),
    );
    assert.equal(typeof a.machine.busy, 'boolean');
    const plainSummary = JSON.parse(fs.readFileSync(path.join(base, 'plain/summary.json'), 'utf8'));
    assert.ok(plainSummary.meta.cpu_benchmark.score_ms > 0);

    const slow = path.join(base, 'slow');
    const emulated = await satbench(
      [...common, '--cpu-slowdown', '4', '--device', 'mobile', '--lighthouse', '--out', slow, '--json'],
      { timeoutMs: 300000 },
    );
    assert.equal(emulated.code, 0, emulated.stderr);
    assert.equal(JSON.parse(emulated.stdout).meta.settings.emulation.device, 'mobile', '--json: summary.json only');
    const [b] = records(slow);
    assert.equal(b.ok, true, b.error);
    assert.deepEqual(b.emulation, { cpu_slowdown: 4, device: 'mobile' });
    const mobile = seenBy(b);
    assert.deepEqual([mobile.width, mobile.height, mobile.dpr], [412, 823, 1.75]);
    assert.ok(mobile.touch > 0, 'touch');
    assert.match(
      mobile.ua,
      /^Mozilla\/5\.0 \(Linux; Android 11; moto g power \(2022\)\) .* Chrome\/\d+\.0\.0\.0 Mobile Safari/,
    );
    assert.equal(mobile.mobile, true, 'client hints say mobile');
    // DevTools' throttling slows the renderer about 4 times; 2 leaves room for a busy machine
    const ratio = mobile.work_ms / desktop.work_ms;
    assert.ok(
      ratio > 2,
      `the page's work took ${mobile.work_ms} ms throttled, ${desktop.work_ms} ms not (×${ratio.toFixed(2)})`,
    );

    // Lighthouse's load: the same screen, user agent and CPU slowdown
    assert.equal(b.lighthouse.error, null, JSON.stringify(b.lighthouse));
    const lhr = JSON.parse(fs.readFileSync(path.join(slow, b.lighthouse.json), 'utf8'));
    assert.equal(lhr.configSettings.formFactor, 'mobile');
    assert.equal(lhr.configSettings.throttling.cpuSlowdownMultiplier, 4);
    assert.equal(lhr.configSettings.throttling.downloadThroughputKbps, 0);
    assert.deepEqual([lhr.configSettings.screenEmulation.width, lhr.configSettings.screenEmulation.height], [412, 823]);
    assert.equal(lhr.environment.networkUserAgent, mobile.ua, 'the user agent of the measured load');
    // the page Lighthouse loaded was laid out at the mobile viewport (its full-page screenshot's CSS size)
    assert.deepEqual([lhr.fullPageScreenshot.screenshot.width, lhr.fullPageScreenshot.screenshot.height], [412, 823]);
    assert.deepEqual(await leftBehind(emulated.made), [], 'a run left these behind');
  });
});
