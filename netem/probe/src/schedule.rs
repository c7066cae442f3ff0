//! Pacing against absolute deadlines: send `i` is due at `start + i * period`,
//! however late earlier sends were, so the schedule never drifts.

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Schedule {
    /// Monotonic time of send 0, in ns.
    pub start_ns: u64,
    /// Time between consecutive sends, in ns (fractional, so high rates keep
    /// their exact average).
    pub period_ns: f64,
    /// Number of sends.
    pub total: u64,
    /// Sends taken together: the sender sleeps until `burst` sends are due,
    /// then sends every send that is due. 1 = one wake-up per send.
    pub burst: u64,
}

/// Longest a sender lets sends pile up before waking: the cost of one
/// sleep/wake-up is tens of microseconds, so at high packet rates waking for
/// every packet cannot keep up; bursts this short are still smoothed by any
/// link queue.
pub const BURST_WINDOW_NS: f64 = 200_000.0;

/// How long past its end a schedule may still be caught up with.
pub const OVERRUN_GRACE_NS: u64 = 10_000_000;

impl Schedule {
    /// One send every `interval_ms`, each woken for separately.
    pub fn every(start_ns: u64, interval_ms: f64, total: u64) -> Schedule {
        Schedule {
            start_ns,
            period_ns: interval_ms * 1e6,
            total,
            burst: 1,
        }
    }

    /// Packets of `packet_bytes` (counted at the IP layer) at `mbit` Mbit/s
    /// for `duration_ms`: as many packets as fit in the duration (at least
    /// one), in bursts of at most [`BURST_WINDOW_NS`].
    pub fn for_rate(start_ns: u64, mbit: f64, packet_bytes: usize, duration_ms: u64) -> Schedule {
        let period_ns = packet_bytes as f64 * 8.0 * 1e3 / mbit;
        let total = ((duration_ms as f64 * 1e6 / period_ns).round() as u64).max(1);
        let burst = ((BURST_WINDOW_NS / period_ns).floor() as u64).max(1);
        Schedule {
            start_ns,
            period_ns,
            total,
            burst,
        }
    }

    /// When send `i` is due.
    pub fn due_ns(&self, i: u64) -> u64 {
        self.start_ns + (i as f64 * self.period_ns).round() as u64
    }

    /// How many sends (from the first) are due at `now_ns`.
    pub fn due_count(&self, now_ns: u64) -> u64 {
        if now_ns < self.start_ns {
            return 0;
        }
        let elapsed = (now_ns - self.start_ns) as f64;
        let mut n = ((elapsed / self.period_ns).floor() as u64 + 1).min(self.total);
        // Guard against float rounding at the boundary: keep due_ns(n-1) <= now.
        while n > 0 && self.due_ns(n - 1) > now_ns {
            n -= 1;
        }
        while n < self.total && self.due_ns(n) <= now_ns {
            n += 1;
        }
        n
    }

    /// Whether a sender running behind should give up on the rest: at
    /// `now_ns` the whole schedule (`total` periods) has been over for more
    /// than [`OVERRUN_GRACE_NS`]. A sender that cannot keep up then sends
    /// what it could in the asked duration instead of running on.
    pub fn overrun(&self, now_ns: u64) -> bool {
        now_ns > self.due_ns(self.total) + OVERRUN_GRACE_NS
    }

    /// Given `sent` sends done, when the sender should wake next: when the
    /// next `burst` sends are due (or the last one, at the end).
    /// `None` when everything has been sent.
    pub fn next_wake_ns(&self, sent: u64) -> Option<u64> {
        if sent >= self.total {
            return None;
        }
        Some(self.due_ns((sent + self.burst - 1).min(self.total - 1)))
    }
}

/// The fractional part of the golden ratio: `i × GOLDEN mod 1` for i = 0,
/// 1, 2, … fills [0, 1) evenly, each new point in the largest gap left.
const GOLDEN: f64 = 0.618_033_988_749_895;

/// An offset in [0, `span_ns`) for event `i`: `frac(i × golden ratio) ×
/// span`. Events paced by a whole interval meet a frame clock at one phase
/// (or a few); offset this way they meet it at every phase, evenly.
pub fn golden_offset_ns(i: u64, span_ns: f64) -> u64 {
    ((i as f64 * GOLDEN).fract() * span_ns) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn golden_offsets_fill_the_span_evenly() {
        assert_eq!(golden_offset_ns(0, 40e6), 0);
        assert_eq!(golden_offset_ns(5, 0.0), 0);
        // 20 offsets over 40 ms: two in each 4 ms tenth, give or take one.
        let mut tenths = [0; 10];
        for i in 0..20 {
            let o = golden_offset_ns(i, 40e6);
            assert!(o < 40_000_000);
            tenths[(o / 4_000_000) as usize] += 1;
        }
        assert_eq!(tenths, [3, 2, 2, 1, 2, 2, 2, 3, 2, 1]);
    }

    #[test]
    fn fixed_interval_is_absolute() {
        let s = Schedule::every(1_000, 10.0, 5);
        assert_eq!(
            (0..5).map(|i| s.due_ns(i)).collect::<Vec<_>>(),
            vec![1_000, 10_001_000, 20_001_000, 30_001_000, 40_001_000]
        );
        assert_eq!(s.next_wake_ns(0), Some(1_000));
        assert_eq!(s.next_wake_ns(3), Some(30_001_000));
        assert_eq!(s.next_wake_ns(5), None);
    }

    #[test]
    fn due_count_catches_up_after_a_late_wake() {
        let s = Schedule::every(0, 1.0, 10);
        assert_eq!(s.due_count(0), 1);
        assert_eq!(s.due_count(999_999), 1);
        assert_eq!(s.due_count(1_000_000), 2);
        // Woke 3.5 ms late: four sends are due at once, nothing skipped.
        assert_eq!(s.due_count(3_500_000), 4);
        assert_eq!(s.due_count(u64::MAX / 2), 10);
    }

    #[test]
    fn due_count_before_start_is_zero() {
        let s = Schedule::every(5_000, 1.0, 10);
        assert_eq!(s.due_count(4_999), 0);
        assert_eq!(s.due_count(5_000), 1);
    }

    #[test]
    fn rate_schedule_300_mbit() {
        // 1500-byte IP packets at 300 Mbit/s: 25,000 packets/s, 40 us apart.
        let s = Schedule::for_rate(0, 300.0, 1500, 3000);
        assert!((s.period_ns - 40_000.0).abs() < 1e-6);
        assert_eq!(s.total, 75_000);
        assert_eq!(s.burst, 5);
        // The average rate over the whole schedule is exact.
        let span_s = (s.due_ns(s.total - 1) - s.due_ns(0)) as f64 / 1e9;
        let mbit = (s.total - 1) as f64 * 1500.0 * 8.0 / span_s / 1e6;
        assert!((mbit - 300.0).abs() < 1e-6, "{mbit}");
        // Bursts: wake when 5 are due.
        assert_eq!(s.next_wake_ns(0), Some(160_000));
        assert_eq!(s.next_wake_ns(5), Some(360_000));
        assert_eq!(s.next_wake_ns(74_998), Some(s.due_ns(74_999)));
    }

    #[test]
    fn overrun_after_the_schedule_and_grace() {
        // 10 packets 1 ms apart: the schedule spans 10 ms, plus 10 ms grace.
        let s = Schedule::every(1_000, 1.0, 10);
        assert!(!s.overrun(1_000 + 20_000_000));
        assert!(s.overrun(1_000 + 20_000_001));
    }

    #[test]
    fn rate_schedule_slow_link_one_packet_per_wake() {
        // 10 Mbit/s: 1.2 ms apart, no bursts.
        let s = Schedule::for_rate(0, 10.0, 1500, 3000);
        assert_eq!(s.burst, 1);
        assert_eq!(s.total, 2500);
        // A tiny duration still sends one packet.
        assert_eq!(Schedule::for_rate(0, 0.01, 1500, 1).total, 1);
    }

    #[test]
    fn fractional_period_does_not_drift() {
        // 1000-byte packets at 3 Mbit/s: 2,666,666.67 ns apart.
        let s = Schedule::for_rate(0, 3.0, 1000, 60_000);
        assert_eq!(s.due_ns(3), 8_000_000);
        assert_eq!(s.total, 22_500);
        assert_eq!(s.due_ns(22_499), 59_997_333_333);
        for n in [1, 2, 3, 4, 1000, 22_499] {
            assert_eq!(s.due_count(s.due_ns(n)), n + 1);
            assert_eq!(s.due_count(s.due_ns(n) - 1), n);
        }
    }
}
