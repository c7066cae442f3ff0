// Gatherer: the congestion control the kernel runs on each end host's TCP
// connections as the load ends (record.tcp_cc: {client: [...], server:
// [...]}), read with `ss -ti` in the client's and the server's namespaces
// while Chromium still holds its connections open: what --cc or
// --cc-axis reached, not what was asked for. A load with no TCP
// connection at its end (HTTP/3) has [] on both sides.
import { run } from '../../core/sys.js';

// How long one side's `ss` may take.
const READ_MS = 2000;

// The words ss prints before a socket's congestion control (iproute2's
// misc/ss.c, tcp_show_info); ss has no machine-readable output for them.
const SS_OPTIONS = new Set(['ts', 'sack', 'ecn', 'ecnseen', 'fastopen']);

/**
 * Pure: the congestion controls of the sockets in `ss -tinH` output,
 * sorted, each once. A socket's details are the indented line below its
 * addresses; its congestion control is the first word there that is not
 * an option, before the first `key:value`.
 */
export function ssCongestionControls(text) {
  const found = new Set();
  for (const line of String(text).split('\n')) {
    if (!/^\s+\S/.test(line)) continue;
    const words = line.trim().split(/\s+/);
    const end = words.findIndex((w) => w.includes(':'));
    const cc = words.slice(0, end < 0 ? words.length : end).find((w) => !SS_OPTIONS.has(w));
    if (cc) found.add(cc);
  }
  return [...found].sort();
}

/** The gatherer, for the end hosts' namespaces `{client, server}`. */
export default function tcpCc(namespaces) {
  return {
    key: 'tcp_cc',
    afterLoadMs: READ_MS * Object.keys(namespaces).length,
    async stop() {
      const out = {};
      for (const [side, ns] of Object.entries(namespaces)) {
        const r = await run('ip', ['netns', 'exec', ns, 'ss', '-tinH', 'state', 'established'], {
          timeoutMs: READ_MS,
        });
        out[side] = ssCongestionControls(r.stdout);
      }
      return out;
    },
  };
}
