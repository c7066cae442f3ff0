// Chromium as every browser run starts it: the system's Chromium in the
// testbed's client namespace, driven by puppeteer-core over a pipe, with a
// fresh profile folder that is removed afterwards, and the command line
// that makes it talk the protocol a run asks for to our origin (or to the
// QUIC PEP in st) under the site's name.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import puppeteer from 'puppeteer-core';
import { ADDRESSES, SITE_HOST } from '../testbed/addressing.js';
import { baseProtocol } from '../core/protocols.js';
import { which } from '../core/sys.js';

export function chromePath() {
  return process.env.CHROME_PATH || '/usr/bin/chromium';
}

// Pure: the site's address for `protocol` (h1 is cleartext, the rest TLS).
export function siteUrl(protocol) {
  return `${baseProtocol(protocol) === 'h1' ? 'http' : 'https'}://${SITE_HOST}/`;
}

// Every Chromium of ours, as root and headless: without the networking
// flags it keeps calling Google, which this network refuses, and every
// request seen would no longer be the page's.
export const QUIET_CHROMIUM_FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--no-default-browser-check',
  '--disable-default-apps',
  '--mute-audio',
];

// Pure: Chromium's command line for one run of `protocol`.
export function chromiumArgs(protocol, { userDataDir, spki, serverAddr = ADDRESSES.server }) {
  const p = baseProtocol(protocol);
  const args = [
    '--headless=new',
    ...QUIET_CHROMIUM_FLAGS,
    '--remote-debugging-pipe',
    `--user-data-dir=${userDataDir}`,
    '--window-size=1280,1024',
    `--host-resolver-rules=MAP ${SITE_HOST} ${serverAddr}`,
    // Cleartext h1 must stay cleartext: no automatic upgrade to HTTPS.
    '--disable-features=HttpsUpgrades,HttpsFirstBalancedModeAutoEnable,HttpsFirstModeV2ForTypicallySecureUsers',
  ];
  if (p !== 'h1') args.push(`--ignore-certificate-errors-spki-list=${spki}`);
  if (p === 'h3') args.push('--enable-quic', `--origin-to-force-quic-on=${SITE_HOST}:443`);
  else args.push('--disable-quic');
  if (p === 'h1s') args.push('--disable-http2');
  return args;
}

// A fresh Chromium in the client namespace, driven over a pipe.
export function launchChromium({ clientNs, protocol, spki, serverAddr, userDataDir, timeoutMs = 120000 }) {
  return puppeteer.launch({
    executablePath: which('ip'), // runs Chromium in the client namespace: `ip netns exec NS chromium …`
    ignoreDefaultArgs: true,
    pipe: true,
    args: [
      'netns',
      'exec',
      clientNs,
      chromePath(),
      ...chromiumArgs(protocol, { userDataDir, spki, serverAddr }),
      'about:blank',
    ],
    timeout: 30000,
    protocolTimeout: timeoutMs + 10000,
  });
}

// Closes a Chromium of launchChromium (killing it if it does not answer)
// and removes its profile, so no run inherits another's state.
export async function closeChromium(browser, userDataDir) {
  try {
    await browser?.close();
  } catch {
    browser?.process()?.kill('SIGKILL');
  }
  fs.rmSync(userDataDir, { recursive: true, force: true });
}

/**
 * Runs `use(browser)` with a fresh Chromium (see launchChromium; its
 * DevTools calls may take `timeoutMs`), kills it if it is still there after
 * `killAfterMs` (a hung browser), and always closes it and removes its
 * profile. Returns what `use` returns; a failed launch throws.
 */
export async function withChromium(
  { clientNs, protocol, spki, serverAddr, timeoutMs = 120000, killAfterMs = timeoutMs + 15000 },
  use,
) {
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'satbench-chromium-'));
  let browser;
  const killer = setTimeout(() => browser?.process()?.kill('SIGKILL'), killAfterMs);
  try {
    browser = await launchChromium({ clientNs, protocol, spki, serverAddr, userDataDir, timeoutMs });
    return await use(browser);
  } finally {
    clearTimeout(killer);
    await closeChromium(browser, userDataDir);
  }
}
