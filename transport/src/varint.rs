//! QUIC's variable-length integers (RFC 9000 §16): the two high bits of the
//! first byte give the length (1, 2, 4 or 8 bytes), the other bits, big
//! endian, the value. One codec for every binary that reads or writes
//! them (HTTP/3 frames, transport parameters, the PEP tunnel's framing);
//! each caller turns `None` into its own error.

/// The largest value a varint holds, 2^62 - 1.
pub const MAX: u64 = (1 << 62) - 1;

/// The length of a varint (1, 2, 4 or 8 bytes) from its first byte.
pub fn len_from_first(first: u8) -> usize {
    1 << (first >> 6)
}

/// The varint at the start of `b`: (value, bytes used), or None if `b` is
/// empty or shorter than the varint its first byte announces. Bytes after
/// the varint are left alone.
pub fn decode(b: &[u8]) -> Option<(u64, usize)> {
    let first = *b.first()?;
    let len = len_from_first(first);
    let bytes = b.get(..len)?;
    let v = bytes[1..]
        .iter()
        .fold(u64::from(first & 0x3f), |v, &x| v << 8 | u64::from(x));
    Some((v, len))
}

/// Appends `v` in the shortest form. A value above `MAX` is a bug: panics.
pub fn encode(out: &mut Vec<u8>, v: u64) {
    assert!(v <= MAX, "varint {v} too large");
    if v < 1 << 6 {
        out.push(v as u8);
    } else if v < 1 << 14 {
        out.extend_from_slice(&(v as u16 | 0x4000).to_be_bytes());
    } else if v < 1 << 30 {
        out.extend_from_slice(&(v as u32 | 0x8000_0000).to_be_bytes());
    } else {
        out.extend_from_slice(&(v | 0xc000_0000_0000_0000).to_be_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(v: u64) -> Vec<u8> {
        let mut b = Vec::new();
        encode(&mut b, v);
        b
    }

    #[test]
    fn rfc_9000_examples() {
        // RFC 9000 §A.1, one per length
        assert_eq!(decode(&[0x25]), Some((37, 1)));
        assert_eq!(decode(&[0x40, 0x25]), Some((37, 2))); // not the shortest form
        assert_eq!(decode(&[0x7b, 0xbd]), Some((15293, 2)));
        assert_eq!(decode(&[0x9d, 0x7f, 0x3e, 0x7d]), Some((494_878_333, 4)));
        assert_eq!(
            decode(&[0xc2, 0x19, 0x7c, 0x5e, 0xff, 0x14, 0xe8, 0x8c]),
            Some((151_288_809_941_952_652, 8))
        );
        // RFC 9218's PRIORITY_UPDATE frame type
        assert_eq!(decode(&[0x80, 0x0f, 0x07, 0x00]), Some((0xf0700, 4)));
    }

    #[test]
    fn round_trips_at_every_length_boundary() {
        for (v, len) in [
            (0, 1),
            (63, 1),
            (64, 2),
            (16383, 2),
            (16384, 4),
            ((1 << 30) - 1, 4),
            (1 << 30, 8),
            (MAX, 8),
        ] {
            let b = enc(v);
            assert_eq!(b.len(), len, "{v}");
            assert_eq!(len_from_first(b[0]), len, "{v}");
            assert_eq!(decode(&b), Some((v, len)), "{v}");
        }
    }

    #[test]
    fn the_max_value() {
        assert_eq!(enc(MAX), [0xff; 8]);
        assert_eq!(decode(&[0xff; 8]), Some((MAX, 8)));
    }

    #[test]
    #[should_panic(expected = "too large")]
    fn above_max_is_a_bug() {
        enc(MAX + 1);
    }

    #[test]
    fn truncated_input() {
        assert_eq!(decode(&[]), None);
        for first in [0x40, 0x80, 0xc0] {
            let len = len_from_first(first);
            let mut b = vec![first; len];
            assert!(decode(&b).is_some());
            b.pop();
            while !b.is_empty() {
                assert_eq!(decode(&b), None, "{b:02x?}");
                b.pop();
            }
        }
    }

    #[test]
    fn reads_only_its_own_bytes() {
        assert_eq!(decode(&[0x7b, 0xbd, 0x25, 0xff]), Some((15293, 2)));
    }
}
