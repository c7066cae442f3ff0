//! RTT probes: each datagram carries a magic, its sequence number and its
//! send time, and comes back verbatim from the echo responder.

/// "SPRE", then seq (u32 BE), then send time in ns (u64 BE): 16 bytes.
pub const MAGIC: [u8; 4] = *b"SPRE";
pub const LEN: usize = 16;

pub fn encode(seq: u32, send_ns: u64) -> [u8; LEN] {
    let mut b = [0u8; LEN];
    b[..4].copy_from_slice(&MAGIC);
    b[4..8].copy_from_slice(&seq.to_be_bytes());
    b[8..16].copy_from_slice(&send_ns.to_be_bytes());
    b
}

/// `(seq, send time)` of an echoed probe; `None` for anything else.
pub fn decode(b: &[u8]) -> Option<(u32, u64)> {
    if b.len() != LEN || b[..4] != MAGIC {
        return None;
    }
    Some((
        u32::from_be_bytes(b[4..8].try_into().unwrap()),
        u64::from_be_bytes(b[8..16].try_into().unwrap()),
    ))
}

/// Round-trip times of the echoes, in send order, one per probe sent
/// (`count` of them): the first echo of each probe counts, a duplicate or an
/// echo naming a probe that was never sent is ignored, as is one that would
/// come back before it left.
pub fn collect(count: u64, echoes: &[(u32, u64, u64)]) -> Vec<(u32, u64)> {
    let mut best: Vec<Option<u64>> = vec![None; count as usize];
    for &(seq, send_ns, rx_ns) in echoes {
        if let Some(slot) = best.get_mut(seq as usize) {
            if slot.is_none() && rx_ns >= send_ns {
                *slot = Some(rx_ns - send_ns);
            }
        }
    }
    best.into_iter()
        .enumerate()
        .filter_map(|(i, r)| r.map(|r| (i as u32, r)))
        .collect()
}

/// The series in send order: probe i's RTT, or `None` where it was lost
/// (from `collect`'s output, `count` probes sent).
pub fn series(count: u64, rtts: &[(u32, u64)]) -> Vec<Option<u64>> {
    let mut out = vec![None; count as usize];
    for &(seq, r) in rtts {
        if let Some(slot) = out.get_mut(seq as usize) {
            *slot = Some(r);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let b = encode(7, 123_456_789_012);
        assert_eq!(decode(&b), Some((7, 123_456_789_012)));
        assert_eq!(decode(&b[..15]), None);
        let mut bad = b;
        bad[0] = b'X';
        assert_eq!(decode(&bad), None);
    }

    #[test]
    fn send_order_first_echo_wins() {
        let echoes = [
            (2, 200, 900), // arrives first, reported third
            (0, 0, 600),
            (0, 0, 700),  // duplicate
            (9, 0, 100),  // never sent
            (1, 100, 50), // impossible
        ];
        assert_eq!(collect(3, &echoes), vec![(0, 600), (2, 700)]);
    }

    #[test]
    fn series_keeps_send_order_with_gaps_for_losses() {
        assert_eq!(
            series(4, &[(0, 600), (2, 700)]),
            vec![Some(600), None, Some(700), None]
        );
    }
}
