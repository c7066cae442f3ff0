//! satbench's origin server: a static site over HTTP/1.1 (port 80),
//! HTTP/1.1 and HTTP/2 over TLS (443/tcp) and HTTP/3 (443/udp).
//!
//! `site` decides every response (path resolution, content type, headers)
//! without I/O; `serve` holds the three listeners that carry those
//! decisions to the wire; `cli`, `quic` and `cert` turn the command line
//! into settings and certificates.

pub mod body;
pub mod cert;
pub mod cli;
pub mod log;
pub mod quic;
pub mod serve;
pub mod site;
