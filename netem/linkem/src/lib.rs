//! linkem: a userspace link emulator between two tun devices.
//!
//! The decisions live in plain code with no I/O ([`pipeline::Pipeline`]
//! composed of [`access`], [`rate`], [`loss`] (per packet, or per frame:
//! [`frame_loss`]) and [`delay`] stages, with [`schedule`] and [`slots`]
//! (with [`outages`]));
//! [`runtime`] drives them with threads, tun devices and a monotonic clock.

pub mod access;
pub mod config;
pub mod delay;
pub mod frame_loss;
pub mod loss;
pub mod outages;
pub mod pcap;
pub mod pipeline;
pub mod rate;
pub mod rng;
pub mod runtime;
pub mod schedule;
pub mod slots;
pub mod stats;
pub mod tun;
