//! Command-line parsing, with no I/O: arguments in, a `Command` or a
//! one-line error out.

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

use satbench_origin::cli::{number, Args};
use satbench_origin::quic::QuicOptions;

pub const DEFAULT_QUIC_PORT: u16 = 4434;
pub const DEFAULT_TCP_PORT: u16 = 5201;
/// The testbed's site name (harness/runner.js SITE_HOST); certificates made
/// by `origin gen-cert --name satbench.test` carry it, the PEP's too.
pub const DEFAULT_NAME: &str = "satbench.test";
pub const ALPN: &[u8] = b"satbulk";

pub const USAGE: &str = "\
usage:
  satbulk serve --addr IP --cert FILE --key FILE [--quic-port 4434] [--tcp-port 5201]
                [--tcp-cc NAME] [--trace FILE] [QUIC OPTIONS]
  satbulk get quic|tcp --addr IP:PORT (--bytes N | --duration S)
                [--name satbench.test] [--ca CERTFILE] [--bin-ms 100]
                [--timeout S] [--json] [QUIC OPTIONS]
  satbulk --help | --version

QUIC OPTIONS (the origin's and the PEP's names; quinn transport settings):
  --quic-cc cubic|newreno|bbr   --quic-initial-window PACKETS   --quic-initial-mtu BYTES
  --quic-ack-frequency          --quic-ack-eliciting-threshold N
  --quic-max-ack-delay-ms MS    --quic-bdp-bytes N (= --bdp-bytes)
  --quic-idle-timeout-ms MS (= --idle-timeout-ms)

serve: a QUIC server (ALPN satbulk) on IP:quic-port/udp and a TCP server on
IP:tcp-port. A client opens a stream (QUIC) or a connection (TCP) and sends
one line `satbulk BYTES\\n`; the server sends BYTES bytes and ends the stream,
or with 0 sends until the client goes away. --tcp-cc sets the TCP congestion
control of the listening socket (accepted connections inherit it). --trace
appends a JSON line per connection about every 100 ms: t_ms (since accept),
bytes_sent, app_bytes, bytes_acked (TCP), cwnd (bytes; quinn's path.cwnd,
TCP_INFO snd_cwnd × snd_mss), ssthresh (TCP), rtt_ms, lost_packets, final.
Prints `ready` once both listen; exits 0 on SIGTERM or SIGINT, 2 on an error.

get: downloads --bytes N (K/M/G = 10^3/10^6/10^9, Ki/Mi/Gi = 2^10…; a B may
follow) or for --duration S (s, or ms with a unit) from the server and prints
connect_ms, ttfb_ms, bytes, duration_ms and bytes per --bin-ms bin, all
timed from just before connecting. QUIC verifies the server's certificate
against --ca only (no system store) for --name. --timeout (default 600 s)
ends a stalled download. Exit 0 when the download completed, 1 when it
failed (the JSON says why), 2 on a usage error.
";

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    Help,
    Version,
    Serve(ServeArgs),
    Get(GetArgs),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServeArgs {
    pub addr: IpAddr,
    pub quic_port: u16,
    pub tcp_port: u16,
    pub cert: PathBuf,
    pub key: PathBuf,
    pub tcp_cc: Option<String>,
    pub trace: Option<PathBuf>,
    pub quic: QuicOptions,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Proto {
    Quic,
    Tcp,
}

impl Proto {
    pub fn name(self) -> &'static str {
        match self {
            Proto::Quic => "quic",
            Proto::Tcp => "tcp",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Amount {
    Bytes(u64),
    Duration(Duration),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GetArgs {
    pub proto: Proto,
    pub addr: SocketAddr,
    pub name: String,
    pub ca: Option<PathBuf>,
    pub amount: Amount,
    pub bin: Duration,
    pub timeout: Duration,
    pub json: bool,
    pub quic: QuicOptions,
}

/// `100000`, `10MB`, `10M`, `1.5G`, `64KiB`: bytes. Decimal prefixes are
/// powers of 1000, binary ones (Ki, Mi, Gi) of 1024.
pub fn parse_size(flag: &str, v: &str) -> Result<u64, String> {
    let s = v.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let unit = unit.trim();
    let unit = unit
        .strip_suffix('B')
        .or_else(|| unit.strip_suffix('b'))
        .unwrap_or(unit);
    let mult: u64 = match unit {
        "" => 1,
        "k" | "K" => 1_000,
        "M" | "m" => 1_000_000,
        "G" | "g" => 1_000_000_000,
        "Ki" | "ki" => 1 << 10,
        "Mi" | "mi" => 1 << 20,
        "Gi" | "gi" => 1 << 30,
        _ => {
            return Err(format!(
                "{flag}: unknown unit in '{v}' (use k, M, G, Ki, Mi, Gi)"
            ))
        }
    };
    let x: f64 = num
        .parse()
        .map_err(|_| format!("{flag}: expected a size like 10MB, got '{v}'"))?;
    let bytes = (x * mult as f64).round();
    if !(bytes >= 1.0 && bytes < 1.8e19) {
        return Err(format!("{flag}: expected at least one byte, got '{v}'"));
    }
    Ok(bytes as u64)
}

/// `10`, `10s`, `2.5`, `500ms`: a positive duration (seconds without a unit).
pub fn parse_duration(flag: &str, v: &str) -> Result<Duration, String> {
    let s = v.trim();
    let (num, scale) = if let Some(n) = s.strip_suffix("ms") {
        (n, 1e-3)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1.0)
    } else {
        (s, 1.0)
    };
    let x: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("{flag}: expected seconds like 10 or 10s or 500ms, got '{v}'"))?;
    let secs = x * scale;
    if !(secs > 0.0 && secs < 1e7) {
        return Err(format!("{flag}: expected a positive duration, got '{v}'"));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// `--quic-cc` → `cc`; the origin's `--bdp-bytes` and `--idle-timeout-ms`
/// are accepted too, so the same flags work on every tool.
fn quic_key(flag: &str) -> Option<&str> {
    let key = flag.strip_prefix("--quic-").or_else(|| match flag {
        "--bdp-bytes" | "--idle-timeout-ms" => flag.strip_prefix("--"),
        _ => None,
    })?;
    QuicOptions::KEYS.contains(&key).then_some(key)
}

fn quic_flag(a: &mut Args, q: &mut QuicOptions, f: &str) -> Result<bool, String> {
    let Some(key) = quic_key(f) else {
        return Ok(false);
    };
    let v = if QuicOptions::takes_value(key) {
        Some(a.value(f)?)
    } else {
        None
    };
    q.set(key, v.as_deref(), f)
}

pub fn parse(argv: &[String]) -> Result<Command, String> {
    let Some(first) = argv.first() else {
        return Err("missing subcommand (serve or get); see satbulk --help".into());
    };
    let rest = &argv[1..];
    match first.as_str() {
        "-h" | "--help" | "help" => Ok(Command::Help),
        "-V" | "--version" => Ok(Command::Version),
        "serve" => parse_serve(rest).map(Command::Serve),
        "get" => parse_get(rest).map(Command::Get),
        other => Err(format!(
            "unknown subcommand '{other}' (serve or get); see satbulk --help"
        )),
    }
}

fn tcp_cc(f: &str, v: String) -> Result<String, String> {
    // the kernel's names; newreno is what the papers call reno
    let v = if v == "newreno" {
        "reno".to_string()
    } else {
        v
    };
    if v.is_empty() || v.len() > 15 || !v.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(format!("{f}: not a congestion control name: '{v}'"));
    }
    Ok(v)
}

fn parse_serve(argv: &[String]) -> Result<ServeArgs, String> {
    let mut a = Args::new(argv);
    let (mut addr, mut cert, mut key, mut cc, mut trace) = (None, None, None, None, None);
    let (mut quic_port, mut tcp_port) = (DEFAULT_QUIC_PORT, DEFAULT_TCP_PORT);
    let mut q = QuicOptions::default();
    while let Some(flag) = a.next() {
        let f = flag.as_str();
        match f {
            "--addr" => {
                let v = a.value(f)?;
                addr = Some(
                    v.parse()
                        .map_err(|_| format!("{f}: not an IP address: '{v}'"))?,
                );
            }
            "--quic-port" => quic_port = number(f, &a.value(f)?)?,
            "--tcp-port" => tcp_port = number(f, &a.value(f)?)?,
            "--cert" => cert = Some(PathBuf::from(a.value(f)?)),
            "--key" => key = Some(PathBuf::from(a.value(f)?)),
            "--tcp-cc" => cc = Some(tcp_cc(f, a.value(f)?)?),
            "--trace" => trace = Some(PathBuf::from(a.value(f)?)),
            _ if quic_flag(&mut a, &mut q, f)? => {}
            other => return Err(format!("serve: unknown argument '{other}'")),
        }
    }
    if quic_port == tcp_port && quic_port == 0 {
        return Err("serve: --quic-port and --tcp-port cannot both be 0".into());
    }
    Ok(ServeArgs {
        addr: addr.ok_or("serve: --addr is required")?,
        quic_port,
        tcp_port,
        cert: cert.ok_or("serve: --cert is required")?,
        key: key.ok_or("serve: --key is required")?,
        tcp_cc: cc,
        trace,
        quic: q,
    })
}

fn parse_get(argv: &[String]) -> Result<GetArgs, String> {
    let (proto, rest) = match argv.first().map(String::as_str) {
        Some("quic") => (Proto::Quic, &argv[1..]),
        Some("tcp") => (Proto::Tcp, &argv[1..]),
        Some(other) => return Err(format!("get: expected quic or tcp, got '{other}'")),
        None => return Err("get: expected quic or tcp".into()),
    };
    let mut a = Args::new(rest);
    let (mut addr, mut ca, mut bytes, mut duration) = (None, None, None, None);
    let mut name = DEFAULT_NAME.to_string();
    let mut bin = Duration::from_millis(100);
    let mut timeout = Duration::from_secs(600);
    let mut json = false;
    let mut q = QuicOptions::default();
    while let Some(flag) = a.next() {
        let f = flag.as_str();
        match f {
            "--addr" => {
                let v = a.value(f)?;
                addr = Some(
                    v.parse::<SocketAddr>()
                        .map_err(|_| format!("{f}: expected IP:PORT, got '{v}'"))?,
                );
            }
            "--name" => name = a.value(f)?,
            "--ca" => ca = Some(PathBuf::from(a.value(f)?)),
            "--bytes" => bytes = Some(parse_size(f, &a.value(f)?)?),
            "--duration" => duration = Some(parse_duration(f, &a.value(f)?)?),
            "--bin-ms" => {
                let ms: u64 = number(f, &a.value(f)?)?;
                if ms == 0 {
                    return Err(format!("{f}: at least 1 ms"));
                }
                bin = Duration::from_millis(ms);
            }
            "--timeout" => timeout = parse_duration(f, &a.value(f)?)?,
            "--json" => json = true,
            _ if quic_flag(&mut a, &mut q, f)? => {}
            other => return Err(format!("get: unknown argument '{other}'")),
        }
    }
    let amount = match (bytes, duration) {
        (Some(n), None) => Amount::Bytes(n),
        (None, Some(d)) => Amount::Duration(d),
        (Some(_), Some(_)) => return Err("get: give --bytes or --duration, not both".into()),
        (None, None) => return Err("get: --bytes N or --duration S is required".into()),
    };
    if proto == Proto::Quic && ca.is_none() {
        return Err("get quic: --ca CERTFILE is required (the server's certificate is checked against it alone)".into());
    }
    if let Amount::Duration(d) = amount {
        // a timed download must not be cut by the stall guard
        timeout = timeout.max(d + Duration::from_secs(30));
    }
    Ok(GetArgs {
        proto,
        addr: addr.ok_or("get: --addr IP:PORT is required")?,
        name,
        ca,
        amount,
        bin,
        timeout,
        json,
        quic: q,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use satbench_origin::quic::Cc;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn serve_defaults() {
        let Command::Serve(s) = parse(&args("serve --addr 198.18.3.2 --cert c --key k")).unwrap()
        else {
            panic!()
        };
        assert_eq!((s.quic_port, s.tcp_port), (4434, 5201));
        assert_eq!(s.quic, QuicOptions::default());
        assert_eq!((s.tcp_cc, s.trace), (None, None));
    }

    #[test]
    fn serve_takes_transport_flags() {
        let Command::Serve(s) = parse(&args(
            "serve --addr=127.0.0.1 --cert c --key k --quic-port 9000 --tcp-port=9001 --tcp-cc newreno \
             --trace /tmp/t --quic-cc newreno --quic-initial-window 100 --quic-ack-frequency --bdp-bytes 1000",
        ))
        .unwrap() else {
            panic!()
        };
        assert_eq!((s.quic_port, s.tcp_port), (9000, 9001));
        assert_eq!(s.tcp_cc.as_deref(), Some("reno"));
        assert_eq!(s.trace, Some(PathBuf::from("/tmp/t")));
        assert_eq!(s.quic.cc, Cc::NewReno);
        assert_eq!(s.quic.initial_window_packets, 100);
        assert!(s.quic.ack_frequency);
        assert_eq!(s.quic.bdp_bytes, 1000);
    }

    #[test]
    fn serve_errors_name_the_flag() {
        let e = |s: &str| parse(&args(s)).unwrap_err();
        assert_eq!(e("serve --cert c --key k"), "serve: --addr is required");
        assert!(e("serve --addr x --cert c --key k").starts_with("--addr: not an IP"));
        assert!(e("serve --addr 1.2.3.4 --cert c --key k --quic-cc vegas")
            .starts_with("--quic-cc: expected"));
        assert!(e("serve --addr 1.2.3.4 --cert c --key k --tcp-cc a;b").starts_with("--tcp-cc"));
        assert_eq!(
            e("serve --addr 1.2.3.4 --cert c --key k --nope"),
            "serve: unknown argument '--nope'"
        );
        assert!(e("serve --addr 1.2.3.4 --cert c --key k --quic-port").contains("needs a value"));
    }

    #[test]
    fn get_quic_by_size() {
        let Command::Get(g) = parse(&args(
            "get quic --addr 198.18.1.1:443 --ca c.pem --bytes 10MB --bin-ms 50 --json --quic-initial-window 32",
        ))
        .unwrap() else {
            panic!()
        };
        assert_eq!(g.proto, Proto::Quic);
        assert_eq!(g.addr, "198.18.1.1:443".parse().unwrap());
        assert_eq!(g.name, "satbench.test");
        assert_eq!(g.amount, Amount::Bytes(10_000_000));
        assert_eq!(g.bin, Duration::from_millis(50));
        assert!(g.json);
        assert_eq!(g.quic.initial_window_packets, 32);
        assert_eq!(g.timeout, Duration::from_secs(600));
    }

    #[test]
    fn get_tcp_by_duration() {
        let Command::Get(g) = parse(&args(
            "get tcp --addr 198.18.3.2:5201 --duration 2000s --timeout 5",
        ))
        .unwrap() else {
            panic!()
        };
        assert_eq!(g.proto, Proto::Tcp);
        assert_eq!(g.amount, Amount::Duration(Duration::from_secs(2000)));
        // never shorter than the duration itself
        assert_eq!(g.timeout, Duration::from_secs(2030));
        assert_eq!(g.ca, None);
    }

    #[test]
    fn get_errors() {
        let e = |s: &str| parse(&args(s)).unwrap_err();
        assert!(e("get udp --addr 1.2.3.4:1 --bytes 1").contains("quic or tcp"));
        assert!(e("get tcp --addr 1.2.3.4:1").contains("--bytes N or --duration S"));
        assert!(e("get tcp --addr 1.2.3.4:1 --bytes 1 --duration 1").contains("not both"));
        assert!(e("get quic --addr 1.2.3.4:1 --bytes 1").contains("--ca"));
        assert!(e("get tcp --addr 1.2.3.4 --bytes 1").contains("IP:PORT"));
        assert!(e("get tcp --addr 1.2.3.4:1 --bytes 1 --bin-ms 0").contains("at least"));
    }

    #[test]
    fn sizes() {
        let s = |v: &str| parse_size("--bytes", v);
        assert_eq!(s("100"), Ok(100));
        assert_eq!(s("2MB"), Ok(2_000_000));
        assert_eq!(s("100M"), Ok(100_000_000));
        assert_eq!(s("1.5G"), Ok(1_500_000_000));
        assert_eq!(s("64KiB"), Ok(65_536));
        assert_eq!(s("1Mi"), Ok(1_048_576));
        assert_eq!(s("10kB"), Ok(10_000));
        assert!(s("0").is_err());
        assert!(s("ten").is_err());
        assert!(s("5 parsecs").unwrap_err().contains("unit"));
    }

    #[test]
    fn durations() {
        let d = |v: &str| parse_duration("--duration", v);
        assert_eq!(d("10"), Ok(Duration::from_secs(10)));
        assert_eq!(d("2.5s"), Ok(Duration::from_millis(2500)));
        assert_eq!(d("500ms"), Ok(Duration::from_millis(500)));
        assert!(d("0").is_err());
        assert!(d("-1").is_err());
        assert!(d("soon").is_err());
    }
}
