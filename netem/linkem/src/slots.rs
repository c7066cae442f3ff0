//! The slot stage: a LEO terminal served by one satellite per fixed slot
//! (Starlink's 15 s). Each slot has its own base one-way delay, drawn
//! uniformly between the configured bounds; at each slot's start (the
//! handover) a spike adds to the delay for a while and packets are lost
//! with a probability for a while.
//!
//! A slot's delay is a pure function of the seed, the direction and the
//! slot's number (not of the packets seen before), so a run is reproducible
//! and the delay of a slot does not depend on the traffic. The loss draws
//! come from their own stream, drawn only inside a loss window, so a
//! profile without slots draws exactly as before.
//!
//! Slot numbers count from the boundary at or before time 0: with phase
//! `p` (seconds into its slot at time 0), time `t` is in slot
//! `floor((t + p) / period)`.
//!
//! With outages (a moving terminal, `outages.rs`) every packet is lost
//! during one, and its end is a handover too: the terminal is on another
//! satellite until the next boundary, with a base delay of its own (drawn
//! from the slot's number and the outage's end), and the spike and the
//! loss burst follow it as they follow a slot's start.

use crate::config::{SlotPhase, SlotsConfig};
use crate::outages::Outages;
use crate::rng::{fnv1a64, splitmix64, Rng};

#[derive(Debug)]
pub struct SlotStage {
    period_ns: u64,
    phase_ns: u64,
    delay_min_ms: f64,
    delay_max_ms: f64,
    spike_ms: f64,
    spike_ns: u64,
    loss_p: f64,
    loss_ns: u64,
    /// Keys the per-slot delay draws.
    key: u64,
    loss_rng: Rng,
    outages: Option<Outages>,
}

/// The latest handover at or before a time: in slot `n`, at its start
/// (`sub` 0) or at the end of an outage inside it (`sub`: that time).
struct Handover {
    n: u64,
    sub: u64,
    since_ns: u64,
}

fn ns(s: f64) -> u64 {
    (s * 1e9).round() as u64
}

/// Seconds into its slot at the wall-clock time `unix_ns`, for slots of
/// `period_s` with a boundary `boundary_at_s` past each full minute.
pub fn wall_clock_phase_s(unix_ns: u128, period_s: f64, boundary_at_s: f64) -> f64 {
    let minute_ns = 60_000_000_000u128;
    let into_minute_s = (unix_ns % minute_ns) as f64 / 1e9;
    (into_minute_s - boundary_at_s).rem_euclid(period_s)
}

/// The phase the stage starts with: fixed, or read from the wall clock
/// (`unix_ns`, the wall-clock time of linkem's time 0).
pub fn phase_s(cfg: &SlotsConfig, unix_ns: u128) -> f64 {
    match cfg.phase {
        SlotPhase::Fixed(p) => p.rem_euclid(cfg.period_s),
        SlotPhase::WallClock { boundary_at_s } => {
            wall_clock_phase_s(unix_ns, cfg.period_s, boundary_at_s)
        }
    }
}

impl SlotStage {
    /// The stage of direction `dir` with time 0 `phase_s` seconds into
    /// its slot.
    pub fn new(cfg: &SlotsConfig, phase_s: f64, seed: u64, dir: &str) -> SlotStage {
        let mut sm = seed ^ fnv1a64(format!("{dir}/slot-delay").as_bytes());
        SlotStage {
            period_ns: ns(cfg.period_s).max(1),
            phase_ns: ns(phase_s),
            delay_min_ms: cfg.delay_min_ms,
            delay_max_ms: cfg.delay_max_ms,
            spike_ms: cfg.spike_ms,
            spike_ns: ns(cfg.spike_s),
            loss_p: cfg.loss_p,
            loss_ns: ns(cfg.loss_s),
            key: splitmix64(&mut sm),
            loss_rng: Rng::stream(seed, dir, "slot-loss"),
            outages: cfg.outages.as_ref().map(|o| Outages::new(o, seed)),
        }
    }

    /// (slot number, ns since the slot began) at `t_ns`.
    pub fn slot_at(&self, t_ns: u64) -> (u64, u64) {
        let u = t_ns + self.phase_ns;
        (u / self.period_ns, u % self.period_ns)
    }

    /// The base one-way delay of slot `n`, in ms.
    pub fn slot_delay_ms(&self, n: u64) -> f64 {
        self.base_delay_ms(n, 0)
    }

    /// The base delay after handover `sub` of slot `n` (0: its start); a
    /// pure function of the seed, so the same whatever the traffic.
    fn base_delay_ms(&self, n: u64, sub: u64) -> f64 {
        let mut sm = self.key
            ^ n.wrapping_mul(0x9E37_79B9_7F4A_7C15)
            ^ sub.wrapping_mul(0xD1B5_4A32_D192_ED03);
        let u = (splitmix64(&mut sm) >> 11) as f64 / (1u64 << 53) as f64;
        self.delay_min_ms + (self.delay_max_ms - self.delay_min_ms) * u
    }

    /// The handover in force at `t_ns`; none inside an outage.
    fn handover_at(&mut self, t_ns: u64) -> Option<Handover> {
        let (n, into) = self.slot_at(t_ns);
        match self.outages.as_mut().and_then(|o| o.latest_at(t_ns)) {
            Some((_, end)) if t_ns < end => None,
            // back after an outage that ended inside this slot
            Some((_, end)) if t_ns - end < into => Some(Handover {
                n,
                sub: end,
                since_ns: t_ns - end,
            }),
            _ => Some(Handover {
                n,
                sub: 0,
                since_ns: into,
            }),
        }
    }

    /// The delay the slot process adds at `t_ns`, in ms: the base delay
    /// of the satellite in use plus the handover spike while it lasts.
    pub fn delay_ms_at(&mut self, t_ns: u64) -> f64 {
        match self.handover_at(t_ns) {
            Some(h) => {
                let spike = if h.since_ns < self.spike_ns {
                    self.spike_ms
                } else {
                    0.0
                };
                self.base_delay_ms(h.n, h.sub) + spike
            }
            // Inside an outage the packet is lost (`lose`) before this.
            None => self.slot_delay_ms(self.slot_at(t_ns).0),
        }
    }

    /// Whether a packet at `t_ns` is lost to an outage or a handover.
    pub fn lose(&mut self, t_ns: u64) -> bool {
        match self.handover_at(t_ns) {
            Some(h) => h.since_ns < self.loss_ns && self.loss_rng.chance(self.loss_p),
            None => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;
    const S: u64 = 1_000_000_000;

    fn cfg() -> SlotsConfig {
        SlotsConfig {
            period_s: 15.0,
            phase: SlotPhase::Fixed(0.0),
            delay_min_ms: 10.0,
            delay_max_ms: 30.0,
            spike_ms: 20.0,
            spike_s: 0.3,
            loss_p: 0.5,
            loss_s: 0.1,
            outages: None,
        }
    }

    #[test]
    fn each_slot_holds_one_draw_within_the_bounds_and_slots_differ() {
        let mut s = SlotStage::new(&cfg(), 0.0, 7, "forward");
        let mut seen = Vec::new();
        for n in 0..200u64 {
            let start = n * 15 * S;
            let d = s.delay_ms_at(start + S);
            assert!((10.0..=30.0).contains(&d), "slot {n}: {d}");
            // the same all through the slot after the spike
            assert_eq!(d, s.delay_ms_at(start + 14 * S));
            seen.push(d);
        }
        let mean = seen.iter().sum::<f64>() / seen.len() as f64;
        assert!((mean - 20.0).abs() < 1.5, "uniform mean {mean}");
        let changes = seen.windows(2).filter(|w| w[0] != w[1]).count();
        assert_eq!(changes, 199, "every boundary steps");
    }

    #[test]
    fn spike_and_loss_only_just_after_a_boundary() {
        let mut s = SlotStage::new(&cfg(), 0.0, 7, "forward");
        let base = s.slot_delay_ms(1);
        assert_eq!(s.delay_ms_at(15 * S), base + 20.0);
        assert_eq!(s.delay_ms_at(15 * S + 299 * MS), base + 20.0);
        assert_eq!(s.delay_ms_at(15 * S + 300 * MS), base);
        let lost_in = (0..10_000u64)
            .filter(|i| s.lose(15 * S + i * 10_000))
            .count();
        assert!((4_500..5_500).contains(&lost_in), "{lost_in}");
        assert!((0..10_000u64).all(|i| !s.lose(15 * S + 100 * MS + i * 10_000)));
    }

    #[test]
    fn the_same_seed_gives_the_same_slots_another_seed_other_ones() {
        let a = SlotStage::new(&cfg(), 0.0, 7, "forward");
        let b = SlotStage::new(&cfg(), 0.0, 7, "forward");
        let c = SlotStage::new(&cfg(), 0.0, 8, "forward");
        let r = SlotStage::new(&cfg(), 0.0, 7, "return");
        let v = |s: &SlotStage| (0..20).map(|n| s.slot_delay_ms(n)).collect::<Vec<_>>();
        assert_eq!(v(&a), v(&b));
        assert_ne!(v(&a), v(&c));
        assert_ne!(v(&a), v(&r));
    }

    #[test]
    fn the_phase_moves_the_boundaries() {
        // 5 s into its slot at time 0: the next boundary is at 10 s.
        let mut s = SlotStage::new(&cfg(), 5.0, 7, "forward");
        assert_eq!(s.slot_at(0), (0, 5 * S));
        assert_eq!(s.slot_at(10 * S - 1), (0, 15 * S - 1));
        assert_eq!(s.slot_at(10 * S), (1, 0));
        assert_eq!(s.delay_ms_at(10 * S), s.slot_delay_ms(1) + 20.0);
    }

    #[test]
    fn an_outage_loses_every_packet_then_the_terminal_is_on_another_satellite() {
        use crate::config::OutagesConfig;
        let mut c = cfg();
        c.outages = Some(OutagesConfig {
            mean_gap_s: 20.0,
            min_s: 1.0,
            max_s: 1.0,
        });
        let mut fwd = SlotStage::new(&c, 0.0, 7, "forward");
        let mut ret = SlotStage::new(&c, 0.0, 7, "return");
        // the first outage ending well inside a slot, with none other
        // until after the next boundary
        let mut probe = Outages::new(c.outages.as_ref().unwrap(), 7);
        let mut spans: Vec<(u64, u64)> = Vec::new();
        for k in 0..4000u64 {
            if let Some(s) = probe.latest_at(k * S / 2) {
                if spans.last() != Some(&s) {
                    spans.push(s);
                }
            }
        }
        let next_boundary = |t: u64| (t / (15 * S) + 1) * 15 * S;
        let (start, end) = spans
            .windows(2)
            .find(|w| {
                let (into, following) = (w[0].1 % (15 * S), w[1].0);
                into > S && into < 14 * S && following > next_boundary(w[0].1) + 2 * S
            })
            .map(|w| w[0])
            .unwrap();
        assert_eq!(end - start, S);
        let n = end / (15 * S);
        // no packet gets through, in either direction
        for t in (start..end).step_by(1_000_000) {
            assert!(fwd.lose(t) && ret.lose(t), "at {t}");
        }
        // then a handover: another base delay, the spike and the loss burst
        let after = fwd.base_delay_ms(n, end);
        assert_ne!(after, fwd.slot_delay_ms(n));
        assert!((10.0..=30.0).contains(&after));
        assert_eq!(fwd.delay_ms_at(end), after + 20.0);
        assert_eq!(fwd.delay_ms_at(end + 300 * MS), after);
        let lost = (0..1000u64).filter(|i| fwd.lose(end + i * 100_000)).count();
        assert!((350..650).contains(&lost), "{lost} of 1000 in the burst");
        assert!((0..1000u64).all(|i| !fwd.lose(end + 100 * MS + i * 100_000)));
        // until the next boundary, where the slots go on as before
        let next = next_boundary(end);
        assert_eq!(fwd.delay_ms_at(next - 1), after);
        assert_eq!(fwd.delay_ms_at(next + S), fwd.slot_delay_ms(n + 1));
    }

    #[test]
    fn wall_clock_phase_counts_from_the_boundary_past_the_minute() {
        // boundaries at :12, :27, :42, :57
        let at = |s: u128, ms: u128| (1_700_000_040 + s) * 1_000_000_000 + ms * 1_000_000;
        // 1_700_000_040 is a full minute
        assert_eq!(1_700_000_040u128 % 60, 0);
        assert_eq!(wall_clock_phase_s(at(12, 0), 15.0, 12.0), 0.0);
        assert_eq!(wall_clock_phase_s(at(13, 500), 15.0, 12.0), 1.5);
        assert_eq!(wall_clock_phase_s(at(30, 0), 15.0, 12.0), 3.0);
        assert_eq!(wall_clock_phase_s(at(0, 0), 15.0, 12.0), 3.0);
        assert_eq!(wall_clock_phase_s(at(11, 0), 15.0, 12.0), 14.0);
        let mut c = cfg();
        c.phase = SlotPhase::WallClock {
            boundary_at_s: 12.0,
        };
        assert_eq!(phase_s(&c, at(30, 0)), 3.0);
        c.phase = SlotPhase::Fixed(16.0);
        assert_eq!(phase_s(&c, at(30, 0)), 1.0);
    }
}
