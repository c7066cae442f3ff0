//! Random outages: a moving terminal loses its satellite (an obstruction, a
//! beam switch) at drawn times, for drawn lengths. The time from one
//! outage's end to the next one's start is exponential with mean
//! `mean_gap_s`; each outage lasts uniformly `min_s..=max_s`.
//!
//! The outages come from their own stream, keyed by the seed alone (not
//! the direction), and are drawn in time order as far as they are asked
//! for, never per packet: so a seed gives the same outages whatever the
//! traffic, and both directions, each with its own stage, see the same
//! ones (an obstruction blocks both).

use crate::config::OutagesConfig;
use crate::rng::Rng;

#[derive(Debug)]
pub struct Outages {
    mean_gap_ns: f64,
    min_ns: f64,
    max_ns: f64,
    rng: Rng,
    /// The outages drawn so far, `[start, end)` in ns, in time order; kept
    /// so that a time before the latest one is still answered the same
    /// (one outage per half a minute is a few thousand a day).
    spans: Vec<(u64, u64)>,
}

impl Outages {
    pub fn new(cfg: &OutagesConfig, seed: u64) -> Outages {
        Outages {
            mean_gap_ns: cfg.mean_gap_s * 1e9,
            min_ns: cfg.min_s * 1e9,
            max_ns: cfg.max_s * 1e9,
            rng: Rng::stream(seed, "link", "outage"),
            spans: Vec::new(),
        }
    }

    /// Draws outages until one ends after `t_ns`.
    fn draw_past(&mut self, t_ns: u64) {
        loop {
            let from = self.spans.last().map_or(0, |&(_, end)| end);
            if from > t_ns {
                return;
            }
            let gap = -self.mean_gap_ns * self.rng.next_open01().ln();
            let len = self.min_ns + (self.max_ns - self.min_ns) * self.rng.next_f64();
            // At least 1 ns each, so that time always moves on.
            let start = from + (gap.round() as u64).max(1);
            self.spans
                .push((start, start + (len.round() as u64).max(1)));
        }
    }

    /// The latest outage that started at or before `t_ns`, as
    /// `(start, end)`: `t_ns` is inside it when `t_ns < end`.
    pub fn latest_at(&mut self, t_ns: u64) -> Option<(u64, u64)> {
        self.draw_past(t_ns);
        let n = self.spans.partition_point(|&(start, _)| start <= t_ns);
        n.checked_sub(1).map(|i| self.spans[i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    fn cfg() -> OutagesConfig {
        OutagesConfig {
            mean_gap_s: 30.0,
            min_s: 0.2,
            max_s: 2.0,
        }
    }

    /// Every outage that starts before `until_ns`, asking every `step_ns`.
    fn spans(o: &mut Outages, step_ns: u64, until_ns: u64) -> Vec<(u64, u64)> {
        let mut seen: Vec<(u64, u64)> = Vec::new();
        for t in (0..until_ns).step_by(step_ns as usize) {
            if let Some(s) = o.latest_at(t) {
                if seen.last() != Some(&s) {
                    seen.push(s);
                }
            }
        }
        seen
    }

    #[test]
    fn lengths_and_gaps_follow_the_configuration() {
        let mut o = Outages::new(&cfg(), 1);
        let all = spans(&mut o, S / 10, 100_000 * S);
        assert!((3_000..3_450).contains(&all.len()), "{} outages", all.len());
        for w in all.windows(2) {
            assert!(w[1].0 > w[0].1, "outages do not overlap");
        }
        let lens: Vec<f64> = all.iter().map(|&(s, e)| (e - s) as f64 / 1e9).collect();
        assert!(lens.iter().all(|&l| (0.2..=2.0).contains(&l)));
        let mean_len = lens.iter().sum::<f64>() / lens.len() as f64;
        assert!((mean_len - 1.1).abs() < 0.05, "mean length {mean_len}");
        let gaps: Vec<f64> = all
            .windows(2)
            .map(|w| (w[1].0 - w[0].1) as f64 / 1e9)
            .collect();
        let mean_gap = gaps.iter().sum::<f64>() / gaps.len() as f64;
        assert!((mean_gap - 30.0).abs() < 2.0, "mean gap {mean_gap}");
        // exponential: about e^-1 of the gaps are longer than the mean
        let long = gaps.iter().filter(|&&g| g > 30.0).count() as f64 / gaps.len() as f64;
        assert!((long - (-1f64).exp()).abs() < 0.03, "{long}");
    }

    #[test]
    fn the_same_whatever_is_asked_and_when() {
        // A busy link asks every millisecond, an idle one now and then, out
        // of order: the outages are the same.
        let mut busy = Outages::new(&cfg(), 7);
        let mut idle = Outages::new(&cfg(), 7);
        let a = spans(&mut busy, S / 1000, 600 * S);
        assert_eq!(idle.latest_at(600 * S - S / 1000), a.last().copied());
        for &(start, end) in a.iter().rev() {
            assert_eq!(idle.latest_at(start), Some((start, end)));
            assert_eq!(idle.latest_at(end - 1), Some((start, end)));
        }
        assert_eq!(idle.latest_at(a[0].0 - 1), None);
        let other = spans(&mut Outages::new(&cfg(), 8), S / 1000, 600 * S);
        assert_ne!(a, other, "another seed, other outages");
    }
}
