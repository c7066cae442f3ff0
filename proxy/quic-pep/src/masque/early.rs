//! Datagrams that come before their request is open, as plain state: a
//! client may send HTTP Datagrams right after its request, without waiting
//! for the response (RFC 9298 §5, RFC 9297 §2.1), and over a satellite the
//! response is a round trip away. Proxy-GW keeps a few per stream for a
//! short while, for the request still being decided; the route takes them
//! when it opens, a refusal or the time limit drops them. A stream whose
//! request has ended keeps nothing more.

use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

use bytes::Bytes;

/// Datagrams kept per stream: Chromium's first flight (an Initial and a
/// few 0-RTT packets) and more.
pub const PER_STREAM: usize = 32;
/// Streams with datagrams kept at once.
pub const STREAMS: usize = 256;
/// How long they wait for their request: longer than deciding one takes
/// (a name resolves within 5 s or the request is refused).
pub const HOLD: Duration = Duration::from_secs(6);
/// Ended requests remembered, so that their late datagrams are not kept.
pub const ENDED: usize = 1024;

#[derive(Debug, Default)]
pub struct Early {
    held: HashMap<u64, (Instant, Vec<Bytes>)>,
    ended: VecDeque<u64>,
}

impl Early {
    /// Keeps `payload` for stream `sid`; false when it is dropped instead
    /// (its request has ended, its stream holds `PER_STREAM`, or `STREAMS`
    /// streams wait).
    pub fn hold(&mut self, sid: u64, payload: Bytes, now: Instant) -> bool {
        if self.ended.contains(&sid) {
            return false;
        }
        if !self.held.contains_key(&sid) && self.held.len() >= STREAMS {
            return false;
        }
        let (_, kept) = self.held.entry(sid).or_insert_with(|| (now, Vec::new()));
        if kept.len() >= PER_STREAM {
            return false;
        }
        kept.push(payload);
        true
    }

    /// What waits for stream `sid`, oldest first, now its route is open.
    pub fn take(&mut self, sid: u64) -> Vec<Bytes> {
        self.held.remove(&sid).map(|(_, v)| v).unwrap_or_default()
    }

    /// Stream `sid`'s request has ended (refused, or its relay is over):
    /// how many datagrams it kept, dropped now.
    pub fn end(&mut self, sid: u64) -> usize {
        if self.ended.len() >= ENDED {
            self.ended.pop_front();
        }
        self.ended.push_back(sid);
        self.take(sid).len()
    }

    /// Drops what has waited `HOLD` by `now`: how many datagrams.
    pub fn expire(&mut self, now: Instant) -> usize {
        let mut dropped = 0;
        self.held.retain(|_, (since, kept)| {
            let keep = now.saturating_duration_since(*since) < HOLD;
            if !keep {
                dropped += kept.len();
            }
            keep
        });
        dropped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(n: u8) -> Bytes {
        Bytes::from(vec![n])
    }

    #[test]
    fn keeps_a_streams_datagrams_in_order_until_its_route_takes_them() {
        let now = Instant::now();
        let mut e = Early::default();
        assert!(e.hold(4, b(1), now));
        assert!(e.hold(8, b(9), now));
        assert!(e.hold(4, b(2), now));
        assert_eq!(e.take(4), vec![b(1), b(2)]);
        assert!(e.take(4).is_empty(), "taken once");
        assert_eq!(e.take(8), vec![b(9)]);
    }

    #[test]
    fn bounds_what_it_keeps_and_for_how_long() {
        let now = Instant::now();
        let mut e = Early::default();
        for i in 0..PER_STREAM {
            assert!(e.hold(0, b(i as u8), now));
        }
        assert!(!e.hold(0, b(0), now), "a stream's share is full");
        for sid in 1..STREAMS as u64 {
            assert!(e.hold(sid * 4, b(0), now));
        }
        assert!(
            !e.hold(4 * STREAMS as u64, b(0), now),
            "no room for another stream"
        );
        assert_eq!(e.expire(now + HOLD / 2), 0);
        let later = now + HOLD / 2;
        assert!(e.take(4).len() == 1);
        assert!(e.hold(4, b(1), later), "room again");
        assert_eq!(e.expire(now + HOLD), PER_STREAM + STREAMS - 2);
        assert_eq!(e.take(4), vec![b(1)], "held later, not yet expired");
    }

    #[test]
    fn an_ended_request_drops_what_it_kept_and_keeps_nothing_more() {
        let now = Instant::now();
        let mut e = Early::default();
        assert!(e.hold(4, b(1), now));
        assert_eq!(e.end(4), 1);
        assert!(!e.hold(4, b(2), now), "late for an ended request");
        assert!(e.hold(8, b(3), now), "another stream still waits");
        for sid in 0..ENDED as u64 {
            e.end(1000 + sid * 4);
        }
        assert!(e.hold(4, b(4), now), "only the last ENDED are remembered");
    }
}
