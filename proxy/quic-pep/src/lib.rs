//! satbench's QUIC PEP: Proxy-ST and Proxy-GW (Kosek et al., IFIP
//! Networking 2022). Each proxy accepts QUIC connections and relays each
//! over its own QUIC connection to the next hop, stream by stream, with
//! its own transport settings per hop.
//!
//! Plain, unit-tested decisions: `cli` (arguments), `streams` (the
//! stream-ID mapping), `close` (what crosses when a stream or connection
//! ends), `limits` (connection and memory caps), `tparams` (the next hop's
//! stream limits), `spares` (connections dialled ahead at Proxy-GW). I/O at
//! the edges: `tls`, `transport`, `hop` (the connection to the next hop),
//! `relay` (one client connection), `proxy` (the listening side and one
//! file per relay strategy), `stats`, `usage` (heap and tasks) and `log`.
//! `tunnel`: the standing ST↔GW connection (`--tunnel`), its framing, client
//! table and ordering as plain code, Proxy-ST keeping it up (`keep_up`) and
//! Proxy-GW's origin connections (`origin`); `qpep`: TCP carried over it
//! (QPEP, `--qpep-listen`); `transparent`: where a client connection goes
//! with `--transparent` (plain decisions); `fec`: forward error correction
//! over a window of datagrams, plain code not yet wired to the tunnel;
//! `masque`: Proxy-GW's CONNECT-UDP listener (RFC 9298, `--masque-listen`).

pub mod cli;
pub mod close;
pub mod fec;
pub mod hop;
pub mod limits;
pub mod log;
pub mod masque;
pub mod proxy;
pub mod qpep;
pub mod relay;
pub mod spares;
pub mod stats;
pub mod streams;
pub mod tls;
pub mod tparams;
pub mod transparent;
pub mod transport;
pub mod tunnel;
pub mod usage;
