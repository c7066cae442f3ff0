// The Careful Resume logs (transport/src/careful_resume/log.rs): a JSON
// line per QUIC connection that started from a saved path, written by our
// origin and satbulk's server (--quic careful-resume=on) and by Proxy-GW for
// the satellite hop (--pep-sat careful-resume=on), each to its own file,
// read back per page load (or bulk run) into the record's `careful_resume`. A line is written when Careful
// Resume settles (Normal), or when the connection ends before.
import fs from 'node:fs';
import path from 'node:path';
import { carefulResumeLogPath } from '../core/careful-resume-files.js';

// the servers that write one: our origin, satbulk's server, the QUIC PEP's Proxy-GW
export const CAREFUL_RESUME_SERVERS = ['origin', 'satbulk', 'gw'];

/** Pure: whether a run's plan has careful-resume=on: --quic (our origin, satbulk) or --pep-sat (Proxy-GW). */
export const carefulResumeOn = (plan) =>
  plan.quic?.['careful-resume'] === 'on' || plan.pepSides?.sat?.['careful-resume'] === 'on';

/** Where `server` of testbed `tb` writes it. */

// what the record keeps of a line (the line also has its qlog-style events)
const FIELDS = ['phase_reached', 'jump_bytes', 'saved_capacity_bps', 'saved_rtt_ms', 'rtt_ms', 'retreated'];

/**
 * Pure: the log's text → [{phase_reached, jump_bytes, saved_capacity_bps,
 * saved_rtt_ms, rtt_ms, retreated, phases}], one per connection, in the
 * log's order; `phases` is the phases it went through
 * ("reconnaissance>unvalidated:cwnd_limited", …). A line that is not one
 * (cut short by a server killed mid-write) is left out.
 */
export function parseCarefulResumeLog(text) {
  const out = [];
  for (const line of String(text).split('\n')) {
    if (!line.trim()) continue;
    let v;
    try {
      v = JSON.parse(line);
    } catch {
      continue;
    }
    if (!v || typeof v.phase_reached !== 'string') continue;
    const entry = Object.fromEntries(FIELDS.map((k) => [k, v[k] ?? null]));
    entry.phases = (v.events ?? []).map((e) => `${e.data?.old}>${e.data?.new}:${e.data?.trigger}`);
    out.push(entry);
  }
  return out;
}

/**
 * The entries testbed `tb`'s servers logged between `from` and `to`
 * ({origin: BYTES, …}, carefulResumeLogBytes; a server left out:
 * its whole log), each with the `server` that wrote it; [] without logs.
 */
export function readCarefulResumeLog(tb, { from = {}, to = {} } = {}) {
  return CAREFUL_RESUME_SERVERS.flatMap((server) => {
    let text;
    try {
      text = fs.readFileSync(carefulResumeLogPath(tb, server)).subarray(from[server] ?? 0, to[server] ?? Infinity);
    } catch {
      return [];
    }
    return parseCarefulResumeLog(text.toString('utf8')).map((e) => ({ server, ...e }));
  });
}

/** How many bytes of its log each server of testbed `tb` wrote so far: {origin, satbulk, gw}. */
export function carefulResumeLogBytes(tb) {
  return Object.fromEntries(
    CAREFUL_RESUME_SERVERS.map((s) => [
      s,
      fs.statSync(carefulResumeLogPath(tb, s), { throwIfNoEntry: false })?.size ?? 0,
    ]),
  );
}

/** Copies each server's log of testbed `tb` that exists into `dir` (as careful-resume-SERVER.jsonl). */
export function keepCarefulResumeLogs(tb, dir) {
  for (const server of CAREFUL_RESUME_SERVERS) {
    const from = carefulResumeLogPath(tb, server);
    if (!fs.existsSync(from)) continue;
    fs.mkdirSync(dir, { recursive: true });
    fs.copyFileSync(from, path.join(dir, `careful-resume-${server}.jsonl`));
  }
}
