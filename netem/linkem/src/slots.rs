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

use crate::config::{SlotPhase, SlotsConfig};
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
        }
    }

    /// (slot number, ns since the slot began) at `t_ns`.
    pub fn slot_at(&self, t_ns: u64) -> (u64, u64) {
        let u = t_ns + self.phase_ns;
        (u / self.period_ns, u % self.period_ns)
    }

    /// The base one-way delay of slot `n`, in ms.
    pub fn slot_delay_ms(&self, n: u64) -> f64 {
        let mut sm = self.key ^ n.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let u = (splitmix64(&mut sm) >> 11) as f64 / (1u64 << 53) as f64;
        self.delay_min_ms + (self.delay_max_ms - self.delay_min_ms) * u
    }

    /// The delay the slot process adds at `t_ns`, in ms: the slot's base
    /// plus the handover spike while it lasts.
    pub fn delay_ms_at(&self, t_ns: u64) -> f64 {
        let (n, into) = self.slot_at(t_ns);
        let spike = if into < self.spike_ns {
            self.spike_ms
        } else {
            0.0
        };
        self.slot_delay_ms(n) + spike
    }

    /// Whether a packet at `t_ns` is lost to the handover.
    pub fn lose(&mut self, t_ns: u64) -> bool {
        let (_, into) = self.slot_at(t_ns);
        into < self.loss_ns && self.loss_rng.chance(self.loss_p)
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
        }
    }

    #[test]
    fn each_slot_holds_one_draw_within_the_bounds_and_slots_differ() {
        let s = SlotStage::new(&cfg(), 0.0, 7, "forward");
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
        let s = SlotStage::new(&cfg(), 5.0, 7, "forward");
        assert_eq!(s.slot_at(0), (0, 5 * S));
        assert_eq!(s.slot_at(10 * S - 1), (0, 15 * S - 1));
        assert_eq!(s.slot_at(10 * S), (1, 0));
        assert_eq!(s.delay_ms_at(10 * S), s.slot_delay_ms(1) + 20.0);
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
