// The devices `bench --device` emulates in every measured load and in
// Lighthouse's (browser/emulation.js): the page's viewport (CSS pixels),
// device pixel ratio, whether it is a mobile one (Chromium then honours
// the page's <meta name="viewport">) with touch, and the user agent with
// its client hints (null: Chromium's own).
//
// Where the values come from:
// - desktop: Chromium's window (browser/chromium.js --window-size=1280,1024)
//   at device pixel ratio 1, no touch, Chromium's own user agent. (Before
//   --device, puppeteer's default viewport, 800×600, overrode the window:
//   earlier campaigns' pages were laid out at 800×600.)
// - mobile: Lighthouse's mobile device, a Moto G Power (2022) (Lighthouse
//   13.5.0, core/config/constants.js: screenEmulationMetrics.mobile and
//   userAgents.mobile; the client hints from its core/lib/emulation.js),
//   which Chrome DevTools' device list also has. A modest Android phone,
//   as satellite users often have; test/unit/emulation.test.js checks that
//   the values still are Lighthouse's.
export const DEVICES = Object.freeze({
  desktop: Object.freeze({
    width: 1280,
    height: 1024,
    deviceScaleFactor: 1,
    mobile: false,
    touch: false,
    userAgent: null,
    clientHints: null,
  }),
  mobile: Object.freeze({
    width: 412,
    height: 823,
    deviceScaleFactor: 1.75,
    mobile: true,
    touch: true,
    // Chrome/136.0.0.0 becomes the running Chromium's major version, as Lighthouse does
    userAgent:
      'Mozilla/5.0 (Linux; Android 11; moto g power (2022)) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/136.0.0.0 Mobile Safari/537.36',
    clientHints: Object.freeze({
      platform: 'Android',
      platformVersion: '11.0',
      architecture: '',
      model: 'moto g power (2022)',
    }),
  }),
});
