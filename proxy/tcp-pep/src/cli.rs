//! The command line (clap), turned into `Options` with no I/O; errors are
//! one line naming the flag.

use std::fmt::Display;
use std::net::SocketAddrV4;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use clap::Parser;
use satbench_transport::net::Ipv4Net;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SideOptions {
    pub cc: Option<String>,
    pub sndbuf: Option<u32>,
    pub rcvbuf: Option<u32>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    pub listen: SocketAddrV4,
    pub name: String,
    pub stats: Option<PathBuf>,
    pub accept: SideOptions,
    pub connect: SideOptions,
    pub allow_dst: Vec<Ipv4Net>,
    pub max_conns: usize,
    pub idle_timeout: Duration,
    pub connect_timeout: Duration,
    pub pipe_bytes: usize,
    pub splice: bool,
    pub transparent: bool,
    pub threads: usize,
    pub quiet: bool,
}

// The testbed's range: a stray rule cannot turn this into an open relay.
const DEFAULT_ALLOW_DST: &str = "198.18.0.0/15";
// A pipe holds at least one page; fs.pipe-max-size is 1 MiB by default.
const PIPE_MIN: usize = 4096;
const PIPE_MAX: usize = 1 << 20;
const BUF_MIN: u32 = 4096;
// The kernel doubles SO_*BUF values; keep them where that cannot overflow.
const BUF_MAX: u32 = 1 << 30;

/// A transparent split-TCP proxy.
///
/// nftables TPROXY hands it connections; for each it connects onward to the
/// connection's original destination (the accepted socket's local address)
/// from this host's own address and relays both directions with splice(2).
/// `accept` is the side the connection came from (towards the client),
/// `connect` the onward side (towards the server).
#[derive(Parser, Debug)]
#[command(
    name = "tcp-pep",
    version,
    // As before clap: a flag given twice keeps its last value.
    args_override_self = true,
    after_help = "Prints `ready` once listening; exits 0 on SIGTERM or SIGINT (stats written), 2 on an error."
)]
pub struct Cli {
    /// TPROXY listener
    #[arg(long, value_name = "IP:PORT", default_value = "127.0.0.1:9480", value_parser = listen_addr)]
    listen: SocketAddrV4,
    /// Label of log lines and stats
    #[arg(long, default_value = "tcp-pep", value_parser = one_word)]
    name: String,
    /// JSON counters, written on SIGUSR1 and at exit
    #[arg(long, value_name = "FILE")]
    stats: Option<PathBuf>,
    /// TCP congestion control of the accept side (reno, cubic, bbr, … as the
    /// kernel offers; newreno = reno) [default: the namespace's]
    #[arg(long, value_name = "ALG", value_parser = cc_name)]
    accept_cc: Option<String>,
    /// Fixed send buffer of the accept side (turns off the kernel's
    /// autotuning) [default: autotuned]
    #[arg(long, value_name = "BYTES", value_parser = in_range(BUF_MIN, BUF_MAX))]
    accept_sndbuf: Option<u32>,
    /// Fixed receive buffer of the accept side [default: autotuned]
    #[arg(long, value_name = "BYTES", value_parser = in_range(BUF_MIN, BUF_MAX))]
    accept_rcvbuf: Option<u32>,
    /// TCP congestion control of the connect side, as --accept-cc
    #[arg(long, value_name = "ALG", value_parser = cc_name)]
    connect_cc: Option<String>,
    /// Fixed send buffer of the connect side [default: autotuned]
    #[arg(long, value_name = "BYTES", value_parser = in_range(BUF_MIN, BUF_MAX))]
    connect_sndbuf: Option<u32>,
    /// Fixed receive buffer of the connect side [default: autotuned]
    #[arg(long, value_name = "BYTES", value_parser = in_range(BUF_MIN, BUF_MAX))]
    connect_rcvbuf: Option<u32>,
    /// Original destinations that may be relayed (others are reset); may be
    /// repeated, and replaces the default [default: 198.18.0.0/15]
    #[arg(long, value_name = "CIDR[,CIDR…]", value_parser = networks)]
    allow_dst: Vec<Networks>,
    /// Relayed connections at once; more are reset, with a log line when the
    /// cap is hit
    #[arg(long, value_name = "N", default_value_t = 512, value_parser = in_range(1usize, 100_000))]
    max_conns: usize,
    /// Close a connection with no data either way for this long
    #[arg(long, value_name = "MS", default_value_t = 120_000, value_parser = in_range(1u64, 86_400_000))]
    idle_timeout_ms: u64,
    /// Onward connection set-up limit
    #[arg(long, value_name = "MS", default_value_t = 10_000, value_parser = in_range(1u64, 600_000))]
    connect_timeout_ms: u64,
    /// Splice pipe (or copy buffer) per direction: the proxy's own memory
    /// bound
    #[arg(long, value_name = "BYTES", default_value_t = 256 * 1024, value_parser = in_range(PIPE_MIN, PIPE_MAX))]
    pipe_bytes: usize,
    /// Copy through user space instead of splice(2)
    #[arg(long)]
    no_splice: bool,
    /// Plain listener (no IP_TRANSPARENT), for tests
    #[arg(long)]
    no_transparent: bool,
    /// Worker threads
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = in_range(1usize, 64))]
    threads: usize,
    /// No log line per connection
    #[arg(long)]
    quiet: bool,
}

/// One `--allow-dst` value: a comma-separated list of networks.
#[derive(Clone, Debug)]
struct Networks(Vec<Ipv4Net>);

fn networks(v: &str) -> Result<Networks, String> {
    satbench_transport::net::parse_list(v).map(Networks)
}

fn listen_addr(v: &str) -> Result<SocketAddrV4, String> {
    v.parse()
        .map_err(|_| format!("expected IPv4:PORT, got '{v}'"))
}

fn one_word(v: &str) -> Result<String, String> {
    if v.is_empty() || v.chars().any(char::is_whitespace) {
        return Err(format!("expected one word, got '{v}'"));
    }
    Ok(v.to_string())
}

/// A whole number from `lo` to `hi`.
fn in_range<T>(lo: T, hi: T) -> impl Fn(&str) -> Result<T, String> + Clone + Send + Sync + 'static
where
    T: FromStr + PartialOrd + Display + Copy + Send + Sync + 'static,
{
    move |v| {
        let n: T = v
            .parse()
            .map_err(|_| format!("not a valid number: '{v}'"))?;
        if n < lo || n > hi {
            return Err(format!("{n} is out of range ({lo} to {hi})"));
        }
        Ok(n)
    }
}

/// A congestion-control name as the kernel spells it (`newreno` is `reno`).
fn cc_name(v: &str) -> Result<String, String> {
    let v = v.trim().to_ascii_lowercase();
    if v.is_empty() || v.len() > 15 || !v.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(format!("not a congestion control name: '{v}'"));
    }
    Ok(if v == "newreno" { "reno".into() } else { v })
}

impl Cli {
    /// The options, defaults applied and the lists checked.
    pub fn options(self) -> Result<Options, String> {
        let allow_dst = if self.allow_dst.is_empty() {
            vec![DEFAULT_ALLOW_DST.parse()?]
        } else {
            self.allow_dst.into_iter().flat_map(|n| n.0).collect()
        };
        if allow_dst.is_empty() {
            return Err("--allow-dst: needs at least one network".into());
        }
        Ok(Options {
            listen: self.listen,
            name: self.name,
            stats: self.stats,
            accept: SideOptions {
                cc: self.accept_cc,
                sndbuf: self.accept_sndbuf,
                rcvbuf: self.accept_rcvbuf,
            },
            connect: SideOptions {
                cc: self.connect_cc,
                sndbuf: self.connect_sndbuf,
                rcvbuf: self.connect_rcvbuf,
            },
            allow_dst,
            max_conns: self.max_conns,
            idle_timeout: Duration::from_millis(self.idle_timeout_ms),
            connect_timeout: Duration::from_millis(self.connect_timeout_ms),
            pipe_bytes: self.pipe_bytes,
            splice: !self.no_splice,
            transparent: !self.no_transparent,
            threads: self.threads,
            quiet: self.quiet,
        })
    }
}

/// Whether every congestion control asked for is one the kernel offers
/// (`available` is tcp_available_congestion_control's content).
pub fn check_cc(o: &Options, available: &str) -> Result<(), String> {
    let avail: Vec<&str> = available.split_whitespace().collect();
    for (flag, side) in [("--accept-cc", &o.accept), ("--connect-cc", &o.connect)] {
        if let Some(cc) = &side.cc {
            if !avail.contains(&cc.as_str()) {
                return Err(format!(
                    "{flag} {cc}: not available in this kernel (available: {})",
                    avail.join(", ")
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use satbench_transport::cli::{parse_from, Stop};

    fn parse(s: &str) -> Result<Cli, Stop> {
        parse_from::<Cli, _, _>(std::iter::once("tcp-pep").chain(s.split_whitespace()))
    }

    fn parse_line(s: &str) -> Result<Options, String> {
        match parse(s) {
            Ok(cli) => cli.options(),
            Err(Stop::Usage(line)) => Err(line),
            Err(Stop::Print(text)) => Err(format!("printed {text}")),
        }
    }

    fn run(s: &str) -> Options {
        parse_line(s).unwrap()
    }

    #[test]
    fn defaults() {
        let o = run("");
        assert_eq!(o.listen.to_string(), "127.0.0.1:9480");
        assert_eq!(o.name, "tcp-pep");
        assert_eq!(o.stats, None);
        assert_eq!((o.accept.clone(), o.connect.clone()), Default::default());
        let nets: Vec<String> = o.allow_dst.iter().map(|n| n.to_string()).collect();
        assert_eq!(nets, ["198.18.0.0/15"]);
        assert_eq!(o.max_conns, 512);
        assert_eq!(o.idle_timeout, Duration::from_secs(120));
        assert_eq!(o.connect_timeout, Duration::from_secs(10));
        assert_eq!(o.pipe_bytes, 262_144);
        assert_eq!(o.threads, 1);
        assert!(o.splice && o.transparent && !o.quiet);
    }

    #[test]
    fn every_flag() {
        let o = run(
            "--listen 127.0.0.1:7000 --name=gw --stats /tmp/s.json --accept-cc NewReno --accept-sndbuf 65536 \
             --accept-rcvbuf=131072 --connect-cc cubic --connect-sndbuf 8192 --connect-rcvbuf 8192 \
             --allow-dst 198.18.3.0/24,10.0.0.0/8 --allow-dst 192.0.2.1 --max-conns 7 --idle-timeout-ms 1500 \
             --connect-timeout-ms 300 --pipe-bytes 65536 --no-splice --no-transparent --threads 2 --quiet",
        );
        assert_eq!(o.listen.to_string(), "127.0.0.1:7000");
        assert_eq!(o.name, "gw");
        assert_eq!(o.stats, Some(PathBuf::from("/tmp/s.json")));
        assert_eq!(
            o.accept,
            SideOptions {
                cc: Some("reno".into()),
                sndbuf: Some(65536),
                rcvbuf: Some(131072)
            }
        );
        assert_eq!(
            o.connect,
            SideOptions {
                cc: Some("cubic".into()),
                sndbuf: Some(8192),
                rcvbuf: Some(8192)
            }
        );
        let nets: Vec<String> = o.allow_dst.iter().map(|n| n.to_string()).collect();
        assert_eq!(nets, ["198.18.3.0/24", "10.0.0.0/8", "192.0.2.1/32"]); // replaces the default
        assert_eq!(o.max_conns, 7);
        assert_eq!(o.idle_timeout, Duration::from_millis(1500));
        assert_eq!(o.connect_timeout, Duration::from_millis(300));
        assert_eq!(o.pipe_bytes, 65536);
        assert!(!o.splice && !o.transparent && o.quiet);
        assert_eq!(o.threads, 2);
    }

    #[test]
    fn a_repeated_flag_keeps_its_last_value() {
        assert_eq!(run("--name a --name b").name, "b");
        assert_eq!(run("--max-conns 5 --max-conns=6").max_conns, 6);
    }

    #[test]
    fn errors_are_one_line_and_name_the_flag() {
        for (s, want) in [
            ("--listen 9480", "--listen: expected IPv4:PORT"),
            ("--listen", "--listen: needs a value"),
            ("--max-conns 0", "--max-conns: 0 is out of range"),
            ("--max-conns lots", "--max-conns: not a valid number"),
            ("--pipe-bytes 100", "--pipe-bytes: 100 is out of range"),
            (
                "--pipe-bytes 4194304",
                "--pipe-bytes: 4194304 is out of range",
            ),
            (
                "--accept-cc bb-r",
                "--accept-cc: not a congestion control name",
            ),
            ("--allow-dst 198.18.0.0/33", "--allow-dst: "),
            ("--allow-dst ,", "--allow-dst: needs at least one network"),
            ("--name", "--name: needs a value"),
            ("--name=", "--name: expected one word"),
            (
                "--frobnicate",
                "unknown argument '--frobnicate'; see tcp-pep --help",
            ),
            ("extra", "unknown argument 'extra'"),
        ] {
            let e = parse_line(s).unwrap_err();
            assert!(e.starts_with(want), "{s}: {e}");
            assert!(!e.contains('\n'), "{s}: {e}");
        }
    }

    #[test]
    fn help_and_version_are_printed_not_errors() {
        let Err(Stop::Print(help)) = parse("--help") else {
            panic!()
        };
        for flag in ["--listen", "--allow-dst", "--no-splice", "--pipe-bytes"] {
            assert!(help.contains(flag), "{flag} missing from --help");
        }
        assert!(help.contains("[default: 262144]"), "{help}");
        assert_eq!(
            parse("-V").unwrap_err(),
            Stop::Print(format!("tcp-pep {}\n", env!("CARGO_PKG_VERSION")))
        );
    }

    #[test]
    fn congestion_control_must_be_offered() {
        let o = run("--accept-cc newreno --connect-cc bbr");
        assert!(check_cc(&o, "reno cubic bbr\n").is_ok());
        let e = check_cc(&o, "reno cubic").unwrap_err();
        assert_eq!(
            e,
            "--connect-cc bbr: not available in this kernel (available: reno, cubic)"
        );
        assert!(check_cc(&run(""), "").is_ok()); // nothing asked: the namespace's default
    }
}
