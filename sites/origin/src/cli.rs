//! Command-line parsing, with no I/O: arguments in, a `Command` or a
//! one-line error out.

use std::net::IpAddr;
use std::path::PathBuf;

use crate::priority::Policy;
use crate::quic::QuicOptions;

/// The server address the testbed gives the origin (`gen-cert --ip` alone).
pub const TESTBED_SERVER_IP: &str = "198.18.3.2";

pub const USAGE: &str = "\
usage:
  origin serve --root DIR --addr IP --cert FILE --key FILE
               [--http-port 80] [--https-port 443] [--log FILE]
               [--quic-cc cubic|newreno|bbr] [--quic-initial-window PACKETS]
               [--quic-initial-mtu BYTES] [--quic-ack-frequency]
               [--quic-ack-eliciting-threshold N] [--quic-max-ack-delay-ms MS]
               [--bdp-bytes BYTES] [--idle-timeout-ms MS]
               [--h3-priorities rfc9218|incremental-last|off]
  origin gen-cert --name HOST[,HOST2…] [--ip [IP[,IP2…]]] --out DIR
  origin --help | --version

serve: HTTP/1.1 on IP:http-port/tcp, HTTP/1.1 and HTTP/2 over TLS on
IP:https-port/tcp (ALPN h2, http/1.1), HTTP/3 on IP:https-port/udp; prints
`ready` once all three listen; exits 0 on SIGTERM or SIGINT, 2 on an error.
HTTP/3 responses are sent in the order the requests' RFC 9218 priorities
ask for (--h3-priorities: rfc9218, the default; incremental-last, every
incremental response after every other; off, all round-robin).
gen-cert: writes DIR/cert.pem, DIR/key.pem (ECDSA P-256) and DIR/spki.txt
(base64 SHA-256 of the SubjectPublicKeyInfo, for Chromium's
--ignore-certificate-errors-spki-list). --ip alone adds 198.18.3.2.
";

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    Help,
    Version,
    GenCert(GenCertArgs),
    Serve(ServeArgs),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GenCertArgs {
    /// DNS names (names that are IP addresses become IP SANs).
    pub names: Vec<String>,
    pub ips: Vec<IpAddr>,
    pub out: PathBuf,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServeArgs {
    pub root: PathBuf,
    pub addr: IpAddr,
    pub http_port: u16,
    pub https_port: u16,
    pub cert: PathBuf,
    pub key: PathBuf,
    pub log: Option<PathBuf>,
    pub quic: QuicOptions,
    /// how HTTP/3 responses are ordered (`--h3-priorities`)
    pub h3_priorities: Policy,
}

/// Splits `--flag=value` and `--flag value`; the workspace's other tools
/// (satbulk) parse their command lines with it too.
pub struct Args {
    items: Vec<String>,
    pos: usize,
}

impl Args {
    pub fn new(items: &[String]) -> Args {
        let mut out = Vec::new();
        for a in items {
            match a.split_once('=') {
                Some((f, v)) if f.starts_with("--") => {
                    out.push(f.to_string());
                    out.push(v.to_string());
                }
                _ => out.push(a.clone()),
            }
        }
        Args { items: out, pos: 0 }
    }

    pub fn next(&mut self) -> Option<String> {
        let a = self.items.get(self.pos).cloned();
        self.pos += 1;
        a
    }

    pub fn value(&mut self, flag: &str) -> Result<String, String> {
        match self.items.get(self.pos) {
            Some(v) if !v.starts_with("--") => {
                self.pos += 1;
                Ok(v.clone())
            }
            _ => Err(format!("{flag}: needs a value")),
        }
    }

    /// A value if the next item is not a flag.
    pub fn optional_value(&mut self) -> Option<String> {
        match self.items.get(self.pos) {
            Some(v) if !v.starts_with("--") => {
                self.pos += 1;
                Some(v.clone())
            }
            _ => None,
        }
    }
}

pub fn number<T: std::str::FromStr>(flag: &str, v: &str) -> Result<T, String> {
    v.parse()
        .map_err(|_| format!("{flag}: not a valid number: '{v}'"))
}

fn ip(flag: &str, v: &str) -> Result<IpAddr, String> {
    v.parse()
        .map_err(|_| format!("{flag}: not an IP address: '{v}'"))
}

fn list(v: &str) -> impl Iterator<Item = &str> {
    v.split(',').map(str::trim).filter(|s| !s.is_empty())
}

pub fn parse(argv: &[String]) -> Result<Command, String> {
    let Some(first) = argv.first() else {
        return Err("missing subcommand (serve or gen-cert); see origin --help".into());
    };
    let rest = &argv[1..];
    match first.as_str() {
        "-h" | "--help" | "help" => Ok(Command::Help),
        "-V" | "--version" => Ok(Command::Version),
        "gen-cert" => parse_gen_cert(rest).map(Command::GenCert),
        "serve" => parse_serve(rest).map(Command::Serve),
        other => Err(format!(
            "unknown subcommand '{other}' (serve or gen-cert); see origin --help"
        )),
    }
}

fn parse_gen_cert(argv: &[String]) -> Result<GenCertArgs, String> {
    let mut a = Args::new(argv);
    let mut names = Vec::new();
    let mut ips = Vec::new();
    let mut out = None;
    while let Some(flag) = a.next() {
        match flag.as_str() {
            "--name" => names.extend(list(&a.value("--name")?).map(String::from)),
            "--ip" => match a.optional_value() {
                Some(v) => {
                    for s in list(&v) {
                        ips.push(ip("--ip", s)?);
                    }
                }
                None => ips.push(TESTBED_SERVER_IP.parse().unwrap()),
            },
            "--out" => out = Some(PathBuf::from(a.value("--out")?)),
            other => return Err(format!("gen-cert: unknown argument '{other}'")),
        }
    }
    if names.is_empty() && ips.is_empty() {
        return Err("gen-cert: --name is required".into());
    }
    let out = out.ok_or("gen-cert: --out is required")?;
    for n in &names {
        if n.parse::<IpAddr>().is_err() && !valid_dns_name(n) {
            return Err(format!("--name: not a valid host name: '{n}'"));
        }
    }
    Ok(GenCertArgs { names, ips, out })
}

fn valid_dns_name(n: &str) -> bool {
    !n.is_empty()
        && n.len() <= 253
        && n.split('.').all(|l| {
            let l = l.strip_prefix("*").unwrap_or(l);
            l.len() <= 63 && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        })
}

/// `--quic-cc` → `cc`; `--bdp-bytes` and `--idle-timeout-ms` keep their names.
fn quic_key(flag: &str) -> Option<&str> {
    let key = flag.strip_prefix("--quic-").or_else(|| match flag {
        "--bdp-bytes" | "--idle-timeout-ms" => flag.strip_prefix("--"),
        _ => None,
    })?;
    QuicOptions::KEYS.contains(&key).then_some(key)
}

fn parse_serve(argv: &[String]) -> Result<ServeArgs, String> {
    let mut a = Args::new(argv);
    let (mut root, mut addr, mut cert, mut key, mut log) = (None, None, None, None, None);
    let (mut http_port, mut https_port) = (80u16, 443u16);
    let mut q = QuicOptions::default();
    let mut h3_priorities = Policy::default();
    while let Some(flag) = a.next() {
        let f = flag.as_str();
        match f {
            "--root" => root = Some(PathBuf::from(a.value(f)?)),
            "--addr" => addr = Some(ip(f, &a.value(f)?)?),
            "--http-port" => http_port = number(f, &a.value(f)?)?,
            "--https-port" => https_port = number(f, &a.value(f)?)?,
            "--cert" => cert = Some(PathBuf::from(a.value(f)?)),
            "--key" => key = Some(PathBuf::from(a.value(f)?)),
            "--log" => log = Some(PathBuf::from(a.value(f)?)),
            "--h3-priorities" => {
                let v = a.value(f)?;
                h3_priorities = Policy::parse(&v).ok_or_else(|| {
                    format!("{f}: expected rfc9218, incremental-last or off, got '{v}'")
                })?;
            }
            _ if quic_key(f).is_some() => {
                let key = quic_key(f).unwrap();
                let v = if QuicOptions::takes_value(key) { Some(a.value(f)?) } else { None };
                q.set(key, v.as_deref(), f)?;
            }
            other => return Err(format!("serve: unknown argument '{other}'")),
        }
    }
    Ok(ServeArgs {
        root: root.ok_or("serve: --root is required")?,
        addr: addr.ok_or("serve: --addr is required")?,
        http_port,
        https_port,
        cert: cert.ok_or("serve: --cert is required")?,
        key: key.ok_or("serve: --key is required")?,
        log,
        quic: q,
        h3_priorities,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quic::Cc;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn serve_with_defaults() {
        let c = parse(&args(
            "serve --root /srv --addr 198.18.3.2 --cert c.pem --key k.pem",
        ))
        .unwrap();
        let Command::Serve(s) = c else { panic!() };
        assert_eq!(s.root, PathBuf::from("/srv"));
        assert_eq!(s.addr.to_string(), "198.18.3.2");
        assert_eq!((s.http_port, s.https_port), (80, 443));
        assert_eq!(s.log, None);
        assert_eq!(s.quic, QuicOptions::default());
        assert_eq!(s.h3_priorities, Policy::Rfc9218);
    }

    #[test]
    fn serve_with_every_flag() {
        let c = parse(&args(
            "serve --root=/srv --addr 127.0.0.1 --http-port 8080 --https-port=8443 --cert c --key k \
             --log /tmp/l --quic-cc bbr --quic-initial-window 32 --quic-initial-mtu 1400 \
             --quic-ack-eliciting-threshold 9 --quic-max-ack-delay-ms 40 --bdp-bytes 1000000 \
             --idle-timeout-ms 5000 --h3-priorities=incremental-last",
        ))
        .unwrap();
        let Command::Serve(s) = c else { panic!() };
        assert_eq!((s.http_port, s.https_port), (8080, 8443));
        assert_eq!(s.h3_priorities, Policy::IncrementalLast);
        assert_eq!(s.log, Some(PathBuf::from("/tmp/l")));
        let q = s.quic;
        assert_eq!(q.cc, Cc::Bbr);
        assert_eq!(q.initial_window_packets, 32);
        assert_eq!(q.initial_mtu, 1400);
        assert!(q.ack_frequency);
        assert_eq!(q.ack_eliciting_threshold, Some(9));
        assert_eq!(q.max_ack_delay_ms, Some(40));
        assert_eq!(q.bdp_bytes, 1_000_000);
        assert_eq!(q.idle_timeout_ms, 5000);
    }

    #[test]
    fn serve_errors_name_the_flag() {
        let base = "serve --root /srv --addr 127.0.0.1 --cert c --key k";
        let err = |extra: &str| parse(&args(&format!("{base} {extra}"))).unwrap_err();
        assert!(err("--quic-cc vegas").starts_with("--quic-cc:"));
        assert!(err("--http-port 70000").starts_with("--http-port:"));
        assert!(err("--bdp-bytes").starts_with("--bdp-bytes: needs a value"));
        assert_eq!(
            err("--h3-priorities strict"),
            "--h3-priorities: expected rfc9218, incremental-last or off, got 'strict'"
        );
        assert!(err("--frobnicate").contains("unknown argument '--frobnicate'"));
        assert!(parse(&args("serve --root /srv"))
            .unwrap_err()
            .contains("--addr is required"));
        assert!(
            parse(&args("serve --root /srv --addr nope --cert c --key k"))
                .unwrap_err()
                .starts_with("--addr: not an IP address")
        );
    }

    #[test]
    fn gen_cert_names_and_ips() {
        let c = parse(&args(
            "gen-cert --name origin.test,www.origin.test --ip --out /tmp/x",
        ))
        .unwrap();
        assert_eq!(
            c,
            Command::GenCert(GenCertArgs {
                names: vec!["origin.test".into(), "www.origin.test".into()],
                ips: vec!["198.18.3.2".parse().unwrap()],
                out: PathBuf::from("/tmp/x"),
            })
        );
        let Command::GenCert(g) = parse(&args(
            "gen-cert --name localhost --ip 127.0.0.1,::1 --out d",
        ))
        .unwrap() else {
            panic!()
        };
        assert_eq!(g.ips.len(), 2);
        let Command::GenCert(g) = parse(&args("gen-cert --name a.test --out d")).unwrap() else {
            panic!()
        };
        assert!(g.ips.is_empty());
        assert!(parse(&args("gen-cert --out d"))
            .unwrap_err()
            .contains("--name is required"));
        assert!(parse(&args("gen-cert --name a.test"))
            .unwrap_err()
            .contains("--out is required"));
        assert!(parse(&args("gen-cert --name bad_name! --out d"))
            .unwrap_err()
            .starts_with("--name:"));
    }

    #[test]
    fn help_version_and_unknown() {
        assert_eq!(parse(&args("--help")).unwrap(), Command::Help);
        assert_eq!(parse(&args("--version")).unwrap(), Command::Version);
        assert!(parse(&args("frob")).is_err());
        assert!(parse(&[]).is_err());
    }
}
