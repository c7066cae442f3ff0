// Chromium as every browser run starts it: the system's Chromium in the
// testbed's client namespace, driven by puppeteer-core over a pipe, with a
// fresh profile folder that is removed afterwards, and the command line
// that makes it talk the protocol a run asks for to our origin (or to the
// QUIC PEP in st) under the site's name. A profile folder is named after
// the satbench process that made it (PROFILE_PREFIX + PID), so that
// `satbench cleanup` knows a leftover one from one in use.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import puppeteer from 'puppeteer-core';
import { ADDRESSES, ORIGIN_PORT, SITE_HOST } from '../testbed/addressing.js';
import { alive } from '../testbed/processes.js';
import { baseProtocol } from '../core/protocols.js';
import { which } from '../core/sys.js';
import { unlessAborted } from '../core/abort.js';

export const PROFILE_PREFIX = 'satbench-chromium-';
// How long browser.close() may take before Chromium is killed: a page
// closes in well under a second; a browser that takes longer is hung.
export const CLOSE_MS = 5000;
// How long a killed Chromium may take to exit: SIGKILL of its process
// group is immediate unless the machine is swamped.
const EXIT_MS = 2000;
// How long after its DevTools timeout a browser call may run before
// Chromium is killed (withChromium's killAfterMs): its own timeouts fire
// first, this catches a call that has none (a hung close()).
export const KILL_GRACE_MS = 5000;

// Pure: the longest a withChromium call killed after `killAfterMs` takes,
// closing included.
export const browserBoundMs = (killAfterMs) => killAfterMs + CLOSE_MS + EXIT_MS;

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

// Pure: what every Chromium satbench drives is started with: headless and
// quiet, driven over a pipe, with its own profile folder.
export function baseChromiumArgs(userDataDir) {
  return [
    '--headless=new',
    ...QUIET_CHROMIUM_FLAGS,
    '--remote-debugging-pipe',
    `--user-data-dir=${userDataDir}`,
    '--window-size=1280,1024',
    // Cleartext http must stay cleartext: no automatic upgrade to HTTPS.
    '--disable-features=HttpsUpgrades,HttpsFirstBalancedModeAutoEnable,HttpsFirstModeV2ForTypicallySecureUsers',
  ];
}

/**
 * Pure: where a run's Chromium goes: the page's URL and the host names it
 * reaches, each with its address; `mapHosts`: Chromium maps them itself
 * (--host-resolver-rules), else the namespace's DNS answers them. A
 * reference site: SITE_HOST at `serverAddr` (the origin, or Proxy-ST).
 */
export function siteTarget(protocol, serverAddr = ADDRESSES.server) {
  return { url: siteUrl(protocol), hosts: [{ name: SITE_HOST, address: serverAddr }], mapHosts: true };
}

// Pure: Chromium's command line for one run of `protocol`. `netBenchmarking`:
// pages get chrome.benchmarking, whose closeConnections() a revisit closes
// the browser's connections with (closeConnections below).
export function chromiumArgs(
  protocol,
  { userDataDir, spki, serverAddr, target = siteTarget(protocol, serverAddr), netBenchmarking = false },
) {
  const p = baseProtocol(protocol);
  const args = [...baseChromiumArgs(userDataDir)];
  if (netBenchmarking) args.push('--enable-net-benchmarking');
  if (target.mapHosts)
    args.push(`--host-resolver-rules=${target.hosts.map((h) => `MAP ${h.name} ${h.address}`).join(', ')}`);
  if (p !== 'h1') args.push(`--ignore-certificate-errors-spki-list=${spki}`);
  if (p === 'h3')
    args.push(
      '--enable-quic',
      `--origin-to-force-quic-on=${target.hosts.map((h) => `${h.name}:${ORIGIN_PORT}`).join(',')}`,
    );
  else args.push('--disable-quic');
  if (p === 'h1s') args.push('--disable-http2');
  return args;
}

// A fresh Chromium in the client namespace (without `clientNs`, on this
// machine's own network), driven over a pipe, with the command line of a
// run of `protocol`, or `args(userDataDir)` when given. `signal` kills it
// (its process group), during the launch too.
export function launchChromium({
  clientNs,
  protocol,
  spki,
  target,
  netBenchmarking = false,
  args = (dir) => chromiumArgs(protocol, { userDataDir: dir, spki, target, netBenchmarking }),
  userDataDir,
  timeoutMs,
  signal,
}) {
  // in the namespace: `ip netns exec NS chromium …`
  const [executablePath, ...command] = clientNs
    ? [which('ip'), 'netns', 'exec', clientNs, chromePath()]
    : [chromePath()];
  return puppeteer.launch({
    signal,
    // satbench's own handlers tear the testbed down and record the run;
    // puppeteer's would exit first (SIGINT: process.exit(130)).
    handleSIGINT: false,
    handleSIGTERM: false,
    handleSIGHUP: false,
    executablePath,
    ignoreDefaultArgs: true,
    pipe: true,
    // Chromium's temporary files (org.chromium.Chromium.*) go into its
    // profile folder, which is removed with it, not into /tmp for good.
    env: { ...process.env, TMPDIR: userDataDir },
    args: [...command, ...args(userDataDir), 'about:blank'],
    timeout: 30000,
    protocolTimeout: timeoutMs + 10000,
  });
}

// Kills Chromium and its children (puppeteer starts it as a process
// group leader) at once.
function kill(browser) {
  const proc = browser?.process();
  if (!proc?.pid || exitedAlready(proc)) return;
  try {
    process.kill(-proc.pid, 'SIGKILL');
  } catch {
    proc.kill('SIGKILL');
  }
}

const exitedAlready = (proc) => !proc || proc.exitCode !== null || proc.signalCode !== null;

function exitOf(browser, ms) {
  const proc = browser?.process();
  if (exitedAlready(proc)) return Promise.resolve();
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    proc.once('exit', () => {
      clearTimeout(t);
      resolve();
    });
  });
}

// Closes a Chromium of launchChromium, killing it if it does not answer
// within CLOSE_MS (a hung browser would hold close() for puppeteer's
// protocol timeout). A Chromium already gone (killed on an abort) is not
// asked: its close() may never settle. Takes CLOSE_MS + EXIT_MS at most.
export async function closeChromium(browser) {
  if (browser) {
    let timer;
    const late = new Promise((r) => (timer = setTimeout(r, CLOSE_MS)));
    try {
      if (!exitedAlready(browser.process())) await Promise.race([browser.close(), late]);
    } catch {
      /* killed below */
    } finally {
      clearTimeout(timer);
      kill(browser);
    }
    await exitOf(browser, EXIT_MS);
  }
}

// The profiles of the Chromiums this process runs, removed as it exits
// (a second signal exits at once; puppeteer kills Chromium on exit).
const liveProfiles = new Set();
let exitHook = false;

/**
 * Runs `use(userDataDir)` with a new, empty profile folder and removes it
 * afterwards, so no run inherits another's state (withChromium makes one
 * of its own unless given this one: a repeat view's two Chromiums share it).
 */
export async function withProfile(use) {
  const dir = makeProfile();
  try {
    return await use(dir);
  } finally {
    removeProfile(dir);
  }
}

function makeProfile() {
  if (!exitHook) {
    exitHook = true;
    process.on('exit', () => {
      for (const dir of liveProfiles) fs.rmSync(dir, { recursive: true, force: true });
    });
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `${PROFILE_PREFIX}${process.pid}-`));
  liveProfiles.add(dir);
  return dir;
}

function removeProfile(dir) {
  fs.rmSync(dir, { recursive: true, force: true });
  liveProfiles.delete(dir);
}

// Pure: the PID of the satbench process a profile folder's name belongs
// to, null for a name of another form (made before names carried it).
export function profileOwner(name) {
  const m = new RegExp(`^${PROFILE_PREFIX}(\\d+)-`).exec(name);
  return m ? Number(m[1]) : null;
}

/**
 * The Chromium profile folders in the temporary folder that no running
 * satbench uses (with `all`, every one), removed. Returns their paths.
 */
export function removeStaleProfiles({ all = false, dir = os.tmpdir() } = {}) {
  const stale = fs
    .readdirSync(dir)
    .filter((n) => n.startsWith(PROFILE_PREFIX))
    .filter((n) => all || !alive(profileOwner(n)))
    .map((n) => path.join(dir, n));
  for (const p of stale) fs.rmSync(p, { recursive: true, force: true });
  return stale;
}

/**
 * Runs `use(browser)` with a fresh Chromium (see launchChromium; its
 * DevTools calls may take `timeoutMs`) on a new profile (or on
 * `userDataDir`, withProfile's, which the caller removes), and always
 * closes it and removes the profile it made. Chromium is killed, and the
 * call fails at once whatever `use` is waiting on, after `killAfterMs` from
 * the start (a hung browser; closing included) or when `signal` aborts (the
 * run was interrupted or a helper died); closing takes CLOSE_MS + EXIT_MS
 * at most, so a call never takes longer than killAfterMs and those.
 * Returns what `use` returns; a failed launch throws. `timeoutMs` has no
 * default: the campaign's plan gives it.
 */
export async function withChromium(options, use) {
  if (options.userDataDir) return chromiumOn(options.userDataDir, options, use);
  return withProfile((dir) => chromiumOn(dir, options, use));
}

async function chromiumOn(
  userDataDir,
  {
    clientNs,
    protocol,
    spki,
    target,
    args,
    netBenchmarking,
    timeoutMs,
    killAfterMs = timeoutMs + KILL_GRACE_MS,
    signal,
  },
  use,
) {
  if (!(timeoutMs > 0)) throw new Error(`withChromium: timeoutMs must be a number of ms > 0, got ${timeoutMs}`);
  signal?.throwIfAborted();
  let browser;
  const stop = new AbortController(); // puppeteer kills Chromium when it aborts
  const killer = setTimeout(() => stop.abort(new Error(`Chromium killed after ${killAfterMs} ms`)), killAfterMs);
  const onAbort = () => stop.abort(signal.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    // puppeteer's launch may never settle when Chromium is killed as it starts
    browser = await unlessAborted(
      launchChromium({
        clientNs,
        protocol,
        spki,
        target,
        args,
        netBenchmarking,
        userDataDir,
        timeoutMs,
        signal: stop.signal,
      }),
      stop.signal,
      (late) => kill(late),
    );
    signal?.throwIfAborted();
    // ends when Chromium is killed, whether or not `use` notices: a
    // navigation whose page session went with the browser may wait for its
    // own timeout
    return await unlessAborted(use(browser), stop.signal);
  } finally {
    await closeChromium(browser);
    clearTimeout(killer);
    signal?.removeEventListener('abort', onAbort);
  }
}

/**
 * Closes every connection of `browser` (started with netBenchmarking), idle
 * or not, through net-benchmarking's closeConnections() in a page of its
 * own; Chromium's TLS session cache, HTTP cache and host resolver cache
 * are kept (a revisit's second load resumes its TLS sessions).
 */
export async function closeConnections(browser) {
  const page = await browser.newPage();
  try {
    // eslint-disable-next-line no-undef -- in the page: chrome.benchmarking
    await page.evaluate(() => chrome.benchmarking.closeConnections());
  } finally {
    await page.close();
  }
}
