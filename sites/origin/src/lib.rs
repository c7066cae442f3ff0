//! satbench's origin server: a static site or a site archive over HTTP/1.1
//! (port 80), HTTP/1.1 and HTTP/2 over TLS (443/tcp) and HTTP/3 (443/udp).
//!
//! `site` decides every response of a site directory (path resolution,
//! content type, headers) without I/O, `archive` every response of a site
//! archive (reading it, the matching rule); `validators` makes the ETag and
//! Last-Modified of both, `cache` the Cache-Control of `--cache`, and
//! `conditional` turns a response into a 304 when the request's
//! preconditions say the client's copy is current; `serve` holds the listeners
//! that carry those decisions to the wire, `vhost` the certificate each
//! handshake gets by SNI; `cli` turns the command line into settings
//! (QUIC transport, certificates, time and process start-up come from
//! `satbench_transport`). `priority` reads RFC 9218 priorities
//! and maps them to quinn send priorities; `h3_quinn_prio` is the h3↔quinn
//! adapter that applies them to the HTTP/3 response streams.

pub mod archive;
pub mod body;
pub mod cache;
pub mod cli;
pub mod conditional;
pub mod h3_quinn_prio;
pub mod log;
pub mod priority;
pub mod serve;
pub mod site;
pub mod validators;
pub mod vhost;
