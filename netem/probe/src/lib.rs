//! satprobe: measures what an emulated link between two network namespaces
//! actually does — round-trip time, one-way delay, loss, throughput, TCP
//! connect time, and the one-way delays of a burst after idle.
//!
//! The decisions live here as plain functions without I/O (argument
//! validation, the pacing schedule, matching one-byte owd receipts to their
//! sends, the delivered-rate figure, a burst's per-datagram delays, which
//! failed connect() is a timeout); the binary's `drive/`, one module per
//! mode, drives sockets and threads.
//! All times are nanoseconds of one `CLOCK_MONOTONIC`, shared by the sender
//! and receiver threads of the one process.

pub mod burst;
pub mod cli;
pub mod owd;
pub mod rate;
pub mod rtt;
pub mod schedule;

/// Nanoseconds to milliseconds, for output.
pub fn ns_to_ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

/// Whether a receiver can stop: only once the sender has finished (`sent`
/// datagrams, the last one followed by a wait until `deadline_ns`), and then
/// as soon as everything sent has arrived or the wait is over.
pub fn receiver_done(finished: Option<(u64, u64)>, received: u64, now_ns: u64) -> bool {
    match finished {
        None => false,
        Some((sent, deadline_ns)) => received >= sent || now_ns >= deadline_ns,
    }
}

/// Marks datagram `i` as arrived in `seen` (one flag per datagram sent):
/// true the first time, so that it counts toward "everything sent has
/// arrived"; false for a duplicate or an index never sent.
pub fn first_arrival(seen: &mut [bool], i: u64) -> bool {
    match usize::try_from(i).ok().and_then(|i| seen.get_mut(i)) {
        Some(f) if !*f => {
            *f = true;
            true
        }
        _ => false,
    }
}

/// Whether a connect() that failed with `e` timed out, so the attempt
/// counts as not connected, rather than failed in a way that stops the
/// probe (refused, unreachable, no local port: a broken setup). A blocking
/// connect() whose SO_SNDTIMEO expires returns EINPROGRESS (socket(7));
/// ETIMEDOUT is the kernel giving up on the SYN first.
pub fn connect_timed_out(e: rustix::io::Errno) -> bool {
    use rustix::io::Errno;
    e == Errno::INPROGRESS || e == Errno::TIMEDOUT
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn receiver_waits_for_the_sender_then_for_stragglers() {
        assert!(!receiver_done(None, 100, u64::MAX));
        assert!(!receiver_done(Some((10, 500)), 9, 499));
        assert!(receiver_done(Some((10, 500)), 9, 500));
        assert!(receiver_done(Some((10, 500)), 10, 0));
    }

    #[test]
    fn each_datagram_arrives_once() {
        let mut seen = vec![false; 3];
        assert!(first_arrival(&mut seen, 2));
        assert!(!first_arrival(&mut seen, 2), "duplicate");
        assert!(!first_arrival(&mut seen, 3), "never sent");
        assert!(!first_arrival(&mut seen, u64::MAX));
        assert_eq!(seen, vec![false, false, true]);
    }

    #[test]
    fn only_timeouts_count_as_not_connected() {
        use rustix::io::Errno;
        assert!(connect_timed_out(Errno::INPROGRESS));
        assert!(connect_timed_out(Errno::TIMEDOUT));
        for e in [Errno::CONNREFUSED, Errno::HOSTUNREACH, Errno::AGAIN] {
            assert!(!connect_timed_out(e), "{e}");
        }
    }

    #[test]
    fn ms() {
        assert_eq!(ns_to_ms(1_234_567), 1.234567);
    }
}
