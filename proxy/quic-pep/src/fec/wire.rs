//! The FEC header in front of every datagram the tunnel sends over the
//! satellite hop, and the shard a datagram is coded as.
//!
//! ```text
//! source: type (1 byte, 0) | window (4 bytes) | index (1 byte)             | the datagram
//! repair: type (1 byte, 1) | window (4 bytes) | index (1 byte) | K | N (1 byte each) | shard
//! ```
//!
//! Integers are big-endian. `window` counts windows from 0 and wraps. A
//! source's `index` is its place in the window (0..K), a repair's its
//! place after the sources (K..N). A source does not say K: it leaves
//! before the encoder knows whether its window will fill or be flushed
//! part-way, and only a loss needs K, when a repair (which says it) has to
//! come anyway. So K and N here are the window's own, a partial window's
//! fewer than the setting's.
//!
//! A shard is what the code works on, every shard of a window the same
//! size: `length (2 bytes) | datagram | zeros`, as long as the window's
//! longest datagram with its length. The length travels inside the coded
//! bytes, as RFC 6363's FEC framework does with its ADU blocks, so a
//! repaired datagram comes back with its own length; a repair's payload
//! is one shard, so its length is the window's shard size.

use std::fmt;

use super::setting::MAX_N;

pub const SOURCE: u8 = 0;
pub const REPAIR: u8 = 1;
pub const SOURCE_HEADER_LEN: usize = 6;
pub const REPAIR_HEADER_LEN: usize = 8;
/// The datagram's length at the start of its shard.
pub const LEN_PREFIX: usize = 2;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Header {
    Source {
        window: u32,
        index: u8,
    },
    Repair {
        window: u32,
        index: u8,
        k: u8,
        n: u8,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WireError {
    /// Shorter than its header (`len` bytes).
    Short {
        len: usize,
    },
    UnknownType(u8),
    /// A source index past any window (≥ MAX_N).
    SourceIndex(u8),
    /// K = 0, N ≤ K or N > MAX_N.
    BadCount {
        k: u8,
        n: u8,
    },
    /// A repair index outside K..N.
    RepairIndex {
        index: u8,
        k: u8,
        n: u8,
    },
    /// A repair's shard too short to hold a length.
    BadShard {
        len: usize,
    },
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WireError::Short { len } => {
                write!(f, "FEC packet of {len} bytes, shorter than its header")
            }
            WireError::UnknownType(t) => write!(f, "FEC packet of unknown type {t}"),
            WireError::SourceIndex(i) => write!(f, "FEC source index {i} past {MAX_N}"),
            WireError::BadCount { k, n } => write!(f, "FEC window of K={k}, N={n}"),
            WireError::RepairIndex { index, k, n } => {
                write!(f, "FEC repair index {index} outside {k}..{n}")
            }
            WireError::BadShard { len } => write!(f, "FEC repair shard of {len} bytes"),
        }
    }
}

impl std::error::Error for WireError {}

impl Header {
    pub fn window(&self) -> u32 {
        match *self {
            Header::Source { window, .. } | Header::Repair { window, .. } => window,
        }
    }

    pub fn size(&self) -> usize {
        match self {
            Header::Source { .. } => SOURCE_HEADER_LEN,
            Header::Repair { .. } => REPAIR_HEADER_LEN,
        }
    }

    /// Appends the header to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        match *self {
            Header::Source { window, index } => {
                out.push(SOURCE);
                out.extend_from_slice(&window.to_be_bytes());
                out.push(index);
            }
            Header::Repair {
                window,
                index,
                k,
                n,
            } => {
                out.push(REPAIR);
                out.extend_from_slice(&window.to_be_bytes());
                out.extend_from_slice(&[index, k, n]);
            }
        }
    }
}

/// A packet's header and payload (the datagram, or the repair's shard).
/// Checks everything one packet can say about itself; whether it agrees
/// with the rest of its window is the decoder's to check.
pub fn decode(packet: &[u8]) -> Result<(Header, &[u8]), WireError> {
    let short = WireError::Short { len: packet.len() };
    let (&kind, rest) = packet.split_first().ok_or(short)?;
    let window = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    match kind {
        SOURCE => {
            let (h, payload) = rest.split_at_checked(SOURCE_HEADER_LEN - 1).ok_or(short)?;
            let index = h[4];
            if index >= MAX_N {
                return Err(WireError::SourceIndex(index));
            }
            let window = window(h);
            Ok((Header::Source { window, index }, payload))
        }
        REPAIR => {
            let (h, shard) = rest.split_at_checked(REPAIR_HEADER_LEN - 1).ok_or(short)?;
            let (index, k, n) = (h[4], h[5], h[6]);
            if k == 0 || n <= k || n > MAX_N {
                return Err(WireError::BadCount { k, n });
            }
            if !(k..n).contains(&index) {
                return Err(WireError::RepairIndex { index, k, n });
            }
            if shard.len() < LEN_PREFIX {
                return Err(WireError::BadShard { len: shard.len() });
            }
            let window = window(h);
            Ok((
                Header::Repair {
                    window,
                    index,
                    k,
                    n,
                },
                shard,
            ))
        }
        t => Err(WireError::UnknownType(t)),
    }
}

/// The shard size of a window whose longest datagram is `longest` bytes.
pub fn shard_len(longest: usize) -> usize {
    LEN_PREFIX + longest
}

/// Writes `datagram`'s shard of `shard_len` bytes into `out` (cleared
/// first). `shard_len` is at least `shard_len(datagram.len())`.
pub fn write_shard(out: &mut Vec<u8>, datagram: &[u8], shard_len: usize) {
    debug_assert!(shard_len >= self::shard_len(datagram.len()));
    out.clear();
    // A datagram is at most an MTU, far below 64 KiB (Encoder::new checks).
    out.extend_from_slice(&(datagram.len() as u16).to_be_bytes());
    out.extend_from_slice(datagram);
    out.resize(shard_len, 0);
}

/// The datagram inside a shard; None when its length says more than the
/// shard holds (a corrupt shard).
pub fn read_shard(shard: &[u8]) -> Option<&[u8]> {
    let (len, rest) = shard.split_at_checked(LEN_PREFIX)?;
    let len = u16::from_be_bytes([len[0], len[1]]) as usize;
    rest.get(..len)
}

/// The longest datagram the codec takes when no packet it sends may be
/// longer than `mtu`: a repair carries the window's shard (the longest
/// datagram with its length) behind its header.
pub fn max_datagram(mtu: usize) -> usize {
    mtu.saturating_sub(REPAIR_HEADER_LEN + LEN_PREFIX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(h: Header, payload: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        h.encode(&mut out);
        assert_eq!(out.len(), h.size());
        out.extend_from_slice(payload);
        out
    }

    #[test]
    fn round_trips() {
        let s = Header::Source {
            window: 0xdead_beef,
            index: 63,
        };
        let p = bytes(s, b"hello");
        assert_eq!(p[..6], [0, 0xde, 0xad, 0xbe, 0xef, 63]);
        assert_eq!(decode(&p), Ok((s, &b"hello"[..])));
        // An empty datagram is still a datagram.
        assert_eq!(decode(&bytes(s, b"")), Ok((s, &b""[..])));
        let r = Header::Repair {
            window: 7,
            index: 9,
            k: 8,
            n: 10,
        };
        let p = bytes(r, &[0, 1, 2, 3]);
        assert_eq!(p[..8], [1, 0, 0, 0, 7, 9, 8, 10]);
        assert_eq!(decode(&p), Ok((r, &[0u8, 1, 2, 3][..])));
        assert_eq!(r.window(), 7);
    }

    #[test]
    fn refuses_malformed_packets() {
        let src = |window: u32, index| Header::Source { window, index };
        let rep = |index, k, n| Header::Repair {
            window: 1,
            index,
            k,
            n,
        };
        assert_eq!(decode(&[]), Err(WireError::Short { len: 0 }));
        assert_eq!(decode(&[0, 1, 2, 3, 4]), Err(WireError::Short { len: 5 }));
        assert_eq!(
            decode(&[1, 0, 0, 0, 0, 9, 8]),
            Err(WireError::Short { len: 7 })
        );
        assert_eq!(decode(&[2, 0, 0, 0, 0, 0]), Err(WireError::UnknownType(2)));
        assert_eq!(
            decode(&[0x80, 0, 0, 0, 0, 0]),
            Err(WireError::UnknownType(0x80))
        );
        assert_eq!(
            decode(&bytes(src(3, 64), b"x")),
            Err(WireError::SourceIndex(64))
        );
        let shard = [0u8; 4];
        for (k, n) in [(0, 2), (8, 8), (9, 8), (8, 65), (1, 255)] {
            assert_eq!(
                decode(&bytes(rep(k, k, n), &shard)),
                Err(WireError::BadCount { k, n })
            );
        }
        for index in [0, 7, 10, 200] {
            assert_eq!(
                decode(&bytes(rep(index, 8, 10), &shard)),
                Err(WireError::RepairIndex { index, k: 8, n: 10 })
            );
        }
        for len in [0, 1] {
            assert_eq!(
                decode(&bytes(rep(8, 8, 10), &vec![0; len])),
                Err(WireError::BadShard { len })
            );
        }
    }

    #[test]
    fn every_prefix_and_byte_flip_decodes_or_errs_without_panicking() {
        let r = bytes(
            Header::Repair {
                window: 5,
                index: 9,
                k: 8,
                n: 10,
            },
            &[0, 2, 7, 7],
        );
        for cut in 0..r.len() {
            let _ = decode(&r[..cut]);
        }
        for i in 0..r.len() {
            for b in 0..=255u8 {
                let mut p = r.clone();
                p[i] = b;
                if let Ok((Header::Repair { index, k, n, .. }, shard)) = decode(&p) {
                    assert!(k >= 1 && n > k && n <= MAX_N && (k..n).contains(&index));
                    assert!(shard.len() >= 2);
                }
            }
        }
    }

    #[test]
    fn shards_carry_their_datagram_and_length() {
        assert_eq!(shard_len(0), 2);
        assert_eq!(shard_len(1), 3);
        assert_eq!(shard_len(1200), 1202);
        let mut s = Vec::new();
        write_shard(&mut s, b"abc", 10);
        assert_eq!(s, [0, 3, b'a', b'b', b'c', 0, 0, 0, 0, 0]);
        assert_eq!(read_shard(&s), Some(&b"abc"[..]));
        write_shard(&mut s, b"", 2);
        assert_eq!(read_shard(&s), Some(&b""[..]));
        // A length past the shard's end is corrupt, not a panic.
        assert_eq!(read_shard(&[0, 9, 1, 2]), None);
        assert_eq!(read_shard(&[0]), None);
        assert_eq!(read_shard(&[]), None);
    }

    #[test]
    fn max_datagram_fills_the_mtu_and_no_more() {
        for mtu in REPAIR_HEADER_LEN + LEN_PREFIX..3000 {
            let d = max_datagram(mtu);
            assert!(REPAIR_HEADER_LEN + shard_len(d) <= mtu, "mtu {mtu}");
            assert!(REPAIR_HEADER_LEN + shard_len(d + 1) > mtu, "mtu {mtu}");
            assert!(SOURCE_HEADER_LEN + d <= mtu);
        }
        assert_eq!(max_datagram(1200), 1190);
        assert_eq!(max_datagram(1201), 1191);
        assert_eq!(max_datagram(10), 0);
        assert_eq!(max_datagram(0), 0);
    }
}
