//! linkem --config FILE
//!
//! Attaches to two existing tun devices (each in its own network
//! namespace), prints `ready`, and forwards IP packets between them with
//! per-direction impairments until SIGTERM/SIGINT (stats written, exit 0).
//! SIGUSR1 writes the stats file and goes on. Errors: one line on stderr,
//! exit 2.

use linkem::config::{self, Config};
use linkem::pcap::PcapWriter;
use linkem::runtime::{self, Link, Side};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Mutex;

const USAGE: &str = "usage: linkem --config FILE\n\
  Emulates one link between two existing tun devices; see netem/linkem/README.md.\n\
  Prints `ready` when both ends are attached. SIGUSR1 writes the stats file;\n\
  SIGTERM/SIGINT write it and exit 0. Errors exit 2.";

fn parse_args() -> Result<PathBuf, String> {
    let mut args = std::env::args().skip(1);
    let mut config = None;
    while let Some(a) = args.next() {
        match a.as_str() {
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            "-V" | "--version" => {
                println!("linkem {}", env!("CARGO_PKG_VERSION"));
                std::process::exit(0);
            }
            "--config" | "-c" => {
                config = Some(args.next().ok_or("--config needs a file")?);
            }
            s if s.starts_with("--config=") => config = Some(s["--config=".len()..].to_string()),
            other => {
                return Err(format!(
                    "unknown argument {other:?} ({})",
                    USAGE.lines().next().unwrap()
                ))
            }
        }
    }
    config
        .map(PathBuf::from)
        .ok_or_else(|| USAGE.lines().next().unwrap().to_string())
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

fn run() -> Result<(), String> {
    let path = parse_args()?;
    let cfg = config::load(&path).map_err(|e| e.to_string())?;
    runtime::set_timer_slack_1ns();
    // Before any thread exists, so that all of them inherit the mask.
    let signals = runtime::block_signals();
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
    runtime::say_ready();
    loop {
        let sig = runtime::wait_signal(&signals);
        if let Err(e) = link.checkpoint() {
            eprintln!(
                "linkem {}: cannot write stats {}: {e}",
                cfg.name,
                cfg.stats_path.display()
            );
            if sig != libc::SIGUSR1 {
                std::process::exit(2);
            }
        }
        if sig != libc::SIGUSR1 {
            return Ok(());
        }
    }
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => {
            // The reader threads sit in blocking reads: leave without joining.
            std::process::exit(0);
        }
        Err(e) => {
            eprintln!("linkem: {e}");
            ExitCode::from(2)
        }
    }
}
