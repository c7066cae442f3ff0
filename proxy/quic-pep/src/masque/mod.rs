//! CONNECT-UDP (RFC 9298) over HTTP/3 with HTTP Datagrams (RFC 9297) at
//! Proxy-GW (`--masque-listen`): a client's UDP proxying request names a
//! target; Proxy-GW sends the request's UDP payloads to it from a socket of
//! its own and carries the answers back. It never sees the target's TLS,
//! so it trusts no origin key. Proxy-ST is its client with `--masque-via`:
//! each client flow that TPROXY hands it becomes one proxying request.
//!
//! Plain, unit-tested: `target` (the URI template's path), `request` (what
//! a request is answered, the `Proxy-Status`), `datagram` (HTTP/3 Datagrams
//! of a proxying request), `capsule` (the Capsule Protocol's DATAGRAM
//! capsules), `flows` (Proxy-ST's flows: their keys, requests and ends),
//! `early` (datagrams that come before their request is open) and `stats`. I/O: `server` (the listener, one socket per proxying
//! request, the relay both ways) and `client` (Proxy-ST's interception,
//! its connection to Proxy-GW, a request per flow).

pub mod capsule;
pub mod client;
pub mod datagram;
pub mod early;
pub mod flows;
pub mod request;
pub mod server;
pub mod stats;
pub mod target;
