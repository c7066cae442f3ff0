//! Command-line parsing, with no I/O: arguments in, `Options` or a
//! one-line error out.

use std::net::SocketAddrV4;
use std::path::PathBuf;
use std::time::Duration;

use crate::net::Ipv4Net;

pub const USAGE: &str = "\
usage:
  tcp-pep [--listen IP:PORT] [--name NAME] [--stats FILE]
          [--accept-cc ALG] [--accept-sndbuf BYTES] [--accept-rcvbuf BYTES]
          [--connect-cc ALG] [--connect-sndbuf BYTES] [--connect-rcvbuf BYTES]
          [--allow-dst CIDR[,CIDR…]] [--max-conns N] [--idle-timeout-ms MS]
          [--connect-timeout-ms MS] [--pipe-bytes BYTES] [--no-splice]
          [--no-transparent] [--threads N] [--quiet]
  tcp-pep --help | --version

A transparent split-TCP proxy. nftables TPROXY hands it connections; for
each it connects onward to the connection's original destination (the
accepted socket's local address) from this host's own address and relays
both directions with splice(2). `accept` is the side the connection came
from (towards the client), `connect` the onward side (towards the server).

  --listen IP:PORT          TPROXY listener (default 127.0.0.1:9480)
  --name NAME               label of log lines and stats (default tcp-pep)
  --stats FILE              JSON counters, written on SIGUSR1 and at exit
  --*-cc ALG                TCP congestion control of that side (reno,
                            cubic, bbr, … as the kernel offers; newreno = reno)
  --*-sndbuf/--*-rcvbuf B   fixed socket buffers of that side (turns off the
                            kernel's autotuning; default: autotuned)
  --allow-dst CIDRS         original destinations that may be relayed
                            (default 198.18.0.0/15; others are reset)
  --max-conns N             relayed connections at once (default 512); more
                            are reset, with a log line when the cap is hit
  --idle-timeout-ms MS      close a connection with no data either way for
                            this long (default 120000)
  --connect-timeout-ms MS   onward connection set-up limit (default 10000)
  --pipe-bytes B            splice pipe (or copy buffer) per direction
                            (default 262144): the proxy's own memory bound
  --no-splice               copy through user space instead of splice(2)
  --no-transparent          plain listener (no IP_TRANSPARENT), for tests
  --threads N               worker threads (default 1)
  --quiet                   no log line per connection

Prints `ready` once listening; exits 0 on SIGTERM or SIGINT (stats written),
2 on an error.
";

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

impl Default for Options {
    fn default() -> Options {
        Options {
            listen: "127.0.0.1:9480".parse().unwrap(),
            name: "tcp-pep".into(),
            stats: None,
            accept: SideOptions::default(),
            connect: SideOptions::default(),
            // The testbed's range: a stray rule cannot turn this into an open relay.
            allow_dst: vec!["198.18.0.0/15".parse().unwrap()],
            max_conns: 512,
            idle_timeout: Duration::from_secs(120),
            connect_timeout: Duration::from_secs(10),
            pipe_bytes: 256 * 1024,
            splice: true,
            transparent: true,
            threads: 1,
            quiet: false,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    Help,
    Version,
    Run(Box<Options>),
}

// A pipe holds at least one page; fs.pipe-max-size is 1 MiB by default.
const PIPE_MIN: usize = 4096;
const PIPE_MAX: usize = 1 << 20;
// The kernel doubles SO_*BUF values; keep them where that cannot overflow.
const BUF_MAX: u32 = 1 << 30;

/// Splits `--flag=value` and `--flag value`.
fn split_eq(argv: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for a in argv {
        match a.split_once('=') {
            Some((f, v)) if f.starts_with("--") => {
                out.push(f.to_string());
                out.push(v.to_string());
            }
            _ => out.push(a.clone()),
        }
    }
    out
}

fn number<T: std::str::FromStr>(flag: &str, v: &str) -> Result<T, String> {
    v.parse()
        .map_err(|_| format!("{flag}: not a valid number: '{v}'"))
}

fn in_range<T: PartialOrd + std::fmt::Display + Copy>(
    flag: &str,
    v: T,
    lo: T,
    hi: T,
) -> Result<T, String> {
    if v < lo || v > hi {
        return Err(format!("{flag}: {v} is out of range ({lo} to {hi})"));
    }
    Ok(v)
}

/// A congestion-control name as the kernel spells it (`newreno` is `reno`).
pub fn cc_name(flag: &str, v: &str) -> Result<String, String> {
    let v = v.trim().to_ascii_lowercase();
    if v.is_empty() || v.len() > 15 || !v.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(format!("{flag}: not a congestion control name: '{v}'"));
    }
    Ok(if v == "newreno" { "reno".into() } else { v })
}

pub fn parse(argv: &[String]) -> Result<Command, String> {
    let items = split_eq(argv);
    let mut it = items.iter();
    let mut o = Options::default();
    let mut allow_given = false;
    while let Some(flag) = it.next() {
        let f = flag.as_str();
        let mut value = || -> Result<String, String> {
            match it.next() {
                Some(v) if !v.starts_with("--") => Ok(v.clone()),
                _ => Err(format!("{f}: needs a value")),
            }
        };
        match f {
            "-h" | "--help" => return Ok(Command::Help),
            "-V" | "--version" => return Ok(Command::Version),
            "--listen" => {
                let v = value()?;
                o.listen = v
                    .parse()
                    .map_err(|_| format!("--listen: expected IPv4:PORT, got '{v}'"))?;
            }
            "--name" => o.name = value()?,
            "--stats" => o.stats = Some(PathBuf::from(value()?)),
            "--accept-cc" => o.accept.cc = Some(cc_name(f, &value()?)?),
            "--connect-cc" => o.connect.cc = Some(cc_name(f, &value()?)?),
            "--accept-sndbuf" => {
                o.accept.sndbuf = Some(in_range(f, number(f, &value()?)?, 4096, BUF_MAX)?)
            }
            "--accept-rcvbuf" => {
                o.accept.rcvbuf = Some(in_range(f, number(f, &value()?)?, 4096, BUF_MAX)?)
            }
            "--connect-sndbuf" => {
                o.connect.sndbuf = Some(in_range(f, number(f, &value()?)?, 4096, BUF_MAX)?)
            }
            "--connect-rcvbuf" => {
                o.connect.rcvbuf = Some(in_range(f, number(f, &value()?)?, 4096, BUF_MAX)?)
            }
            "--allow-dst" => {
                if !allow_given {
                    o.allow_dst.clear();
                    allow_given = true;
                }
                for s in value()?.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                    o.allow_dst
                        .push(s.parse().map_err(|e| format!("--allow-dst: {e}"))?);
                }
            }
            "--max-conns" => o.max_conns = in_range(f, number(f, &value()?)?, 1, 100_000)?,
            "--idle-timeout-ms" => {
                o.idle_timeout =
                    Duration::from_millis(in_range(f, number(f, &value()?)?, 1, 86_400_000)?)
            }
            "--connect-timeout-ms" => {
                o.connect_timeout =
                    Duration::from_millis(in_range(f, number(f, &value()?)?, 1, 600_000)?)
            }
            "--pipe-bytes" => {
                o.pipe_bytes = in_range(f, number(f, &value()?)?, PIPE_MIN, PIPE_MAX)?
            }
            "--no-splice" => o.splice = false,
            "--no-transparent" => o.transparent = false,
            "--threads" => o.threads = in_range(f, number(f, &value()?)?, 1, 64)?,
            "--quiet" => o.quiet = true,
            other => return Err(format!("unknown argument '{other}'; see tcp-pep --help")),
        }
    }
    if o.allow_dst.is_empty() {
        return Err("--allow-dst: needs at least one network".into());
    }
    if o.name.is_empty() || o.name.chars().any(char::is_whitespace) {
        return Err(format!("--name: expected one word, got '{}'", o.name));
    }
    Ok(Command::Run(Box::new(o)))
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

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    fn run(s: &str) -> Options {
        match parse(&args(s)).unwrap() {
            Command::Run(o) => *o,
            c => panic!("{c:?}"),
        }
    }

    #[test]
    fn defaults() {
        let o = run("");
        assert_eq!(o, Options::default());
        assert_eq!(o.listen.to_string(), "127.0.0.1:9480");
        assert_eq!(o.allow_dst.len(), 1);
        assert!(o.splice && o.transparent);
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
            ("--frobnicate", "unknown argument '--frobnicate'"),
        ] {
            let e = parse(&args(s)).unwrap_err();
            assert!(e.starts_with(want), "{s}: {e}");
            assert!(!e.contains('\n'));
        }
    }

    #[test]
    fn help_and_version() {
        assert_eq!(parse(&args("--help")).unwrap(), Command::Help);
        assert_eq!(parse(&args("-V")).unwrap(), Command::Version);
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
