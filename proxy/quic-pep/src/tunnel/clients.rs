//! The tunnel's client table, as plain state (no I/O): the client
//! connections the tunnel carries, those that have ended (so a stream of
//! one that arrives late is refused rather than waiting for an Open that
//! will never come), whether each has had its Open, and each one's streams
//! from the peer, put back in ID order (`order::Reorder`) for this end to
//! open their local twins in. `Tunnel` keeps it under one lock and does
//! the I/O it answers for.
//!
//! Generic over `H`, the async side's handle of a client connection, and
//! `T`, a stream waiting for its turn, so the tests need neither.

use std::collections::HashMap;

use super::order::{ClosedIds, Insert, OrderError, Reorder};
use crate::streams::{Dir, Initiator, Kind};

/// Ended client connections remembered one by one; older ones are folded
/// into "every ID below" (`ClosedIds`).
const ENDED_KEPT: usize = 4096;

/// What `open` found for an Open.
#[derive(Debug, PartialEq, Eq)]
pub enum OnOpen<H> {
    /// A client connection to start: dial its origin.
    Start(H),
    /// It has ended already: nothing to do.
    Ended,
    /// It had its Open already: the peer is broken.
    Twice,
}

/// What the opener of one kind of a client connection's streams does next.
#[derive(Debug, PartialEq, Eq)]
pub enum Next<T> {
    /// Open the twin of this stream, whose turn it is.
    Open(u64, T),
    /// Wait for the next stream to be queued.
    Wait,
    /// The peer broke the order at this stream: close the local connection.
    Broken(u64, OrderError),
    /// The client connection is forgotten: stop.
    Stop,
}

/// One kind of the peer's streams of one client connection.
struct Turns<T> {
    order: Reorder<T>,
    /// Where the peer broke the order; what came before still opens.
    broken: Option<(u64, OrderError)>,
    /// The opener has stopped: later streams are refused.
    stopped: bool,
}

struct Carried<H, T> {
    handle: H,
    opened: bool,
    /// Bidi, then uni.
    turns: [Turns<T>; 2],
}

pub struct Clients<H, T> {
    /// Who opens the streams whose twins this end opens: the peer's side.
    peer: Initiator,
    carried: HashMap<u64, Carried<H, T>>,
    ended: ClosedIds,
}

fn turn(dir: Dir) -> usize {
    usize::from(dir == Dir::Uni)
}

impl<H: Clone, T> Clients<H, T> {
    /// The table of the end whose peer's side opens `peer` streams.
    pub fn new(peer: Initiator) -> Clients<H, T> {
        Clients {
            peer,
            carried: HashMap::new(),
            ended: ClosedIds::new(ENDED_KEPT),
        }
    }

    /// Client connection `id` if it is carried.
    pub fn get(&self, id: u64) -> Option<&H> {
        self.carried.get(&id).map(|c| &c.handle)
    }

    /// Client connection `id`, carried from now on with the handle `make`
    /// returns if it is new; None if it has ended.
    pub fn add(&mut self, id: u64, make: impl FnOnce() -> H) -> Option<&H> {
        if !self.carried.contains_key(&id) && self.ended.contains(id) {
            return None;
        }
        let peer = self.peer;
        let c = self.carried.entry(id).or_insert_with(|| {
            let turns = [Dir::Bi, Dir::Uni].map(|dir| Turns {
                order: Reorder::new(Kind {
                    initiator: peer,
                    dir,
                }),
                broken: None,
                stopped: false,
            });
            Carried {
                handle: make(),
                opened: false,
                turns,
            }
        });
        Some(&c.handle)
    }

    /// The peer's Open of client connection `id` (made as `add`).
    pub fn open(&mut self, id: u64, make: impl FnOnce() -> H) -> OnOpen<H> {
        if self.add(id, make).is_none() {
            return OnOpen::Ended;
        }
        let c = self.carried.get_mut(&id).expect("just added");
        match std::mem::replace(&mut c.opened, true) {
            true => OnOpen::Twice,
            false => OnOpen::Start(c.handle.clone()),
        }
    }

    /// The peer's Close of client connection `id`: its handle, to close it
    /// with; if it is not carried, it is remembered as ended.
    pub fn close(&mut self, id: u64) -> Option<H> {
        let h = self.get(id).cloned();
        if h.is_none() {
            self.ended.close(id);
        }
        h
    }

    /// The peer's stream `stream` (or what stands in for it) of client
    /// connection `id`, queued for its turn: Ok with the handle whose
    /// opener of that kind is to look; Err hands it back to be refused (not
    /// carried, the opener has stopped or the order is broken, or its ID
    /// came already). A stream that breaks the order is dropped.
    pub fn queue(&mut self, id: u64, stream: u64, item: T) -> Result<&H, T> {
        let Some(c) = self.carried.get_mut(&id) else {
            return Err(item);
        };
        let t = &mut c.turns[turn(Kind::of(stream).dir)];
        if t.stopped || t.broken.is_some() {
            return Err(item);
        }
        match t.order.insert(stream, item) {
            Ok(Insert::Queued) => {}
            Ok(Insert::Late(item)) => return Err(item),
            Err(e) => t.broken = Some((stream, e)),
        }
        Ok(&c.handle)
    }

    /// What the opener of client connection `id`'s `dir` streams does next.
    pub fn next(&mut self, id: u64, dir: Dir) -> Next<T> {
        let Some(c) = self.carried.get_mut(&id) else {
            return Next::Stop;
        };
        let t = &mut c.turns[turn(dir)];
        if t.stopped {
            return Next::Stop;
        }
        match (t.order.pop(), t.broken) {
            (Some((stream, item)), _) => Next::Open(stream, item),
            (None, Some((stream, e))) => Next::Broken(stream, e),
            (None, None) => Next::Wait,
        }
    }

    /// The opener of client connection `id`'s `dir` streams has stopped:
    /// what waits is handed back to be refused, as is whatever comes later.
    pub fn stop(&mut self, id: u64, dir: Dir) -> Vec<T> {
        let Some(c) = self.carried.get_mut(&id) else {
            return vec![];
        };
        let t = &mut c.turns[turn(dir)];
        t.stopped = true;
        t.order.drain().collect()
    }

    /// Client connection `id` has ended: it is no longer carried, its
    /// streams that wait are handed back to be refused, and later ones
    /// will be.
    pub fn forget(&mut self, id: u64) -> Vec<T> {
        self.ended.close(id);
        let Some(mut c) = self.carried.remove(&id) else {
            return vec![];
        };
        c.turns
            .iter_mut()
            .flat_map(|t| t.order.drain().collect::<Vec<_>>())
            .collect()
    }

    /// How many client connections are carried.
    pub fn len(&self) -> usize {
        self.carried.len()
    }

    pub fn is_empty(&self) -> bool {
        self.carried.is_empty()
    }

    /// The handles of every client connection carried.
    pub fn handles(&self) -> Vec<H> {
        self.carried.values().map(|c| c.handle.clone()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tunnel::order::MAX_PENDING;

    /// Proxy-GW's table: the peer (Proxy-ST) relays the client's streams.
    fn gw() -> Clients<&'static str, &'static str> {
        Clients::new(Initiator::Client)
    }

    /// Everything the opener of `dir` would open now, in its order.
    fn opens(
        t: &mut Clients<&'static str, &'static str>,
        id: u64,
        dir: Dir,
    ) -> Vec<(u64, &'static str)> {
        let mut v = vec![];
        while let Next::Open(s, item) = t.next(id, dir) {
            v.push((s, item));
        }
        v
    }

    #[test]
    fn each_client_s_streams_open_in_id_order_of_their_own() {
        let mut t = gw();
        t.add(1, || "one");
        t.add(2, || "two");
        assert_eq!(t.queue(1, 8, "1:8"), Ok(&"one"));
        assert_eq!(t.queue(2, 0, "2:0"), Ok(&"two"));
        assert_eq!(t.queue(1, 2, "1:2"), Ok(&"one"), "a uni stream");
        assert_eq!(t.queue(1, 4, "1:4"), Ok(&"one"));
        assert_eq!(t.next(1, Dir::Bi), Next::Wait, "1's stream 0 has not come");
        assert_eq!(opens(&mut t, 1, Dir::Uni), [(2, "1:2")]);
        assert_eq!(
            opens(&mut t, 2, Dir::Bi),
            [(0, "2:0")],
            "2 has its own order"
        );
        assert_eq!(t.queue(1, 0, "1:0"), Ok(&"one"));
        assert_eq!(
            opens(&mut t, 1, Dir::Bi),
            [(0, "1:0"), (4, "1:4"), (8, "1:8")]
        );
        assert_eq!(t.next(1, Dir::Bi), Next::Wait);
        assert_eq!(t.queue(1, 4, "again"), Err("again"), "its turn has passed");
        assert_eq!(t.queue(1, 12, "1:12"), Ok(&"one"));
        assert_eq!(t.queue(1, 12, "twice"), Err("twice"), "the first one wins");
        assert_eq!(opens(&mut t, 1, Dir::Bi), [(12, "1:12")]);
    }

    #[test]
    fn a_forgotten_client_hands_back_what_waits_and_refuses_what_comes() {
        let mut t = gw();
        t.add(1, || "one");
        t.add(2, || "two");
        t.queue(1, 4, "1:4").unwrap();
        t.queue(1, 6, "1:6").unwrap();
        t.queue(2, 4, "2:4").unwrap();
        let mut back = t.forget(1);
        back.sort();
        assert_eq!(back, ["1:4", "1:6"]);
        assert_eq!(t.len(), 1);
        assert_eq!(t.get(1), None);
        assert_eq!(t.next(1, Dir::Bi), Next::Stop, "its openers stop");
        assert_eq!(t.queue(1, 0, "1:0"), Err("1:0"));
        assert_eq!(
            t.add(1, || "again"),
            None,
            "a late stream does not bring it back"
        );
        assert_eq!(t.open(1, || "again"), OnOpen::Ended);
        assert_eq!(t.forget(1), Vec::<&str>::new());
        assert_eq!(t.queue(2, 0, "2:0"), Ok(&"two"), "the other client goes on");
        assert_eq!(opens(&mut t, 2, Dir::Bi), [(0, "2:0"), (4, "2:4")]);
    }

    #[test]
    fn a_close_before_anything_else_refuses_that_client_for_good() {
        let mut t = gw();
        assert_eq!(t.close(7), None);
        assert_eq!(t.add(7, || "seven"), None);
        assert_eq!(t.open(7, || "seven"), OnOpen::Ended);
        assert!(t.is_empty());
        t.add(8, || "eight");
        assert_eq!(
            t.close(8),
            Some("eight"),
            "a carried one is closed by its handle"
        );
        assert_eq!(t.len(), 1, "and stays until it is forgotten");
    }

    #[test]
    fn one_open_per_client_and_streams_may_come_first() {
        let mut t = gw();
        assert_eq!(t.add(3, || "three"), Some(&"three"));
        t.queue(3, 0, "3:0").unwrap();
        assert_eq!(t.open(3, || "other"), OnOpen::Start("three"));
        assert_eq!(t.open(3, || "other"), OnOpen::Twice);
        assert_eq!(opens(&mut t, 3, Dir::Bi), [(0, "3:0")]);
    }

    #[test]
    fn a_stopped_opener_hands_back_its_streams_and_refuses_later_ones() {
        let mut t = gw();
        t.add(1, || "one");
        t.queue(1, 4, "1:4").unwrap();
        t.queue(1, 2, "1:2").unwrap();
        assert_eq!(t.stop(1, Dir::Bi), ["1:4"]);
        assert_eq!(t.next(1, Dir::Bi), Next::Stop);
        assert_eq!(t.queue(1, 0, "1:0"), Err("1:0"));
        assert_eq!(
            opens(&mut t, 1, Dir::Uni),
            [(2, "1:2")],
            "the other kind goes on"
        );
    }

    #[test]
    fn a_flood_breaks_the_order_after_what_came_before_it() {
        let mut t = gw();
        t.add(1, || "one");
        t.queue(1, 0, "first").unwrap();
        // stream 4 never comes: every later one waits for it
        for i in 2..=MAX_PENDING as u64 + 1 {
            t.queue(1, Kind::CLIENT_BI.id(i), "waits").unwrap();
        }
        let flood = Kind::CLIENT_BI.id(MAX_PENDING as u64 + 2);
        assert_eq!(
            t.queue(1, flood, "flood"),
            Ok(&"one"),
            "the opener must look"
        );
        assert_eq!(t.queue(1, 0, "after"), Err("after"));
        assert_eq!(t.next(1, Dir::Bi), Next::Open(0, "first"));
        assert_eq!(t.next(1, Dir::Bi), Next::Broken(flood, OrderError::TooMany));
        assert_eq!(t.stop(1, Dir::Bi).len(), MAX_PENDING);
    }

    #[test]
    fn proxy_st_opens_the_origin_s_streams() {
        let mut t: Clients<u8, u8> = Clients::new(Initiator::Server);
        t.add(1, || 0);
        t.queue(1, 3, 3).unwrap();
        t.queue(1, 1, 1).unwrap();
        assert_eq!(t.next(1, Dir::Bi), Next::Open(1, 1));
        assert_eq!(t.next(1, Dir::Uni), Next::Open(3, 3));
    }
}
