// Every campaign setting's default, in one table: the command line's
// options and help, the plan a campaign's check returns, and the runs
// read them here, so that a default is written once.
export const DEFAULTS = Object.freeze({
  link: 'auto', // the link emulation backend: the kernel's netem when it has it and the profile needs nothing netem lacks, else linkem
  seed: 1, // the link emulator's seed; run i uses seed + i
  timeoutMs: 120_000, // a page load taking longer fails its run
  origin: 'rust', // the origin server (bench)
  altSvc: 'all', // which of our origin's responses advertise HTTP/3
  archiveDns: 'gw', // where a replayed archive's names are looked up: every lookup crosses the satellite link
  pepTunnel: 'warm', // the QUIC PEP's satellite hop: one standing tunnel
  tcpPepPreset: 'paper', // the split-TCP PEP's preset
  cpuSlowdown: 1, // bench's DevTools CPU throttling: none
  device: 'desktop', // the device bench's page loads emulate (browser/devices.js)
  binMs: 100, // a bulk transfer's goodput bins
  visual: false, // bench --visual: a page load records screenshots, visual metrics, CLS and TBT (opt-in: README)
});
