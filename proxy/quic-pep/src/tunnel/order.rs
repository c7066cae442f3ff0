//! Plain bookkeeping for the tunnel: putting one client connection's
//! streams of one kind back in ID order, and remembering which client
//! connections have ended.
//!
//! Tunnel streams of different client streams are independent, so their
//! headers can arrive in any order; the stream towards the client or the
//! origin must still be opened in ID order, since quinn numbers streams in
//! the order they are opened (`streams::Mirror`).

use std::collections::{BTreeMap, BTreeSet};

use crate::streams::{index, Kind};

/// Streams of one kind waiting for an earlier one that has not arrived,
/// at most this many.
pub const MAX_PENDING: usize = 1024;

#[derive(Debug, PartialEq, Eq)]
pub enum Insert<T> {
    /// Queued; `Reorder::pop` hands it out in its turn.
    Queued,
    /// Its ID was already handed out (or is queued): the caller discards it.
    Late(T),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OrderError {
    WrongKind,
    TooMany,
}

/// One kind of stream of one client connection, by original stream ID.
#[derive(Debug)]
pub struct Reorder<T> {
    kind: Kind,
    /// The index `pop` hands out next.
    next: u64,
    /// The first index from `next` on that has not arrived: those between
    /// the two can be handed out now.
    gap: u64,
    pending: BTreeMap<u64, T>,
}

impl<T> Reorder<T> {
    pub fn new(kind: Kind) -> Reorder<T> {
        Reorder {
            kind,
            next: 0,
            gap: 0,
            pending: BTreeMap::new(),
        }
    }

    pub fn insert(&mut self, id: u64, item: T) -> Result<Insert<T>, OrderError> {
        if Kind::of(id) != self.kind {
            return Err(OrderError::WrongKind);
        }
        let i = index(id);
        if i < self.next || self.pending.contains_key(&i) {
            return Ok(Insert::Late(item));
        }
        // Only streams behind the gap count: those whose turn has come wait
        // for the caller alone (which may wait for the peer's MAX_STREAMS).
        if self.pending.len() - (self.gap - self.next) as usize >= MAX_PENDING {
            return Err(OrderError::TooMany);
        }
        self.pending.insert(i, item);
        while self.pending.contains_key(&self.gap) {
            self.gap += 1;
        }
        Ok(Insert::Queued)
    }

    /// The next stream in ID order, if it has arrived.
    pub fn pop(&mut self) -> Option<(u64, T)> {
        let item = self.pending.remove(&self.next)?;
        let id = self.kind.id(self.next);
        self.next += 1;
        Some((id, item))
    }

    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    /// Whatever is still waiting, for the caller to refuse.
    pub fn drain(&mut self) -> impl Iterator<Item = T> + '_ {
        self.gap = self.next;
        std::mem::take(&mut self.pending).into_values()
    }
}

/// Client connections that have ended, so a stream of one that arrives
/// late is refused instead of waiting for an Open that will never come.
/// Holds at most `cap` IDs; the oldest are folded into "every ID below".
#[derive(Debug)]
pub struct ClosedIds {
    below: u64,
    ids: BTreeSet<u64>,
    cap: usize,
}

impl ClosedIds {
    pub fn new(cap: usize) -> ClosedIds {
        ClosedIds {
            below: 0,
            ids: BTreeSet::new(),
            cap: cap.max(1),
        }
    }

    pub fn close(&mut self, id: u64) {
        if id < self.below {
            return;
        }
        self.ids.insert(id);
        while self.ids.len() > self.cap {
            if let Some(x) = self.ids.pop_first() {
                self.below = self.below.max(x + 1);
            }
        }
    }

    pub fn contains(&self, id: u64) -> bool {
        id < self.below || self.ids.contains(&id)
    }

    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_come_out_in_id_order() {
        let mut r = Reorder::new(Kind::CLIENT_BI);
        assert_eq!(r.insert(8, "c"), Ok(Insert::Queued));
        assert_eq!(r.pop(), None, "0 has not arrived");
        assert_eq!(r.insert(0, "a"), Ok(Insert::Queued));
        assert_eq!(r.insert(4, "b"), Ok(Insert::Queued));
        assert_eq!(r.pop(), Some((0, "a")));
        assert_eq!(r.pop(), Some((4, "b")));
        assert_eq!(r.pop(), Some((8, "c")));
        assert_eq!(r.pop(), None);
        assert_eq!(r.pending(), 0);
    }

    #[test]
    fn a_stream_given_twice_or_late_is_handed_back() {
        let mut r = Reorder::new(Kind::SERVER_UNI);
        assert_eq!(r.insert(3, 1), Ok(Insert::Queued));
        assert_eq!(r.insert(3, 2), Ok(Insert::Late(2)), "first one wins");
        assert_eq!(r.pop(), Some((3, 1)));
        assert_eq!(r.insert(3, 3), Ok(Insert::Late(3)));
    }

    #[test]
    fn other_kinds_and_floods_are_errors() {
        let mut r = Reorder::new(Kind::CLIENT_UNI);
        assert_eq!(r.insert(0, ()), Err(OrderError::WrongKind));
        for i in 1..=MAX_PENDING as u64 {
            assert_eq!(r.insert(Kind::CLIENT_UNI.id(i), ()), Ok(Insert::Queued));
        }
        assert_eq!(
            r.insert(Kind::CLIENT_UNI.id(MAX_PENDING as u64 + 1), ()),
            Err(OrderError::TooMany)
        );
    }

    #[test]
    fn streams_whose_turn_has_come_do_not_count_as_waiting() {
        let mut r = Reorder::new(Kind::CLIENT_BI);
        for i in 0..MAX_PENDING as u64 + 10 {
            assert_eq!(r.insert(Kind::CLIENT_BI.id(i), ()), Ok(Insert::Queued));
        }
        let behind_a_gap = |i: u64| Kind::CLIENT_BI.id(MAX_PENDING as u64 + 11 + i);
        for i in 0..MAX_PENDING as u64 {
            assert_eq!(r.insert(behind_a_gap(i), ()), Ok(Insert::Queued));
        }
        assert_eq!(
            r.insert(behind_a_gap(MAX_PENDING as u64), ()),
            Err(OrderError::TooMany)
        );
        assert_eq!(r.pop(), Some((0, ())));
        assert_eq!(
            r.insert(behind_a_gap(MAX_PENDING as u64), ()),
            Err(OrderError::TooMany),
            "handing out one whose turn had come makes no room"
        );
    }

    #[test]
    fn closed_ids_stay_bounded() {
        let mut c = ClosedIds::new(3);
        assert!(!c.contains(1));
        for id in [1, 2, 5, 7] {
            c.close(id);
        }
        assert_eq!(c.len(), 3);
        assert!(c.contains(1), "folded into below");
        assert!(c.contains(2) && c.contains(5) && c.contains(7));
        assert!(!c.contains(6) && !c.contains(8));
        c.close(1);
        assert_eq!(c.len(), 3);
    }
}
