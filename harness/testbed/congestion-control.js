// Which TCP congestion controls this kernel has, for checking --cc before
// anything is created (the testbed sets it in every namespace much later).
// Reading /proc needs no privileges.
import fs from 'node:fs';
import { UsageError } from '../core/errors.js';
import { CC_AXIS_VALUES } from '../core/cc-axis.js';
import { oneOf } from '../core/quic-options.js';

const AVAILABLE = '/proc/sys/net/ipv4/tcp_available_congestion_control';

// What users call NewReno, Linux calls reno.
export const CC_ALIASES = { newreno: 'reno' };

/** Pure: Linux's name of congestion control `cc` (newreno → reno). */
export const linuxCc = (cc) => CC_ALIASES[cc] ?? cc;

/** The kernel's congestion controls, or null when /proc does not say. */
export function availableCongestionControls(file = AVAILABLE) {
  try {
    return fs.readFileSync(file, 'utf8').trim().split(/\s+/).filter(Boolean);
  } catch {
    return null;
  }
}

/** Pure: refuses `cc` (as --cc gives it) unless `available` (null: unknown) has it. */
export function checkCongestionControl(cc, available, flag = '--cc') {
  if (cc === undefined || cc === null) return;
  const name = linuxCc(cc);
  if (typeof cc !== 'string' || !/^[a-z0-9_]{1,15}$/.test(name))
    throw new UsageError(
      `${flag}: expected a congestion control name (cubic, newreno, bbr, …), got ${JSON.stringify(cc)}`,
    );
  if (available && !available.includes(name))
    throw new UsageError(
      `${flag}: ${JSON.stringify(cc)} is not available in this kernel; available: ${available.join(', ')} (newreno is reno)`,
    );
}

/**
 * Pure: `--cc-axis`'s values checked: each a controller of both the
 * kernel's TCP and our QUIC (CC_AXIS_VALUES), one `available` in this
 * kernel (null: unknown), and one the origin's QUIC has (`originCcs`:
 * null for ours, which has them all). One clear line otherwise, starting
 * with `from` (where the axis came from: the option, or a preset's).
 */
export function checkCcAxis(ccs, { available = null, origin = 'rust', originCcs = null, from = '--cc-axis' } = {}) {
  for (const cc of ccs) {
    if (!CC_AXIS_VALUES.includes(cc))
      throw new UsageError(
        `${from}: unknown congestion control ${JSON.stringify(cc)}; expected ${oneOf(CC_AXIS_VALUES)} (each sets the end hosts' TCP and our QUIC senders)`,
      );
    checkCongestionControl(cc, available, from);
    if (originCcs && !originCcs.includes(cc))
      throw new UsageError(
        `${from}: --origin ${origin}'s QUIC has no ${cc}; with it the axis takes ${oneOf(originCcs)}`,
      );
  }
  return ccs;
}
