//! Forward error correction over the datagrams of a window (issue 31 item
//! 3): the tunnel's sender sends K datagrams and then N − K repair packets
//! computed over them, so its receiver rebuilds up to N − K lost ones
//! without a round trip and without the endpoints knowing. The codec is
//! plain code with no I/O and no clock (the caller passes `now`, as with
//! quinn-proto); `socket` puts it under a quinn endpoint.
//!
//! - `setting`: `fec=K/N` and the time bounds that follow from the hop;
//! - `wire`: the header and the shard a datagram is coded as;
//! - `encoder` and `decoder`: the two ends, with their counters;
//! - `socket`: the I/O, the codec as the UDP socket of the endpoint that
//!   faces the satellite (`--fec K/N`: Proxy-ST's next-hop side, Proxy-GW's
//!   `--listen`).
//!
//! The code is Reed–Solomon over GF(2^8) from `reed-solomon-erasure`: MDS
//! (any K of a window's N datagrams rebuild it; RaptorQ may fail up to 1
//! time in 100 with exactly K, RFC 6330 §1), and for windows this small a
//! rebuild is a K × K matrix (cached) times the shards held.
//! `reed-solomon-simd` (Leopard, GF(2^16)) encodes faster, but every
//! rebuild pays a transform over its whole field: about 1 ms per window
//! with a loss here, which held its decoder to 110 Mbit/s at 10 % loss
//! (its README: slower than `reed-solomon-erasure` when decoding with
//! fewer than about 42 recovery shards). The price: `reed-solomon-erasure`'s
//! last release is 6.0 (2022) and its author no longer maintains it; it is
//! small, pure Rust and widely used. The datagrams of a window differ in
//! length: each is coded padded to the window's longest (see `wire`), and
//! a repair is that long.

pub mod decoder;
pub mod encoder;
pub mod setting;
pub mod socket;
pub mod wire;

#[cfg(test)]
mod tests;

pub use decoder::{Decoder, DecoderConfig, DecoderCounters, Rejected};
pub use encoder::{Encoder, EncoderCounters, EncoderError};
pub use setting::{flush_after, hold_for, FecSetting, SettingError};
