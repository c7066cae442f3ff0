//! Matching one-byte owd receipts to their sends.
//!
//! Send `i` carries the byte `i % 256`. The sender records when each send
//! left, the receiver records `(byte, time)` for each datagram that arrived.
//! A receipt belongs to the most recent still-unmatched send with its byte
//! value that left before it arrived. That is right as long as every delay is
//! shorter than 256 intervals (the CLI refuses settings that wait longer), so
//! a candidate older than `horizon_ns` is never taken: such a receipt (a
//! duplicate, or a stray) is counted as unmatched instead.

use crate::cli::OWD_SEQ_SPACE;

#[derive(Debug, Clone, PartialEq)]
pub struct OwdOutcome {
    /// `(send index, one-way delay in ns)` per matched receipt, in send order.
    pub delays: Vec<(u64, u64)>,
    /// Receipts that matched no send (duplicates, strays).
    pub unmatched: u64,
}

impl OwdOutcome {
    pub fn received(&self) -> u64 {
        self.delays.len() as u64
    }
}

/// Matches `receipts` (`(byte, receive time)`, in arrival order) to sends
/// (`send_ns[i]` is when send `i` left; non-decreasing).
pub fn match_receipts(send_ns: &[u64], receipts: &[(u8, u64)], horizon_ns: u64) -> OwdOutcome {
    let space = OWD_SEQ_SPACE as usize;
    let mut matched = vec![false; send_ns.len()];
    let mut delays = Vec::with_capacity(receipts.len().min(send_ns.len()));
    let mut unmatched = 0;
    for &(byte, rx) in receipts {
        // Sends that left at or before the receipt: indices 0..before.
        let before = send_ns.partition_point(|&t| t <= rx);
        let byte = byte as usize;
        let mut cand = if before > byte {
            let last = before - 1;
            Some(last - (last - byte) % space)
        } else {
            None
        };
        let mut found = None;
        while let Some(i) = cand {
            if rx - send_ns[i] > horizon_ns {
                break; // too old to be told apart from a later send
            }
            if !matched[i] {
                found = Some(i);
                break;
            }
            cand = i.checked_sub(space);
        }
        match found {
            Some(i) => {
                matched[i] = true;
                delays.push((i as u64, rx - send_ns[i]));
            }
            None => unmatched += 1,
        }
    }
    delays.sort_unstable_by_key(|&(i, _)| i);
    OwdOutcome { delays, unmatched }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    /// Sends every 10 ms from t = 0.
    fn sends(n: u64) -> Vec<u64> {
        (0..n).map(|i| i * 10 * MS).collect()
    }
    fn byte(i: u64) -> u8 {
        (i % 256) as u8
    }
    const HORIZON: u64 = 2560 * MS;

    #[test]
    fn constant_delay_all_received() {
        let s = sends(1000);
        let r: Vec<_> = (0..1000)
            .map(|i| (byte(i), s[i as usize] + 300 * MS))
            .collect();
        let out = match_receipts(&s, &r, HORIZON);
        assert_eq!(out.received(), 1000);
        assert_eq!(out.unmatched, 0);
        assert!(out
            .delays
            .iter()
            .enumerate()
            .all(|(k, &(i, d))| i == k as u64 && d == 300 * MS));
    }

    #[test]
    fn delay_longer_than_many_intervals_still_matches_right_send() {
        // 2 s delay = 200 intervals: the byte still names the right send.
        let s = sends(600);
        let r: Vec<_> = (0..600)
            .map(|i| (byte(i), s[i as usize] + 2000 * MS))
            .collect();
        let out = match_receipts(&s, &r, HORIZON);
        assert_eq!(out.received(), 600);
        assert!(out.delays.iter().all(|&(_, d)| d == 2000 * MS));
    }

    #[test]
    fn losses_and_reordering() {
        let s = sends(600);
        // Lose every 7th; deliver in pairs swapped; jitter alternates.
        let mut r = Vec::new();
        for i in (0..600u64).filter(|i| i % 7 != 3) {
            let d = if i % 2 == 0 {
                250 * MS
            } else {
                5 * MS + 250 * MS + 17 * MS
            };
            r.push((byte(i), s[i as usize] + d));
        }
        r.sort_by_key(|&(_, t)| t);
        let out = match_receipts(&s, &r, HORIZON);
        let lost = 600 - out.received();
        assert_eq!(lost, (0..600u64).filter(|i| i % 7 == 3).count() as u64);
        assert_eq!(out.unmatched, 0);
        for &(i, d) in &out.delays {
            assert_eq!(d, if i % 2 == 0 { 250 * MS } else { 272 * MS }, "send {i}");
        }
    }

    #[test]
    fn duplicate_is_not_matched_to_an_older_send() {
        let s = sends(600);
        // Send 300 (byte 44) arrives twice; send 44 was lost.
        let r: Vec<_> = (0..600u64)
            .filter(|&i| i != 44)
            .map(|i| (byte(i), s[i as usize] + MS))
            .chain([(byte(300), s[300] + 2 * MS)])
            .collect();
        let out = match_receipts(&s, &r, HORIZON);
        assert_eq!(out.received(), 599);
        assert_eq!(out.unmatched, 1);
        assert!(out.delays.iter().all(|&(i, d)| i != 44 && d == MS));
    }

    #[test]
    fn receipt_before_any_matching_send_is_unmatched() {
        let s = sends(10);
        // Byte 9 at 5 ms: send 9 has not left yet.
        let out = match_receipts(&s, &[(9, 5 * MS), (200, 95 * MS)], HORIZON);
        assert_eq!(out.received(), 0);
        assert_eq!(out.unmatched, 2);
    }

    #[test]
    fn receipt_at_the_send_instant_matches() {
        let s = sends(3);
        let out = match_receipts(&s, &[(1, 10 * MS)], HORIZON);
        assert_eq!(out.delays, vec![(1, 0)]);
    }

    #[test]
    fn late_send_times_are_used_not_the_schedule() {
        // Sender was late for send 2 (left at 27 ms instead of 20 ms).
        let s = vec![0, 10 * MS, 27 * MS, 30 * MS];
        let r = vec![(0, 5 * MS), (1, 15 * MS), (2, 32 * MS), (3, 35 * MS)];
        let out = match_receipts(&s, &r, HORIZON);
        assert_eq!(
            out.delays,
            vec![(0, 5 * MS), (1, 5 * MS), (2, 5 * MS), (3, 5 * MS)]
        );
    }

    #[test]
    fn empty() {
        let out = match_receipts(&[], &[(0, 1)], HORIZON);
        assert_eq!((out.received(), out.unmatched), (0, 1));
        let out = match_receipts(&sends(5), &[], HORIZON);
        assert_eq!((out.received(), out.unmatched), (0, 0));
    }
}
