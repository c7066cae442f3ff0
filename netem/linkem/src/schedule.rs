//! Delay and rate over time.
//!
//! Time 0 is when linkem became ready. The delay varies piecewise-linearly
//! between the points that give `delay_ms`; before the first such point the
//! direction's base `delay_ms` holds, after the last one its value holds.
//! The rate steps at each point that gives `rate_mbit` (`null` = no limit);
//! before the first such point the base `rate_mbit` holds. With `loop`, time
//! is taken modulo the last point's `t_s` (the period), so each period
//! starts again from the base values. Two points at the same time make a
//! step in the delay.

use crate::config::{RateChange, ScheduleConfig};

#[derive(Clone, Debug)]
pub struct Schedule {
    period_ns: Option<u64>,
    delay: Vec<(u64, f64)>,
    /// (time, rate in bit/s or None for no limit)
    rate: Vec<(u64, Option<f64>)>,
}

fn ns(t_s: f64) -> u64 {
    (t_s * 1e9).round() as u64
}

impl Schedule {
    pub fn new(cfg: &ScheduleConfig) -> Schedule {
        let delay = cfg
            .points
            .iter()
            .filter_map(|p| p.delay_ms.map(|d| (ns(p.t_s), d)))
            .collect();
        let rate = cfg
            .points
            .iter()
            .filter_map(|p| match p.rate {
                RateChange::Keep => None,
                RateChange::Unlimited => Some((ns(p.t_s), None)),
                RateChange::Mbit(m) => Some((ns(p.t_s), Some(m * 1e6))),
            })
            .collect();
        let last = cfg.points.last().map(|p| ns(p.t_s)).unwrap_or(0);
        let period_ns = if cfg.looped && last > 0 {
            Some(last)
        } else {
            None
        };
        Schedule {
            period_ns,
            delay,
            rate,
        }
    }

    fn phase(&self, t_ns: u64) -> u64 {
        match self.period_ns {
            Some(p) => t_ns % p,
            None => t_ns,
        }
    }

    /// The delay in force at `t_ns`, in ms.
    pub fn delay_ms_at(&self, t_ns: u64, base_ms: f64) -> f64 {
        let t = self.phase(t_ns);
        // The last point at or before t (the later of equal times).
        let i = self.delay.partition_point(|&(pt, _)| pt <= t);
        if i == 0 {
            return base_ms;
        }
        let (t0, d0) = self.delay[i - 1];
        match self.delay.get(i) {
            None => d0,
            Some(&(t1, d1)) => d0 + (d1 - d0) * ((t - t0) as f64 / (t1 - t0) as f64),
        }
    }

    /// The rate in force at `t_ns`, in bit/s (None = no limit).
    pub fn rate_bps_at(&self, t_ns: u64, base_bps: Option<f64>) -> Option<f64> {
        let t = self.phase(t_ns);
        let i = self.rate.partition_point(|&(pt, _)| pt <= t);
        if i == 0 {
            base_bps
        } else {
            self.rate[i - 1].1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::SchedulePoint;

    const S: u64 = 1_000_000_000;

    fn pt(t_s: f64, delay_ms: Option<f64>, rate: RateChange) -> SchedulePoint {
        SchedulePoint {
            t_s,
            delay_ms,
            rate,
        }
    }

    #[test]
    fn delay_interpolates_then_holds() {
        let s = Schedule::new(&ScheduleConfig {
            looped: false,
            points: vec![
                pt(0.0, Some(25.0), RateChange::Keep),
                pt(30.0, Some(145.0), RateChange::Keep),
            ],
        });
        assert_eq!(s.delay_ms_at(0, 600.0), 25.0);
        assert_eq!(s.delay_ms_at(15 * S, 600.0), 85.0);
        assert_eq!(s.delay_ms_at(3 * S, 600.0), 37.0);
        assert_eq!(s.delay_ms_at(30 * S, 600.0), 145.0);
        assert_eq!(s.delay_ms_at(1000 * S, 600.0), 145.0);
    }

    #[test]
    fn base_delay_before_the_first_point_and_points_without_delay_are_skipped() {
        let s = Schedule::new(&ScheduleConfig {
            looped: false,
            points: vec![
                pt(10.0, Some(20.0), RateChange::Keep),
                pt(15.0, None, RateChange::Mbit(5.0)),
                pt(20.0, Some(40.0), RateChange::Keep),
            ],
        });
        assert_eq!(s.delay_ms_at(5 * S, 100.0), 100.0);
        assert_eq!(s.delay_ms_at(15 * S, 100.0), 30.0);
    }

    #[test]
    fn equal_times_make_a_step() {
        let s = Schedule::new(&ScheduleConfig {
            looped: false,
            points: vec![
                pt(0.0, Some(10.0), RateChange::Keep),
                pt(5.0, Some(10.0), RateChange::Keep),
                pt(5.0, Some(50.0), RateChange::Keep),
            ],
        });
        assert_eq!(s.delay_ms_at(5 * S - 1, 0.0), 10.0);
        assert_eq!(s.delay_ms_at(5 * S, 0.0), 50.0);
    }

    #[test]
    fn rate_steps() {
        let s = Schedule::new(&ScheduleConfig {
            looped: false,
            points: vec![
                pt(0.0, Some(25.0), RateChange::Unlimited),
                pt(10.0, Some(30.0), RateChange::Keep),
                pt(20.0, None, RateChange::Mbit(10.0)),
            ],
        });
        assert_eq!(s.rate_bps_at(0, Some(20e6)), None);
        assert_eq!(s.rate_bps_at(15 * S, Some(20e6)), None);
        assert_eq!(s.rate_bps_at(20 * S - 1, Some(20e6)), None);
        assert_eq!(s.rate_bps_at(20 * S, Some(20e6)), Some(10e6));
        assert_eq!(s.rate_bps_at(99 * S, Some(20e6)), Some(10e6));
        // Before any rate point the base rate holds.
        let s = Schedule::new(&ScheduleConfig {
            looped: false,
            points: vec![
                pt(0.0, Some(1.0), RateChange::Keep),
                pt(5.0, None, RateChange::Mbit(1.0)),
            ],
        });
        assert_eq!(s.rate_bps_at(S, Some(20e6)), Some(20e6));
        assert_eq!(s.rate_bps_at(6 * S, Some(20e6)), Some(1e6));
    }

    #[test]
    fn loop_repeats_with_the_last_time_as_period() {
        let s = Schedule::new(&ScheduleConfig {
            looped: true,
            points: vec![
                pt(0.0, Some(20.0), RateChange::Mbit(50.0)),
                pt(10.0, Some(40.0), RateChange::Mbit(10.0)),
                pt(20.0, Some(20.0), RateChange::Keep),
            ],
        });
        for k in 0..3 {
            let o = k * 20 * S;
            assert_eq!(s.delay_ms_at(o, 0.0), 20.0);
            assert_eq!(s.delay_ms_at(o + 5 * S, 0.0), 30.0);
            assert_eq!(s.delay_ms_at(o + 10 * S, 0.0), 40.0);
            assert_eq!(s.delay_ms_at(o + 15 * S, 0.0), 30.0);
            assert_eq!(s.rate_bps_at(o + S, None), Some(50e6));
            assert_eq!(s.rate_bps_at(o + 12 * S, None), Some(10e6));
        }
    }
}
