//! Proxy-GW's spare TCP connections for QPEP (`--qpep-spares N`). Once a
//! client's TCP connection to a server has crossed the tunnel, Proxy-GW
//! keeps up to N connections to that server dialled ahead, so the client's
//! next connections (a browser opens up to six per host for HTTP/1.1) do
//! not wait for the ground hop's handshake. A spare carries nothing until
//! it is taken and serves one client connection, as a fresh one would.
//! This file is the bookkeeping, without I/O; `qpep::Gw` dials and checks.

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddrV4;
use std::time::{Duration, Instant};

/// A spare older than this is not used: servers close connections that
/// send no request (H2O 2.2.5 after 10 s), and one closed in the last
/// moment would cost the client a reset.
pub const MAX_AGE: Duration = Duration::from_secs(5);
/// Servers kept spares for at once; the least recently used gives way.
pub const MAX_DESTINATIONS: usize = 4;

struct Destination<T> {
    ready: VecDeque<(T, Instant)>,
    dialling: usize,
    used: Instant,
}

pub struct Spares<T> {
    per_server: usize,
    servers: HashMap<SocketAddrV4, Destination<T>>,
}

impl<T> Spares<T> {
    pub fn new(per_server: usize) -> Spares<T> {
        Spares {
            per_server,
            servers: HashMap::new(),
        }
    }

    /// The oldest ready spare for `dst` still within MAX_AGE at `now`;
    /// older ones are dropped.
    pub fn take(&mut self, dst: SocketAddrV4, now: Instant) -> Option<T> {
        let d = self.servers.get_mut(&dst)?;
        d.used = now;
        while let Some((c, opened)) = d.ready.pop_front() {
            if now.saturating_duration_since(opened) < MAX_AGE {
                return Some(c);
            }
        }
        None
    }

    /// How many connections to `dst` to dial now so that those ready and
    /// those being dialled make N; they count as being dialled from here.
    /// A server new to a full table replaces the least recently used one
    /// (its spares are dropped).
    pub fn to_dial(&mut self, dst: SocketAddrV4, now: Instant) -> usize {
        if self.per_server == 0 {
            return 0;
        }
        if !self.servers.contains_key(&dst) && self.servers.len() >= MAX_DESTINATIONS {
            if let Some(old) = self
                .servers
                .iter()
                .min_by_key(|(_, d)| d.used)
                .map(|(a, _)| *a)
            {
                self.servers.remove(&old);
            }
        }
        let d = self.servers.entry(dst).or_insert_with(|| Destination {
            ready: VecDeque::new(),
            dialling: 0,
            used: now,
        });
        d.ready
            .retain(|(_, opened)| now.saturating_duration_since(*opened) < MAX_AGE);
        let n = self.per_server.saturating_sub(d.ready.len() + d.dialling);
        d.dialling += n;
        n
    }

    /// A dial `to_dial` asked for has ended: with a connection, or not.
    pub fn dialled(&mut self, dst: SocketAddrV4, conn: Option<T>, now: Instant) {
        // Gone from the table meanwhile: the connection is dropped.
        let Some(d) = self.servers.get_mut(&dst) else {
            return;
        };
        d.dialling = d.dialling.saturating_sub(1);
        if let Some(c) = conn {
            d.ready.push_back((c, now));
        }
    }

    /// Spares ready now, all servers.
    pub fn ready(&self) -> usize {
        self.servers.values().map(|d| d.ready.len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(port: u16) -> SocketAddrV4 {
        SocketAddrV4::new([198, 18, 3, 2].into(), port)
    }

    #[test]
    fn fills_to_n_and_hands_out_the_oldest_first() {
        let t0 = Instant::now();
        let mut s = Spares::new(3);
        assert_eq!(
            s.take(addr(80), t0),
            None,
            "nothing before the first connection"
        );
        assert_eq!(s.to_dial(addr(80), t0), 3);
        assert_eq!(s.to_dial(addr(80), t0), 0, "being dialled counts");
        for c in 1..=3 {
            s.dialled(addr(80), Some(c), t0 + Duration::from_millis(c));
        }
        assert_eq!(s.ready(), 3);
        assert_eq!(s.take(addr(80), t0), Some(1));
        assert_eq!(s.to_dial(addr(80), t0), 1, "one taken, one to dial");
        assert_eq!(s.take(addr(81), t0), None, "another server has none");
    }

    #[test]
    fn a_failed_dial_is_dialled_again_later() {
        let t0 = Instant::now();
        let mut s: Spares<u32> = Spares::new(2);
        assert_eq!(s.to_dial(addr(80), t0), 2);
        s.dialled(addr(80), None, t0);
        s.dialled(addr(80), Some(7), t0);
        assert_eq!(s.to_dial(addr(80), t0), 1);
    }

    #[test]
    fn old_spares_are_never_handed_out() {
        let t0 = Instant::now();
        let mut s = Spares::new(2);
        s.to_dial(addr(80), t0);
        s.dialled(addr(80), Some(1), t0);
        s.dialled(addr(80), Some(2), t0 + MAX_AGE);
        assert_eq!(
            s.take(addr(80), t0 + MAX_AGE + Duration::from_millis(1)),
            Some(2)
        );
        s.dialled(addr(80), Some(3), t0);
        assert_eq!(
            s.to_dial(addr(80), t0 + MAX_AGE),
            2,
            "the old one is dropped"
        );
        assert_eq!(s.ready(), 0);
    }

    #[test]
    fn zero_spares_dials_nothing() {
        let mut s: Spares<u32> = Spares::new(0);
        assert_eq!(s.to_dial(addr(80), Instant::now()), 0);
        assert_eq!(s.ready(), 0);
    }

    #[test]
    fn a_new_server_takes_the_place_of_the_least_recently_used() {
        let t0 = Instant::now();
        let mut s = Spares::new(1);
        for p in 0..MAX_DESTINATIONS as u16 {
            s.to_dial(addr(p), t0 + Duration::from_secs(p.into()));
            s.dialled(addr(p), Some(p), t0);
        }
        s.take(addr(0), t0 + Duration::from_secs(10)); // 0 used last now; 1 is the oldest
        s.dialled(addr(0), Some(100), t0 + Duration::from_secs(10));
        assert_eq!(s.to_dial(addr(9), t0 + Duration::from_secs(10)), 1);
        s.dialled(addr(1), Some(5), t0); // a dial for the evicted server ends: dropped
        assert_eq!(s.take(addr(1), t0), None);
        assert_eq!(s.take(addr(0), t0 + Duration::from_secs(10)), Some(100));
    }
}
