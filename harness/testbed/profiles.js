// Link profiles: files in netem's vocabulary (YAML or JSON) describing the
// satellite link and the internet link, each per direction (forward =
// gateway to terminal, return = terminal to gateway). This module turns a
// profile into the normalised impairments both link backends consume, and
// rejects bad input naming the file, the key and what is allowed.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { UsageError } from '../core/errors.js';
import { durationMs, rateMbit, percent, sizeBytes, bdpBytes } from '../core/units.js';

export const PROFILE_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../netem/profiles');
export const LINKS = ['satellite', 'internet'];
export const DIRECTIONS = ['forward', 'return'];
export const DISTRIBUTIONS = ['uniform', 'normal', 'pareto', 'paretonormal'];
const TOP_KEYS = ['description', ...LINKS];
const DIRECTION_KEYS = ['delay', 'jitter', 'distribution', 'loss', 'rate', 'limit', 'schedule', 'access', 'slots'];
// A LEO slot process (linkem's `slots`, netem/linkem/README.md): one
// satellite per slot, a base delay drawn per slot, a spike and a loss burst
// at each handover; with `outages`, a moving terminal's random outages,
// each followed by a handover.
const SLOTS_KEYS = [
  'period',
  'boundary_at',
  'phase',
  'delay_min',
  'delay_max',
  'spike',
  'spike_for',
  'loss',
  'loss_for',
  'outages',
];
const OUTAGES_KEYS = ['mean_gap', 'min', 'max'];
// The satellite access model (linkem's `access`, netem/linkem/README.md).
const ACCESS_KEYS = ['frame', 'header', 'pad', 'dama', 'frame_loss'];
const DAMA_KEYS = ['cra', 'request_grant', 'idle_release'];
const FRAME_LOSS_KEYS = ['bytes', 'datagrams', 'datagram', 'hold'];
const GEMODEL_KEYS = ['p', 'r', '1-h', '1-k'];
const SCHEDULE_KEYS = ['file', 'loop'];
const SCHEDULE_COLUMNS = ['time_s', 'delay_ms', 'rate_mbit'];
// The queue of a rate-limited direction holds one bandwidth-delay product
// unless the profile says otherwise, but never fewer than this many bytes
// (short test delays would otherwise give a queue of a few packets).
const MIN_DEFAULT_LIMIT_BYTES = 16 * 1500;

const PROFILE_EXTENSIONS = ['.yaml', '.yml', '.json'];
// satellite.loss_on: the directions whose loss --loss replaces. A testbed's
// loss sits where its netem was: Kosek et al.'s dropped only what entered
// the gateway, the return link.
export const LOSS_ON = { both: ['forward', 'return'], forward: ['forward'], return: ['return'] };

export function listBuiltinProfiles() {
  return fs
    .readdirSync(PROFILE_DIR)
    .filter((f) => PROFILE_EXTENSIONS.includes(path.extname(f)))
    .map((f) => path.basename(f, path.extname(f)))
    .sort();
}

// A built-in name ("geo") or a path to a profile file.
export function resolveProfilePath(nameOrPath) {
  if (PROFILE_EXTENSIONS.includes(path.extname(nameOrPath)) || nameOrPath.includes('/')) {
    if (!fs.existsSync(nameOrPath)) throw new UsageError(`profile file ${nameOrPath} does not exist`);
    return path.resolve(nameOrPath);
  }
  for (const ext of PROFILE_EXTENSIONS) {
    const candidate = path.join(PROFILE_DIR, nameOrPath + ext);
    if (fs.existsSync(candidate)) return candidate;
  }
  throw new UsageError(
    `unknown profile ${JSON.stringify(nameOrPath)}; built-in profiles: ${listBuiltinProfiles().join(', ')}; or give the path of a .yaml or .json profile file`,
  );
}

// Profiles and schedules are a few kilobytes; a bigger file is a mistake.
const MAX_PROFILE_BYTES = 16 << 20;

// A profile or schedule file's text, or a UsageError in one line naming
// it and what was expected (`what`): a folder or a huge file is no profile.
function readSmallFile(file, what) {
  const st = fs.statSync(file, { throwIfNoEntry: false });
  if (!st) throw new UsageError(`${file}: no such file, expected ${what}`);
  if (!st.isFile()) throw new UsageError(`${file}: ${st.isDirectory() ? 'a folder' : 'not a file'}, expected ${what}`);
  if (st.size > MAX_PROFILE_BYTES)
    throw new UsageError(`${file}: ${st.size} bytes, expected ${what} (at most ${MAX_PROFILE_BYTES} bytes)`);
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new UsageError(`${file}: cannot read it (${e.code ?? e.message}), expected ${what}`);
  }
}

// Reads and validates a profile; `lossPct` (the scenario's --loss) replaces
// the satellite link's loss in the directions of its loss_on (both unless
// the profile says otherwise).
export function loadProfile(nameOrPath, { lossPct } = {}) {
  const file = resolveProfilePath(nameOrPath);
  const text = readSmallFile(file, 'a profile file');
  let doc;
  try {
    doc = path.extname(file) === '.json' ? JSON.parse(text) : YAML.parse(text);
  } catch (e) {
    throw new UsageError(
      `${file}: not valid ${path.extname(file) === '.json' ? 'JSON' : 'YAML'}: ${e.message.split('\n')[0]}`,
    );
  }
  const readRelative = (rel) => {
    const p = path.resolve(path.dirname(file), rel);
    if (!fs.existsSync(p)) throw new UsageError(`${file}: schedule file ${rel} not found (looked at ${p})`);
    return { path: p, text: readSmallFile(p, `a schedule file (named by ${file})`) };
  };
  let profile = parseProfile(doc, { file, name: path.basename(file, path.extname(file)), readRelative });
  if (lossPct !== undefined && lossPct !== null) profile = withSatelliteLoss(profile, lossPct);
  return withDefaultLimits(profile);
}

function isPlainObject(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function checkKeys(obj, allowed, file, where) {
  if (!isPlainObject(obj)) {
    throw new UsageError(
      `${file}: ${where || 'the profile'} must be a mapping with keys ${allowed.join(', ')}, got ${JSON.stringify(obj)}`,
    );
  }
  for (const key of Object.keys(obj)) {
    if (!allowed.includes(key)) {
      throw new UsageError(
        `${file}: unknown key ${JSON.stringify(key)}${where ? ` in ${where}` : ''}; allowed: ${allowed.join(', ')}`,
      );
    }
  }
}

function bounded(value, { min, max, minExclusive = false }, file, key, what) {
  if (value < min || (minExclusive && value === min) || (max !== undefined && value > max)) {
    const range = max === undefined ? `${minExclusive ? '>' : '>='} ${min}` : `between ${min} and ${max}`;
    throw new UsageError(`${file}: ${key}: ${what} must be ${range}, got ${value}`);
  }
  return value;
}

const percentIn = (v, file, key) =>
  bounded(percent(v, `${file}: ${key}`), { min: 0, max: 100 }, file, key, 'a percentage');

function parseLoss(v, file, key) {
  if (v === null || v === undefined) return null;
  if (isPlainObject(v)) {
    checkKeys(v, ['gemodel'], file, key);
    const ge = v.gemodel;
    checkKeys(ge, GEMODEL_KEYS, file, `${key}.gemodel`);
    for (const k of ['p', 'r']) {
      if (ge[k] === undefined)
        throw new UsageError(`${file}: ${key}.gemodel.${k} is required (netem's "loss gemodel p r [1-h [1-k]]")`);
    }
    return {
      model: 'gemodel',
      p_pct: percentIn(ge.p, file, `${key}.gemodel.p`),
      r_pct: percentIn(ge.r, file, `${key}.gemodel.r`),
      h_loss_pct: ge['1-h'] === undefined ? 100 : percentIn(ge['1-h'], file, `${key}.gemodel.1-h`),
      k_loss_pct: ge['1-k'] === undefined ? 0 : percentIn(ge['1-k'], file, `${key}.gemodel.1-k`),
    };
  }
  const pct = percentIn(v, file, key);
  return pct === 0 ? null : { model: 'random', pct };
}

function parseLimit(v, file, key) {
  if (v === null || v === undefined) return null;
  if (typeof v === 'number' || /^\s*\d+\s*$/.test(String(v))) {
    const packets = Number(v);
    if (!Number.isInteger(packets) || packets < 1) {
      throw new UsageError(`${file}: ${key}: a packet limit must be a whole number >= 1, got ${JSON.stringify(v)}`);
    }
    return { packets };
  }
  const bytes = Math.round(bounded(sizeBytes(v, `${file}: ${key}`), { min: 1500 }, file, key, 'a byte limit'));
  return { bytes };
}

function wholeBytes(v, file, key, min) {
  const n = sizeBytes(v, `${file}: ${key}`);
  if (!Number.isInteger(n) || n < min) {
    throw new UsageError(`${file}: ${key}: expected a whole number of bytes >= ${min}, got ${JSON.stringify(v)}`);
  }
  return n;
}

// A count given as a plain whole number >= 1 (`of`: what it counts, for the message).
function wholeCount(v, file, key, of = '') {
  if (!Number.isInteger(v) || v < 1)
    throw new UsageError(`${file}: ${key}: expected a whole number${of} >= 1, got ${JSON.stringify(v)}`);
  return v;
}

// The access model of one direction, in linkem's keys; null when absent.
function parseAccess(v, file, key) {
  if (v === null || v === undefined) return null;
  checkKeys(v, ACCESS_KEYS, file, key);
  const out = {};
  if (v.frame !== undefined && v.frame !== null) {
    out.frame_ms = bounded(
      durationMs(v.frame, `${file}: ${key}.frame`),
      { min: 0, minExclusive: true },
      file,
      `${key}.frame`,
      'a frame duration',
    );
  }
  if (v.header !== undefined && v.header !== null) out.header_bytes = wholeBytes(v.header, file, `${key}.header`, 0);
  if (v.pad !== undefined && v.pad !== null) out.pad_to_bytes = wholeBytes(v.pad, file, `${key}.pad`, 1);
  if (v.dama !== undefined && v.dama !== null) {
    const d = v.dama;
    checkKeys(d, DAMA_KEYS, file, `${key}.dama`);
    for (const k of DAMA_KEYS) {
      if (d[k] === undefined || d[k] === null)
        throw new UsageError(`${file}: ${key}.dama.${k} is required (keys: ${DAMA_KEYS.join(', ')})`);
    }
    const ms = (k) =>
      bounded(durationMs(d[k], `${file}: ${key}.dama.${k}`), { min: 0 }, file, `${key}.dama.${k}`, 'a duration');
    out.dama = {
      cra_mbit: bounded(rateMbit(d.cra, `${file}: ${key}.dama.cra`), { min: 0 }, file, `${key}.dama.cra`, 'a rate'),
      request_grant_ms: ms('request_grant'),
      idle_release_ms: ms('idle_release'),
    };
  }
  if (v.frame_loss !== undefined && v.frame_loss !== null) {
    const f = v.frame_loss;
    checkKeys(f, FRAME_LOSS_KEYS, file, `${key}.frame_loss`);
    if (f.bytes === undefined || f.bytes === null)
      throw new UsageError(`${file}: ${key}.frame_loss.bytes is required (a frame's payload, e.g. 5000)`);
    const frameBytes = wholeBytes(f.bytes, file, `${key}.frame_loss.bytes`, 1);
    // `datagram`: the frame travels unpadded, a datagram per that many bytes
    // of its fill; `datagrams`: padded, always that many.
    if (f.datagram !== undefined && f.datagram !== null) {
      if (f.datagrams !== undefined && f.datagrams !== null)
        throw new UsageError(
          `${file}: ${key}.frame_loss: give datagrams (a padded frame's count) or datagram (an unpadded frame's bytes per datagram), not both`,
        );
      out.frame_loss = {
        frame_bytes: frameBytes,
        datagram_bytes: wholeBytes(f.datagram, file, `${key}.frame_loss.datagram`, 1),
      };
    } else {
      const datagrams = wholeCount(f.datagrams ?? 1, file, `${key}.frame_loss.datagrams`);
      out.frame_loss = { frame_bytes: frameBytes, datagrams };
    }
    // `hold`: in-order delivery after a loss, as OpenSAND's udp_stack.
    if (f.hold !== undefined && f.hold !== null)
      out.frame_loss.hold_frames = wholeCount(f.hold, file, `${key}.frame_loss.hold`, ' of frames');
  }
  return out;
}

// The slot process of one direction, in linkem's keys; null when absent.
// `loss` is a probability (0..1) per packet inside the loss window.
function parseSlots(v, file, key) {
  if (v === null || v === undefined) return null;
  checkKeys(v, SLOTS_KEYS, file, key);
  for (const k of ['period', 'delay_min', 'delay_max']) {
    if (v[k] === undefined || v[k] === null) throw new UsageError(`${file}: ${key}.${k} is required`);
  }
  const ms = (k, min = { min: 0 }) =>
    bounded(durationMs(v[k], `${file}: ${key}.${k}`), min, file, `${key}.${k}`, 'a duration');
  const opt = (k) => (v[k] === undefined || v[k] === null ? 0 : ms(k));
  const out = {
    period_s: ms('period', { min: 0, minExclusive: true }) / 1000,
    delay_min_ms: ms('delay_min'),
    delay_max_ms: ms('delay_max'),
    spike_ms: opt('spike'),
    spike_s: opt('spike_for') / 1000,
    loss_p: 0,
    loss_s: opt('loss_for') / 1000,
  };
  if (out.delay_max_ms < out.delay_min_ms)
    throw new UsageError(
      `${file}: ${key}.delay_max: must be >= delay_min (${out.delay_min_ms} ms), got ${out.delay_max_ms} ms`,
    );
  if (v.loss !== undefined && v.loss !== null) {
    if (typeof v.loss !== 'number')
      throw new UsageError(
        `${file}: ${key}.loss: expected a probability between 0 and 1, got ${JSON.stringify(v.loss)}`,
      );
    out.loss_p = bounded(v.loss, { min: 0, max: 1 }, file, `${key}.loss`, 'a probability');
  }
  if (v.phase !== undefined && v.boundary_at !== undefined)
    throw new UsageError(`${file}: ${key}: give phase (fixed) or boundary_at (from the wall clock), not both`);
  // Without a fixed phase, linkem takes it from the wall clock at its start.
  if (v.phase !== undefined) out.phase_s = ms('phase') / 1000;
  else out.boundary_at_s = v.boundary_at === undefined ? 0 : ms('boundary_at') / 1000;
  // Only a slot process with outages has the key: starlink's config stays as it was.
  const outages = parseOutages(v.outages, file, `${key}.outages`);
  if (outages) out.outages = outages;
  return out;
}

// A moving terminal's outages, in linkem's keys; null when absent. Each
// lasts min..max (uniform); from one's end to the next's start is
// exponential with mean mean_gap.
function parseOutages(v, file, key) {
  if (v === null || v === undefined) return null;
  checkKeys(v, OUTAGES_KEYS, file, key);
  for (const k of OUTAGES_KEYS) {
    if (v[k] === undefined || v[k] === null)
      throw new UsageError(`${file}: ${key}.${k} is required (keys: ${OUTAGES_KEYS.join(', ')})`);
  }
  const positive = { min: 0, minExclusive: true };
  const s = (k, range) =>
    bounded(durationMs(v[k], `${file}: ${key}.${k}`), range, file, `${key}.${k}`, 'a duration') / 1000;
  const out = { mean_gap_s: s('mean_gap', positive), min_s: s('min', { min: 0 }), max_s: s('max', positive) };
  if (out.max_s < out.min_s)
    throw new UsageError(`${file}: ${key}.max: must be >= min (${out.min_s} s), got ${out.max_s} s`);
  return out;
}

// CSV with a header row naming its columns: time_s and delay_ms and/or
// rate_mbit. Blank lines and lines starting with # are ignored.
export function parseScheduleCsv(text, file) {
  const lines = text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  if (lines.length < 2) throw new UsageError(`${file}: a schedule needs a header line and at least one row`);
  const header = lines[0].split(',').map((h) => h.trim());
  // a file that is not a schedule is not quoted: a profile may point anywhere (/etc/passwd)
  if (!header.includes('time_s'))
    throw new UsageError(
      `${file}: not a schedule: its first line is not a header naming time_s and delay_ms and/or rate_mbit`,
    );
  for (const h of header) {
    if (!SCHEDULE_COLUMNS.includes(h))
      throw new UsageError(`${file}: unknown column ${JSON.stringify(h)}; allowed: ${SCHEDULE_COLUMNS.join(', ')}`);
  }
  if (!header.includes('time_s') || header.length < 2) {
    throw new UsageError(`${file}: the header must name time_s and at least one of delay_ms, rate_mbit`);
  }
  let last = -Infinity;
  return lines.slice(1).map((line, i) => {
    const cells = line.split(',').map((c) => c.trim());
    if (cells.length !== header.length)
      throw new UsageError(`${file}: line ${i + 2}: expected ${header.length} values, got ${cells.length}`);
    const point = {};
    header.forEach((h, j) => {
      if (cells[j] === '') return;
      const n = Number(cells[j]);
      if (!Number.isFinite(n))
        throw new UsageError(`${file}: line ${i + 2}: ${h} must be a number, got ${JSON.stringify(cells[j])}`);
      if (h === 'time_s') point.t_s = n;
      else point[h] = n;
    });
    if (point.t_s === undefined || point.t_s < 0 || point.t_s <= last) {
      throw new UsageError(`${file}: line ${i + 2}: time_s must be >= 0 and increasing`);
    }
    last = point.t_s;
    if (point.delay_ms !== undefined && point.delay_ms < 0)
      throw new UsageError(`${file}: line ${i + 2}: delay_ms must be >= 0`);
    if (point.rate_mbit !== undefined && point.rate_mbit <= 0)
      throw new UsageError(`${file}: line ${i + 2}: rate_mbit must be > 0`);
    return point;
  });
}

function parseDirection(d, file, where, readRelative) {
  checkKeys(d, DIRECTION_KEYS, file, where);
  const key = (k) => `${where}.${k}`;
  const out = {
    delay_ms: 0,
    jitter_ms: 0,
    jitter_distribution: 'uniform', // netem's default when no distribution is named
    loss: parseLoss(d.loss, file, key('loss')),
    rate_mbit: null,
    limit: parseLimit(d.limit, file, key('limit')),
    schedule: null,
  };
  if (d.delay !== undefined)
    out.delay_ms = bounded(durationMs(d.delay, `${file}: ${key('delay')}`), { min: 0 }, file, key('delay'), 'a delay');
  if (d.jitter !== undefined)
    out.jitter_ms = bounded(
      durationMs(d.jitter, `${file}: ${key('jitter')}`),
      { min: 0 },
      file,
      key('jitter'),
      'a jitter',
    );
  if (d.distribution !== undefined) {
    if (!DISTRIBUTIONS.includes(d.distribution)) {
      throw new UsageError(
        `${file}: ${key('distribution')}: expected one of ${DISTRIBUTIONS.join(', ')}, got ${JSON.stringify(d.distribution)}`,
      );
    }
    out.jitter_distribution = d.distribution;
  }
  if (d.rate !== undefined && d.rate !== null) {
    out.rate_mbit = bounded(
      rateMbit(d.rate, `${file}: ${key('rate')}`),
      { min: 0, minExclusive: true },
      file,
      key('rate'),
      'a rate',
    );
  }
  if (d.schedule !== undefined && d.schedule !== null) {
    checkKeys(d.schedule, SCHEDULE_KEYS, file, key('schedule'));
    if (typeof d.schedule.file !== 'string')
      throw new UsageError(`${file}: ${key('schedule')}.file: expected the name of a CSV file`);
    if (d.schedule.loop !== undefined && typeof d.schedule.loop !== 'boolean')
      throw new UsageError(`${file}: ${key('schedule')}.loop: expected true or false`);
    const csv = readRelative(d.schedule.file);
    const points = parseScheduleCsv(csv.text, csv.path);
    const firstDelay = points.find((p) => p.delay_ms !== undefined);
    if (firstDelay && d.delay !== undefined) {
      throw new UsageError(`${file}: ${where}: give either delay or a schedule with delay_ms, not both`);
    }
    if (firstDelay) out.delay_ms = firstDelay.delay_ms;
    const firstRate = points.find((p) => p.rate_mbit !== undefined);
    if (firstRate && out.rate_mbit === null) out.rate_mbit = firstRate.rate_mbit;
    out.schedule = { loop: d.schedule.loop === true, points };
  }
  if (out.limit && out.rate_mbit === null) {
    throw new UsageError(`${file}: ${key('limit')}: a queue limit needs a rate (without a rate nothing queues)`);
  }
  const access = parseAccess(d.access, file, key('access'));
  if (access?.frame_loss && out.rate_mbit === null) {
    throw new UsageError(
      `${file}: ${key('access')}.frame_loss: frames are filled at the direction's rate; give the direction a rate`,
    );
  }
  if (access?.dama && out.rate_mbit === null) {
    throw new UsageError(
      `${file}: ${key('access')}.dama: demand assignment needs the direction's rate (what a grant gives)`,
    );
  }
  // Only a direction with an access model has the key: every other
  // direction stays exactly what it was.
  if (access) out.access = access;
  const slots = parseSlots(d.slots, file, key('slots'));
  if (slots) out.slots = slots;
  return out;
}

// Pure: a parsed document to normalised impairments. `readRelative(name)`
// gives {path, text} of a file named by the profile (schedules).
export function parseProfile(doc, { file, name, readRelative }) {
  checkKeys(doc, TOP_KEYS, file, '');
  const links = {};
  for (const link of LINKS) {
    const l = doc[link] ?? {};
    checkKeys(l, link === 'satellite' ? [...DIRECTIONS, 'loss_on'] : DIRECTIONS, file, link);
    links[link] = {};
    for (const dir of DIRECTIONS) links[link][dir] = parseDirection(l[dir] ?? {}, file, `${link}.${dir}`, readRelative);
  }
  const lossOn = doc.satellite?.loss_on ?? 'both';
  if (!Object.hasOwn(LOSS_ON, lossOn)) {
    throw new UsageError(
      `${file}: satellite.loss_on: expected ${Object.keys(LOSS_ON).join(', ')} (the directions --loss applies to), got ${JSON.stringify(lossOn)}`,
    );
  }
  return { name, file, description: doc.description ?? '', loss_on: lossOn, links };
}

export function withSatelliteLoss(profile, lossPct) {
  if (typeof lossPct !== 'number' || !(lossPct >= 0 && lossPct <= 100)) {
    throw new UsageError(`--loss: expected a percentage between 0 and 100, got ${lossPct}`);
  }
  const loss = lossPct === 0 ? null : { model: 'random', pct: lossPct };
  const satellite = { ...profile.links.satellite };
  for (const dir of LOSS_ON[profile.loss_on]) satellite[dir] = { ...satellite[dir], loss };
  return { ...profile, loss_override_pct: lossPct, links: { ...profile.links, satellite } };
}

function maxDelay(imp) {
  const scheduled = (imp.schedule?.points ?? []).map((p) => p.delay_ms ?? 0);
  const slots = imp.slots ? imp.slots.delay_max_ms + imp.slots.spike_ms : 0;
  return Math.max(imp.delay_ms, ...scheduled) + slots;
}

// A direction's delay between handovers, a slot process's draw taken at
// the middle of its range.
function typicalDelay(imp) {
  return imp.delay_ms + (imp.slots ? (imp.slots.delay_min_ms + imp.slots.delay_max_ms) / 2 : 0);
}

/**
 * Pure: the satellite link of `profile` ({forward, return}) with both
 * directions' rates times `factor`: the path at another capacity (a
 * revisit's, --revisit-capacity). Each direction must have a fixed rate.
 */
export function satelliteAtCapacity(profile, factor) {
  const out = {};
  for (const dir of DIRECTIONS) {
    const imp = profile.links.satellite[dir];
    if (!imp.rate_mbit || imp.schedule)
      throw new UsageError(
        `--revisit-capacity: ${profile.name}'s satellite ${dir} link has ${imp.schedule ? 'a rate schedule' : 'no rate'}; it needs one fixed rate to scale`,
      );
    out[dir] = { ...imp, rate_mbit: imp.rate_mbit * factor };
  }
  return out;
}

// Round-trip time the profile configures: both links, both directions.
export function configuredRttMs(profile, { worst = false } = {}) {
  let sum = 0;
  for (const link of LINKS)
    for (const dir of DIRECTIONS) {
      const imp = profile.links[link][dir];
      sum += worst ? maxDelay(imp) : typicalDelay(imp);
    }
  return sum;
}

export function withDefaultLimits(profile) {
  const rttMs = configuredRttMs(profile, { worst: true });
  const links = {};
  for (const link of LINKS) {
    links[link] = {};
    for (const dir of DIRECTIONS) {
      const imp = profile.links[link][dir];
      const rates = [imp.rate_mbit, ...(imp.schedule?.points ?? []).map((p) => p.rate_mbit)].filter((r) => r);
      const needsLimit = imp.limit === null && rates.length > 0;
      const bdp = needsLimit ? Math.round(bdpBytes(Math.max(...rates), rttMs)) : 0;
      links[link][dir] = needsLimit ? { ...imp, limit: { bytes: Math.max(bdp, MIN_DEFAULT_LIMIT_BYTES) } } : imp;
    }
  }
  return { ...profile, links };
}

// Long-run loss of one direction's loss model, in percent.
export function stationaryLossPct(loss) {
  if (!loss) return 0;
  if (loss.model === 'random') return loss.pct;
  const { p_pct: p, r_pct: r, h_loss_pct: h, k_loss_pct: k } = loss;
  if (p + r === 0) return k;
  return (p * h + r * k) / (p + r);
}

/**
 * Pure: the long-run share of packets a slot process loses, in percent, by
 * cause (null without one): `handovers`, its loss bursts after each slot's
 * start and each outage's end; `outages`, the time a moving terminal is
 * out. Overlaps of the two are neglected (a burst is short beside a slot).
 */
export function slotLossPct(slots) {
  if (!slots) return null;
  const o = slots.outages;
  const outageS = o ? (o.min_s + o.max_s) / 2 : 0;
  // an outage, then its gap: one cycle of mean_gap + the mean outage
  const outageEveryS = o ? o.mean_gap_s + outageS : Infinity;
  const handoversPerS = 1 / slots.period_s + 1 / outageEveryS;
  return {
    handovers: 100 * Math.min(1, slots.loss_p * slots.loss_s * handoversPerS),
    outages: (100 * outageS) / outageEveryS,
  };
}

// Both causes together, in percent.
function slotLossTotalPct(slots) {
  const l = slotLossPct(slots);
  return l ? 100 * (1 - (1 - l.handovers / 100) * (1 - l.outages / 100)) : 0;
}

function pathOf(profile, dir) {
  const imps = LINKS.map((l) => profile.links[l][dir]);
  const rates = imps.map((i) => i.rate_mbit).filter((r) => r !== null);
  const survive = imps.reduce(
    (acc, i) => acc * (1 - stationaryLossPct(i.loss) / 100) * (1 - slotLossTotalPct(i.slots) / 100),
    1,
  );
  // to a millionth of a percent: the float products print as 0.20000000000000018 otherwise
  return { mbps: rates.length ? Math.min(...rates) : null, loss_pct: Math.round((1 - survive) * 1e8) / 1e6 };
}

// What the profile promises, in the shape `testbed probe` prints beside
// what it measured.
export function configuredSummary(profile) {
  const sat = profile.links.satellite;
  const fwd = pathOf(profile, 'forward');
  const ret = pathOf(profile, 'return');
  return {
    rtt_ms: configuredRttMs(profile),
    one_way_ms: {
      forward: LINKS.reduce((s, l) => s + typicalDelay(profile.links[l].forward), 0),
      return: LINKS.reduce((s, l) => s + typicalDelay(profile.links[l].return), 0),
    },
    forward_mbps: fwd.mbps,
    return_mbps: ret.mbps,
    loss_pct: fwd.loss_pct,
    return_loss_pct: ret.loss_pct,
    loss_unit: { forward: lossUnit(profile, 'forward'), return: lossUnit(profile, 'return') },
    loss_on: profile.loss_on,
    // Only with a slot process: how much of the loss above is its own.
    ...(sat.forward.slots || sat.return.slots
      ? { slot_loss_pct: { forward: slotLossPct(sat.forward.slots), return: slotLossPct(sat.return.slots) } }
      : {}),
  };
}

/** Pure: what the satellite link's loss is drawn for in one direction: every packet, or every link-layer frame. */
export function lossUnit(profile, dir) {
  const f = profile.links.satellite[dir].access?.frame_loss;
  if (!f) return 'packet';
  const frame = f.datagram_bytes
    ? `frame of ${f.frame_bytes} B, unpadded, a datagram per ${f.datagram_bytes} B`
    : `frame of ${f.frame_bytes} B in ${f.datagrams} datagram${f.datagrams === 1 ? '' : 's'}`;
  return f.hold_frames ? `${frame}; after a loss, held until ${f.hold_frames + 1} frames wait` : frame;
}

/** Pure: bytes in flight the path holds at its bottleneck rate over its worst RTT; null without a rate. */
export function pathBdpBytes(profile) {
  const mbps = configuredSummary(profile).forward_mbps;
  return mbps ? Math.round(bdpBytes(mbps, configuredRttMs(profile, { worst: true }))) : null;
}
