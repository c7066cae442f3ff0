// Values in netem's vocabulary ("250ms", "20mbit", "1%", "1.5MB") or as
// plain numbers in the default unit. Each parser names where the value came
// from (`where`: "file: key") when it rejects it.
import { UsageError } from './errors.js';

function parseWithUnits(value, units, defaultUnit, what, where) {
  if (typeof value === 'number' && Number.isFinite(value)) return value * units[defaultUnit];
  if (typeof value === 'string') {
    const m = /^\s*(-?\d+(?:\.\d+)?(?:e[-+]?\d+)?)\s*([a-zA-Z%/]*)\s*$/.exec(value);
    if (m) {
      const unit = m[2] === '' ? defaultUnit : m[2].toLowerCase();
      if (unit in units) return Number(m[1]) * units[unit];
    }
  }
  const names = Object.keys(units).filter(Boolean).join(', ');
  throw new UsageError(
    `${where}: expected ${what} (a number in ${defaultUnit}, or with a unit: ${names}), got ${JSON.stringify(value)}`,
  );
}

const DURATION_UNITS = { ms: 1, s: 1000, us: 0.001, sec: 1000, msec: 1, usec: 0.001 };
const RATE_UNITS = { mbit: 1, kbit: 0.001, gbit: 1000, bit: 1e-6, mbps: 8, kbps: 0.008, gbps: 8000, 'mbit/s': 1 };
const SIZE_UNITS = { b: 1, kb: 1000, mb: 1e6, kib: 1024, mib: 1024 * 1024, gb: 1e9 };
const PERCENT_UNITS = { '%': 1 };

export const durationMs = (v, where) => parseWithUnits(v, DURATION_UNITS, 'ms', 'a duration', where);
export const rateMbit = (v, where) => parseWithUnits(v, RATE_UNITS, 'mbit', 'a rate', where);
export const sizeBytes = (v, where) => parseWithUnits(v, SIZE_UNITS, 'b', 'a size', where);
export const percent = (v, where) => parseWithUnits(v, PERCENT_UNITS, '%', 'a percentage', where);

/** Pure: the bytes a pipe of `rateMbit` holds over `rttMs` (the bandwidth-delay product), unrounded. */
export const bdpBytes = (rateMbit, rttMs) => ((rateMbit * 1e6) / 8) * (rttMs / 1000);
