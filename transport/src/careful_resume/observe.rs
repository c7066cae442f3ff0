//! The Observe side of Careful Resume: what a connection learns of its
//! path, to be saved for the next one. The saved window is the most the
//! path delivered in one minimum RTT, not the congestion window: a window
//! that grew while the sender was application-limited was never carried by
//! the path, and the draft asks for a capacity the path has shown. Bytes
//! are counted in rounds of at least a minimum RTT of acks, and a round's
//! rate is taken over the longer of the time its acks and the time its
//! packets' sending spanned: acks that arrive bunched (a late ACK, a queue
//! that emptied at once) do not make the path look faster than the sender
//! could fill it. The saved RTT is the minimum RTT.

use std::time::{Duration, Instant};

use super::phases::Saved;

/// The acks of one round so far.
#[derive(Clone, Copy, Debug)]
struct Round {
    acked_from: Instant,
    sent_from: Instant,
    sent_to: Instant,
    bytes: u64,
}

impl Round {
    /// The bytes this round stands for in one `rtt`: its bytes over the
    /// longer of its ack span, its send span and `at_least`.
    fn per_rtt(&self, now: Instant, rtt: Duration, at_least: Duration) -> u64 {
        let span = now
            .saturating_duration_since(self.acked_from)
            .max(self.sent_to.saturating_duration_since(self.sent_from))
            .max(at_least);
        if span.is_zero() {
            return self.bytes;
        }
        (u128::from(self.bytes) * rtt.as_nanos() / span.as_nanos()) as u64
    }
}

#[derive(Clone, Debug, Default)]
pub struct Observer {
    round: Option<Round>,
    best: u64,
    min_rtt: Option<Duration>,
    last_ack: Option<Instant>,
}

impl Observer {
    /// `bytes` of a packet sent at `sent` acked at `now`; `min_rtt` is the
    /// least RTT the sender knows.
    pub fn on_ack(&mut self, now: Instant, sent: Instant, bytes: u64, min_rtt: Duration) {
        if !min_rtt.is_zero() {
            self.min_rtt = Some(self.min_rtt.map_or(min_rtt, |m| m.min(min_rtt)));
        }
        self.last_ack = Some(now);
        let r = self.round.get_or_insert(Round {
            acked_from: now,
            sent_from: sent,
            sent_to: sent,
            bytes: 0,
        });
        r.bytes += bytes;
        r.sent_from = r.sent_from.min(sent);
        r.sent_to = r.sent_to.max(sent);
        let Some(rtt) = self.min_rtt else { return };
        if now.saturating_duration_since(r.acked_from) >= rtt {
            self.best = self.best.max(r.per_rtt(now, rtt, Duration::ZERO));
            self.round = None;
        }
    }

    /// What to save at the end of the connection: None before an RTT has
    /// been measured. The round in progress counts as if it had lasted at
    /// least an RTT.
    pub fn saved(&self) -> Option<Saved> {
        let rtt = self.min_rtt?;
        let open = match (self.round, self.last_ack) {
            (Some(r), Some(now)) => r.per_rtt(now, rtt, rtt),
            _ => 0,
        };
        let cwnd = self.best.max(open);
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

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn saves_the_most_delivered_in_one_round_trip_and_the_least_rtt() {
        let t0 = Instant::now() + ms(1000);
        let mut o = Observer::default();
        assert_eq!(o.saved(), None, "nothing measured");
        // 10 kB acked every 10 ms, each sent 600 ms before: round 1 (0-600
        // ms) 61 acks, 610 kB over 600 ms; then rounds of 600 ms alike
        for i in 0..=60 {
            o.on_ack(t0 + ms(i * 10), t0 + ms(i * 10) - ms(600), 10_000, ms(600));
        }
        let s = o.saved().unwrap();
        assert_eq!(s.rtt, ms(600));
        assert_eq!(s.cwnd, 610_000);
        assert_eq!(Observer::capacity_bps(&s), 8_133_333);
    }

    #[test]
    fn bunched_acks_count_at_the_rate_their_packets_were_sent() {
        let t0 = Instant::now() + ms(1000);
        let mut o = Observer::default();
        // 300 kB sent over 600 ms, acked in 100 ms (a queue that emptied at once)
        for i in 0..30 {
            o.on_ack(
                t0 + ms(i * 10 / 3),
                t0 - ms(600) + ms(i * 20),
                10_000,
                ms(100),
            );
        }
        o.on_ack(t0 + ms(100), t0, 10_000, ms(100));
        // 310 kB over the 600 ms they took to send: 51.6 kB per 100 ms
        assert_eq!(o.saved().unwrap().cwnd, 51_666);
    }

    #[test]
    fn a_short_connection_saves_what_it_delivered() {
        let t0 = Instant::now() + ms(1000);
        let mut o = Observer::default();
        o.on_ack(t0, t0 - ms(600), 12_000, ms(600));
        o.on_ack(t0 + ms(5), t0 - ms(595), 12_000, ms(600));
        assert_eq!(
            o.saved(),
            Some(Saved {
                cwnd: 24_000,
                rtt: ms(600)
            }),
            "an open round counts as lasting an RTT at least"
        );
    }
}
