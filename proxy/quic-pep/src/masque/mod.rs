//! CONNECT-UDP (RFC 9298) over HTTP/3 with HTTP Datagrams (RFC 9297) at
//! Proxy-GW (`--masque-listen`): a client's UDP proxying request names a
//! target; Proxy-GW sends the request's UDP payloads to it from a socket of
//! its own and carries the answers back. It never sees the target's TLS,
//! so it trusts no origin key.
//!
//! Plain, unit-tested: `target` (the URI template's path), `request` (what
//! a request is answered, the `Proxy-Status`), `datagram` (HTTP/3 Datagrams
//! of a proxying request), `capsule` (the Capsule Protocol's DATAGRAM
//! capsules) and `stats`. I/O: `server` (the listener, one socket per
//! proxying request, the relay both ways).

pub mod capsule;
pub mod datagram;
pub mod request;
pub mod server;
pub mod stats;
pub mod target;
