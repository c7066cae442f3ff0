//! What several satbench binaries share, so that no binary crate depends on
//! another for it.

pub mod careful_resume;
pub mod cert;
pub mod cli;
pub mod conn_log;
pub mod net;
pub mod process;
pub mod quic;
pub mod quic_handshake;
pub mod quic_keys;
pub mod sat_cc;
pub mod tcp;
pub mod time;
pub mod tls_hello;
pub mod varint;

#[cfg(any(test, feature = "testkit"))]
pub mod testkit;
