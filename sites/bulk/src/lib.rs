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
