//! The socket drivers, one module per probe mode: each opens its sockets in
//! the namespaces, drives them from threads, and hands what it timed to the
//! plain functions of the library (`satprobe::rtt`, `owd`, …) for its
//! output. `udp` is what the four UDP modes share.

pub mod burst;
pub mod connect;
pub mod owd;
pub mod rate;
pub mod rtt;
mod udp;

use std::io;
use std::thread;
use std::time::Duration;

/// How often a blocked receiver looks whether it may stop.
const POLL: Duration = Duration::from_millis(10);
/// Time between setting up and the first scheduled send.
const LEAD_NS: u64 = 2_000_000;
/// Socket buffers for the rate test: 32 MiB holds ~0.9 s at 300 Mbit/s.
const RATE_RCVBUF: usize = 32 << 20;
const RATE_SNDBUF: usize = 4 << 20;
/// Receive buffers for rtt/owd/burst (modest amounts of data).
const SMALL_RCVBUF: usize = 4 << 20;

fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut | io::ErrorKind::Interrupted
    )
}

fn joined<T>(r: thread::Result<Result<T, String>>, what: &str) -> Result<T, String> {
    r.map_err(|_| format!("{what} thread panicked"))?
}
