//! The command line (clap): `origin serve` and `origin gen-cert`, turned
//! into plain settings with no I/O; errors are one line naming the flag.

use std::net::IpAddr;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use satbench_transport::cli::QuicArgs;
use satbench_transport::quic::QuicOptions;

use crate::cache::CachePolicy;
use crate::priority::Policy;
use crate::site::AltSvc;

/// The server address the testbed gives the origin (`gen-cert --ip` alone).
pub const TESTBED_SERVER_IP: &str = "198.18.3.2";

#[derive(Parser, Debug)]
#[command(
    name = "origin",
    version,
    about = "satbench's static origin: HTTP/1.1, HTTP/1.1 and HTTP/2 over TLS, HTTP/3",
    args_override_self = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Serve a site directory (--root) or a site archive (--archive): HTTP/1.1
    /// on IP:http-port/tcp, HTTP/1.1 and HTTP/2 over TLS on IP:https-port/tcp
    /// (ALPN h2, http/1.1), HTTP/3 on IP:https-port/udp, for each --addr
    #[command(
        after_help = "Prints `ready` once every listener listens; exits 0 on SIGTERM or SIGINT, 2 \
                      on an error. HTTP/3 responses are sent in the order the requests' RFC 9218 \
                      priorities ask for (see --h3-priorities). With --archive every host of the \
                      archive is served on every address, each with its own certificate for the \
                      key of --key (see sites/origin/README.md)."
    )]
    Serve(Box<ServeFlags>),
    /// Write DIR/cert.pem, DIR/key.pem (ECDSA P-256) and DIR/spki.txt (base64
    /// SHA-256 of the SubjectPublicKeyInfo, for Chromium's
    /// --ignore-certificate-errors-spki-list)
    GenCert(GenCertFlags),
}

#[derive(Args, Debug)]
pub struct ServeFlags {
    /// The site's directory
    #[arg(long, value_name = "DIR", required_unless_present = "archive")]
    root: Option<PathBuf>,
    /// A site archive (DIR/archive.json and its body files): every host it
    /// recorded, by SNI and Host
    #[arg(long, value_name = "DIR", conflicts_with_all = ["root", "cert"])]
    archive: Option<PathBuf>,
    /// An address the three listeners bind; repeatable, or comma-separated
    #[arg(long, value_name = "IP[,IP2…]", value_delimiter = ',', required = true)]
    addr: Vec<IpAddr>,
    #[arg(long, value_name = "PORT", default_value_t = 80)]
    http_port: u16,
    /// TCP (TLS) and UDP (QUIC)
    #[arg(long, value_name = "PORT", default_value_t = 443)]
    https_port: u16,
    /// PEM certificate chain (--root only: an archive's are made per host)
    #[arg(long, value_name = "FILE", required_unless_present = "archive")]
    cert: Option<PathBuf>,
    /// PEM private key (PKCS#8 with --archive: every host's certificate
    /// carries it)
    #[arg(long, value_name = "FILE")]
    key: PathBuf,
    /// The request log, appended (default stderr)
    #[arg(long, value_name = "FILE")]
    log: Option<PathBuf>,
    /// The connection log, appended: one JSON line per TLS or QUIC
    /// connection once its handshake is done (full or resumed, 0-RTT
    /// offered and accepted, requests that came in 0-RTT)
    #[arg(long, value_name = "FILE")]
    conn_log: Option<PathBuf>,
    /// Whether HTTP/3 accepts 0-RTT under its session tickets: on (what
    /// deployed HTTP/3 servers do) or off (a ticket still resumes, without
    /// early data). TLS over TCP resumes but takes no early data either way
    #[arg(long, value_name = "on|off", default_value = "on", value_parser = on_off,
          action = clap::ArgAction::Set)]
    zero_rtt: bool,
    /// HTTP/3 response order: rfc9218 (urgency, then request order, incremental
    /// ones round-robin), incremental-last (every incremental response after
    /// every other), off (all round-robin)
    #[arg(long, value_name = "POLICY", default_value = "rfc9218", value_parser = policy)]
    h3_priorities: Policy,
    /// Which responses advertise HTTP/3 (`alt-svc: h3=":PORT"`): all (as
    /// large deployments do; Chromium then treats the origin as able to
    /// prioritize) or tcp (only those over TCP)
    #[arg(long, value_name = "WHERE", default_value = "all", value_parser = alt_svc)]
    alt_svc: AltSvc,
    /// The Cache-Control of every successful response: none (no-store),
    /// revalidate (no-cache: kept, revalidated on every use), max-age=S,
    /// immutable (max-age=31536000, immutable); default: no-store for
    /// --root, the recorded headers for --archive. Every response has an
    /// ETag and a Last-Modified, and a conditional GET whose copy is
    /// current gets a 304
    #[arg(long, value_name = "POLICY", value_parser = cache_policy)]
    cache: Option<CachePolicy>,
    /// With --quic-careful-resume on: a JSON line per HTTP/3 connection
    /// that had a saved path (its phases and jump), appended
    #[arg(long, value_name = "FILE")]
    careful_resume_log: Option<PathBuf>,
    #[command(flatten)]
    quic: QuicArgs,
}

fn policy(v: &str) -> Result<Policy, String> {
    Policy::parse(v).ok_or_else(|| format!("expected rfc9218, incremental-last or off, got '{v}'"))
}

fn cache_policy(v: &str) -> Result<CachePolicy, String> {
    CachePolicy::parse(v).ok_or_else(|| {
        format!("expected none, revalidate, max-age=SECONDS or immutable, got '{v}'")
    })
}

fn on_off(v: &str) -> Result<bool, String> {
    match v {
        "on" => Ok(true),
        "off" => Ok(false),
        _ => Err(format!("expected on or off, got '{v}'")),
    }
}

fn alt_svc(v: &str) -> Result<AltSvc, String> {
    AltSvc::parse(v).ok_or_else(|| format!("expected all or tcp, got '{v}'"))
}

#[derive(Args, Debug)]
pub struct GenCertFlags {
    /// DNS names, comma-separated and repeatable (a name that is an IP address
    /// becomes an IP SAN)
    #[arg(long, value_name = "HOST[,HOST2…]", value_delimiter = ',')]
    name: Vec<String>,
    /// IP addresses, comma-separated and repeatable; alone, the testbed's
    /// server address (198.18.3.2)
    #[arg(long, value_name = "IP[,IP2…]", num_args = 0..=1, value_delimiter = ',',
          default_missing_value = TESTBED_SERVER_IP)]
    ip: Vec<IpAddr>,
    /// The directory to write (created)
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GenCertArgs {
    /// DNS names (names that are IP addresses become IP SANs).
    pub names: Vec<String>,
    pub ips: Vec<IpAddr>,
    pub out: PathBuf,
}

/// What is served.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// A site directory (`--root`) with its certificate chain (`--cert`).
    Root { root: PathBuf, cert: PathBuf },
    /// A site archive (`--archive`).
    Archive(PathBuf),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServeArgs {
    pub source: Source,
    /// Each address gets all three listeners; at least one, no repeats.
    pub addrs: Vec<IpAddr>,
    pub http_port: u16,
    pub https_port: u16,
    pub key: PathBuf,
    pub log: Option<PathBuf>,
    /// the connection log (`--conn-log`)
    pub conn_log: Option<PathBuf>,
    /// HTTP/3 takes 0-RTT (`--zero-rtt`)
    pub zero_rtt: bool,
    pub quic: QuicOptions,
    /// how HTTP/3 responses are ordered (`--h3-priorities`)
    pub h3_priorities: Policy,
    /// which responses carry Alt-Svc (`--alt-svc`)
    pub alt_svc: AltSvc,
    /// the Cache-Control policy (`--cache`); None: the content's own
    pub cache: Option<CachePolicy>,
    /// where Careful Resume logs (`--careful-resume-log`)
    pub careful_resume_log: Option<PathBuf>,
}

impl ServeFlags {
    pub fn settings(self) -> Result<ServeArgs, String> {
        let source = match (self.archive, self.root, self.cert) {
            (Some(dir), _, _) => Source::Archive(dir),
            (None, Some(root), Some(cert)) => Source::Root { root, cert },
            // clap requires both without --archive
            _ => return Err("--root and --cert are required without --archive".into()),
        };
        let addrs = self.addr;
        if let Some(a) = addrs
            .iter()
            .enumerate()
            .find_map(|(i, a)| addrs[..i].contains(a).then_some(a))
        {
            return Err(format!("--addr: {a} given twice"));
        }
        let quic = self.quic.options()?;
        if self.careful_resume_log.is_some() && !quic.careful_resume {
            return Err("--careful-resume-log: only with --quic-careful-resume on".into());
        }
        Ok(ServeArgs {
            source,
            addrs,
            http_port: self.http_port,
            https_port: self.https_port,
            key: self.key,
            log: self.log,
            conn_log: self.conn_log,
            zero_rtt: self.zero_rtt,
            quic,
            h3_priorities: self.h3_priorities,
            alt_svc: self.alt_svc,
            cache: self.cache,
            careful_resume_log: self.careful_resume_log,
        })
    }
}

impl GenCertFlags {
    pub fn settings(self) -> Result<GenCertArgs, String> {
        let names: Vec<String> = self
            .name
            .iter()
            .map(|n| n.trim().to_string())
            .filter(|n| !n.is_empty())
            .collect();
        if names.is_empty() && self.ip.is_empty() {
            return Err("gen-cert: --name is required".into());
        }
        if let Some(n) = names
            .iter()
            .find(|n| n.parse::<IpAddr>().is_err() && !valid_dns_name(n))
        {
            return Err(format!("--name: not a valid host name: '{n}'"));
        }
        Ok(GenCertArgs {
            names,
            ips: self.ip,
            out: self.out,
        })
    }
}

fn valid_dns_name(n: &str) -> bool {
    !n.is_empty()
        && n.len() <= 253
        && n.split('.').all(|l| {
            let l = l.strip_prefix("*").unwrap_or(l);
            l.len() <= 63 && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use satbench_transport::cli::{parse_from, Stop};
    use satbench_transport::quic::Cc;

    fn parse(s: &str) -> Result<Command, String> {
        match parse_from::<Cli, _, _>(std::iter::once("origin").chain(s.split_whitespace())) {
            Ok(c) => Ok(c.command),
            Err(Stop::Usage(line)) => Err(line),
            Err(Stop::Print(text)) => Err(format!("printed {text}")),
        }
    }

    fn serve(s: &str) -> Result<ServeArgs, String> {
        match parse(&format!("serve {s}"))? {
            Command::Serve(f) => f.settings(),
            other => panic!("{other:?}"),
        }
    }

    fn gen_cert(s: &str) -> Result<GenCertArgs, String> {
        match parse(&format!("gen-cert {s}"))? {
            Command::GenCert(f) => f.settings(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn serve_with_defaults() {
        let s = serve("--root /srv --addr 198.18.3.2 --cert c.pem --key k.pem").unwrap();
        assert_eq!(
            s.source,
            Source::Root {
                root: PathBuf::from("/srv"),
                cert: PathBuf::from("c.pem")
            }
        );
        assert_eq!(s.addrs, vec!["198.18.3.2".parse::<IpAddr>().unwrap()]);
        assert_eq!((s.http_port, s.https_port), (80, 443));
        assert_eq!(s.log, None);
        assert_eq!((s.conn_log, s.zero_rtt), (None, true));
        assert_eq!(s.quic, QuicOptions::default());
        assert_eq!(s.h3_priorities, Policy::Rfc9218);
        assert_eq!(s.alt_svc, AltSvc::All);
        assert_eq!(s.cache, None);
    }

    #[test]
    fn serve_with_every_flag() {
        let s = serve(
            "--root=/srv --addr 127.0.0.1 --http-port 8080 --https-port=8443 --cert c --key k \
             --log /tmp/l --quic-cc bbr --quic-initial-window 32 --quic-initial-mtu 1400 \
             --quic-ack-eliciting-threshold 9 --quic-max-ack-delay-ms 40 --bdp-bytes 1000000 \
             --idle-timeout-ms 5000 --h3-priorities=incremental-last --alt-svc tcp \
             --cache max-age=600 --conn-log /tmp/c --zero-rtt off \
             --quic-careful-resume on --careful-resume-log /tmp/cr",
        )
        .unwrap();
        assert_eq!(
            (s.conn_log, s.zero_rtt),
            (Some(PathBuf::from("/tmp/c")), false)
        );
        assert_eq!((s.http_port, s.https_port), (8080, 8443));
        assert_eq!(s.h3_priorities, Policy::IncrementalLast);
        assert_eq!(s.alt_svc, AltSvc::Tcp);
        assert_eq!(s.cache, Some(CachePolicy::MaxAge(600)));
        assert_eq!(s.log, Some(PathBuf::from("/tmp/l")));
        assert_eq!(s.careful_resume_log, Some(PathBuf::from("/tmp/cr")));
        assert!(s.quic.careful_resume);
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
    fn a_repeated_flag_takes_the_last_value() {
        let s =
            serve("--root /a --root /b --addr ::1 --cert c --key k --quic-cc bbr --quic-cc cubic");
        let s = s.unwrap();
        let Source::Root { root, .. } = s.source else {
            panic!("{:?}", s.source)
        };
        assert_eq!((root, s.quic.cc), (PathBuf::from("/b"), Cc::Cubic));
    }

    #[test]
    fn serve_an_archive_on_several_addresses() {
        let s = serve("--archive /a --addr 198.18.3.2 --addr 198.18.3.3,198.18.3.4 --key k.pem");
        let s = s.unwrap();
        assert_eq!(s.source, Source::Archive(PathBuf::from("/a")));
        let addrs: Vec<String> = s.addrs.iter().map(|a| a.to_string()).collect();
        assert_eq!(addrs, ["198.18.3.2", "198.18.3.3", "198.18.3.4"]);
        assert_eq!(s.key, PathBuf::from("k.pem"));
        let err = |a: &str| serve(a).unwrap_err();
        assert_eq!(
            err("--archive /a --root /r --addr ::1 --key k"),
            "--archive: not with --root"
        );
        assert_eq!(
            err("--archive /a --addr ::1 --cert c --key k"),
            "--archive: not with --cert"
        );
        assert_eq!(
            err("--archive /a --addr ::1,::2,::1 --key k"),
            "--addr: ::1 given twice"
        );
        assert!(err("--archive /a --key k").starts_with("--addr is required"));
        assert!(err("--addr ::1 --key k").starts_with("--root is required (so are --cert)"));
        assert!(err("--archive /a --addr ::1").starts_with("--key is required"));
    }

    #[test]
    fn serve_errors_name_the_flag() {
        let base = "--root /srv --addr 127.0.0.1 --cert c --key k";
        let err = |extra: &str| serve(&format!("{base} {extra}")).unwrap_err();
        assert!(err("--quic-cc vegas").starts_with("--quic-cc:"));
        assert!(err("--http-port 70000").starts_with("--http-port:"));
        assert!(err("--bdp-bytes").starts_with("--bdp-bytes: needs a value"));
        assert_eq!(
            err("--h3-priorities strict"),
            "--h3-priorities: expected rfc9218, incremental-last or off, got 'strict'"
        );
        assert_eq!(
            err("--alt-svc h3"),
            "--alt-svc: expected all or tcp, got 'h3'"
        );
        assert_eq!(
            err("--cache max-age=soon"),
            "--cache: expected none, revalidate, max-age=SECONDS or immutable, got 'max-age=soon'"
        );
        assert_eq!(
            err("--zero-rtt yes"),
            "--zero-rtt: expected on or off, got 'yes'"
        );
        assert!(err("--frobnicate").contains("unknown argument '--frobnicate'"));
        assert_eq!(
            err("--quic-careful-resume yes"),
            "--quic-careful-resume: expected off or on, got 'yes'"
        );
        assert_eq!(
            err("--careful-resume-log /tmp/cr"),
            "--careful-resume-log: only with --quic-careful-resume on"
        );
        assert!(serve("--root /srv")
            .unwrap_err()
            .contains("--addr is required"));
        assert!(serve("--root /srv --addr nope --cert c --key k")
            .unwrap_err()
            .starts_with("--addr: "));
    }

    #[test]
    fn gen_cert_names_and_ips() {
        assert_eq!(
            gen_cert("--name origin.test,www.origin.test --ip --out /tmp/x").unwrap(),
            GenCertArgs {
                names: vec!["origin.test".into(), "www.origin.test".into()],
                ips: vec!["198.18.3.2".parse().unwrap()],
                out: PathBuf::from("/tmp/x"),
            }
        );
        assert_eq!(
            gen_cert("--name localhost --ip 127.0.0.1,::1 --out d")
                .unwrap()
                .ips
                .len(),
            2
        );
        assert_eq!(
            gen_cert("--ip 127.0.0.1 --ip ::1 --out d")
                .unwrap()
                .ips
                .len(),
            2
        );
        assert!(gen_cert("--name a.test --out d").unwrap().ips.is_empty());
        assert!(gen_cert("--out d")
            .unwrap_err()
            .contains("--name is required"));
        assert!(gen_cert("--name a.test")
            .unwrap_err()
            .contains("--out is required"));
        assert!(gen_cert("--name bad_name! --out d")
            .unwrap_err()
            .starts_with("--name:"));
        assert!(gen_cert("--ip nope --out d")
            .unwrap_err()
            .starts_with("--ip:"));
    }

    #[test]
    fn help_version_and_unknown() {
        assert!(parse("--help").unwrap_err().starts_with("printed "));
        assert!(parse("--version")
            .unwrap_err()
            .starts_with("printed origin "));
        assert!(parse("frob")
            .unwrap_err()
            .contains("unknown subcommand 'frob'"));
        assert!(parse("").unwrap_err().contains("subcommand"));
        for s in ["frob", "", "serve --root"] {
            assert_eq!(parse(s).unwrap_err().lines().count(), 1, "{s}");
        }
    }
}
