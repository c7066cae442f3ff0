//! satbench's bulk-transfer tool: `satbulk serve` sends bytes over QUIC
//! (quinn) and TCP and traces its congestion window; `satbulk get`
//! downloads and bins the bytes it receives over time.
//!
//! Decisions are plain code (`request`, `bins`, `trace`, `cli`,
//! `tcpinfo::TcpInfo::parse`); `server` and `client` are the I/O edges.
//! Transport settings, certificates and process start-up come from
//! `satbench_transport`.

pub mod bins;
pub mod cli;
pub mod client;
pub mod request;
pub mod server;
pub mod tcpinfo;
pub mod trace;

/// What one write hands the transport, at either end: large enough that a
/// 250 Mbit/s sender makes few calls, small enough that a count per write
/// is fine-grained.
pub const CHUNK: usize = 256 * 1024;

/// How many bytes a sender's next write carries: up to a chunk, never past
/// `total` (None: no end; the receiver decides when it is over).
pub fn next_write(total: Option<u64>, sent: u64) -> usize {
    match total {
        None => CHUNK,
        Some(n) => n.saturating_sub(sent).min(CHUNK as u64) as usize,
    }
}
