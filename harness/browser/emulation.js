// CPU and device emulation of a page load (`bench --cpu-slowdown N
// --device NAME`): checked here once, applied to a page before its
// navigation through puppeteer (which carries it into the page's
// out-of-process frames and workers), and given to Lighthouse as its own
// settings (pageload/lighthouse.js) so that both loads run alike.
import { UsageError } from '../core/errors.js';
import { DEFAULTS } from '../core/defaults.js';
import { DEVICES } from './devices.js';

// DevTools' throttling slows the renderer by this factor at most: beyond
// it a page load of seconds would take hours.
export const MAX_CPU_SLOWDOWN = 100;

/**
 * Pure: --cpu-slowdown's factor, as typed (text) or as a campaign saved it
 * (a number): from 1 (no slowdown) to MAX_CPU_SLOWDOWN, fractions allowed.
 */
export function cpuSlowdown(v) {
  const n = typeof v === 'number' ? v : /^\s*\d+(\.\d+)?\s*$/.test(String(v)) ? Number(v) : NaN;
  if (!(n >= 1 && n <= MAX_CPU_SLOWDOWN))
    throw new UsageError(
      `--cpu-slowdown: expected a number from 1 (no slowdown) to ${MAX_CPU_SLOWDOWN} (4: the page's CPU work takes 4 times as long), got ${JSON.stringify(v)}`,
    );
  return n;
}

/** Pure: the device of devices.js named `name`; an unknown one is a UsageError naming the known ones. */
export function deviceNamed(name) {
  if (typeof name === 'string' && Object.hasOwn(DEVICES, name)) return DEVICES[name];
  throw new UsageError(
    `--device: unknown device ${JSON.stringify(name)}; known devices: ${Object.keys(DEVICES).join(', ')}`,
  );
}

/** Pure: a plan's emulation settings checked: {cpuSlowdown, device} with their defaults. */
export function checkEmulation({ cpuSlowdown: slowdown = DEFAULTS.cpuSlowdown, device = DEFAULTS.device } = {}) {
  deviceNamed(device);
  return { cpuSlowdown: cpuSlowdown(slowdown), device };
}

/** Pure: what a page-load record says of its emulation (record.emulation). */
export const emulationRecord = ({ cpuSlowdown: slowdown = DEFAULTS.cpuSlowdown, device = DEFAULTS.device } = {}) => ({
  cpu_slowdown: slowdown,
  device,
});

/** Pure: what summary.json's meta.settings says of the emulation: the record's and the device's values. */
export function emulationSettings(emulation) {
  const e = emulationRecord(emulation);
  const d = deviceNamed(e.device);
  return {
    ...e,
    width: d.width,
    height: d.height,
    device_scale_factor: d.deviceScaleFactor,
    mobile: d.mobile,
    touch: d.touch,
    user_agent: d.userAgent,
  };
}

/**
 * Pure: the user agent and client hints device `d` gives a page in the
 * Chromium whose version is `browserVersion` ("HeadlessChrome/142.0.7444.59"):
 * the device's Chrome version made the running one's major version (as
 * Lighthouse does, so that both loads send the same), or null for
 * Chromium's own.
 */
export function userAgentOf(d, browserVersion) {
  if (!d.userAgent) return null;
  const major = /(\d+)\.\d+\.\d+\.\d+/.exec(browserVersion)?.[1];
  if (!major) throw new Error(`cannot read Chromium's version from ${JSON.stringify(browserVersion)}`);
  const fullVersion = `${major}.0.0.0`;
  return {
    userAgent: d.userAgent.replace(/(Chrome\/)[\d.]+/, `$1${fullVersion}`),
    userAgentMetadata: {
      brands: [
        { brand: 'Chromium', version: major },
        { brand: 'Google Chrome', version: major },
      ],
      fullVersion,
      ...d.clientHints,
      mobile: d.mobile,
    },
  };
}

/**
 * Applies `emulation` ({cpuSlowdown, device}) to a puppeteer page before
 * its navigation: viewport, pixel ratio, mobile and touch, user agent,
 * CPU throttling (Emulation.setCPUThrottlingRate). Throws when DevTools
 * refuses: a load without the emulation asked for is not a measurement of
 * its scenario.
 */
export async function emulate(page, { cpuSlowdown: slowdown = DEFAULTS.cpuSlowdown, device = DEFAULTS.device } = {}) {
  const d = deviceNamed(device);
  await page.setViewport({
    width: d.width,
    height: d.height,
    deviceScaleFactor: d.deviceScaleFactor,
    isMobile: d.mobile,
    hasTouch: d.touch,
  });
  const ua = userAgentOf(d, await page.browser().version());
  if (ua) await page.setUserAgent(ua);
  if (slowdown !== 1) await page.emulateCPUThrottling(slowdown);
}
