// Named bulk-transfer matrices (`satbench bulk --preset NAME`); the
// QUIC-for-SATCOM objectives they are judged against are in
// harness/results/objectives.js.

export const BULK_PRESETS = {
  'ifip2022-goodput': {
    description:
      'Kosek et al. (IFIP Networking 2022) goodput: geo and leo, loss 0/0.01/0.1/1 %, 15 s downloads over QUIC and TCP with and without PEP, 10 runs',
    profiles: ['geo', 'leo'],
    losses: [0, 0.01, 0.1, 1],
    protocols: ['quic', 'quic-pep', 'tcp', 'tcp-pep'],
    directions: ['down'],
    duration_s: 15,
    size_bytes: null,
    runs: 10,
  },
  quic4sat: {
    description:
      'QUIC for SATCOM (draft-kuhn-quic-4-sat): the six link scenarios, a 100 MB download each (and a 100 MB upload where the draft sets upload objectives: small) over QUIC and TCP with and without PEP, 3 runs; time to 2, 10 and 100 MB against the objectives',
    profiles: [
      'quic4sat-small',
      'quic4sat-medium',
      'quic4sat-congested-medium',
      'quic4sat-variable-medium',
      'quic4sat-large',
      'quic4sat-lossy-large',
    ],
    losses: [null],
    protocols: ['quic', 'quic-pep', 'tcp', 'tcp-pep'],
    duration_s: null,
    size_bytes: 100e6,
    runs: 3,
    directions: ['down', 'up'],
    uploads_where_objectives: true,
    // The satellite hop each PEP chain runs with unless --pep-sat says
    // otherwise: ours for the QUIC PEP (rate × RTT from the start, random
    // loss ignored), asking for an ACK per 20 packets, since
    // congested-medium's 0.5 Mbit/s return link cannot carry one per two
    // of 50 Mbit/s; the kernel's BBR for the split-TCP PEP.
    pep_sat: { quic: 'cc=sat,ack-eliciting-threshold=20', tcp: 'cc=bbr' },
  },
};

// Without --preset: what the options do not say.
export const BULK_DEFAULTS = {
  profiles: ['geo'],
  losses: [0],
  protocols: ['quic', 'tcp'],
  directions: ['down'],
  duration_s: 10,
  size_bytes: null,
  runs: 3,
};
