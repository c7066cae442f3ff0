//! Proxy-GW's spare connections, dialled ahead of need so that a client's
//! next connection does not wait for the ground hop's handshake: the QUIC
//! origin connection of `--spare` (`tunnel::origin`) and QPEP's TCP
//! connections of `--qpep-spares N` (`qpep::Gw`). A spare carries nothing
//! until it is taken and serves one client connection, as a fresh one would.
//! This file is the bookkeeping, without I/O: spares by key (the ALPN, or
//! the TCP server), how many to dial, which are still fresh. Its users dial
//! and check that a spare is still open.

use std::collections::{HashMap, VecDeque};
use std::hash::Hash;
use std::time::{Duration, Instant};

/// How many spares to keep, for how many keys, for how long.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Policy {
    /// Spares kept ready (or being dialled) per key.
    pub per_key: usize,
    /// Keys kept spares for at once; the least recently used gives way,
    /// and its spares are dropped.
    pub max_keys: usize,
    /// A spare older than this is not used (None: any age).
    pub max_age: Option<Duration>,
}

struct Keyed<T> {
    ready: VecDeque<(T, Instant)>,
    dialling: usize,
    used: Instant,
}

pub struct Spares<K, T> {
    policy: Policy,
    keys: HashMap<K, Keyed<T>>,
}

impl<K: Hash + Eq + Clone, T> Spares<K, T> {
    pub fn new(policy: Policy) -> Spares<K, T> {
        Spares {
            policy,
            keys: HashMap::new(),
        }
    }

    /// The oldest ready spare for `key` still fresh at `now`; older ones
    /// are dropped.
    pub fn take(&mut self, key: &K, now: Instant) -> Option<T> {
        let max_age = self.policy.max_age;
        let d = self.keys.get_mut(key)?;
        d.used = now;
        while let Some((c, opened)) = d.ready.pop_front() {
            if fresh(max_age, opened, now) {
                return Some(c);
            }
        }
        None
    }

    /// How many spares for `key` to dial now so that those ready and those
    /// being dialled make `per_key`; they count as being dialled from here.
    /// A key new to a full table replaces the least recently used one.
    pub fn to_dial(&mut self, key: &K, now: Instant) -> usize {
        if self.policy.per_key == 0 {
            return 0;
        }
        if !self.keys.contains_key(key) && self.keys.len() >= self.policy.max_keys {
            if let Some(old) = self
                .keys
                .iter()
                .min_by_key(|(_, d)| d.used)
                .map(|(k, _)| k.clone())
            {
                self.keys.remove(&old);
            }
        }
        let max_age = self.policy.max_age;
        let d = self.keys.entry(key.clone()).or_insert_with(|| Keyed {
            ready: VecDeque::new(),
            dialling: 0,
            used: now,
        });
        d.ready.retain(|(_, opened)| fresh(max_age, *opened, now));
        let n = self
            .policy
            .per_key
            .saturating_sub(d.ready.len() + d.dialling);
        d.dialling += n;
        n
    }

    /// A dial `to_dial` asked for has ended: with a connection, or not.
    pub fn dialled(&mut self, key: &K, conn: Option<T>, now: Instant) {
        // Gone from the table meanwhile: the connection is dropped.
        let Some(d) = self.keys.get_mut(key) else {
            return;
        };
        d.dialling = d.dialling.saturating_sub(1);
        if let Some(c) = conn {
            d.ready.push_back((c, now));
        }
    }

    /// Spares ready now, all keys.
    pub fn ready(&self) -> usize {
        self.keys.values().map(|d| d.ready.len()).sum()
    }
}

fn fresh(max_age: Option<Duration>, opened: Instant, now: Instant) -> bool {
    max_age.is_none_or(|age| now.saturating_duration_since(opened) < age)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::SocketAddrV4;

    const MAX_AGE: Duration = Duration::from_secs(5);
    const MAX_KEYS: usize = 4;

    fn policy(per_key: usize) -> Policy {
        Policy {
            per_key,
            max_keys: MAX_KEYS,
            max_age: Some(MAX_AGE),
        }
    }

    fn addr(port: u16) -> SocketAddrV4 {
        SocketAddrV4::new([198, 18, 3, 2].into(), port)
    }

    #[test]
    fn fills_to_n_and_hands_out_the_oldest_first() {
        let t0 = Instant::now();
        let mut s = Spares::new(policy(3));
        assert_eq!(
            s.take(&addr(80), t0),
            None,
            "nothing before the first connection"
        );
        assert_eq!(s.to_dial(&addr(80), t0), 3);
        assert_eq!(s.to_dial(&addr(80), t0), 0, "being dialled counts");
        for c in 1..=3 {
            s.dialled(&addr(80), Some(c), t0 + Duration::from_millis(c));
        }
        assert_eq!(s.ready(), 3);
        assert_eq!(s.take(&addr(80), t0), Some(1));
        assert_eq!(s.to_dial(&addr(80), t0), 1, "one taken, one to dial");
        assert_eq!(s.take(&addr(81), t0), None, "another server has none");
    }

    #[test]
    fn a_failed_dial_is_dialled_again_later() {
        let t0 = Instant::now();
        let mut s: Spares<_, u32> = Spares::new(policy(2));
        assert_eq!(s.to_dial(&addr(80), t0), 2);
        s.dialled(&addr(80), None, t0);
        s.dialled(&addr(80), Some(7), t0);
        assert_eq!(s.to_dial(&addr(80), t0), 1);
    }

    #[test]
    fn old_spares_are_never_handed_out() {
        let t0 = Instant::now();
        let mut s = Spares::new(policy(2));
        s.to_dial(&addr(80), t0);
        s.dialled(&addr(80), Some(1), t0);
        s.dialled(&addr(80), Some(2), t0 + MAX_AGE);
        assert_eq!(
            s.take(&addr(80), t0 + MAX_AGE + Duration::from_millis(1)),
            Some(2)
        );
        s.dialled(&addr(80), Some(3), t0);
        assert_eq!(
            s.to_dial(&addr(80), t0 + MAX_AGE),
            2,
            "the old one is dropped"
        );
        assert_eq!(s.ready(), 0);
    }

    #[test]
    fn zero_spares_dials_nothing() {
        let mut s: Spares<_, u32> = Spares::new(policy(0));
        assert_eq!(s.to_dial(&addr(80), Instant::now()), 0);
        assert_eq!(s.ready(), 0);
    }

    #[test]
    fn a_new_key_takes_the_place_of_the_least_recently_used() {
        let t0 = Instant::now();
        let mut s = Spares::new(policy(1));
        for p in 0..MAX_KEYS as u16 {
            s.to_dial(&addr(p), t0 + Duration::from_secs(p.into()));
            s.dialled(&addr(p), Some(p), t0);
        }
        s.take(&addr(0), t0 + Duration::from_secs(10)); // 0 used last now; 1 is the oldest
        s.dialled(&addr(0), Some(100), t0 + Duration::from_secs(10));
        assert_eq!(s.to_dial(&addr(9), t0 + Duration::from_secs(10)), 1);
        s.dialled(&addr(1), Some(5), t0); // a dial for the evicted server ends: dropped
        assert_eq!(s.take(&addr(1), t0), None);
        assert_eq!(s.take(&addr(0), t0 + Duration::from_secs(10)), Some(100));
    }

    /// `--spare`'s use: one spare, for the ALPN asked last, of any age.
    #[test]
    fn one_spare_for_the_last_key_asked_for() {
        let t0 = Instant::now();
        let mut s = Spares::new(Policy {
            per_key: 1,
            max_keys: 1,
            max_age: None,
        });
        let (h3, h3_29) = (b"h3".to_vec(), b"h3-29".to_vec());
        assert_eq!(s.to_dial(&h3, t0), 1);
        s.dialled(&h3, Some("first"), t0);
        let later = t0 + Duration::from_secs(3600);
        assert_eq!(s.take(&h3_29, later), None, "another ALPN's is not taken");
        assert_eq!(s.to_dial(&h3_29, later), 1);
        assert_eq!(s.ready(), 0, "the other ALPN's spare gave way");
        s.dialled(&h3_29, Some("second"), later);
        assert_eq!(s.take(&h3, later), None);
        let much_later = later + Duration::from_secs(3600);
        assert_eq!(s.take(&h3_29, much_later), Some("second"));
    }
}
