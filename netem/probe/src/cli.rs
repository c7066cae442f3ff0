//! Command-line parsing and validation (no I/O): arguments in, options
//! (or the help or version text) or a one-line error out.

use std::ffi::OsString;
use std::net::Ipv4Addr;

use clap::{Parser, Subcommand};
use satbench_transport::cli::{self, Stop};

/// Port used when `--port` is not given: 9, the "discard" port, UDP (rtt,
/// owd, rate, burst) and TCP (connect). Nothing else listens on it in a
/// testbed namespace, and the probe's traffic is exactly that: datagrams
/// meant to be counted and dropped (rtt echoes them back), connections
/// opened and reset without a byte.
pub const DEFAULT_PORT: u16 = 9;
/// How long to wait for stragglers after the last send.
pub const DEFAULT_TIMEOUT_MS: u64 = 3000;
/// Every one-byte owd datagram carries `seq % 256`.
pub const OWD_SEQ_SPACE: u64 = 256;
/// IPv4 header (20) plus UDP header (8): `--packet-bytes` counts them.
pub const IP_UDP_OVERHEAD: usize = 28;
/// Smallest rate payload: a 4-byte magic and an 8-byte sequence number.
pub const RATE_MIN_PAYLOAD: usize = 12;

#[derive(Debug, Clone, PartialEq)]
pub struct Common {
    /// Sender side.
    pub from_netns: String,
    /// Receiver (or echo) side; `to_addr` must be an address of this namespace.
    pub to_netns: String,
    pub to_addr: Ipv4Addr,
    pub port: u16,
    pub timeout_ms: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RttOpts {
    pub common: Common,
    pub count: u64,
    pub interval_ms: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct OwdOpts {
    pub common: Common,
    pub count: u64,
    pub interval_ms: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RateOpts {
    pub common: Common,
    pub mbit: f64,
    pub duration_ms: u64,
    /// IP packet size (IPv4 + UDP headers + payload).
    pub packet_bytes: usize,
}

impl RateOpts {
    pub fn payload_bytes(&self) -> usize {
        self.packet_bytes - IP_UDP_OVERHEAD
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ConnectOpts {
    /// `timeout_ms` is how long one connect() may take (at least 1 ms).
    pub common: Common,
    pub count: u64,
    pub interval_ms: f64,
    /// Starts are offset by up to this much (golden-ratio sequence).
    pub spread_ms: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct BurstOpts {
    pub common: Common,
    pub packets: u64,
    /// IP packet size (IPv4 + UDP headers + payload).
    pub packet_bytes: usize,
    /// Silence before the burst.
    pub idle_ms: u64,
}

impl BurstOpts {
    pub fn payload_bytes(&self) -> usize {
        self.packet_bytes - IP_UDP_OVERHEAD
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// `--help` or `--version`: this text on stdout, exit 0.
    Print(String),
    Rtt(RttOpts),
    Owd(OwdOpts),
    Rate(RateOpts),
    Connect(ConnectOpts),
    Burst(BurstOpts),
}

/// Smallest `--packet-bytes`: headers and the smallest rate payload.
const MIN_PACKET_BYTES: u64 = (IP_UDP_OVERHEAD + RATE_MIN_PAYLOAD) as u64;

/// Measures an emulated link between two network namespaces: round-trip
/// time, one-way delay, loss, throughput, TCP connect time, a burst after
/// idle.
///
/// Prints one JSON object on stdout; on error, one line on stderr and exit
/// status 2. See netem/probe/README.md.
#[derive(Parser, Debug)]
#[command(name = "satprobe", version)]
struct Cli {
    #[command(subcommand)]
    sub: Sub,
}

#[derive(Subcommand, Debug)]
enum Sub {
    /// Round-trip time: echoes of small datagrams
    Rtt {
        #[command(flatten)]
        common: CommonArgs,
        /// Probes to send
        #[arg(long, value_name = "N", default_value_t = 20, value_parser = int_in(1, 10_000_000))]
        count: u64,
        /// Time between sends
        #[arg(long, value_name = "MS", default_value_t = 20.0, value_parser = float_in(0.001, 60_000.0))]
        interval_ms: f64,
    },
    /// One-way delay and loss from --from-netns to --to-netns, with 1-byte
    /// datagrams
    Owd {
        #[command(flatten)]
        common: CommonArgs,
        /// Datagrams to send
        #[arg(long, value_name = "N", default_value_t = 500, value_parser = int_in(1, 10_000_000))]
        count: u64,
        /// Time between sends; 256 intervals must cover --timeout-ms
        #[arg(long, value_name = "MS", default_value_t = 10.0, value_parser = float_in(0.001, 60_000.0))]
        interval_ms: f64,
    },
    /// Throughput: a UDP flood paced at --mbit
    Rate {
        #[command(flatten)]
        common: CommonArgs,
        /// Sending rate, counted at the IP layer
        #[arg(long, value_name = "X", allow_negative_numbers = true, value_parser = float_in(0.001, 100_000.0))]
        mbit: f64,
        /// How long to send
        #[arg(long, value_name = "MS", default_value_t = 3000, value_parser = int_in(1, 600_000))]
        duration_ms: u64,
        /// IP packet size (IPv4 + UDP headers + payload)
        #[arg(long, value_name = "BYTES", default_value_t = 1500, value_parser = int_in(MIN_PACKET_BYTES, 65_535))]
        packet_bytes: u64,
    },
    /// TCP connect time: connect() calls from --from-netns to a listener in
    /// --to-netns, one at a time
    Connect {
        #[command(flatten)]
        common: CommonArgs,
        /// Connections to open
        #[arg(long, value_name = "N", default_value_t = 10, value_parser = int_in(1, 100_000))]
        count: u64,
        /// Time between the starts of consecutive connect() calls (a call
        /// that takes longer delays the next)
        #[arg(long, value_name = "MS", default_value_t = 100.0, value_parser = float_in(0.001, 60_000.0))]
        interval_ms: f64,
        /// Offset call i's start by frac(i x golden ratio) x MS, so that the
        /// handshakes meet a frame clock at every phase, not at one
        #[arg(long, value_name = "MS", default_value_t = 0.0, value_parser = float_in(0.0, 60_000.0))]
        spread_ms: f64,
    },
    /// One-way delay of each datagram of a burst sent back to back after
    /// --idle-ms of silence
    Burst {
        #[command(flatten)]
        common: CommonArgs,
        /// Datagrams in the burst
        #[arg(long, value_name = "N", default_value_t = 100, value_parser = int_in(1, 100_000))]
        packets: u64,
        /// IP packet size (IPv4 + UDP headers + payload)
        #[arg(long, value_name = "BYTES", default_value_t = 1200, value_parser = int_in(MIN_PACKET_BYTES, 65_535))]
        packet_bytes: u64,
        /// Silence before the burst
        #[arg(long, value_name = "MS", default_value_t = 2000, value_parser = int_in(0, 600_000))]
        idle_ms: u64,
    },
}

#[derive(clap::Args, Debug)]
struct CommonArgs {
    /// Sender side
    #[arg(long, value_name = "NS", value_parser = netns_name)]
    from_netns: String,
    /// Receiver (or echo) side
    #[arg(long, value_name = "NS", value_parser = netns_name)]
    to_netns: String,
    /// An address of --to-netns, where the receiver binds
    #[arg(long, value_name = "IPV4", value_parser = unicast)]
    to_addr: Ipv4Addr,
    /// Port, UDP (connect: TCP): 9, "discard", nothing else in a testbed
    /// uses it
    #[arg(long, value_name = "N", default_value_t = DEFAULT_PORT.into(), value_parser = int_in(1, 65_535))]
    port: u64,
    /// How long to wait for stragglers after the last send [default: 3000;
    /// owd: at most 256 intervals; connect: how long one connect() may take]
    #[arg(long, value_name = "MS", value_parser = int_in(0, 600_000))]
    timeout_ms: Option<u64>,
}

impl CommonArgs {
    fn common(self) -> Common {
        Common {
            from_netns: self.from_netns,
            to_netns: self.to_netns,
            to_addr: self.to_addr,
            port: self.port as u16, // int_in kept it within u16
            timeout_ms: self.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS),
        }
    }
}

/// Parses the whole command line (program name first).
pub fn parse<I, T>(argv: I) -> Result<Command, String>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let sub = match cli::parse_from::<Cli, _, _>(argv) {
        Ok(cli) => cli.sub,
        Err(Stop::Print(text)) => return Ok(Command::Print(text)),
        Err(Stop::Usage(line)) => return Err(line),
    };
    Ok(match sub {
        Sub::Rtt {
            common,
            count,
            interval_ms,
        } => Command::Rtt(RttOpts {
            common: common.common(),
            count,
            interval_ms,
        }),
        Sub::Owd {
            common,
            count,
            interval_ms,
        } => {
            // Without --timeout-ms, owd waits at most its 256-interval
            // window (2560 ms at the default 10 ms interval); an explicit
            // --timeout-ms that the window cannot cover is refused.
            let given = common.timeout_ms;
            let mut common = common.common();
            match given {
                Some(t) => check_owd_window(interval_ms, t)?,
                None => common.timeout_ms = owd_default_timeout_ms(interval_ms),
            }
            Command::Owd(OwdOpts {
                common,
                count,
                interval_ms,
            })
        }
        Sub::Rate {
            common,
            mbit,
            duration_ms,
            packet_bytes,
        } => Command::Rate(RateOpts {
            common: common.common(),
            mbit,
            duration_ms,
            packet_bytes: packet_bytes as usize,
        }),
        Sub::Connect {
            common,
            count,
            interval_ms,
            spread_ms,
        } => {
            let common = common.common();
            if common.timeout_ms == 0 {
                // A zero SO_SNDTIMEO would let connect() block for minutes.
                return Err("--timeout-ms: connect needs at least 1 ms, got 0".into());
            }
            Command::Connect(ConnectOpts {
                common,
                count,
                interval_ms,
                spread_ms,
            })
        }
        Sub::Burst {
            common,
            packets,
            packet_bytes,
            idle_ms,
        } => Command::Burst(BurstOpts {
            common: common.common(),
            packets,
            packet_bytes: packet_bytes as usize,
            idle_ms,
        }),
    })
}

/// A one-byte owd datagram names its send only modulo 256, so a receipt is
/// unambiguous only while every delay is shorter than 256 intervals. The
/// probe waits `timeout_ms` for stragglers, i.e. it accepts delays up to
/// that long: refuse settings where that exceeds 256 intervals.
pub fn check_owd_window(interval_ms: f64, timeout_ms: u64) -> Result<(), String> {
    let window_ms = interval_ms * OWD_SEQ_SPACE as f64;
    if window_ms < timeout_ms as f64 {
        return Err(format!(
            "owd: --interval-ms {interval_ms} x 256 = {window_ms} ms is shorter than --timeout-ms {timeout_ms}: \
             a 1-byte sequence number could not tell sends apart; raise --interval-ms to at least {} or lower --timeout-ms",
            (timeout_ms as f64 / OWD_SEQ_SPACE as f64)
        ));
    }
    Ok(())
}

/// owd's wait for stragglers when `--timeout-ms` is not given: the usual
/// 3000 ms, shortened to the 256-interval window if that is shorter.
pub fn owd_default_timeout_ms(interval_ms: f64) -> u64 {
    DEFAULT_TIMEOUT_MS.min((interval_ms * OWD_SEQ_SPACE as f64).floor() as u64)
}

fn netns_name(v: &str) -> Result<String, String> {
    if v.is_empty() || v == "." || v == ".." || v.contains('/') || v.contains('\0') {
        return Err(format!(
            "must be a namespace name (as in `ip netns list`), got {v:?}"
        ));
    }
    Ok(v.to_string())
}

fn unicast(v: &str) -> Result<Ipv4Addr, String> {
    let a: Ipv4Addr = v
        .parse()
        .map_err(|_| format!("must be an IPv4 address, got {v:?}"))?;
    if a.is_unspecified() || a.is_broadcast() || a.is_multicast() {
        return Err(format!("must be a unicast address, got {a}"));
    }
    Ok(a)
}

/// `n` (read from `v`) when it lies from `lo` to `hi`; NaN does not.
fn within<T: PartialOrd + std::fmt::Display>(n: T, lo: T, hi: T, v: &str) -> Result<T, String> {
    if lo <= n && n <= hi {
        Ok(n)
    } else {
        Err(format!("must be between {lo} and {hi}, got {v}"))
    }
}

/// A whole number from `lo` to `hi`.
fn int_in(lo: u64, hi: u64) -> impl Fn(&str) -> Result<u64, String> + Clone + Send + Sync {
    move |v| {
        let n = v
            .parse()
            .map_err(|_| format!("must be a whole number, got {v:?}"))?;
        within(n, lo, hi, v)
    }
}

/// A number from `lo` to `hi`.
fn float_in(lo: f64, hi: f64) -> impl Fn(&str) -> Result<f64, String> + Clone + Send + Sync {
    move |v| {
        let x = v
            .parse()
            .map_err(|_| format!("must be a number, got {v:?}"))?;
        within(x, lo, hi, v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        std::iter::once("satprobe")
            .chain(s.split_whitespace())
            .map(String::from)
            .collect()
    }
    const NS: &str = "--from-netns a --to-netns b --to-addr 198.18.2.2";

    #[test]
    fn rtt_defaults() {
        let Command::Rtt(o) = parse(args(&format!("rtt {NS}"))).unwrap() else {
            panic!()
        };
        assert_eq!(o.count, 20);
        assert_eq!(o.interval_ms, 20.0);
        assert_eq!(o.common.port, DEFAULT_PORT);
        assert_eq!(o.common.timeout_ms, 3000);
        assert_eq!(o.common.from_netns, "a");
        assert_eq!(o.common.to_netns, "b");
        assert_eq!(o.common.to_addr, Ipv4Addr::new(198, 18, 2, 2));
    }

    #[test]
    fn owd_defaults_and_equals_form() {
        let Command::Owd(o) = parse(args(&format!("owd {NS} --port=5000 --count=10"))).unwrap()
        else {
            panic!()
        };
        assert_eq!((o.count, o.interval_ms, o.common.port), (10, 10.0, 5000));
    }

    #[test]
    fn rate_needs_mbit_and_computes_payload() {
        assert!(parse(args(&format!("rate {NS}")))
            .unwrap_err()
            .contains("--mbit"));
        let Command::Rate(o) = parse(args(&format!("rate {NS} --mbit 22.5"))).unwrap() else {
            panic!()
        };
        assert_eq!(
            (o.mbit, o.duration_ms, o.packet_bytes, o.payload_bytes()),
            (22.5, 3000, 1500, 1472)
        );
    }

    #[test]
    fn connect_defaults() {
        let Command::Connect(o) = parse(args(&format!("connect {NS}"))).unwrap() else {
            panic!()
        };
        assert_eq!((o.count, o.interval_ms, o.spread_ms), (10, 100.0, 0.0));
        assert_eq!((o.common.port, o.common.timeout_ms), (DEFAULT_PORT, 3000));
        let Command::Connect(o) = parse(args(&format!(
            "connect {NS} --count 3 --interval-ms 50 --timeout-ms 700"
        )))
        .unwrap() else {
            panic!()
        };
        assert_eq!(
            (o.count, o.interval_ms, o.common.timeout_ms),
            (3, 50.0, 700)
        );
    }

    #[test]
    fn burst_defaults_and_payload() {
        let Command::Burst(o) = parse(args(&format!("burst {NS}"))).unwrap() else {
            panic!()
        };
        assert_eq!(
            (o.packets, o.packet_bytes, o.payload_bytes(), o.idle_ms),
            (100, 1200, 1172, 2000)
        );
        let Command::Burst(o) = parse(args(&format!(
            "burst {NS} --packets 15 --packet-bytes=40 --idle-ms 0"
        )))
        .unwrap() else {
            panic!()
        };
        assert_eq!((o.packets, o.payload_bytes(), o.idle_ms), (15, 12, 0));
    }

    #[test]
    fn rejects_bad_input_in_one_line_naming_the_problem() {
        for (line, needle) in [
            ("", "missing subcommand (rtt, owd, rate, connect or burst)"),
            ("ping", "unknown subcommand 'ping'"),
            (
                "rtt --to-netns b --to-addr 198.18.2.2",
                "--from-netns is required",
            ),
            (
                "rtt --from-netns a/b --to-netns b --to-addr 198.18.2.2",
                "--from-netns: must be a namespace name",
            ),
            (
                &format!("rtt {NS} --to-addr 10.0.0.3"),
                "--to-addr: not with --to-addr",
            ),
            (
                "rtt --from-netns a --to-netns b --to-addr ::1",
                "--to-addr: must be an IPv4 address, got \"::1\"",
            ),
            (
                "rtt --from-netns a --to-netns b --to-addr 0.0.0.0",
                "--to-addr: must be a unicast address",
            ),
            (
                &format!("rtt {NS} --mbit 3"),
                "unknown argument '--mbit'; see satprobe rtt --help",
            ),
            (
                &format!("rate {NS} --mbit 3 --count 3"),
                "unknown argument '--count'",
            ),
            (&format!("rate {NS}"), "--mbit is required"),
            (&format!("rtt {NS} --count"), "--count: needs a value"),
            (
                &format!("rtt {NS} --count 0"),
                "--count: must be between 1 and 10000000, got 0",
            ),
            (
                &format!("rtt {NS} --count x"),
                "--count: must be a whole number",
            ),
            (
                &format!("rtt {NS} --interval-ms 0"),
                "--interval-ms: must be between",
            ),
            (
                &format!("rtt {NS} --interval-ms nan"),
                "--interval-ms: must be between",
            ),
            (
                &format!("rtt {NS} --port 70000"),
                "--port: must be between 1 and 65535",
            ),
            (
                &format!("rate {NS} --mbit 10 --packet-bytes 39"),
                "--packet-bytes: must be between 40",
            ),
            (&format!("rate {NS} --mbit -1"), "--mbit: must be between"),
            (&format!("rtt {NS} stray"), "unknown argument 'stray'"),
            (
                &format!("connect {NS} --timeout-ms 0"),
                "--timeout-ms: connect needs at least 1 ms",
            ),
            (
                &format!("connect {NS} --packets 3"),
                "unknown argument '--packets'",
            ),
            (
                &format!("burst {NS} --packets 0"),
                "--packets: must be between 1 and 100000, got 0",
            ),
            (
                &format!("burst {NS} --packet-bytes 39"),
                "--packet-bytes: must be between 40",
            ),
            (
                &format!("burst {NS} --idle-ms 1.5"),
                "--idle-ms: must be a whole number",
            ),
        ] {
            let err = parse(args(line)).unwrap_err();
            assert!(err.contains(needle), "{line:?}: {err}");
            assert!(!err.contains('\n'), "{line:?}: {err}");
        }
    }

    #[test]
    fn owd_refuses_ambiguous_sequence_window() {
        // 10 ms x 256 = 2560 ms < 3000 ms default timeout.
        let err = parse(args(&format!(
            "owd {NS} --interval-ms 10 --timeout-ms 3000"
        )))
        .unwrap_err();
        assert!(err.contains("256"), "{err}");
        // Without --timeout-ms the wait shrinks to the window instead.
        let Command::Owd(o) = parse(args(&format!("owd {NS}"))).unwrap() else {
            panic!()
        };
        assert_eq!(o.common.timeout_ms, 2560);
        let Command::Owd(o) = parse(args(&format!("owd {NS} --interval-ms 20"))).unwrap() else {
            panic!()
        };
        assert_eq!(o.common.timeout_ms, 3000);
        let Command::Owd(o) =
            parse(args(&format!("owd {NS} --interval-ms 1 --timeout-ms 200"))).unwrap()
        else {
            panic!()
        };
        assert_eq!(o.common.timeout_ms, 200);
        assert!(check_owd_window(10.0, 2560).is_ok());
        assert!(check_owd_window(10.0, 2561).is_err());
        assert!(check_owd_window(12.0, 3000).is_ok());
    }

    #[test]
    fn help_and_version_are_printed_not_errors() {
        for line in [
            "--help",
            "help",
            "rate --help",
            "connect --help",
            "burst --help",
            "--version",
        ] {
            let Ok(Command::Print(text)) = parse(args(line)) else {
                panic!("{line}")
            };
            assert!(!text.is_empty());
        }
        let Ok(Command::Print(rate)) = parse(args("rate --help")) else {
            panic!()
        };
        for flag in ["--mbit", "--packet-bytes", "--from-netns", "--timeout-ms"] {
            assert!(rate.contains(flag), "{flag} missing from rate --help");
        }
    }
}
