//! `cargo run --release -p satbench-quic-pep --example fec_rate -- --fec 8/10 --loss random:1`
//!
//! One run of the FEC codec (src/fec/) over a simulated lossy hop: a
//! stream of datagrams as a download sends them (85 % full-size, 15 % of
//! 40–100 bytes: ACKs and control), back to back, through the encoder,
//! a seeded loss model and the decoder. Prints one JSON line: the sources
//! the hop lost, how many the decoder rebuilt and how many were left, the
//! FEC's byte overhead, and the encoder's and decoder's rates in Mbit/s of
//! source datagrams per second of the thread's time in them.
//! `benchmarks/fec.js` (`npm run bench:fec`) runs the matrix and prints
//! the medians.
//!
//! Loss models: `random:PCT` (each packet alone), `burst:PCT:LEN`
//! (Gilbert–Elliott with every packet lost in the bad state, mean loss PCT
//! and mean burst LEN packets) and `gemodel:P:R` (netem's and linkem's
//! simplified Gilbert: P % good→bad, R % bad→good, as `netem/profiles`).

use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Parser;
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64Mcg;
use satbench_quic_pep::fec::{flush_after, Decoder, DecoderConfig, Encoder, FecSetting};
use serde_json::json;

#[derive(Parser)]
struct Args {
    /// K/N
    #[arg(long, default_value = "8/10")]
    fec: FecSetting,
    /// random:PCT, burst:PCT:LEN or gemodel:P:R
    #[arg(long, default_value = "random:1")]
    loss: String,
    /// Source datagrams sent
    #[arg(long, default_value_t = 100_000, value_parser = clap::value_parser!(u64).range(1..))]
    packets: u64,
    /// The tunnel's datagram size: no packet the codec sends is longer
    #[arg(long, default_value_t = 1200)]
    mtu: usize,
    /// The hop's round trip, for the time bounds (ms)
    #[arg(long, default_value_t = 600)]
    rtt_ms: u64,
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

/// The hop's losses, as linkem draws them (netem/linkem/src/loss.rs):
/// the state transition first, then the loss in the state reached.
enum Loss {
    Random(f64),
    Gilbert { p: f64, r: f64, bad: bool },
}

impl Loss {
    fn parse(s: &str) -> Result<Loss, String> {
        let bad = || format!("--loss {s}: expected random:PCT, burst:PCT:LEN or gemodel:P:R");
        let parts: Vec<&str> = s.split(':').collect();
        let num = |i: usize| -> Result<f64, String> {
            let v: f64 = parts.get(i).and_then(|v| v.parse().ok()).ok_or_else(bad)?;
            if v.is_finite() && v >= 0.0 {
                Ok(v)
            } else {
                Err(bad())
            }
        };
        let pct = |v: f64| {
            if v <= 100.0 {
                Ok(v / 100.0)
            } else {
                Err(bad())
            }
        };
        match (parts[0], parts.len()) {
            ("random", 2) => Ok(Loss::Random(pct(num(1)?)?)),
            ("burst", 3) => {
                // Mean loss p/(p+r) and mean burst 1/r.
                let (loss, len) = (pct(num(1)?)?, num(2)?);
                if loss >= 1.0 || len < 1.0 {
                    return Err(bad());
                }
                let r = 1.0 / len;
                Ok(Loss::Gilbert {
                    p: loss * r / (1.0 - loss),
                    r,
                    bad: false,
                })
            }
            ("gemodel", 3) => Ok(Loss::Gilbert {
                p: pct(num(1)?)?,
                r: pct(num(2)?)?,
                bad: false,
            }),
            _ => Err(bad()),
        }
    }

    fn lose(&mut self, rng: &mut Pcg64Mcg) -> bool {
        match self {
            Loss::Random(p) => rng.random_bool(*p),
            Loss::Gilbert { p, r, bad } => {
                let flip = rng.random_bool(if *bad { *r } else { *p });
                *bad ^= flip;
                *bad
            }
        }
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    let mut loss = match Loss::parse(&args.loss) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("fec_rate: {e}");
            return ExitCode::from(2);
        }
    };
    let rtt = Duration::from_millis(args.rtt_ms);
    let mut encoder = match Encoder::new(args.fec, args.mtu, flush_after(rtt)) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("fec_rate: {e}");
            return ExitCode::from(2);
        }
    };
    let mut decoder = Decoder::new(DecoderConfig::for_hop(rtt));
    let mut rng = Pcg64Mcg::seed_from_u64(args.seed);
    let mut hop_rng = Pcg64Mcg::seed_from_u64(args.seed ^ 0x9e37_79b9_7f4a_7c15);
    let max = encoder.max_datagram();

    // In batches, so the datagrams in memory stay few and the timed loops
    // hold nothing but the codec's calls.
    const BATCH: u64 = 1000;
    let mut t = Instant::now();
    let (mut encode_time, mut decode_time) = (Duration::ZERO, Duration::ZERO);
    let mut received = vec![false; args.packets as usize];
    let (mut hop_packets, mut hop_lost, mut sources_lost) = (0u64, 0u64, 0u64);
    let mut seq = 0u64;
    let mut datagrams = Vec::new();
    let mut sent = Vec::new();
    while seq < args.packets {
        datagrams.clear();
        for s in seq..(seq + BATCH).min(args.packets) {
            let len = match rng.random_bool(0.85) {
                true => max,
                false => rng.random_range(40..=100),
            };
            let mut d = s.to_le_bytes().to_vec();
            d.resize(len, s as u8);
            datagrams.push(d);
        }
        seq += datagrams.len() as u64;
        let last = seq == args.packets;

        let began = Instant::now();
        sent.clear();
        for d in &datagrams {
            // 10 µs apart: about 1 Gbit/s, so windows fill before the bound.
            t += Duration::from_micros(10);
            sent.push(encoder.push(d, t).expect("within max_datagram"));
            sent.extend(std::iter::from_fn(|| encoder.poll_transmit()));
        }
        if last {
            t += flush_after(rtt);
            encoder.handle_timeout(t);
            sent.extend(std::iter::from_fn(|| encoder.poll_transmit()));
        }
        encode_time += began.elapsed();

        let kept: Vec<&Vec<u8>> = sent
            .iter()
            .filter(|p| {
                hop_packets += 1;
                let lost = loss.lose(&mut hop_rng);
                hop_lost += u64::from(lost);
                sources_lost += u64::from(lost && p[0] == 0);
                !lost
            })
            .collect();

        let began = Instant::now();
        for p in kept {
            let _ = decoder.receive(p, t);
            while let Some(d) = decoder.poll_datagram() {
                let s = u64::from_le_bytes(d[..8].try_into().expect("8 bytes of sequence"));
                received[s as usize] = true;
            }
        }
        if last {
            decoder.handle_timeout(t + Duration::from_secs(3600));
        }
        decode_time += began.elapsed();
    }

    let e = encoder.counters();
    let d = decoder.counters();
    let left = received.iter().filter(|r| !**r).count() as u64;
    // With no loss there was nothing to repair: all of nothing was.
    let repaired_share = match sources_lost {
        0 => 1.0,
        lost => d.repaired as f64 / lost as f64,
    };
    let mbps = |time: Duration| e.source_bytes as f64 * 8.0 / 1e6 / time.as_secs_f64();
    let line = json!({
        "fec": args.fec.to_string(),
        "loss": args.loss,
        "seed": args.seed,
        "sources": e.source_packets,
        "source_bytes": e.source_bytes,
        "hop_packets": hop_packets,
        "hop_loss": hop_lost as f64 / hop_packets as f64,
        "sources_lost": sources_lost,
        "repaired": d.repaired,
        "left": left,
        "decoder_lost": d.lost,
        "repaired_share": repaired_share,
        "left_share": left as f64 / e.source_packets as f64,
        "overhead": e.overhead(),
        "repair_bytes": e.repair_bytes,
        "partial_windows": e.partial_windows,
        "encode_mbps": mbps(encode_time),
        "decode_mbps": mbps(decode_time),
    });
    println!("{line}");
    ExitCode::SUCCESS
}
