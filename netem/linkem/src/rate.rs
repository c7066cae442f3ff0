//! The rate stage: serialization at a link rate, with a bounded queue in
//! front of the link.
//!
//! A packet arriving at `now` starts transmission at
//! `start = max(now, link_free_at)` and ends it at `start + bits / rate`.
//! Packets whose transmission has not started yet form the backlog (the
//! queue); the one being serialized is not part of it. A packet that would
//! have to wait and would make the backlog exceed the limit is dropped
//! (cause "queue"). Lengths are IP packet lengths: no L2 framing is added.

use crate::config::Limit;
use std::collections::VecDeque;

#[derive(Debug)]
pub struct RateStage {
    limit: Option<Limit>,
    link_free_at_ns: u64,
    /// Packets accepted but not yet started: (start_ns, len).
    waiting: VecDeque<(u64, u32)>,
    waiting_bytes: u64,
    max_backlog_bytes: u64,
}

/// Nanoseconds to serialize `len` bytes at `rate_bps` bit/s.
pub fn serialization_ns(len: usize, rate_bps: f64) -> u64 {
    ((len as f64) * 8.0 * 1e9 / rate_bps).round() as u64
}

impl RateStage {
    pub fn new(limit: Option<Limit>) -> RateStage {
        RateStage {
            limit,
            link_free_at_ns: 0,
            waiting: VecDeque::new(),
            waiting_bytes: 0,
            max_backlog_bytes: 0,
        }
    }

    /// When a packet arriving at `now_ns` would start its transmission.
    pub fn start_time(&self, now_ns: u64) -> u64 {
        now_ns.max(self.link_free_at_ns)
    }

    fn expire(&mut self, now_ns: u64) {
        while let Some(&(start, len)) = self.waiting.front() {
            if start > now_ns {
                break;
            }
            self.waiting.pop_front();
            self.waiting_bytes -= len as u64;
        }
    }

    /// Accepts a packet of `len` bytes at `now_ns` at `rate_bps` (None: no
    /// rate limit, so no serialization time), returning when its transmission
    /// ends, or `None` when the queue limit drops it.
    pub fn on_packet(&mut self, now_ns: u64, len: usize, rate_bps: Option<f64>) -> Option<u64> {
        self.expire(now_ns);
        let start = self.start_time(now_ns);
        if start > now_ns {
            // It has to wait behind the packet being serialized.
            let over = match self.limit {
                None => false,
                Some(Limit::Packets(n)) => self.waiting.len() as u64 + 1 > n,
                Some(Limit::Bytes(b)) => self.waiting_bytes + len as u64 > b,
            };
            if over {
                return None;
            }
            self.waiting.push_back((start, len as u32));
            self.waiting_bytes += len as u64;
            self.max_backlog_bytes = self.max_backlog_bytes.max(self.waiting_bytes);
        }
        let end = match rate_bps {
            Some(r) => start + serialization_ns(len, r),
            None => start,
        };
        self.link_free_at_ns = end;
        Some(end)
    }

    /// Bytes waiting for transmission after the last call.
    pub fn backlog_bytes(&self) -> u64 {
        self.waiting_bytes
    }

    pub fn max_backlog_bytes(&self) -> u64 {
        self.max_backlog_bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const R20: Option<f64> = Some(20e6);

    #[test]
    fn serialization_is_exact() {
        // 1500 B at 20 Mbit/s = 600 us; 100 B = 40 us.
        assert_eq!(serialization_ns(1500, 20e6), 600_000);
        assert_eq!(serialization_ns(100, 20e6), 40_000);
        assert_eq!(serialization_ns(1500, 250e6), 48_000);
    }

    #[test]
    fn back_to_back_packets_serialize_one_after_another() {
        let mut r = RateStage::new(None);
        assert_eq!(r.on_packet(0, 1500, R20), Some(600_000));
        assert_eq!(r.on_packet(0, 1500, R20), Some(1_200_000));
        assert_eq!(r.on_packet(100_000, 100, R20), Some(1_240_000));
        assert_eq!(r.backlog_bytes(), 1600);
        // The link is idle again by 2 ms: no waiting.
        assert_eq!(r.on_packet(2_000_000, 1500, R20), Some(2_600_000));
        assert_eq!(r.backlog_bytes(), 0);
        assert_eq!(r.max_backlog_bytes(), 1600);
    }

    #[test]
    fn no_rate_means_no_serialization_and_no_queue() {
        let mut r = RateStage::new(Some(Limit::Packets(1)));
        for i in 0..100 {
            assert_eq!(r.on_packet(10, 1500, None), Some(10), "packet {i}");
        }
        assert_eq!(r.max_backlog_bytes(), 0);
    }

    #[test]
    fn packet_limit_drops_beyond_the_limit() {
        // Limit 2: one being sent + 2 waiting are accepted, the next dropped.
        let mut r = RateStage::new(Some(Limit::Packets(2)));
        assert_eq!(r.on_packet(0, 1500, R20), Some(600_000));
        assert_eq!(r.on_packet(0, 1500, R20), Some(1_200_000));
        assert_eq!(r.on_packet(0, 1500, R20), Some(1_800_000));
        assert_eq!(r.on_packet(0, 1500, R20), None);
        assert_eq!(r.on_packet(0, 40, R20), None);
        // At 600 us the second packet starts: one place frees up.
        assert_eq!(r.on_packet(600_000, 1500, R20), Some(2_400_000));
        assert_eq!(r.on_packet(600_000, 1500, R20), None);
        assert_eq!(r.max_backlog_bytes(), 3000);
    }

    #[test]
    fn byte_limit_drops_beyond_the_limit() {
        let mut r = RateStage::new(Some(Limit::Bytes(3000)));
        assert_eq!(r.on_packet(0, 1500, R20), Some(600_000)); // being sent
        assert_eq!(r.on_packet(0, 1500, R20), Some(1_200_000)); // 1500 waiting
        assert_eq!(r.on_packet(0, 1000, R20), Some(1_600_000)); // 2500 waiting
        assert_eq!(r.on_packet(0, 1000, R20), None); // would be 3500
        assert_eq!(r.on_packet(0, 500, R20), Some(1_800_000)); // exactly 3000
        assert_eq!(r.on_packet(0, 1, R20), None);
        assert_eq!(r.backlog_bytes(), 3000);
    }

    #[test]
    fn a_dropped_packet_does_not_use_the_link() {
        let mut r = RateStage::new(Some(Limit::Packets(1)));
        assert_eq!(r.on_packet(0, 1500, R20), Some(600_000));
        assert_eq!(r.on_packet(0, 1500, R20), Some(1_200_000));
        assert_eq!(r.on_packet(0, 1500, R20), None);
        assert_eq!(r.on_packet(1_200_000, 1500, R20), Some(1_800_000));
    }

    #[test]
    fn rate_change_applies_to_the_next_packet() {
        let mut r = RateStage::new(None);
        assert_eq!(r.on_packet(0, 1500, R20), Some(600_000));
        assert_eq!(r.on_packet(0, 1500, Some(10e6)), Some(1_800_000));
        assert_eq!(r.on_packet(0, 1500, None), Some(1_800_000));
    }
}
