//! satprobe: measures what an emulated link between two network namespaces
//! actually does — round-trip time, one-way delay, loss and throughput.
//!
//! The decisions live here as plain functions without I/O (argument
//! validation, the pacing schedule, matching one-byte owd receipts to their
//! sends, the delivered-rate figure); `main.rs` drives sockets and threads.
//! All times are nanoseconds of one `CLOCK_MONOTONIC`, shared by the sender
//! and receiver threads of the one process.

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
    fn ms() {
        assert_eq!(ns_to_ms(1_234_567), 1.234567);
    }
}
