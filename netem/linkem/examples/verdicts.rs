//! `cargo run --release -p linkem --example verdicts -- CONFIG.json [PACKETS]`
//!
//! Drives both directions of a linkem config's pipeline with one fixed,
//! seeded packet trace (bursts of full-size packets, ACK-sized packets and
//! idle gaps, at about twice the rate of a 20 Mbit/s link in its bursts)
//! and prints per direction how many packets were delivered and dropped and
//! a digest of every verdict. Two builds of linkem that print the same line
//! for a config decide every packet of that trace the same way: the check
//! that an addition (the access model) left today's profiles unchanged.

use linkem::config::load;
use linkem::pipeline::{DropCause, Pipeline, Verdict};
use std::path::Path;

/// FNV-1a, 64 bits: stable across builds and Rust versions.
fn fnv(h: u64, x: u64) -> u64 {
    x.to_le_bytes()
        .iter()
        .fold(h, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: verdicts CONFIG.json [PACKETS]");
        std::process::exit(2);
    };
    let packets: u64 = args
        .get(2)
        .map_or(200_000, |n| n.parse().expect("PACKETS: a number"));
    let cfg = load(Path::new(path)).unwrap_or_else(|e| {
        eprintln!("verdicts: {e}");
        std::process::exit(2)
    });
    let mut out = Vec::new();
    for (dir, imp) in [("forward", &cfg.forward), ("return", &cfg.ret)] {
        let mut p = Pipeline::new(imp, cfg.seed, dir);
        let (mut t, mut x) = (0u64, 0x9e37_79b9_7f4a_7c15u64);
        let (mut delivered, mut lost, mut queued, mut digest) =
            (0u64, 0u64, 0u64, 0xcbf2_9ce4_8422_2325u64);
        for i in 0..packets {
            // xorshift: the trace, not linkem's own streams.
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let len = if x % 4 == 0 { 52 } else { 1500 };
            // 300 µs apart in bursts of 64, then an idle gap of 0–2 s.
            t += if i % 64 == 0 {
                x % 2_000_000_000
            } else {
                300_000
            };
            digest = match p.on_packet(t, len) {
                Verdict::Deliver { at_ns } => {
                    delivered += 1;
                    fnv(digest, at_ns)
                }
                Verdict::Hold => fnv(digest, u64::MAX - 2),
                Verdict::Drop(DropCause::Loss) => {
                    lost += 1;
                    fnv(digest, u64::MAX)
                }
                Verdict::Drop(DropCause::Queue) => {
                    queued += 1;
                    fnv(digest, u64::MAX - 1)
                }
            };
        }
        out.push(format!(
            "{dir}: {delivered} delivered, {lost} lost, {queued} queue drops, digest {digest:016x}"
        ));
    }
    println!("{}", out.join("; "));
}
