//! Forward error correction over the datagrams of a window (issue 31 item
//! 3): the tunnel's sender sends K datagrams and then N − K repair packets
//! computed over them, so its receiver rebuilds up to N − K lost ones
//! without a round trip and without the endpoints knowing. The tunnel that
//! will carry it does not exist yet: this is the codec alone, plain code
//! with no I/O and no clock (the caller passes `now`, as with quinn-proto).
//!
//! - `setting`: `fec=K/N` and the time bounds that follow from the hop;
//! - `wire`: the header and the shard a datagram is coded as;
//! - `encoder` and `decoder`: the two ends, with their counters.
//!
//! The code is Reed–Solomon from `reed-solomon-simd`: MDS (any K of a
//! window's N datagrams rebuild it, which matters with windows of 8 or
//! 16: RaptorQ may fail up to 1 time in 100 with exactly K, RFC 6330 §1),
//! pure Rust with run-time SIMD, maintained, and fast for small windows
//! (`reed-solomon-erasure`'s author no longer maintains it). Datagrams of a window differ in length: each is coded padded to
//! the window's longest (see `wire`), and a repair is that long.

pub mod decoder;
pub mod encoder;
pub mod setting;
pub mod wire;

#[cfg(test)]
mod tests;

pub use decoder::{Decoder, DecoderConfig, DecoderCounters, Rejected};
pub use encoder::{Encoder, EncoderCounters, EncoderError};
pub use setting::{flush_after, hold_for, FecSetting, SettingError};
