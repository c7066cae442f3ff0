//! linkem --config FILE
//!
//! Attaches to two existing tun devices (each in its own network
//! namespace), prints `ready`, and forwards IP packets between them with
//! per-direction impairments until SIGTERM/SIGINT (stats written, exit 0).
//! SIGUSR1 writes the stats file and goes on; SIGUSR2 applies the config
//! file's rates again, then writes it. Errors: one line on stderr, exit 2.

use clap::Parser;
use linkem::config::{self, Config};
use linkem::pcap::PcapWriter;
use linkem::runtime::{self, Link, Side};
use nix::sys::signal::Signal;
use satbench_transport::cli as usage;
use satbench_transport::process::{self, EXIT_OK, EXIT_USAGE};
use std::path::PathBuf;
use std::sync::Mutex;

/// Emulates one link between two existing tun devices, each in its own
/// network namespace: delay, jitter, loss, rate, queue limit, schedules per
/// direction (see netem/linkem/README.md).
///
/// Prints `ready` when both ends are attached. SIGUSR1 writes the stats
/// file; SIGUSR2 re-reads the config file's rates (forward.rate_mbit,
/// return.rate_mbit), applies them and writes it; SIGTERM/SIGINT write it
/// and exit 0. Errors: one line on stderr,
/// exit 2.
#[derive(Parser, Debug)]
#[command(name = "linkem", version)]
struct Args {
    /// The link's configuration (JSON)
    #[arg(short, long, value_name = "FILE")]
    config: PathBuf,
}

fn attach(cfg: &Config, label: &str, side: &config::Side) -> Result<Side, String> {
    let tun = netns::within(&side.netns, || linkem::tun::attach(&side.dev)).map_err(|e| {
        format!(
            "cannot attach {label} = tun {:?} in netns {:?}: {e}",
            side.dev, side.netns
        )
    })?;
    let pcap = match &cfg.pcap_dir {
        None => None,
        Some(dir) => {
            std::fs::create_dir_all(dir).map_err(|e| format!("pcap_dir {}: {e}", dir.display()))?;
            let p = dir.join(format!("{label}.pcap"));
            Some(Mutex::new(
                PcapWriter::create(&p).map_err(|e| format!("pcap file {}: {e}", p.display()))?,
            ))
        }
    };
    Ok(Side {
        label: format!("{label} ({}:{})", side.netns, side.dev),
        tun,
        pcap,
    })
}

fn run(path: PathBuf) -> Result<(), String> {
    let cfg = config::load(&path).map_err(|e| e.to_string())?;
    runtime::set_timer_slack_1ns();
    // Before any thread exists, so that all of them inherit the mask.
    let signals = runtime::block_signals().map_err(|e| format!("cannot block signals: {e}"))?;
    let a = attach(&cfg, "a", &cfg.a)?;
    let b = attach(&cfg, "b", &cfg.b)?;
    linkem::stats::check_writable(&cfg.stats_path).map_err(|e| {
        format!(
            "config {}: stats_path {}: {e}",
            path.display(),
            cfg.stats_path.display()
        )
    })?;
    for (name, imp) in [("forward", &cfg.forward), ("return", &cfg.ret)] {
        if imp.limit.is_some() && imp.rate_mbit.is_none() && imp.schedule.is_none() {
            eprintln!(
                "linkem {}: {name}.limit has no effect without a rate",
                cfg.name
            );
        }
    }
    let link = Link::start(&cfg, a, b).map_err(|e| format!("cannot start threads: {e}"))?;
    process::say_ready();
    loop {
        let sig = runtime::wait_signal(&signals);
        if sig == Signal::SIGUSR2 {
            reload_rates(&path, &link);
        }
        if let Err(e) = link.checkpoint() {
            eprintln!(
                "linkem {}: cannot write stats {}: {e}",
                cfg.name,
                cfg.stats_path.display()
            );
            if sig != Signal::SIGUSR1 {
                process::exit(EXIT_USAGE);
            }
        }
        if !matches!(sig, Signal::SIGUSR1 | Signal::SIGUSR2) {
            return Ok(());
        }
    }
}

/// SIGUSR2: the config file's rates apply from now on (a path whose
/// capacity changes while it runs); its other keys stay as started. A file
/// that does not load changes nothing.
fn reload_rates(path: &std::path::Path, link: &Link) {
    match config::load(path) {
        Ok(cfg) => {
            link.set_rates(cfg.forward.rate_mbit, cfg.ret.rate_mbit);
            eprintln!(
                "linkem {}: rates now forward {:?} return {:?} Mbit/s",
                cfg.name, cfg.forward.rate_mbit, cfg.ret.rate_mbit
            );
        }
        Err(e) => eprintln!("linkem: SIGUSR2: rates unchanged: {e}"),
    }
}

fn main() {
    let args: Args = usage::parse();
    match run(args.config) {
        // The reader threads sit in blocking reads: leave without joining.
        Ok(()) => process::exit(EXIT_OK),
        Err(e) => {
            eprintln!("linkem: {e}");
            process::exit(EXIT_USAGE)
        }
    }
}
