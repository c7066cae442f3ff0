//! Command-line parsing, with no I/O: arguments in, a `Config` or a
//! one-line error out.

use std::net::SocketAddr;
use std::path::PathBuf;

use satbench_origin::quic::{Cc, QuicOptions};

pub const USAGE: &str = "\
usage:
  quic-pep --listen IP:PORT --cert FILE --key FILE
           --next-hop IP:PORT --next-hop-name NAME --next-hop-ca FILE
           [--role st|gw] [--h3] [--alpn LIST]
           [--accept-side KEY[=VAL],…] [--connect-side KEY[=VAL],…]
           [--qlog-dir DIR] [--log FILE] [--stats FILE] [--label NAME]
           [--max-connections N] [--max-conn-memory BYTES] [--threads N]
  quic-pep --help | --version

A QUIC PEP: accepts QUIC connections on --listen (UDP, that address only)
and relays each over its own QUIC connection to --next-hop, the only place
it connects to. Every stream is relayed both ways with the same stream ID on
both sides; FIN, RESET_STREAM, STOP_SENDING and CONNECTION_CLOSE cross with
their error codes. Run one in the terminal (st) and one in the gateway (gw).

  --cert, --key      PEM certificate chain and key presented to clients
  --next-hop-ca      PEM certificate of the next hop: exactly that certificate
                     is trusted (no system trust store); its name must match
                     --next-hop-name
  --role st|gw       which side is the satellite hop (st: the connect side,
                     gw: the accept side); it starts from the PEP setting
                     cc=newreno,initial-window=100. Also the default --label
  --h3               complete the next hop's handshake first, then accept the
                     client with the ALPN the next hop chose and the next
                     hop's stream limits (needed for HTTP/3). Default: both
                     handshakes run in parallel
  --alpn LIST        ALPN offered (default h3); in --h3 mode offered to the
                     next hop, else accepted from clients
  --accept-side, --connect-side
                     transport of the client side / next-hop side, comma-
                     separated: cc=cubic|newreno|bbr, initial-window=PACKETS,
                     initial-mtu=BYTES, ack-frequency, ack-eliciting-threshold=N,
                     max-ack-delay-ms=MS, bdp-bytes=BYTES (flow-control windows
                     are 2 x BDP), idle-timeout-ms=MS; repeatable
  --qlog-dir DIR     one qlog (JSON-SEQ) per connection and side
  --log FILE         one line per connection (default stderr)
  --stats FILE       counters as JSON, written on SIGUSR1 and at exit
  --max-connections  client connections relayed at once (default 256);
                     more are refused with a log line
  --max-conn-memory  bytes one relayed connection may buffer (default
                     268435456); windows shrink to fit, with a log line
  --threads N        worker threads (default: CPUs, at most 4)

Prints `ready` once listening; exits 0 on SIGTERM or SIGINT, 2 on an error.
";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    St,
    Gw,
}

impl Role {
    pub fn name(self) -> &'static str {
        match self {
            Role::St => "st",
            Role::Gw => "gw",
        }
    }
}

/// Handshake modes (Kosek et al.).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Accept the client at once; the next hop's handshake runs alongside.
    Parallel,
    /// Next hop first; the client gets its ALPN and stream limits.
    H3,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    pub listen: SocketAddr,
    pub cert: PathBuf,
    pub key: PathBuf,
    pub next_hop: SocketAddr,
    pub next_hop_name: String,
    pub next_hop_ca: PathBuf,
    pub role: Option<Role>,
    pub label: String,
    pub mode: Mode,
    pub alpn: Vec<Vec<u8>>,
    pub accept: QuicOptions,
    pub connect: QuicOptions,
    pub qlog_dir: Option<PathBuf>,
    pub log: Option<PathBuf>,
    pub stats: Option<PathBuf>,
    pub max_connections: usize,
    pub max_conn_memory: u64,
    pub threads: Option<usize>,
}

pub const DEFAULT_MAX_CONNECTIONS: usize = 256;
pub const DEFAULT_MAX_CONN_MEMORY: u64 = 256 << 20;

#[derive(Debug, PartialEq, Eq)]
pub enum Command {
    Help,
    Version,
    Run(Box<Config>),
}

/// The paper's PEP setting for the satellite hop (Kosek et al.).
pub fn satellite_default() -> QuicOptions {
    QuicOptions {
        cc: Cc::NewReno,
        initial_window_packets: 100,
        ..QuicOptions::default()
    }
}

/// Applies `cc=newreno,initial-window=100,ack-frequency` to `opts`.
pub fn apply_side(opts: &mut QuicOptions, list: &str, flag: &str) -> Result<(), String> {
    for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (key, value) = match item.split_once('=') {
            Some((k, v)) => (k.trim(), Some(v.trim())),
            None => (item, None),
        };
        let what = format!("{flag} {key}");
        if !QuicOptions::KEYS.contains(&key) {
            return Err(format!(
                "{flag}: unknown transport option '{key}' (one of {})",
                QuicOptions::KEYS.join(", ")
            ));
        }
        if !QuicOptions::takes_value(key) && value.is_some() {
            return Err(format!("{what}: takes no value"));
        }
        opts.set(key, value, &what)?;
    }
    Ok(())
}

fn socket_addr(flag: &str, v: &str) -> Result<SocketAddr, String> {
    v.parse()
        .map_err(|_| format!("{flag}: expected IP:PORT, got '{v}'"))
}

fn need<T>(v: Option<T>, flag: &str) -> Result<T, String> {
    v.ok_or_else(|| format!("{flag} is required; see quic-pep --help"))
}

fn number<T: std::str::FromStr>(flag: &str, v: &str) -> Result<T, String> {
    v.parse()
        .map_err(|_| format!("{flag}: expected a whole number, got '{v}'"))
}

pub fn parse(argv: &[String]) -> Result<Command, String> {
    // --flag=value is --flag value
    let mut items = Vec::new();
    for a in argv {
        match a.split_once('=') {
            Some((f, v)) if f.starts_with("--") => {
                items.push(f.to_string());
                items.push(v.to_string());
            }
            _ => items.push(a.clone()),
        }
    }
    let mut it = items.into_iter().peekable();
    let value =
        |flag: &str, it: &mut std::iter::Peekable<std::vec::IntoIter<String>>| match it.peek() {
            Some(v) if !v.starts_with("--") => Ok(it.next().unwrap()),
            _ => Err(format!("{flag}: needs a value")),
        };
    let (mut listen, mut cert, mut key, mut next_hop, mut next_hop_name, mut next_hop_ca) =
        (None, None, None, None, None, None);
    let (mut role, mut label, mut qlog_dir, mut log, mut stats, mut threads) =
        (None, None, None, None, None, None);
    let mut mode = Mode::Parallel;
    let mut alpn = vec![b"h3".to_vec()];
    let (mut accept_lists, mut connect_lists) = (Vec::new(), Vec::new());
    let mut max_connections = DEFAULT_MAX_CONNECTIONS;
    let mut max_conn_memory = DEFAULT_MAX_CONN_MEMORY;
    while let Some(flag) = it.next() {
        let f = flag.as_str();
        match f {
            "-h" | "--help" | "help" => return Ok(Command::Help),
            "-V" | "--version" => return Ok(Command::Version),
            "--listen" => listen = Some(socket_addr(f, &value(f, &mut it)?)?),
            "--cert" => cert = Some(PathBuf::from(value(f, &mut it)?)),
            "--key" => key = Some(PathBuf::from(value(f, &mut it)?)),
            "--next-hop" => next_hop = Some(socket_addr(f, &value(f, &mut it)?)?),
            "--next-hop-name" => {
                let v = value(f, &mut it)?;
                rustls_pki_types::ServerName::try_from(v.as_str())
                    .map_err(|_| format!("{f}: not a host name or IP address: '{v}'"))?;
                next_hop_name = Some(v);
            }
            "--next-hop-ca" => next_hop_ca = Some(PathBuf::from(value(f, &mut it)?)),
            "--role" => {
                role = Some(match value(f, &mut it)?.as_str() {
                    "st" => Role::St,
                    "gw" => Role::Gw,
                    other => return Err(format!("{f}: expected st or gw, got '{other}'")),
                })
            }
            "--label" => {
                let v = value(f, &mut it)?;
                if v.is_empty()
                    || !v
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
                {
                    return Err(format!("{f}: letters, digits, - and _ only, got '{v}'"));
                }
                label = Some(v);
            }
            "--h3" => mode = Mode::H3,
            "--alpn" => {
                let v = value(f, &mut it)?;
                alpn = v
                    .split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(|s| s.as_bytes().to_vec())
                    .collect();
                if alpn.is_empty() || alpn.iter().any(|p| p.len() > 255) {
                    return Err(format!(
                        "{f}: expected a comma-separated list of protocol names, got '{v}'"
                    ));
                }
            }
            "--accept-side" => accept_lists.push(value(f, &mut it)?),
            "--connect-side" => connect_lists.push(value(f, &mut it)?),
            "--qlog-dir" => qlog_dir = Some(PathBuf::from(value(f, &mut it)?)),
            "--log" => log = Some(PathBuf::from(value(f, &mut it)?)),
            "--stats" => stats = Some(PathBuf::from(value(f, &mut it)?)),
            "--max-connections" => {
                max_connections = number(f, &value(f, &mut it)?)?;
                if max_connections == 0 {
                    return Err(format!("{f}: at least 1"));
                }
            }
            "--max-conn-memory" => max_conn_memory = number(f, &value(f, &mut it)?)?,
            "--threads" => {
                let n: usize = number(f, &value(f, &mut it)?)?;
                if !(1..=64).contains(&n) {
                    return Err(format!("{f}: between 1 and 64"));
                }
                threads = Some(n);
            }
            other => return Err(format!("unknown argument '{other}'; see quic-pep --help")),
        }
    }
    let (mut accept, mut connect) = (QuicOptions::default(), QuicOptions::default());
    match role {
        Some(Role::St) => connect = satellite_default(),
        Some(Role::Gw) => accept = satellite_default(),
        None => {}
    }
    for l in &accept_lists {
        apply_side(&mut accept, l, "--accept-side")?;
    }
    for l in &connect_lists {
        apply_side(&mut connect, l, "--connect-side")?;
    }
    let listen: SocketAddr = need(listen, "--listen")?;
    let next_hop: SocketAddr = need(next_hop, "--next-hop")?;
    if listen == next_hop {
        return Err(format!(
            "--next-hop {next_hop}: the proxy's own --listen address"
        ));
    }
    Ok(Command::Run(Box::new(Config {
        listen,
        cert: need(cert, "--cert")?,
        key: need(key, "--key")?,
        next_hop,
        next_hop_name: need(next_hop_name, "--next-hop-name")?,
        next_hop_ca: need(next_hop_ca, "--next-hop-ca")?,
        label: label.unwrap_or_else(|| role.map_or("quic-pep", Role::name).to_string()),
        role,
        mode,
        alpn,
        accept,
        connect,
        qlog_dir,
        log,
        stats,
        max_connections,
        max_conn_memory,
        threads,
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    const BASE: &str =
        "--listen 198.18.1.1:443 --cert c.pem --key k.pem --next-hop 198.18.2.2:443 \
                        --next-hop-name pep-gw.satbench.test --next-hop-ca gw.pem";

    fn config(extra: &str) -> Config {
        match parse(&args(&format!("{BASE} {extra}"))).unwrap() {
            Command::Run(c) => *c,
            other => panic!("{other:?}"),
        }
    }

    fn error(extra: &str) -> String {
        parse(&args(&format!("{BASE} {extra}"))).unwrap_err()
    }

    #[test]
    fn defaults() {
        let c = config("");
        assert_eq!(c.listen.to_string(), "198.18.1.1:443");
        assert_eq!(c.next_hop.to_string(), "198.18.2.2:443");
        assert_eq!(c.mode, Mode::Parallel);
        assert_eq!(c.alpn, vec![b"h3".to_vec()]);
        assert_eq!(c.accept, QuicOptions::default());
        assert_eq!(c.connect, QuicOptions::default());
        assert_eq!(c.label, "quic-pep");
        assert_eq!(c.max_connections, 256);
        assert_eq!(c.max_conn_memory, 256 << 20);
        assert_eq!(
            (c.qlog_dir, c.log, c.stats, c.threads),
            (None, None, None, None)
        );
    }

    #[test]
    fn the_role_puts_the_pep_setting_on_the_satellite_hop() {
        let st = config("--role st");
        assert_eq!(st.connect.cc, Cc::NewReno);
        assert_eq!(st.connect.initial_window_packets, 100);
        assert_eq!(st.accept, QuicOptions::default(), "client hop unchanged");
        assert_eq!(st.label, "st");
        let gw = config("--role gw --label gw-1");
        assert_eq!(gw.accept.cc, Cc::NewReno);
        assert_eq!(gw.connect, QuicOptions::default(), "server hop unchanged");
        assert_eq!(gw.label, "gw-1");
    }

    #[test]
    fn per_side_transport() {
        let c = config(
            "--role st --connect-side cc=bbr,initial-window=32 --connect-side bdp-bytes=1250000,ack-frequency \
             --accept-side=cc=cubic,max-ack-delay-ms=5,idle-timeout-ms=5000",
        );
        assert_eq!(c.connect.cc, Cc::Bbr);
        assert_eq!(c.connect.initial_window_packets, 32);
        assert_eq!(c.connect.bdp_bytes, 1_250_000);
        assert!(c.connect.ack_frequency);
        assert_eq!(c.accept.max_ack_delay_ms, Some(5));
        assert_eq!(c.accept.idle_timeout_ms, 5000);
    }

    #[test]
    fn modes_alpn_caps_and_files() {
        let c = config(
            "--h3 --alpn h3,satbulk --qlog-dir /q --log /l --stats /s --max-connections 3 \
             --max-conn-memory 1000000 --threads 2",
        );
        assert_eq!(c.mode, Mode::H3);
        assert_eq!(c.alpn, vec![b"h3".to_vec(), b"satbulk".to_vec()]);
        assert_eq!(c.qlog_dir, Some(PathBuf::from("/q")));
        assert_eq!(c.log, Some(PathBuf::from("/l")));
        assert_eq!(c.stats, Some(PathBuf::from("/s")));
        assert_eq!(
            (c.max_connections, c.max_conn_memory, c.threads),
            (3, 1_000_000, Some(2))
        );
    }

    #[test]
    fn errors_name_the_flag() {
        assert!(error("--connect-side cc=vegas").starts_with("--connect-side cc: expected cubic"));
        assert!(error("--accept-side frob=1")
            .starts_with("--accept-side: unknown transport option 'frob'"));
        assert!(error("--accept-side ack-frequency=1").contains("takes no value"));
        assert!(error("--connect-side initial-window")
            .starts_with("--connect-side initial-window: needs a value"));
        assert!(error("--role satellite").starts_with("--role: expected st or gw"));
        assert!(error("--max-connections 0").starts_with("--max-connections: at least 1"));
        assert!(error("--max-conn-memory lots")
            .starts_with("--max-conn-memory: expected a whole number"));
        assert!(error("--threads 0").starts_with("--threads:"));
        assert!(error("--label a/b").starts_with("--label:"));
        assert!(error("--frob").contains("unknown argument '--frob'"));
        assert!(error("--log").starts_with("--log: needs a value"));
        let e = parse(&args("--listen 1.2.3.4")).unwrap_err();
        assert!(e.starts_with("--listen: expected IP:PORT"), "{e}");
        let e = parse(&args("--listen 127.0.0.1:4433")).unwrap_err();
        assert!(e.contains("--next-hop is required"), "{e}");
        let e = parse(&args(
            "--listen 127.0.0.1:1 --cert c --key k --next-hop 127.0.0.1:1 --next-hop-name a --next-hop-ca x",
        ))
        .unwrap_err();
        assert!(e.contains("own --listen address"), "{e}");
        let e = parse(&args("--next-hop-name bad_name!")).unwrap_err();
        assert!(e.starts_with("--next-hop-name:"), "{e}");
        let e = parse(&args(&BASE.replace(" --next-hop-ca gw.pem", ""))).unwrap_err();
        assert!(e.contains("--next-hop-ca is required"), "{e}");
    }

    #[test]
    fn help_and_version() {
        assert_eq!(parse(&args("--help")).unwrap(), Command::Help);
        assert_eq!(parse(&args("--version")).unwrap(), Command::Version);
        for key in QuicOptions::KEYS {
            assert!(USAGE.contains(key), "--help lists {key}");
        }
    }
}
