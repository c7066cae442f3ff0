// A scenario resolved once per command: its link profile read and parsed,
// what the profile implies (the link's rate, the path's bandwidth-delay
// product), and the command's settings a run needs (origin, QUIC and TCP
// transport, PEP, link backend, seed). A run, its record and the report
// read this one object instead of a dozen loose options and the profile
// file again.
import { loadProfile, configuredSummary, pathBdpBytes } from '../testbed/profiles.js';

/**
 * A profile reader for one command: each (name, loss) is read and parsed
 * once, whoever asks (validation, the runs, the environment section).
 * `load` is loadProfile (tests give their own).
 */
export function profileCache(load = loadProfile) {
  const cache = new Map();
  return (name, lossPct = null) => {
    const key = JSON.stringify([name, lossPct]);
    if (!cache.has(key)) cache.set(key, load(name, lossPct === null ? {} : { lossPct }));
    return cache.get(key);
  };
}

/**
 * Resolves scenarios, each once: returns scenario → {…settings, scenario,
 * profile, linkMbps, bdpBytes, …facts(scenario)}. `settings` are the
 * command's (the same for every scenario); `facts` adds what a kind of run
 * derives from the scenario itself (its site folder, its PEP chain).
 */
export function scenarioResolver({ settings = {}, profiles = profileCache(), facts = () => ({}) } = {}) {
  const cache = new Map();
  return (scenario) => {
    const key = JSON.stringify(scenario);
    if (!cache.has(key)) {
      const profile = profiles(scenario.profile, scenario.loss_pct ?? null);
      cache.set(key, {
        ...settings,
        scenario,
        profile,
        // the rate the transfer's bytes go at (an upload's is the return link's)
        linkMbps: configuredSummary(profile)[scenario.direction === 'up' ? 'return_mbps' : 'forward_mbps'],
        bdpBytes: pathBdpBytes(profile),
        ...facts(scenario),
      });
    }
    return cache.get(key);
  };
}
