//! A burst after idle: each datagram carries a magic and its index in the
//! burst; the sender records when each left, the receiver when each arrived
//! (one process, one clock), and each gets its own one-way delay.

/// First bytes of each burst payload ("SPRB"), then the index as a
/// big-endian u64, then padding.
pub const MAGIC: [u8; 4] = *b"SPRB";
/// Magic and index.
pub const HEADER: usize = 12;

/// Writes the header into a payload buffer (at least [`HEADER`] bytes).
pub fn encode(buf: &mut [u8], index: u64) {
    buf[..4].copy_from_slice(&MAGIC);
    buf[4..HEADER].copy_from_slice(&index.to_be_bytes());
}

/// The index of a burst payload, or `None` for anything else.
pub fn decode(payload: &[u8]) -> Option<u64> {
    if payload.len() < HEADER || payload[..4] != MAGIC {
        return None;
    }
    Some(u64::from_be_bytes(payload[4..HEADER].try_into().unwrap()))
}

/// One-way delay of each datagram sent (`send_ns[i]`: when datagram `i`
/// left), `None` for one that did not arrive. `receipts` are `(index,
/// arrival time)` in arrival order: the first arrival of each index counts;
/// a duplicate, an index never sent, or an arrival before its send is
/// ignored.
pub fn delays(send_ns: &[u64], receipts: &[(u64, u64)]) -> Vec<Option<u64>> {
    let mut out = vec![None; send_ns.len()];
    for &(i, rx) in receipts {
        let Ok(i) = usize::try_from(i) else { continue };
        if let (Some(slot), Some(&tx)) = (out.get_mut(i), send_ns.get(i)) {
            if slot.is_none() && rx >= tx {
                *slot = Some(rx - tx);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trip() {
        let mut b = vec![0u8; 1172];
        encode(&mut b, 41);
        assert_eq!(decode(&b), Some(41));
        assert_eq!(decode(&b[..11]), None);
        b[3] = b'T'; // a rate payload
        assert_eq!(decode(&b), None);
    }

    #[test]
    fn per_datagram_delays_in_send_order() {
        let sends = [1_000, 1_010, 1_020, 1_030];
        let receipts = [
            (1, 5_000), // overtook 0: still its own delay
            (0, 6_000),
            (0, 7_000), // duplicate
            (9, 7_000), // never sent
            (2, 1_019), // before it left
        ];
        assert_eq!(
            delays(&sends, &receipts),
            vec![Some(5_000), Some(3_990), None, None]
        );
        assert_eq!(delays(&[], &receipts), vec![]);
    }
}
