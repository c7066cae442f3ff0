//! The proxy's caps, as plain code: how many client connections it relays
//! at once, and how much memory one relayed connection may hold.
//!
//! A relayed connection's memory is bounded by QUIC itself: on each side,
//! the receive window caps what the peer may have in flight towards the
//! proxy, and quinn's send window caps what the proxy has written but the
//! peer not yet acknowledged. The relay adds at most one batch of chunks
//! per stream direction. `fit` shrinks the windows until that sum is under
//! `--max-conn-memory`, so the cap holds by construction.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use satbench_transport::quic::Windows;

/// Chunks the relay reads at once per stream direction.
pub const BATCH: usize = 8;

/// The smallest window the proxy uses (QuicOptions' floor).
pub const MIN_WINDOW: u64 = 64 * 1024;

/// The windows of both sides of one relayed connection, after the cap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fit {
    pub accept: Windows,
    pub connect: Windows,
    /// Bytes one relayed connection can hold at most with these windows.
    pub bound: u64,
    /// Whether the cap made the windows smaller.
    pub clamped: bool,
}

/// Most bytes the relay's own buffers hold for one connection: a batch of
/// chunks (each at most one UDP payload) per stream direction; a
/// bidirectional stream has two directions.
pub fn relay_bytes(max_bidi: u64, max_uni: u64, max_udp_payload: u64) -> u64 {
    // streams of both initiators, both sides
    let directions = 2 * (2 * max_bidi + max_uni);
    directions * BATCH as u64 * max_udp_payload
}

fn side_bytes(w: &Windows) -> u64 {
    w.connection_receive.saturating_add(w.send)
}

fn scale(w: Windows, num: u64, den: u64) -> Windows {
    let s = |v: u64| ((v as u128 * num as u128 / den as u128) as u64).max(MIN_WINDOW);
    let connection_receive = s(w.connection_receive);
    Windows {
        stream_receive: s(w.stream_receive).min(connection_receive),
        connection_receive,
        send: s(w.send),
    }
}

/// Shrinks both sides' windows in proportion until the connection fits
/// in `cap` bytes; an error when even the smallest windows do not.
pub fn fit(accept: Windows, connect: Windows, relay: u64, cap: u64) -> Result<Fit, String> {
    let total = |a: &Windows, c: &Windows| side_bytes(a) + side_bytes(c) + relay;
    let need = total(&accept, &connect);
    if need <= cap {
        return Ok(Fit {
            accept,
            connect,
            bound: need,
            clamped: false,
        });
    }
    let floor = 4 * MIN_WINDOW + relay;
    if cap < floor {
        return Err(format!(
            "--max-conn-memory {cap}: too small; a relayed connection needs at least {floor} bytes \
             (4 windows of {MIN_WINDOW} and {relay} of relay buffers)"
        ));
    }
    let room = cap - relay;
    let windows = need - relay;
    let (mut a, mut c) = (scale(accept, room, windows), scale(connect, room, windows));
    // the floors may push it over again: take the excess off proportionally once more
    let mut t = total(&a, &c);
    if t > cap {
        let (a2, c2) = (scale(a, room, t - relay), scale(c, room, t - relay));
        a = a2;
        c = c2;
        t = total(&a, &c);
    }
    Ok(Fit {
        accept: a,
        connect: c,
        bound: t,
        clamped: true,
    })
}

/// Admission of client connections up to `max` at once.
#[derive(Debug)]
pub struct Admission {
    max: usize,
    active: AtomicUsize,
}

/// Held while a connection is admitted; dropping it frees the slot.
#[derive(Debug)]
pub struct Ticket(Arc<Admission>);

impl Drop for Ticket {
    fn drop(&mut self) {
        self.0.active.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Admission {
    pub fn new(max: usize) -> Arc<Admission> {
        Arc::new(Admission {
            max,
            active: AtomicUsize::new(0),
        })
    }

    /// A ticket, or `None` when `max` connections are in.
    pub fn try_admit(self: &Arc<Self>) -> Option<Ticket> {
        self.active
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < self.max).then_some(n + 1)
            })
            .ok()
            .map(|_| Ticket(self.clone()))
    }

    pub fn active(&self) -> usize {
        self.active.load(Ordering::Acquire)
    }

    pub fn max(&self) -> usize {
        self.max
    }
}

/// Connection attempts refused lately, by the client's original destination
/// connection ID. Once quinn has refused an attempt it forgets it, so an
/// Initial the client retransmits afterwards looks like a new attempt; the
/// proxy ignores those instead of dialling the next hop (or logging the cap)
/// once more per retransmission.
#[derive(Debug)]
pub struct Refusals {
    ttl: Duration,
    max: usize,
    seen: VecDeque<(Instant, Vec<u8>)>,
}

impl Refusals {
    pub fn new(ttl: Duration, max: usize) -> Refusals {
        Refusals {
            ttl,
            max,
            seen: VecDeque::new(),
        }
    }

    fn expire(&mut self, now: Instant) {
        while let Some((t, _)) = self.seen.front() {
            if now.saturating_duration_since(*t) < self.ttl && self.seen.len() <= self.max {
                break;
            }
            self.seen.pop_front();
        }
    }

    pub fn remember(&mut self, cid: &[u8], now: Instant) {
        self.seen.push_back((now, cid.to_vec()));
        self.expire(now);
    }

    pub fn contains(&mut self, cid: &[u8], now: Instant) -> bool {
        self.expire(now);
        self.seen.iter().any(|(_, c)| c == cid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use satbench_transport::quic::windows;

    #[test]
    fn admits_up_to_max_and_frees_on_drop() {
        let a = Admission::new(2);
        let t1 = a.try_admit().unwrap();
        let t2 = a.try_admit().unwrap();
        assert!(a.try_admit().is_none());
        assert_eq!(a.active(), 2);
        drop(t1);
        let t3 = a.try_admit().unwrap();
        assert!(a.try_admit().is_none());
        drop((t2, t3));
        assert_eq!(a.active(), 0);
    }

    #[test]
    fn relay_buffers_count_every_stream_direction() {
        // 100 bidi + 100 uni per initiator: 2 × (200 + 100) directions
        assert_eq!(relay_bytes(100, 100, 1452), 600 * BATCH as u64 * 1452);
    }

    #[test]
    fn fits_without_change_under_the_cap() {
        let w = windows(1_000_000); // 2 MB each
        let f = fit(w, w, 1000, 1 << 30).unwrap();
        assert!(!f.clamped);
        assert_eq!(f.accept, w);
        assert_eq!(f.bound, 4 * 2_000_000 + 1000);
    }

    #[test]
    fn shrinks_in_proportion_to_fit() {
        let sat = windows(20_312_500); // 40.6 MB windows
        let lan = windows(100_000); // 200 kB
        let cap = 64 << 20;
        let relay = 1 << 20;
        let f = fit(lan, sat, relay, cap).unwrap();
        assert!(f.clamped);
        assert!(f.bound <= cap, "{} > {cap}", f.bound);
        assert!(
            f.bound > cap - cap / 50,
            "uses the room it has: {}",
            f.bound
        );
        assert!(
            f.connect.send > 10 * f.accept.send,
            "the big windows stay the big ones"
        );
        assert!(f.connect.stream_receive <= f.connect.connection_receive);
        assert!(f.accept.send >= MIN_WINDOW);
    }

    #[test]
    fn a_cap_below_the_floor_is_an_error() {
        let w = windows(1_000_000);
        let e = fit(w, w, 0, 100_000).unwrap_err();
        assert!(e.starts_with("--max-conn-memory 100000: too small"), "{e}");
        assert!(fit(w, w, 0, 4 * MIN_WINDOW).is_ok());
    }

    #[test]
    fn remembers_refusals_for_a_while_and_a_bounded_number() {
        let t0 = Instant::now();
        let mut r = Refusals::new(Duration::from_secs(10), 2);
        r.remember(b"a", t0);
        assert!(r.contains(b"a", t0 + Duration::from_secs(9)));
        assert!(!r.contains(b"b", t0));
        assert!(!r.contains(b"a", t0 + Duration::from_secs(10)), "expired");
        r.remember(b"b", t0);
        r.remember(b"c", t0);
        r.remember(b"d", t0);
        assert!(!r.contains(b"b", t0), "the oldest go first beyond max");
        assert!(r.contains(b"c", t0) && r.contains(b"d", t0));
    }
}
