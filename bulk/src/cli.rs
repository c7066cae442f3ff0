//! The command line (clap): `satbulk serve` and `satbulk get`, turned into
//! plain settings with no I/O; errors are one line naming the flag.

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};
use satbench_transport::cli::QuicArgs;
use satbench_transport::quic::QuicOptions;

use crate::bins::Direction;

pub const DEFAULT_QUIC_PORT: u16 = 4434;
pub const DEFAULT_TCP_PORT: u16 = 5201;
/// The testbed's site name (SITE_HOST of harness/testbed/addressing.js,
/// which harness/bulk/satbulk.js passes as `--name`); certificates made by
/// `origin gen-cert --name satbench.test` carry it, the PEP's too.
pub const DEFAULT_NAME: &str = "satbench.test";
pub const ALPN: &[u8] = b"satbulk";

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
    /// `--careful-resume-log` (with `--quic-careful-resume on`).
    pub careful_resume_log: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
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
    pub direction: Direction,
    pub bin: Duration,
    pub timeout: Duration,
    pub json: bool,
    pub quic: QuicOptions,
    /// `--revisit`: a second connection after the first, resuming it.
    pub revisit: bool,
    /// `--revisit-pause`: between the two connections, wait for a line on
    /// stdin (the caller changes the path meanwhile).
    pub revisit_pause: bool,
}

/// `100000`, `10MB`, `10M`, `1.5G`, `64KiB`: bytes. Decimal prefixes are
/// powers of 1000, binary ones (Ki, Mi, Gi) of 1024.
pub fn parse_size(v: &str) -> Result<u64, String> {
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
        _ => return Err(format!("unknown unit in '{v}' (use k, M, G, Ki, Mi, Gi)")),
    };
    let x: f64 = num
        .parse()
        .map_err(|_| format!("expected a size like 10MB, got '{v}'"))?;
    let bytes = (x * mult as f64).round();
    if !(1.0..1.8e19).contains(&bytes) {
        return Err(format!("expected at least one byte, got '{v}'"));
    }
    Ok(bytes as u64)
}

/// `10`, `10s`, `2.5`, `500ms`: a positive duration (seconds without a unit).
pub fn parse_duration(v: &str) -> Result<Duration, String> {
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
        .map_err(|_| format!("expected seconds like 10 or 10s or 500ms, got '{v}'"))?;
    let secs = x * scale;
    if !(secs > 0.0 && secs < 1e7) {
        return Err(format!("expected a positive duration, got '{v}'"));
    }
    Ok(Duration::from_secs_f64(secs))
}

#[derive(Parser, Debug)]
#[command(
    name = "satbulk",
    version,
    about = "Bulk downloads over QUIC (quinn) and TCP, traced on the sender and binned on the receiver",
    args_override_self = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// A QUIC server (ALPN satbulk) on IP:quic-port/udp and a TCP server on
    /// IP:tcp-port
    #[command(
        after_help = "A client opens a stream (QUIC) or a connection (TCP) and sends one \
        line `satbulk BYTES\\n`; the server sends BYTES bytes and ends the stream, or with 0 \
        sends until the client goes away. An upload's line is `satbulk up BYTES DURATION_MS \
        T0_UNIX_US BIN_MS\\n` and its body follows; the server counts the body per bin from the \
        client's t0 and answers with one JSON line of its bins. Prints `ready` once both listen; exits 0 on SIGTERM \
        or SIGINT, 2 on an error."
    )]
    Serve(ServeFlags),
    /// One download (or, with --direction up, upload) with a `satbulk
    /// serve`: connect_ms, ttfb_ms, bytes, duration_ms and bytes per
    /// --bin-ms bin as the receiver counted them, all timed from just before
    /// connecting
    #[command(
        after_help = "Exit 0 when the download completed, 1 when it failed (the JSON \
        says why), 2 on a usage error."
    )]
    Get(GetFlags),
}

#[derive(Args, Debug)]
pub struct ServeFlags {
    /// The address both servers bind
    #[arg(long, value_name = "IP", value_parser = ip)]
    addr: IpAddr,
    /// PEM certificate chain (QUIC)
    #[arg(long, value_name = "FILE")]
    cert: PathBuf,
    /// PEM private key (QUIC)
    #[arg(long, value_name = "FILE")]
    key: PathBuf,
    /// 0: no QUIC server
    #[arg(long, value_name = "PORT", default_value_t = DEFAULT_QUIC_PORT, value_parser = number::<u16>)]
    quic_port: u16,
    /// 0: no TCP server
    #[arg(long, value_name = "PORT", default_value_t = DEFAULT_TCP_PORT, value_parser = number::<u16>)]
    tcp_port: u16,
    /// TCP congestion control of the listening socket (accepted connections
    /// inherit it); newreno is the kernel's reno
    #[arg(long, value_name = "NAME", value_parser = tcp_cc)]
    tcp_cc: Option<String>,
    /// Append a JSON line per connection about every 100 ms: t_ms (since
    /// accept), bytes_sent, app_bytes, bytes_acked (TCP), cwnd (bytes;
    /// quinn's path.cwnd, TCP_INFO snd_cwnd × snd_mss), ssthresh (TCP),
    /// rtt_ms, lost_packets, final
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    /// With --quic-careful-resume on: a JSON line per QUIC connection that
    /// had a saved path (its phases and jump), appended
    #[arg(long, value_name = "FILE")]
    careful_resume_log: Option<PathBuf>,
    #[command(flatten)]
    quic: QuicArgs,
}

#[derive(Args, Debug)]
pub struct GetFlags {
    #[arg(value_enum)]
    proto: Proto,
    /// The server (IP:PORT)
    #[arg(long, value_name = "IP:PORT", value_parser = socket_addr)]
    addr: SocketAddr,
    /// Bytes to download: K/M/G = 10^3/10^6/10^9, Ki/Mi/Gi = 2^10…; a B may
    /// follow
    #[arg(long, value_name = "N", value_parser = size)]
    bytes: Option<u64>,
    /// Download for this long: seconds, or ms with a unit
    #[arg(long, value_name = "S", value_parser = duration)]
    duration: Option<Duration>,
    /// down: the server sends, we count; up: we send, the server counts
    /// (from our t0, with our bins) and answers with what it counted
    #[arg(long, value_enum, default_value = "down")]
    direction: Direction,
    /// The name the server's certificate must carry (QUIC)
    #[arg(long, value_name = "NAME", default_value = DEFAULT_NAME)]
    name: String,
    /// The certificates trusted for the server (QUIC; no system store)
    #[arg(long, value_name = "CERTFILE")]
    ca: Option<PathBuf>,
    /// Bin width, ms
    #[arg(long, value_name = "MS", default_value_t = 100, value_parser = bin_ms)]
    bin_ms: u64,
    /// Ends a stalled download (seconds; never shorter than --duration + 30 s)
    #[arg(long, value_name = "S", default_value = "600", value_parser = duration)]
    timeout: Duration,
    /// The report as JSON
    #[arg(long)]
    json: bool,
    /// QUIC: when the transfer is over, close and make a second connection
    /// from the same endpoint (its TLS session ticket and address-validation
    /// token) for the same transfer; the report is the second's, the
    /// first's in `first`
    #[arg(long)]
    revisit: bool,
    /// With --revisit: once the first connection has closed, say so on
    /// stderr and wait for a line on stdin before the second (so that the
    /// caller can change the path between the two visits)
    #[arg(long, requires = "revisit")]
    revisit_pause: bool,
    #[command(flatten)]
    quic: QuicArgs,
}

fn number<T: std::str::FromStr>(v: &str) -> Result<T, String> {
    v.parse().map_err(|_| format!("not a valid number: '{v}'"))
}

fn ip(v: &str) -> Result<IpAddr, String> {
    v.parse().map_err(|_| format!("not an IP address: '{v}'"))
}

fn socket_addr(v: &str) -> Result<SocketAddr, String> {
    v.parse()
        .map_err(|_| format!("expected IP:PORT, got '{v}'"))
}

fn size(v: &str) -> Result<u64, String> {
    parse_size(v)
}

fn duration(v: &str) -> Result<Duration, String> {
    parse_duration(v)
}

fn bin_ms(v: &str) -> Result<u64, String> {
    match number(v)? {
        0 => Err("at least 1 ms".into()),
        ms => Ok(ms),
    }
}

fn tcp_cc(v: &str) -> Result<String, String> {
    // the kernel's names; newreno is what the papers call reno
    let v = if v == "newreno" { "reno" } else { v };
    if v.is_empty() || v.len() > 15 || !v.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(format!("not a congestion control name: '{v}'"));
    }
    Ok(v.to_string())
}

impl ServeFlags {
    pub fn settings(self) -> Result<ServeArgs, String> {
        if self.quic_port == 0 && self.tcp_port == 0 {
            return Err("serve: --quic-port and --tcp-port cannot both be 0".into());
        }
        let quic = self.quic.options()?;
        if self.careful_resume_log.is_some() && !quic.careful_resume {
            return Err("--careful-resume-log: only with --quic-careful-resume on".into());
        }
        Ok(ServeArgs {
            addr: self.addr,
            quic_port: self.quic_port,
            tcp_port: self.tcp_port,
            cert: self.cert,
            key: self.key,
            tcp_cc: self.tcp_cc,
            trace: self.trace,
            quic,
            careful_resume_log: self.careful_resume_log,
        })
    }
}

impl GetFlags {
    pub fn settings(self) -> Result<GetArgs, String> {
        let amount = match (self.bytes, self.duration) {
            (Some(n), None) => Amount::Bytes(n),
            (None, Some(d)) => Amount::Duration(d),
            (Some(_), Some(_)) => return Err("get: give --bytes or --duration, not both".into()),
            (None, None) => return Err("get: --bytes N or --duration S is required".into()),
        };
        if self.revisit && self.proto != Proto::Quic {
            return Err("--revisit: QUIC only (a second connection resuming the first's TLS session and token)".into());
        }
        let quic = self.quic.options()?;
        if quic.careful_resume {
            return Err(
                "--quic-careful-resume: satbulk serve's (the server resumes a returning client); \
                 get has none"
                    .into(),
            );
        }
        if self.proto == Proto::Quic && self.ca.is_none() {
            return Err("get quic: --ca CERTFILE is required (the server's certificate is checked against it alone)".into());
        }
        let timeout = match amount {
            // a timed download must not be cut by the stall guard
            Amount::Duration(d) => self.timeout.max(d + Duration::from_secs(30)),
            Amount::Bytes(_) => self.timeout,
        };
        Ok(GetArgs {
            proto: self.proto,
            addr: self.addr,
            name: self.name,
            ca: self.ca,
            amount,
            direction: self.direction,
            bin: Duration::from_millis(self.bin_ms),
            timeout,
            json: self.json,
            quic,
            revisit: self.revisit,
            revisit_pause: self.revisit_pause,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use satbench_transport::cli::{parse_from, Stop};
    use satbench_transport::quic::Cc;

    /// What the command line asks for, or its one-line error.
    #[derive(Debug)]
    enum Parsed {
        Serve(ServeArgs),
        Get(GetArgs),
    }

    fn parse(s: &str) -> Result<Parsed, String> {
        match parse_from::<Cli, _, _>(std::iter::once("satbulk").chain(s.split_whitespace())) {
            Ok(cli) => match cli.command {
                Command::Serve(f) => f.settings().map(Parsed::Serve),
                Command::Get(f) => f.settings().map(Parsed::Get),
            },
            Err(Stop::Usage(line)) => Err(line),
            Err(Stop::Print(text)) => Err(format!("printed {text}")),
        }
    }

    #[test]
    fn serve_defaults() {
        let Parsed::Serve(s) = parse("serve --addr 198.18.3.2 --cert c --key k").unwrap() else {
            panic!()
        };
        assert_eq!((s.quic_port, s.tcp_port), (4434, 5201));
        assert_eq!(s.quic, QuicOptions::default());
        assert_eq!((s.tcp_cc, s.trace), (None, None));
    }

    #[test]
    fn serve_takes_transport_flags() {
        let Parsed::Serve(s) = parse(
            "serve --addr=127.0.0.1 --cert c --key k --quic-port 9000 --tcp-port=9001 --tcp-cc newreno \
             --trace /tmp/t --quic-cc newreno --quic-initial-window 100 --quic-ack-frequency --bdp-bytes 1000",
        )
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
        let e = |s: &str| parse(s).unwrap_err();
        assert!(e("serve --cert c --key k").starts_with("--addr is required"));
        assert!(e("serve --addr x --cert c --key k").starts_with("--addr: not an IP"));
        assert!(e("serve --addr 1.2.3.4 --cert c --key k --quic-cc vegas")
            .starts_with("--quic-cc: expected"));
        assert!(e("serve --addr 1.2.3.4 --cert c --key k --tcp-cc a;b").starts_with("--tcp-cc"));
        assert!(e("serve --addr 1.2.3.4 --cert c --key k --nope")
            .starts_with("unknown argument '--nope'; see satbulk serve --help"));
        assert!(
            e("serve --addr 1.2.3.4 --cert c --key k --quic-port 0 --tcp-port 0")
                .contains("cannot both be 0")
        );
        assert!(e("serve --addr 1.2.3.4 --cert c --key k --quic-port").contains("needs a value"));
    }

    #[test]
    fn get_quic_by_size() {
        let Parsed::Get(g) = parse(
            "get quic --addr 198.18.1.1:443 --ca c.pem --bytes 10MB --bin-ms 50 --json --quic-initial-window 32",
        )
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
        assert!(!g.revisit);
    }

    #[test]
    fn a_revisit_is_quic_and_careful_resume_the_servers() {
        let Parsed::Get(g) = parse("get quic --addr 1.2.3.4:1 --ca c --bytes 1 --revisit").unwrap()
        else {
            panic!()
        };
        assert!(g.revisit);
        assert!(!g.revisit_pause);
        let Parsed::Get(g) =
            parse("get quic --addr 1.2.3.4:1 --ca c --bytes 1 --revisit --revisit-pause").unwrap()
        else {
            panic!()
        };
        assert!(g.revisit_pause);
        let e = |s: &str| parse(s).unwrap_err();
        assert!(
            e("get quic --addr 1.2.3.4:1 --ca c --bytes 1 --revisit-pause").contains("--revisit")
        );
        assert!(
            e("get tcp --addr 1.2.3.4:1 --bytes 1 --revisit").starts_with("--revisit: QUIC only")
        );
        assert!(
            e("get quic --addr 1.2.3.4:1 --ca c --bytes 1 --quic-careful-resume on")
                .starts_with("--quic-careful-resume: satbulk serve's")
        );
        let Parsed::Serve(s) = parse(
            "serve --addr 1.2.3.4 --cert c --key k --quic-careful-resume on --careful-resume-log /l",
        )
        .unwrap() else {
            panic!()
        };
        assert!(s.quic.careful_resume);
        assert_eq!(s.careful_resume_log, Some(PathBuf::from("/l")));
        assert_eq!(
            e("serve --addr 1.2.3.4 --cert c --key k --careful-resume-log /l"),
            "--careful-resume-log: only with --quic-careful-resume on"
        );
    }

    #[test]
    fn get_tcp_by_duration() {
        let Parsed::Get(g) =
            parse("get tcp --addr 198.18.3.2:5201 --duration 2000s --timeout 5").unwrap()
        else {
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
        let e = |s: &str| parse(s).unwrap_err();
        assert!(e("get udp --addr 1.2.3.4:1 --bytes 1").contains("quic or tcp"));
        assert!(e("get tcp --addr 1.2.3.4:1").contains("--bytes N or --duration S"));
        assert!(e("get tcp --addr 1.2.3.4:1 --bytes 1 --duration 1").contains("not both"));
        assert!(e("get quic --addr 1.2.3.4:1 --bytes 1").contains("--ca"));
        assert!(e("get tcp --addr 1.2.3.4 --bytes 1").contains("IP:PORT"));
        assert!(e("get tcp --addr 1.2.3.4:1 --bytes 1 --bin-ms 0").contains("at least"));
        assert!(e("get tcp --addr 1.2.3.4:1 --bytes 1.2.3").starts_with("--bytes: expected a size"));
        assert!(e("get").contains("is required"));
    }

    #[test]
    fn sizes() {
        let s = parse_size;
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
        let d = parse_duration;
        assert_eq!(d("10"), Ok(Duration::from_secs(10)));
        assert_eq!(d("2.5s"), Ok(Duration::from_millis(2500)));
        assert_eq!(d("500ms"), Ok(Duration::from_millis(500)));
        assert!(d("0").is_err());
        assert!(d("-1").is_err());
        assert!(d("soon").is_err());
    }

    #[test]
    fn help_and_version() {
        assert!(parse("--version")
            .unwrap_err()
            .starts_with("printed satbulk "));
        let help = parse("get --help").unwrap_err();
        assert!(
            help.contains("--quic-initial-window") && help.contains("--bin-ms"),
            "{help}"
        );
        assert!(parse("")
            .unwrap_err()
            .starts_with("missing subcommand (serve or get)"));
    }
}
