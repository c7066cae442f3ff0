//! The Observe side of Careful Resume: what a connection learns of its
//! path, to be saved for the next one. The saved window is the most the
//! path delivered in one round trip (bytes acked within a minimum RTT: a
//! smoothed one would count the queue's bytes as the path's),
//! not the congestion window: a window that grew while the sender was
//! application-limited was never carried by the path, and the draft asks
//! for a capacity the path has shown. The saved RTT is the minimum RTT.

use std::time::{Duration, Instant};

use super::phases::Saved;

#[derive(Clone, Debug, Default)]
pub struct Observer {
    round_start: Option<Instant>,
    round_bytes: u64,
    best_bytes: u64,
    /// The round trip `best_bytes` was delivered in.
    best_round: Duration,
    min_rtt: Option<Duration>,
}

impl Observer {
    /// `bytes` acked at `now`; `min_rtt` is the least RTT the sender knows.
    pub fn on_ack(&mut self, now: Instant, bytes: u64, min_rtt: Duration) {
        if !min_rtt.is_zero() {
            self.min_rtt = Some(self.min_rtt.map_or(min_rtt, |m| m.min(min_rtt)));
        }
        let start = *self.round_start.get_or_insert(now);
        let elapsed = now.saturating_duration_since(start);
        let round = self.min_rtt.unwrap_or_default();
        if elapsed >= round && !round.is_zero() {
            self.close_round(elapsed);
            self.round_start = Some(now);
        }
        self.round_bytes += bytes;
    }

    fn close_round(&mut self, elapsed: Duration) {
        if self.round_bytes > self.best_bytes {
            self.best_bytes = self.round_bytes;
            self.best_round = elapsed;
        }
        self.round_bytes = 0;
    }

    /// What to save at the end of the connection: None before a round
    /// trip has been measured. The round in progress counts only if it
    /// beat the best so far (its bytes are a lower bound).
    pub fn saved(&self) -> Option<Saved> {
        let rtt = self.min_rtt?;
        let cwnd = self.best_bytes.max(self.round_bytes);
        (cwnd > 0).then_some(Saved { cwnd, rtt })
    }

    /// The capacity in bits per second the saved window stands for
    /// (window / minimum RTT).
    pub fn capacity_bps(saved: &Saved) -> u64 {
        let ns = saved.rtt.as_nanos();
        if ns == 0 {
            return 0;
        }
        (u128::from(saved.cwnd) * 8 * 1_000_000_000 / ns) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saves_the_most_delivered_in_one_round_trip_and_the_least_rtt() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut o = Observer::default();
        assert_eq!(o.saved(), None, "nothing measured");
        // round 1: 30 kB; round 2: 100 kB; round 3 (in progress): 50 kB
        for i in 0..3 {
            o.on_ack(t0 + ms(i * 10), 10_000, ms(610));
        }
        for i in 0..10 {
            o.on_ack(t0 + ms(600 + i * 10), 10_000, ms(600));
        }
        for i in 0..5 {
            o.on_ack(t0 + ms(1300 + i * 10), 10_000, ms(605));
        }
        let s = o.saved().unwrap();
        assert_eq!(s, Saved { cwnd: 100_000, rtt: ms(600) });
        assert_eq!(Observer::capacity_bps(&s), 1_333_333);
    }
}
