//! satbench's transparent split-TCP PEP. Decisions are plain code
//! (`cli`, `policy`, `relay::Conn`, `stats`); `server`, `relay::pump`
//! and `sys` do the I/O.

pub mod cli;
pub mod policy;
pub mod relay;
pub mod server;
pub mod stats;
pub mod sys;
