//! Stream IDs on the two sides of a relayed connection, as plain values.
//!
//! RFC 9000 §2.1: the two low bits of a stream ID say who opened it (bit 0:
//! 0 client, 1 server) and whether it is bidirectional (bit 1: 0 bidi,
//! 1 uni); the rest is a sequence number per kind. quinn accepts a peer's
//! streams in sequence order and numbers the streams it opens in the order
//! `open_*` is called. The proxy is the server towards its near peer and
//! the client towards its far peer, so a stream the near peer opens is
//! client-initiated on both sides (and a far peer's stream server-initiated
//! on both): opening the mirrored streams one at a time, in the order they
//! were accepted, gives them the same IDs. `Mirror` states that mapping
//! and checks it, so a mismatch is seen and logged rather than assumed away.

use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Initiator {
    Client,
    Server,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dir {
    Bi,
    Uni,
}

/// One of the four kinds of stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Kind {
    pub initiator: Initiator,
    pub dir: Dir,
}

impl Kind {
    pub const CLIENT_BI: Kind = Kind {
        initiator: Initiator::Client,
        dir: Dir::Bi,
    };
    pub const SERVER_BI: Kind = Kind {
        initiator: Initiator::Server,
        dir: Dir::Bi,
    };
    pub const CLIENT_UNI: Kind = Kind {
        initiator: Initiator::Client,
        dir: Dir::Uni,
    };
    pub const SERVER_UNI: Kind = Kind {
        initiator: Initiator::Server,
        dir: Dir::Uni,
    };
    /// In the order of their low two bits (0..=3).
    pub const ALL: [Kind; 4] = [
        Kind::CLIENT_BI,
        Kind::SERVER_BI,
        Kind::CLIENT_UNI,
        Kind::SERVER_UNI,
    ];

    pub fn of(id: u64) -> Kind {
        Kind::ALL[(id & 3) as usize]
    }

    /// 0..=3, the ID's low two bits.
    pub fn bits(self) -> u64 {
        let i = u64::from(self.initiator == Initiator::Server);
        let d = u64::from(self.dir == Dir::Uni);
        i | d << 1
    }

    /// The `index`-th stream of this kind.
    pub fn id(self, index: u64) -> u64 {
        index << 2 | self.bits()
    }

    /// Which side of the proxy the streams of this kind are accepted on.
    pub fn accepted_on(self) -> Side {
        match self.initiator {
            Initiator::Client => Side::Near,
            Initiator::Server => Side::Far,
        }
    }

    pub fn name(self) -> &'static str {
        match (self.initiator, self.dir) {
            (Initiator::Client, Dir::Bi) => "client_bidi",
            (Initiator::Server, Dir::Bi) => "server_bidi",
            (Initiator::Client, Dir::Uni) => "client_uni",
            (Initiator::Server, Dir::Uni) => "server_uni",
        }
    }
}

/// The sequence number of a stream within its kind.
pub fn index(id: u64) -> u64 {
    id >> 2
}

/// The two sides of a relayed connection: near = towards the client (the
/// proxy is the QUIC server there), far = towards the next hop (the proxy
/// is the QUIC client).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Side {
    Near,
    Far,
}

impl Side {
    pub fn other(self) -> Side {
        match self {
            Side::Near => Side::Far,
            Side::Far => Side::Near,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Side::Near => "client side",
            Side::Far => "next hop",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MirrorError {
    /// A stream was accepted out of sequence (quinn hands them out in order,
    /// so this means a stream was skipped or given twice).
    OutOfOrder { accepted: u64, expected: u64 },
    /// The stream opened on the other side got another ID than its twin.
    Mismatch { expected: u64, actual: u64 },
}

impl fmt::Display for MirrorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            MirrorError::OutOfOrder { accepted, expected } => {
                write!(f, "stream {accepted} accepted where {expected} was next")
            }
            MirrorError::Mismatch { expected, actual } => {
                write!(f, "stream {expected} relayed as stream {actual}")
            }
        }
    }
}

/// The stream-ID mapping of one kind of stream on one relayed connection.
/// The relay accepts and opens the streams of a kind one at a time, so one
/// `Mirror` per kind, owned by that kind's accept loop, needs no lock.
#[derive(Debug)]
pub struct Mirror {
    kind: Kind,
    next: u64,
}

impl Mirror {
    pub fn new(kind: Kind) -> Mirror {
        Mirror { kind, next: 0 }
    }

    /// Stream `id` was accepted on one side: the ID its twin must get on the
    /// other. The twin keeps the ID (same kind, same sequence number).
    pub fn accepted(&mut self, id: u64) -> Result<u64, MirrorError> {
        assert_eq!(
            Kind::of(id),
            self.kind,
            "stream {id} is not a {}",
            self.kind.name()
        );
        let expected = self.kind.id(self.next);
        if id != expected {
            // Follow quinn's numbering from here on, so one slip is reported once.
            self.next = index(id).max(self.next) + 1;
            return Err(MirrorError::OutOfOrder {
                accepted: id,
                expected,
            });
        }
        self.next += 1;
        Ok(id)
    }

    /// The twin of an accepted stream was opened as `actual`.
    pub fn opened(&self, expected: u64, actual: u64) -> Result<(), MirrorError> {
        if expected == actual {
            Ok(())
        } else {
            Err(MirrorError::Mismatch { expected, actual })
        }
    }

    /// Streams of this kind accepted so far.
    pub fn count(&self) -> u64 {
        self.next
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_from_the_low_bits() {
        assert_eq!(Kind::of(0), Kind::CLIENT_BI);
        assert_eq!(Kind::of(1), Kind::SERVER_BI);
        assert_eq!(Kind::of(2), Kind::CLIENT_UNI);
        assert_eq!(Kind::of(3), Kind::SERVER_UNI);
        assert_eq!(Kind::of(4 * 7 + 2), Kind::CLIENT_UNI);
        for k in Kind::ALL {
            assert_eq!(Kind::of(k.id(5)), k);
            assert_eq!(index(k.id(5)), 5);
        }
        // HTTP/3: the client's control and QPACK streams are 2, 6, 10; the
        // server's 3, 7, 11; requests 0, 4, 8, …
        assert_eq!([0, 1, 2].map(|i| Kind::CLIENT_UNI.id(i)), [2, 6, 10]);
        assert_eq!([0, 1, 2].map(|i| Kind::SERVER_UNI.id(i)), [3, 7, 11]);
        assert_eq!([0, 1, 2].map(|i| Kind::CLIENT_BI.id(i)), [0, 4, 8]);
    }

    #[test]
    fn client_streams_are_accepted_near_server_streams_far() {
        assert_eq!(Kind::CLIENT_BI.accepted_on(), Side::Near);
        assert_eq!(Kind::CLIENT_UNI.accepted_on(), Side::Near);
        assert_eq!(Kind::SERVER_BI.accepted_on(), Side::Far);
        assert_eq!(Kind::SERVER_UNI.accepted_on(), Side::Far);
        assert_eq!(Side::Near.other(), Side::Far);
    }

    #[test]
    fn streams_keep_their_ids_in_order() {
        let mut m = Mirror::new(Kind::CLIENT_BI);
        for id in [0, 4, 8, 12] {
            let twin = m.accepted(id).unwrap();
            assert_eq!(twin, id);
            assert_eq!(m.opened(twin, id), Ok(()));
        }
        assert_eq!(m.count(), 4);
        let mut m = Mirror::new(Kind::SERVER_UNI);
        assert_eq!(m.accepted(3), Ok(3));
        assert_eq!(m.accepted(7), Ok(7));
    }

    #[test]
    fn a_different_id_on_the_other_side_is_a_mismatch() {
        let mut m = Mirror::new(Kind::CLIENT_UNI);
        let twin = m.accepted(2).unwrap();
        assert_eq!(
            m.opened(twin, 6),
            Err(MirrorError::Mismatch {
                expected: 2,
                actual: 6
            })
        );
        assert_eq!(
            MirrorError::Mismatch {
                expected: 2,
                actual: 6
            }
            .to_string(),
            "stream 2 relayed as stream 6"
        );
    }

    #[test]
    fn a_skipped_stream_is_reported_once() {
        let mut m = Mirror::new(Kind::CLIENT_BI);
        assert_eq!(m.accepted(0), Ok(0));
        assert_eq!(
            m.accepted(8),
            Err(MirrorError::OutOfOrder {
                accepted: 8,
                expected: 4
            })
        );
        // in step again after the slip
        assert_eq!(m.accepted(12), Ok(12));
        // a stream given twice
        assert!(matches!(
            m.accepted(12),
            Err(MirrorError::OutOfOrder { .. })
        ));
    }

    #[test]
    #[should_panic(expected = "is not a client_bidi")]
    fn a_stream_of_another_kind_is_a_bug() {
        Mirror::new(Kind::CLIENT_BI).accepted(2).ok();
    }
}
