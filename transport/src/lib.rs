//! What several satbench binaries share, so that no binary crate depends on
//! another for it.

pub mod careful_resume;
pub mod cert;
pub mod cli;
pub mod net;
pub mod process;
pub mod quic;
pub mod quic_keys;
pub mod sat_cc;
pub mod tcp;
pub mod time;
pub mod varint;

#[cfg(any(test, feature = "testkit"))]
pub mod testkit;
