//! Command-line parsing and validation (no I/O).

use std::net::Ipv4Addr;

/// Port used when `--port` is not given: 9, the "discard" port. Nothing else
/// listens on it in a testbed namespace, and the probe's traffic is exactly
/// that: datagrams meant to be counted and dropped (rtt echoes them back).
pub const DEFAULT_PORT: u16 = 9;
/// How long to wait for stragglers after the last send.
pub const DEFAULT_TIMEOUT_MS: u64 = 3000;
/// Every one-byte owd datagram carries `seq % 256`.
pub const OWD_SEQ_SPACE: u64 = 256;
/// IPv4 header (20) plus UDP header (8): `--packet-bytes` counts them.
pub const IP_UDP_OVERHEAD: usize = 28;
/// Smallest rate payload: a 4-byte magic and an 8-byte sequence number.
pub const RATE_MIN_PAYLOAD: usize = 12;

pub const USAGE: &str = "\
usage:
  satprobe rtt  COMMON [--count 20] [--interval-ms 20]
  satprobe owd  COMMON [--count 500] [--interval-ms 10]
  satprobe rate COMMON --mbit X [--duration-ms 3000] [--packet-bytes 1500]
COMMON: --from-netns NS --to-netns NS --to-addr IPV4 [--port 9] [--timeout-ms 3000]
Prints one JSON object on stdout; on error, one line on stderr and exit status 2.
";

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
pub enum Command {
    Help,
    Rtt(RttOpts),
    Owd(OwdOpts),
    Rate(RateOpts),
}

/// Which options each subcommand accepts, besides the common ones.
fn extra_options(sub: &str) -> &'static [&'static str] {
    match sub {
        "rtt" | "owd" => &["--count", "--interval-ms"],
        "rate" => &["--mbit", "--duration-ms", "--packet-bytes"],
        _ => &[],
    }
}

const COMMON_OPTIONS: &[&str] = &[
    "--from-netns",
    "--to-netns",
    "--to-addr",
    "--port",
    "--timeout-ms",
];

/// Parses the arguments after the program name.
pub fn parse(args: &[String]) -> Result<Command, String> {
    let Some(sub) = args.first() else {
        return Err("missing subcommand (rtt, owd or rate)".into());
    };
    let sub = sub.as_str();
    if matches!(sub, "-h" | "--help" | "help") {
        return Ok(Command::Help);
    }
    if !matches!(sub, "rtt" | "owd" | "rate") {
        return Err(format!(
            "unknown subcommand {sub:?} (expected rtt, owd or rate)"
        ));
    }

    // Collect --name value / --name=value pairs, each at most once.
    let mut given: Vec<(String, String)> = Vec::new();
    let mut i = 1;
    while i < args.len() {
        let arg = &args[i];
        if matches!(arg.as_str(), "-h" | "--help") {
            return Ok(Command::Help);
        }
        let (name, value) = match arg.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n.to_string(), v.to_string()),
            _ => {
                if !arg.starts_with("--") {
                    return Err(format!("unexpected argument {arg:?}"));
                }
                let v = args
                    .get(i + 1)
                    .ok_or_else(|| format!("{arg} needs a value"))?;
                i += 1;
                (arg.clone(), v.clone())
            }
        };
        if !COMMON_OPTIONS.contains(&name.as_str()) && !extra_options(sub).contains(&name.as_str())
        {
            return Err(format!("unknown option {name} for satprobe {sub}"));
        }
        if given.iter().any(|(n, _)| *n == name) {
            return Err(format!("{name} given twice"));
        }
        given.push((name, value));
        i += 1;
    }
    let get = |name: &str| {
        given
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    };
    let required = |name: &str| get(name).ok_or_else(|| format!("satprobe {sub} needs {name}"));

    let from_netns = netns_name(required("--from-netns")?, "--from-netns")?;
    let to_netns = netns_name(required("--to-netns")?, "--to-netns")?;
    let to_addr: Ipv4Addr = required("--to-addr")?.parse().map_err(|_| {
        format!(
            "--to-addr must be an IPv4 address, got {:?}",
            get("--to-addr").unwrap()
        )
    })?;
    if to_addr.is_unspecified() || to_addr.is_broadcast() || to_addr.is_multicast() {
        return Err(format!(
            "--to-addr must be a unicast address, got {to_addr}"
        ));
    }
    let port = match get("--port") {
        None => DEFAULT_PORT,
        Some(v) => int_in(v, "--port", 1, 65535)? as u16,
    };
    let timeout_given = get("--timeout-ms")
        .map(|v| int_in(v, "--timeout-ms", 0, 600_000))
        .transpose()?;
    let mut common = Common {
        from_netns,
        to_netns,
        to_addr,
        port,
        timeout_ms: timeout_given.unwrap_or(DEFAULT_TIMEOUT_MS),
    };

    match sub {
        "rtt" | "owd" => {
            let (dc, di) = if sub == "rtt" {
                (20, 20.0)
            } else {
                (500, 10.0)
            };
            let count = get("--count")
                .map(|v| int_in(v, "--count", 1, 10_000_000))
                .transpose()?
                .unwrap_or(dc);
            let interval_ms = get("--interval-ms")
                .map(|v| float_in(v, "--interval-ms", 0.001, 60_000.0))
                .transpose()?
                .unwrap_or(di);
            if sub == "rtt" {
                Ok(Command::Rtt(RttOpts {
                    common,
                    count,
                    interval_ms,
                }))
            } else {
                // Without --timeout-ms, owd waits at most its 256-interval
                // window (2560 ms at the default 10 ms interval); an explicit
                // --timeout-ms that the window cannot cover is refused.
                match timeout_given {
                    Some(t) => check_owd_window(interval_ms, t)?,
                    None => common.timeout_ms = owd_default_timeout_ms(interval_ms),
                }
                Ok(Command::Owd(OwdOpts {
                    common,
                    count,
                    interval_ms,
                }))
            }
        }
        _ => {
            let mbit = float_in(required("--mbit")?, "--mbit", 0.001, 100_000.0)?;
            let duration_ms = get("--duration-ms")
                .map(|v| int_in(v, "--duration-ms", 1, 600_000))
                .transpose()?
                .unwrap_or(3000);
            let min_packet = (IP_UDP_OVERHEAD + RATE_MIN_PAYLOAD) as u64;
            let packet_bytes = get("--packet-bytes")
                .map(|v| int_in(v, "--packet-bytes", min_packet, 65_535))
                .transpose()?
                .unwrap_or(1500) as usize;
            Ok(Command::Rate(RateOpts {
                common,
                mbit,
                duration_ms,
                packet_bytes,
            }))
        }
    }
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

fn netns_name(v: &str, opt: &str) -> Result<String, String> {
    if v.is_empty() || v == "." || v == ".." || v.contains('/') || v.contains('\0') {
        return Err(format!(
            "{opt} must be a namespace name (as in `ip netns list`), got {v:?}"
        ));
    }
    Ok(v.to_string())
}

fn int_in(v: &str, opt: &str, lo: u64, hi: u64) -> Result<u64, String> {
    let n: u64 = v
        .parse()
        .map_err(|_| format!("{opt} must be a whole number, got {v:?}"))?;
    if n < lo || n > hi {
        return Err(format!("{opt} must be between {lo} and {hi}, got {n}"));
    }
    Ok(n)
}

fn float_in(v: &str, opt: &str, lo: f64, hi: f64) -> Result<f64, String> {
    let x: f64 = v
        .parse()
        .map_err(|_| format!("{opt} must be a number, got {v:?}"))?;
    if !x.is_finite() || x < lo || x > hi {
        return Err(format!("{opt} must be between {lo} and {hi}, got {v}"));
    }
    Ok(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }
    const NS: &str = "--from-netns a --to-netns b --to-addr 198.18.2.2";

    #[test]
    fn rtt_defaults() {
        let Command::Rtt(o) = parse(&args(&format!("rtt {NS}"))).unwrap() else {
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
        let Command::Owd(o) = parse(&args(&format!("owd {NS} --port=5000 --count=10"))).unwrap()
        else {
            panic!()
        };
        assert_eq!((o.count, o.interval_ms, o.common.port), (10, 10.0, 5000));
    }

    #[test]
    fn rate_needs_mbit_and_computes_payload() {
        assert!(parse(&args(&format!("rate {NS}")))
            .unwrap_err()
            .contains("--mbit"));
        let Command::Rate(o) = parse(&args(&format!("rate {NS} --mbit 22.5"))).unwrap() else {
            panic!()
        };
        assert_eq!(
            (o.mbit, o.duration_ms, o.packet_bytes, o.payload_bytes()),
            (22.5, 3000, 1500, 1472)
        );
    }

    #[test]
    fn rejects_bad_input() {
        for (line, needle) in [
            ("", "missing subcommand"),
            ("ping", "unknown subcommand"),
            ("rtt --to-netns b --to-addr 198.18.2.2", "--from-netns"),
            (
                "rtt --from-netns a/b --to-netns b --to-addr 198.18.2.2",
                "namespace name",
            ),
            (&format!("rtt {NS} --to-addr 10.0.0.300"), "given twice"),
            ("rtt --from-netns a --to-netns b --to-addr ::1", "IPv4"),
            (
                "rtt --from-netns a --to-netns b --to-addr 0.0.0.0",
                "unicast",
            ),
            (&format!("rtt {NS} --mbit 3"), "unknown option --mbit"),
            (
                &format!("rate {NS} --mbit 3 --count 3"),
                "unknown option --count",
            ),
            (&format!("rtt {NS} --count"), "needs a value"),
            (&format!("rtt {NS} --count 0"), "between"),
            (&format!("rtt {NS} --count x"), "whole number"),
            (&format!("rtt {NS} --interval-ms 0"), "between"),
            (&format!("rtt {NS} --interval-ms nan"), "between"),
            (&format!("rtt {NS} --port 70000"), "between"),
            (
                &format!("rate {NS} --mbit 10 --packet-bytes 39"),
                "between 40",
            ),
            (&format!("rate {NS} --mbit -1"), "between"),
            (&format!("rtt {NS} stray"), "unexpected argument"),
        ] {
            let err = parse(&args(line)).unwrap_err();
            assert!(err.contains(needle), "{line:?}: {err}");
        }
    }

    #[test]
    fn owd_refuses_ambiguous_sequence_window() {
        // 10 ms x 256 = 2560 ms < 3000 ms default timeout.
        let err = parse(&args(&format!(
            "owd {NS} --interval-ms 10 --timeout-ms 3000"
        )))
        .unwrap_err();
        assert!(err.contains("256"), "{err}");
        // Without --timeout-ms the wait shrinks to the window instead.
        let Command::Owd(o) = parse(&args(&format!("owd {NS}"))).unwrap() else {
            panic!()
        };
        assert_eq!(o.common.timeout_ms, 2560);
        let Command::Owd(o) = parse(&args(&format!("owd {NS} --interval-ms 20"))).unwrap() else {
            panic!()
        };
        assert_eq!(o.common.timeout_ms, 3000);
        let Command::Owd(o) =
            parse(&args(&format!("owd {NS} --interval-ms 1 --timeout-ms 200"))).unwrap()
        else {
            panic!()
        };
        assert_eq!(o.common.timeout_ms, 200);
        assert!(check_owd_window(10.0, 2560).is_ok());
        assert!(check_owd_window(10.0, 2561).is_err());
        assert!(check_owd_window(12.0, 3000).is_ok());
    }

    #[test]
    fn help() {
        assert_eq!(parse(&args("--help")).unwrap(), Command::Help);
        assert_eq!(parse(&args("rate --help")).unwrap(), Command::Help);
    }
}
