// The two ways to impair a link: our userspace emulator (linkem, on tun
// devices) and the kernel's netem qdisc (on veth pairs). Both read the same
// normalised profile; the choice is made here.
import fs from 'node:fs';
import { UsageError } from '../core/errors.js';
import { run } from '../core/sys.js';
import { NAMESPACE_PREFIX } from './addressing.js';
import { onTeardown } from './teardown.js';

export const LINK_BACKENDS = ['auto', 'linkem', 'netem'];

// The --link value, checked before anything is built.
export function checkLinkBackend(requested) {
  if (!LINK_BACKENDS.includes(requested)) {
    throw new UsageError(`--link: expected one of ${LINK_BACKENDS.join(', ')}, got ${JSON.stringify(requested)}`);
  }
  return requested;
}

// Pure: what of one direction's impairments (a normalised profile's) the
// kernel's netem cannot do, or null.
export function netemLacks(imp) {
  if (imp.schedule) return 'a delay or rate schedule';
  if (imp.access) return 'the access model (frames, encapsulation, demand assignment)';
  if (imp.slots) return 'a slot process (per-slot delay, handover spikes and loss)';
  return null;
}

// Pure: why a normalised profile's links need linkem (the first of its
// directions netem cannot do, named), or null.
export function linkemOnly(profile) {
  for (const [link, dirs] of Object.entries(profile?.links ?? {}))
    for (const [dir, imp] of Object.entries(dirs ?? {})) {
      const lacks = imp && netemLacks(imp);
      if (lacks) return `${profile.name ?? 'the profile'}'s ${link} ${dir} link has ${lacks}`;
    }
  return null;
}

// Pure: which backend to use given what the machine has; `needsLinkem`
// (linkemOnly's reason) makes auto pick linkem even where netem exists.
export function resolveLinkBackend(requested, { kernelNetem, tun, needsLinkem = null }) {
  checkLinkBackend(requested);
  if (requested === 'netem' && !kernelNetem) {
    throw new UsageError(
      '--link netem: this kernel has no sch_netem (tc says "Specified qdisc kind is unknown"); use --link linkem (or auto, which picks linkem here)',
    );
  }
  if (requested === 'linkem' && !tun) {
    throw new UsageError(
      '--link linkem: /dev/net/tun is missing; load the tun module (modprobe tun) or, in a container, pass the device in',
    );
  }
  if (requested === 'auto') {
    if (needsLinkem) {
      if (tun) return 'linkem';
      throw new UsageError(`${needsLinkem}, which needs linkem, and /dev/net/tun is missing; see \`satbench doctor\``);
    }
    if (kernelNetem) return 'netem';
    if (tun) return 'linkem';
    throw new UsageError(
      'no link backend: the kernel has no sch_netem and /dev/net/tun is missing; see `satbench doctor`',
    );
  }
  return requested;
}

export const hasTun = () => fs.existsSync('/dev/net/tun');

let netemCache;
// The throwaway namespace process `pid` asks the kernel for netem in: named
// like a testbed's, so `satbench cleanup` finds it if the process dies.
export const netemProbeNamespace = (pid) => `${NAMESPACE_PREFIX}nc${pid.toString(36)}-client`;

// Whether the kernel has sch_netem: try it on the loopback of that namespace.
export async function kernelHasNetem() {
  if (netemCache !== undefined) return netemCache;
  const ns = netemProbeNamespace(process.pid);
  const remove = () => run('ip', ['netns', 'del', ns], { allowFail: true });
  // A signal while it is being made waits for it, then removes it.
  let added;
  const unregister = onTeardown(async () => {
    await added.catch(() => {});
    await remove();
  });
  added = run('ip', ['netns', 'add', ns]);
  try {
    await added;
    const r = await run(
      'ip',
      ['netns', 'exec', ns, 'tc', 'qdisc', 'add', 'dev', 'lo', 'root', 'netem', 'delay', '1ms'],
      { allowFail: true },
    );
    netemCache = r.ok;
  } finally {
    unregister();
    await remove();
  }
  return netemCache;
}

const fmt = (n) => String(Math.round(n * 1000) / 1000);

// Pure: `tc qdisc add dev DEV root netem …` arguments for one direction.
export function netemArgs(imp, where) {
  const lacks = netemLacks(imp);
  if (lacks) throw new UsageError(`${where}: ${lacks}: kernel netem cannot emulate it; use --link linkem or auto`);
  const args = ['delay', `${fmt(imp.delay_ms)}ms`];
  if (imp.jitter_ms > 0) args.push(`${fmt(imp.jitter_ms)}ms`, 'distribution', imp.jitter_distribution);
  if (imp.loss?.model === 'random') args.push('loss', 'random', `${fmt(imp.loss.pct)}%`);
  if (imp.loss?.model === 'gemodel') {
    const l = imp.loss;
    args.push(
      'loss',
      'gemodel',
      `${fmt(l.p_pct)}%`,
      `${fmt(l.r_pct)}%`,
      `${fmt(l.h_loss_pct)}%`,
      `${fmt(l.k_loss_pct)}%`,
    );
  }
  if (imp.rate_mbit) args.push('rate', `${fmt(imp.rate_mbit * 1000)}kbit`);
  // netem counts its limit in packets only.
  if (imp.limit?.packets) args.push('limit', String(imp.limit.packets));
  if (imp.limit?.bytes) args.push('limit', String(Math.ceil(imp.limit.bytes / 1500)));
  return args;
}

// Pure: the config file linkem reads (see netem/linkem/README.md).
export function linkemConfig({ name, seed, a, b, forward, ret, statsPath, pcapDir = null }) {
  const strip = (imp) => ({
    delay_ms: imp.delay_ms,
    jitter_ms: imp.jitter_ms,
    jitter_distribution: imp.jitter_distribution,
    loss: imp.loss,
    rate_mbit: imp.rate_mbit,
    limit: imp.limit,
    schedule: imp.schedule,
    // Only with an access model, so that every other config is as before.
    ...(imp.access ? { access: imp.access } : {}),
    ...(imp.slots ? { slots: imp.slots } : {}),
  });
  return { name, seed, a, b, forward: strip(forward), return: strip(ret), stats_path: statsPath, pcap_dir: pcapDir };
}
