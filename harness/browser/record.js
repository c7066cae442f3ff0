// Recording a page: one load in a fresh Chromium on this machine's own
// network (no testbed), and every request the page made with the response
// DevTools saw for it, its body as DevTools hands it over: decoded from its
// content-encoding, text as a string (archive/build.js stores the wire bytes).
import net from 'node:net';
import { UsageError } from '../core/errors.js';
import { carriesNoBody } from '../archive/build.js';
import { headerPairs } from '../archive/headers.js';
import { baseChromiumArgs, withChromium } from './chromium.js';
import { emulate } from './emulation.js';

// Pure: Chromium's command line for a recording: `resolve`, [[host, ip]],
// become host-resolver rules, and a certificate whose key has one of the
// `spki` pins is accepted (a test's or a developer's own self-signed servers).
export function recordArgs(userDataDir, { resolve = [], spki = [] } = {}) {
  const args = baseChromiumArgs(userDataDir);
  const address = (ip) => (net.isIPv6(ip) ? `[${ip}]` : ip);
  if (resolve.length)
    args.push(`--host-resolver-rules=${resolve.map(([h, ip]) => `MAP ${h} ${address(ip)}`).join(', ')}`);
  if (spki.length) args.push(`--ignore-certificate-errors-spki-list=${spki.join(',')}`);
  return args;
}

const wait = (ms) => new Promise((r) => setTimeout(r, ms));

// How much of the bodies DevTools keeps for our own session on the page
// (its defaults keep about 20 MB a body: larger ones would be lost).
const BUFFERS = { maxTotalBufferSize: 1024 * 1024 * 1024, maxResourceBufferSize: 256 * 1024 * 1024 };

// The body of a finished request as DevTools keeps it, or why there is
// none. Our session on the page keeps large bodies; a frame or worker of
// another process is asked through puppeteer's session on it.
async function bodyOf(request, pageSession) {
  let error;
  for (const session of new Set([pageSession, request.client])) {
    try {
      const { body, base64Encoded } = await session.send('Network.getResponseBody', { requestId: request.id });
      return { content: { text: body, base64: base64Encoded } };
    } catch (e) {
      error = e;
    }
  }
  return { noContent: `DevTools has no body for it (${error.message.split('\n')[0]})` };
}

// What became of one request by the end of the recording (archive/build.js's response).
async function responseOf(request, { failed, bodies }) {
  const r = { method: request.method(), url: request.url() };
  const response = request.response();
  if (response)
    Object.assign(r, { status: response.status(), headers: headerPairs(response.headers()), content: null });
  // a response without a body is whole once its headers are in, even when
  // the page then cancels the request (a 204 nobody reads is "net::ERR_ABORTED")
  const whole = response && carriesNoBody(r.method, r.status);
  if (failed.has(request) && !whole) return { ...r, missing: `failed: ${failed.get(request)}` };
  if (!response) return { ...r, missing: 'no response by the end of the settle time' };
  if (response.fromServiceWorker()) return { ...r, missing: 'served by a service worker, not the network' };
  if (response.fromCache()) return { ...r, fromCache: true };
  if (whole) return r;
  if (!bodies.has(request)) return { ...r, missing: 'still loading at the end of the settle time' };
  return { ...r, ...(await bodies.get(request)) };
}

/**
 * Loads `url` once, as the device of `emulation` (browser/emulation.js,
 * as bench's loads), and returns the responses of every request the page
 * made by its load event plus `settleMs`, in the order it made them. The
 * load event must come within `timeoutMs`; a page that does not load, or
 * whose document is an HTTP error, is a UsageError.
 */
export async function recordPage(url, { settleMs = 2000, timeoutMs = 60000, resolve, spki, emulation = {} } = {}) {
  const killAfterMs = 2 * timeoutMs + settleMs + 15000; // the load, then the bodies
  return withChromium(
    { args: (dir) => recordArgs(dir, { resolve, spki }), timeoutMs, killAfterMs },
    async (browser) => {
      const page = await browser.newPage();
      await emulate(page, emulation);
      // every request goes to the network, where it can be recorded
      await page.setBypassServiceWorker(true);
      const pageSession = await page.createCDPSession();
      await pageSession.send('Network.enable', BUFFERS);
      const requests = [];
      const failed = new Map();
      const bodies = new Map();
      page.on('request', (request) => requests.push(request));
      page.on('requestfailed', (request) => failed.set(request, request.failure()?.errorText ?? 'unknown error'));
      // a body is asked for as soon as it is complete, while DevTools still holds it
      page.on('requestfinished', (request) => {
        const response = request.response();
        if (response && !response.fromCache() && !carriesNoBody(request.method(), response.status()))
          bodies.set(request, bodyOf(request, pageSession));
      });
      let document;
      try {
        document = await page.goto(url, { waitUntil: 'load', timeout: timeoutMs });
      } catch (e) {
        if (e.name === 'TimeoutError')
          throw new UsageError(`${url}: no load event within ${timeoutMs / 1000} s (--timeout); nothing recorded`);
        throw new UsageError(`${url}: did not load (${e.message.split('\n')[0]}); nothing recorded`);
      }
      if (document && document.status() >= 400)
        throw new UsageError(`${url}: the page answered ${document.status()}; nothing recorded`);
      await wait(settleMs);
      const asked = [...requests];
      return Promise.all(asked.map((request) => responseOf(request, { failed, bodies })));
    },
  );
}
