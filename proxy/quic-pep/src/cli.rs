//! The command line (clap), turned into a `Config` with no I/O; errors are
//! one line naming the flag.

use std::net::{SocketAddr, SocketAddrV4};
use std::path::PathBuf;

use clap::{Parser, ValueEnum};
use satbench_transport::net::Ipv4Net;
use satbench_transport::quic::{Cc, QuicOptions};
use satbench_transport::quic_keys;

#[derive(Parser, Debug)]
#[command(
    name = "quic-pep",
    version,
    about = "A QUIC PEP: accepts QUIC connections on --listen (UDP, that address only) and \
             relays each over its own QUIC connection to --next-hop, the only place it \
             connects to; with --transparent (over the --tunnel), to each connection's own \
             destination",
    long_about = "A QUIC PEP: accepts QUIC connections on --listen (UDP, that address only) \
                  and relays each over its own QUIC connection to --next-hop, the only place \
                  it connects to. Every stream is relayed both ways with the same stream ID \
                  on both sides; FIN, RESET_STREAM, STOP_SENDING and CONNECTION_CLOSE cross \
                  with their error codes. Run one in the terminal (st) and one in the \
                  gateway (gw). With --transparent (and --tunnel) at both, Proxy-ST takes \
                  QUIC to any address that TPROXY hands it and presents a certificate for \
                  the name each client asks for; Proxy-GW connects to that address with \
                  that name, within --allow-dst.",
    after_help = "Prints `ready` once listening; exits 0 on SIGTERM or SIGINT, 2 on an error.",
    after_long_help = transport_help(),
    args_override_self = true
)]
pub struct Cli {
    /// The UDP address clients reach (IP:PORT)
    #[arg(long, value_name = "IP:PORT", value_parser = socket_addr)]
    listen: SocketAddr,
    /// PEM certificate chain presented to clients (not with --masque-via)
    #[arg(long, value_name = "FILE", required_unless_present = "masque_via")]
    cert: Option<PathBuf>,
    /// PEM private key of --cert
    #[arg(long, value_name = "FILE", required_unless_present = "masque_via")]
    key: Option<PathBuf>,
    /// Where every connection is relayed to (IP:PORT); not with --transparent
    /// at gw, which dials each connection's own destination
    #[arg(long, value_name = "IP:PORT", value_parser = socket_addr,
          required_unless_present_any = ["transparent", "masque_via"])]
    next_hop: Option<SocketAddr>,
    /// The name the next hop's certificate must carry
    #[arg(long, value_name = "NAME", value_parser = host_name,
          required_unless_present = "transparent")]
    next_hop_name: Option<String>,
    /// PEM certificate of the next hop: exactly that certificate is trusted
    /// (no system trust store)
    #[arg(long, value_name = "FILE",
          required_unless_present_any = ["next_hop_spki", "masque_listen"])]
    next_hop_ca: Option<PathBuf>,
    /// Instead of --next-hop-ca: trust any certificate of the next hop that
    /// carries this key (base64 of the SHA-256 of its SubjectPublicKeyInfo,
    /// as Chromium's --ignore-certificate-errors-spki-list), for the name
    /// dialled (not checked when that is an IP address); validity dates
    /// are not checked
    #[arg(long, value_name = "PIN", value_parser = spki_pin, conflicts_with = "next_hop_ca")]
    next_hop_spki: Option<String>,
    /// Many destinations, each client connection's own (needs --tunnel).
    /// At st: the listener is transparent (IP_TRANSPARENT; nftables TPROXY
    /// hands it QUIC to any address on --listen's port, which is taken as
    /// the original port); each client gets a certificate for the name it
    /// asks for (SNI), made from --key and kept, or --cert when it names
    /// none; its original address and that name cross the tunnel. At gw:
    /// each client connection goes to that address with that name, within
    /// --allow-dst
    #[arg(long)]
    transparent: bool,
    /// With --transparent at st: take every client connection as addressed
    /// to IP:PORT instead of its original destination (no TPROXY needed;
    /// for tests)
    #[arg(long, value_name = "IP:PORT", value_parser = socket_addr_v4)]
    transparent_to: Option<SocketAddrV4>,
    /// With --transparent at gw: the networks client connections may go
    /// to, comma-separated; repeatable [default: 198.18.0.0/15]
    #[arg(long, value_name = "NET,…", value_parser = networks)]
    allow_dst: Vec<Networks>,
    /// Which side is the satellite hop (st: the connect side, gw: the accept
    /// side); it starts from the PEP setting cc=newreno,initial-window=100.
    /// Also the default --label
    #[arg(long, value_enum)]
    role: Option<Role>,
    /// Complete the next hop's handshake first, then accept the client with
    /// the ALPN the next hop chose and the next hop's stream limits (needed
    /// for HTTP/3). Default: both handshakes run in parallel
    #[arg(long)]
    h3: bool,
    /// Keep one standing QUIC connection between Proxy-ST and Proxy-GW
    /// (needs --role on both): st dials gw at start and again if it drops,
    /// completes each client's handshake at once and carries its streams
    /// over the tunnel; gw then accepts only tunnels and opens one origin
    /// connection per client connection
    #[arg(long)]
    tunnel: bool,
    /// With --tunnel at gw: keep one origin connection dialled ahead for the
    /// next client connection (each still gets its own)
    #[arg(long)]
    spare: bool,
    /// QPEP, with --tunnel --role st: a transparent TCP listener (IP_TRANSPARENT;
    /// nftables TPROXY hands it the clients' TCP connections). Each
    /// connection is carried as one stream of the tunnel; Proxy-GW opens a
    /// TCP connection to its original destination
    #[arg(long, value_name = "IP:PORT", value_parser = socket_addr_v4)]
    qpep_listen: Option<SocketAddrV4>,
    /// With --qpep-listen: a plain listener whose every connection goes to
    /// this destination instead of the original one (no TPROXY needed)
    #[arg(long, value_name = "IP:PORT", value_parser = socket_addr_v4)]
    qpep_to: Option<SocketAddrV4>,
    /// At gw: the networks QPEP connections may go to, comma-separated;
    /// repeatable [default: 198.18.0.0/15]
    #[arg(long, value_name = "NET,…", value_parser = networks)]
    qpep_allow: Vec<Networks>,
    /// At gw: a CONNECT-UDP listener of its own (RFC 9298 over HTTP/3 with
    /// HTTP Datagrams, ALPN h3, --cert): each proxying request's UDP goes to
    /// its target from a socket of Proxy-GW's. It trusts no origin key, so
    /// --next-hop-ca/--next-hop-spki are then optional (without them the
    /// --listen side trusts no origin)
    #[arg(long, value_name = "IP:PORT", value_parser = socket_addr)]
    masque_listen: Option<SocketAddr>,
    /// With --masque-listen: the networks proxying requests may go to,
    /// comma-separated; repeatable [default: 198.18.0.0/15]
    #[arg(long, value_name = "NET,…", value_parser = networks)]
    masque_allow: Vec<Networks>,
    /// Forward error correction on the satellite hop: after every K
    /// datagrams, N − K repair packets (Reed–Solomon), so the other end
    /// rebuilds up to N − K lost ones without a round trip. On the sockets
    /// that face the satellite: at st the next-hop side's (or
    /// --masque-via's), at gw --listen's and --masque-listen's; both ends
    /// need it (needs --role)
    #[arg(long, value_name = "K/N", value_parser = fec_setting)]
    fec: Option<crate::fec::FecSetting>,
    /// With --fec: the satellite hop's round trip, which a partial window's
    /// repairs wait an eighth of (1 to 5 ms) and the receiver holds a window for
    #[arg(long, value_name = "MS", requires = "fec")]
    fec_hop_rtt_ms: Option<u64>,
    /// At st, instead of terminating QUIC: a MASQUE client that decrypts
    /// nothing. --listen is then a transparent UDP socket (IP_TRANSPARENT;
    /// nftables TPROXY hands it the clients' UDP to any address); each
    /// client flow (its address and original destination) gets one
    /// CONNECT-UDP request (RFC 9298) over one HTTP/3 connection to
    /// Proxy-GW's --masque-listen at IP:PORT (named --next-hop-name,
    /// trusted by --next-hop-ca or --next-hop-spki, the satellite hop's
    /// --connect-side); its UDP crosses as HTTP Datagrams and the answers
    /// leave from the original destination's address
    #[arg(long, value_name = "IP:PORT", value_parser = socket_addr)]
    masque_via: Option<SocketAddr>,
    /// With --masque-via: take every datagram as sent to IP:PORT instead of
    /// its original destination (no TPROXY needed; for tests)
    #[arg(long, value_name = "IP:PORT", value_parser = socket_addr_v4)]
    masque_to: Option<SocketAddrV4>,
    /// With --masque-via: a flow that carried nothing either way for this
    /// long ends, and its request is closed [default: 30000]
    #[arg(long, value_name = "MS", value_parser = at_least_one_u64)]
    masque_idle_ms: Option<u64>,
    /// With --masque-via: how each flow's packets cross to Proxy-GW: as
    /// HTTP Datagrams (unreliable: the client's QUIC sees the hop's losses)
    /// or as DATAGRAM capsules on its request stream (reliable and in
    /// order: the tunnel recovers a loss, the client sees delay instead);
    /// Proxy-GW answers in kind [default: datagram]
    #[arg(long, value_name = "MODE")]
    masque_mode: Option<crate::masque::flows::Carry>,
    /// At gw: the TCP congestion control of QPEP's connections to the
    /// destination [default: the system's]
    #[arg(long, value_name = "NAME", value_parser = label)]
    qpep_connect_cc: Option<String>,
    /// At gw: once a client's connection to a server has crossed the tunnel,
    /// keep this many more connections to it dialled ahead, each used once
    /// and within 5 s (0: none)
    #[arg(long, value_name = "N", default_value_t = 0)]
    qpep_spares: usize,
    /// ALPN offered, comma-separated; in --h3 mode offered to the next hop,
    /// else accepted from clients
    #[arg(long, value_name = "LIST", default_value = "h3", value_parser = alpn_list)]
    alpn: Alpn,
    /// Transport of the client side: KEY[=VALUE],… (the keys: --help); repeatable
    #[arg(long, value_name = "KEY[=VAL],…")]
    accept_side: Vec<String>,
    /// Transport of the next-hop side, as --accept-side; repeatable
    #[arg(long, value_name = "KEY[=VAL],…")]
    connect_side: Vec<String>,
    /// One qlog (JSON-SEQ) per connection and side
    #[arg(long, value_name = "DIR")]
    qlog_dir: Option<PathBuf>,
    /// With --accept-side careful-resume=on: a JSON line per accepted
    /// connection that had a saved path (its phases and jump), appended
    #[arg(long, value_name = "FILE")]
    careful_resume_log: Option<PathBuf>,
    /// One line per connection (default stderr)
    #[arg(long, value_name = "FILE")]
    log: Option<PathBuf>,
    /// The connection log, appended: one JSON line per client connection
    /// once its handshake is done (full or resumed, 0-RTT offered and
    /// accepted)
    #[arg(long, value_name = "FILE")]
    conn_log: Option<PathBuf>,
    /// Counters as JSON, written on SIGUSR1 and at exit
    #[arg(long, value_name = "FILE")]
    stats: Option<PathBuf>,
    /// The name in log lines and stats (letters, digits, - and _)
    #[arg(long, value_name = "NAME", value_parser = label)]
    label: Option<String>,
    /// Client connections relayed at once; more are refused with a log line
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_CONNECTIONS,
          value_parser = at_least_one)]
    max_connections: usize,
    /// Bytes one relayed connection may buffer; windows shrink to fit, with a
    /// log line
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_CONN_MEMORY,
          value_parser = whole::<u64>)]
    max_conn_memory: u64,
    /// Worker threads (default: CPUs, at most 4)
    #[arg(long, value_name = "N", value_parser = threads)]
    threads: Option<usize>,
}

/// The `--accept-side` / `--connect-side` keys, from the shared table.
fn transport_help() -> String {
    let mut s = String::from(
        "--accept-side and --connect-side keys (a later one wins; flow-control \
         windows are 2 x bdp-bytes):\n",
    );
    for k in quic_keys::specs() {
        let item = match &k.value_name {
            Some(v) => format!("{}={v}", k.name),
            None => k.name.clone(),
        };
        let values = match k.values.is_empty() {
            true => String::new(),
            false => format!(": {}", quic_keys::one_of(&k.values)),
        };
        s.push_str(&format!("  {item:<28} {}{values}\n", k.help));
    }
    s.push_str("\nPrints `ready` once listening; exits 0 on SIGTERM or SIGINT, 2 on an error.");
    s
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
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
    /// None only with `--masque-via`, which terminates no TLS.
    pub cert: Option<PathBuf>,
    pub key: Option<PathBuf>,
    /// The one next hop and its name; None at a `--transparent` Proxy-GW.
    pub next_hop: Option<(SocketAddr, String)>,
    /// None: trust no next hop (only with `--masque-listen`).
    pub trust: Option<Trust>,
    /// `--transparent`: each client connection's own destination.
    pub transparent: Option<Transparent>,
    pub role: Option<Role>,
    pub label: String,
    pub mode: Mode,
    /// `--tunnel`: the standing ST↔GW connection (its end is `role`).
    pub tunnel: bool,
    /// `--spare`: Proxy-GW's origin connection dialled ahead (`tunnel::origin`).
    pub spare: bool,
    pub alpn: Vec<Vec<u8>>,
    /// QPEP (`qpep`): TCP carried over the tunnel.
    pub qpep: Qpep,
    /// `--masque-listen` (Proxy-GW): the CONNECT-UDP listener.
    pub masque: Option<crate::masque::server::Settings>,
    /// `--fec`: the code on the socket that faces the satellite.
    pub fec: Option<crate::fec::socket::FecOnHop>,
    /// `--masque-via` (Proxy-ST): a MASQUE client instead of a QUIC PEP.
    pub masque_via: Option<crate::masque::client::Settings>,
    pub accept: QuicOptions,
    pub connect: QuicOptions,
    pub qlog_dir: Option<PathBuf>,
    /// `--careful-resume-log`.
    pub careful_resume_log: Option<PathBuf>,
    pub log: Option<PathBuf>,
    /// `--conn-log`: each client connection's handshake.
    pub conn_log: Option<PathBuf>,
    pub stats: Option<PathBuf>,
    pub max_connections: usize,
    pub max_conn_memory: u64,
    pub threads: Option<usize>,
}

/// How the next hop's certificate is trusted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Trust {
    /// `--next-hop-ca`: exactly that certificate.
    Cert(PathBuf),
    /// `--next-hop-spki`: any certificate with that key, for the name dialled.
    Spki(String),
}

/// `--transparent`: at st where a client connection goes, at gw where it may go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transparent {
    /// st: `--transparent-to`, instead of the original destination.
    pub to: Option<SocketAddrV4>,
    /// gw: `--allow-dst`.
    pub allow: Vec<Ipv4Net>,
}

/// QPEP's settings: at st where TCP comes in, at gw where it may go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Qpep {
    /// st: the TCP listener, and whether it is transparent (TPROXY) or
    /// sends everything to a fixed destination (`--qpep-to`).
    pub listen: Option<SocketAddrV4>,
    pub to: Option<SocketAddrV4>,
    /// gw: where connections may go, and their congestion control.
    pub allow: Vec<Ipv4Net>,
    pub connect_cc: Option<String>,
    /// gw: spare connections per destination (`qpep::spare_policy`).
    pub spares: usize,
}

/// The testbed's addresses (198.19.0.0/16, an archive's origins, among
/// them): nothing else is reached by default (`--qpep-allow`, `--allow-dst`).
pub const DEFAULT_QPEP_ALLOW: &str = "198.18.0.0/15";

/// `--fec-hop-rtt-ms` when not given: a GEO hop's round trip (the paper's
/// 290 ms one way).
pub const DEFAULT_FEC_HOP_RTT_MS: u64 = 580;
/// How long a MASQUE flow may carry nothing before it ends: Chromium's
/// QUIC idle timeout.
pub const DEFAULT_MASQUE_IDLE_MS: u64 = 30_000;

pub const DEFAULT_MAX_CONNECTIONS: usize = 256;
pub const DEFAULT_MAX_CONN_MEMORY: u64 = 256 << 20;

/// The paper's PEP setting for the satellite hop (Kosek et al.).
pub fn satellite_default() -> QuicOptions {
    QuicOptions {
        cc: Cc::NewReno,
        initial_window_packets: 100,
        ..QuicOptions::default()
    }
}

fn socket_addr(v: &str) -> Result<SocketAddr, String> {
    v.parse()
        .map_err(|_| format!("expected IP:PORT, got '{v}'"))
}

fn socket_addr_v4(v: &str) -> Result<SocketAddrV4, String> {
    v.parse()
        .map_err(|_| format!("expected IPv4:PORT, got '{v}'"))
}

/// One `--qpep-allow` value: a comma-separated list of networks.
#[derive(Clone, Debug)]
struct Networks(Vec<Ipv4Net>);

fn networks(v: &str) -> Result<Networks, String> {
    satbench_transport::net::parse_list(v).and_then(|n| match n.is_empty() {
        true => Err(format!("expected networks like 198.18.0.0/15, got '{v}'")),
        false => Ok(Networks(n)),
    })
}

fn fec_setting(v: &str) -> Result<crate::fec::FecSetting, String> {
    v.parse()
        .map_err(|e: crate::fec::SettingError| e.to_string())
}

fn whole<T: std::str::FromStr>(v: &str) -> Result<T, String> {
    v.parse()
        .map_err(|_| format!("expected a whole number, got '{v}'"))
}

fn at_least_one(v: &str) -> Result<usize, String> {
    match whole(v)? {
        0 => Err("at least 1".into()),
        n => Ok(n),
    }
}

fn at_least_one_u64(v: &str) -> Result<u64, String> {
    match whole(v)? {
        0 => Err("at least 1".into()),
        n => Ok(n),
    }
}

fn threads(v: &str) -> Result<usize, String> {
    let n: usize = whole(v)?;
    if !(1..=64).contains(&n) {
        return Err("between 1 and 64".into());
    }
    Ok(n)
}

/// Pure: an SPKI pin as Chromium takes it: base64 of a SHA-256 (44
/// characters, the last `=`).
fn spki_pin(v: &str) -> Result<String, String> {
    let b64 = |c: char| c.is_ascii_alphanumeric() || c == '+' || c == '/';
    match v.len() == 44 && v.ends_with('=') && v[..43].chars().all(b64) {
        true => Ok(v.to_string()),
        false => Err(format!(
            "expected base64 of a SHA-256 (44 characters, like spki.txt), got '{v}'"
        )),
    }
}

fn host_name(v: &str) -> Result<String, String> {
    rustls_pki_types::ServerName::try_from(v)
        .map(|_| v.to_string())
        .map_err(|_| format!("not a host name or IP address: '{v}'"))
}

fn label(v: &str) -> Result<String, String> {
    let ok = !v.is_empty()
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    match ok {
        true => Ok(v.to_string()),
        false => Err(format!("letters, digits, - and _ only, got '{v}'")),
    }
}

/// The protocol names `--alpn` lists, in order.
#[derive(Clone, Debug)]
struct Alpn(Vec<Vec<u8>>);

fn alpn_list(v: &str) -> Result<Alpn, String> {
    let names: Vec<Vec<u8>> = v
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.as_bytes().to_vec())
        .collect();
    if names.is_empty() || names.iter().any(|p| p.len() > 255) {
        return Err(format!(
            "expected a comma-separated list of protocol names, got '{v}'"
        ));
    }
    Ok(Alpn(names))
}

impl Cli {
    /// `--transparent` and the flags that go with it, checked against the
    /// end (`gw`: `--tunnel --role gw`).
    fn transparent_config(&self, gw: bool) -> Result<Option<Transparent>, String> {
        let st = self.tunnel && self.role == Some(Role::St);
        if !self.transparent {
            if self.transparent_to.is_some() || !self.allow_dst.is_empty() {
                return Err("--transparent-to and --allow-dst go with --transparent".into());
            }
            return Ok(None);
        }
        if !st && !gw {
            return Err(
                "--transparent needs --tunnel and --role (st or gw): only the \
                 tunnel carries each client connection's destination to Proxy-GW"
                    .into(),
            );
        }
        if st && !self.allow_dst.is_empty() {
            return Err("--allow-dst is for --transparent --role gw".into());
        }
        if gw && self.transparent_to.is_some() {
            return Err("--transparent-to is for --transparent --role st".into());
        }
        if gw && (self.next_hop.is_some() || self.next_hop_name.is_some()) {
            return Err(
                "--next-hop and --next-hop-name: Proxy-GW with --transparent dials \
                 each client connection's own destination"
                    .into(),
            );
        }
        if gw && self.spare {
            return Err("--spare: with --transparent no destination is known ahead".into());
        }
        let allow = match self.allow_dst.is_empty() {
            true => vec![DEFAULT_QPEP_ALLOW.parse()?],
            false => self.allow_dst.iter().flat_map(|n| n.0.clone()).collect(),
        };
        Ok(Some(Transparent {
            to: self.transparent_to,
            allow,
        }))
    }

    /// `--masque-listen` and `--masque-allow`: Proxy-GW's only.
    fn masque_config(&self) -> Result<Option<crate::masque::server::Settings>, String> {
        let Some(listen) = self.masque_listen else {
            return match self.masque_allow.is_empty() {
                true => Ok(None),
                false => Err("--masque-allow goes with --masque-listen".into()),
            };
        };
        if self.role != Some(Role::Gw) {
            return Err("--masque-listen is for --role gw (Proxy-GW)".into());
        }
        if listen == self.listen && listen.port() != 0 {
            return Err(format!(
                "--masque-listen {listen}: the proxy's own --listen address"
            ));
        }
        let allow = match self.masque_allow.is_empty() {
            true => vec![DEFAULT_QPEP_ALLOW.parse()?],
            false => self.masque_allow.iter().flat_map(|n| n.0.clone()).collect(),
        };
        Ok(Some(crate::masque::server::Settings { listen, allow }))
    }

    /// `--masque-via` and the flags that go with it: Proxy-ST as a MASQUE
    /// client, which needs Proxy-GW's name and trust and nothing of the
    /// QUIC PEP's.
    fn masque_via_config(&self) -> Result<Option<crate::masque::client::Settings>, String> {
        let Some(via) = self.masque_via else {
            let alone = self.masque_to.is_some()
                || self.masque_idle_ms.is_some()
                || self.masque_mode.is_some();
            return match alone {
                true => Err(
                    "--masque-to, --masque-idle-ms and --masque-mode go with --masque-via".into(),
                ),
                false => Ok(None),
            };
        };
        if self.role != Some(Role::St) {
            return Err("--masque-via is for --role st (Proxy-ST)".into());
        }
        if self.cert.is_some() || self.key.is_some() {
            return Err(
                "--cert and --key: Proxy-ST with --masque-via terminates no TLS and holds no key"
                    .into(),
            );
        }
        if self.tunnel || self.transparent || self.qpep_listen.is_some() || self.next_hop.is_some()
        {
            return Err(
                "--masque-via: not with --tunnel, --transparent, --qpep-listen or --next-hop \
                 (its one connection to Proxy-GW is the HTTP/3 one)"
                    .into(),
            );
        }
        if self
            .masque_to
            .is_some_and(|t| SocketAddr::V4(t) == self.listen)
        {
            return Err("--masque-to: the proxy's own --listen address (a loop)".into());
        }
        let name = self
            .next_hop_name
            .clone()
            .ok_or("--next-hop-name is required (Proxy-GW's name)")?;
        Ok(Some(crate::masque::client::Settings {
            via,
            name,
            to: self.masque_to,
            idle: std::time::Duration::from_millis(
                self.masque_idle_ms.unwrap_or(DEFAULT_MASQUE_IDLE_MS),
            ),
            carry: self.masque_mode.unwrap_or_default(),
        }))
    }

    /// The settings the flags ask for; errors name the flag.
    pub fn config(self) -> Result<Config, String> {
        let (mut accept, mut connect) = (QuicOptions::default(), QuicOptions::default());
        match self.role {
            Some(Role::St) => connect = satellite_default(),
            Some(Role::Gw) => accept = satellite_default(),
            None => {}
        }
        for l in &self.accept_side {
            accept.apply_list(l, "--accept-side")?;
        }
        for l in &self.connect_side {
            connect.apply_list(l, "--connect-side")?;
        }
        // the end that accepts sends to a returning peer and keeps its path
        if connect.careful_resume {
            return Err(
                "--connect-side careful-resume: Careful Resume is the accepting end's \
                        (its sends to a peer that returns); set it in --accept-side (Proxy-GW's \
                        for the satellite hop)"
                    .into(),
            );
        }
        if self.careful_resume_log.is_some() && !accept.careful_resume {
            return Err("--careful-resume-log: only with --accept-side careful-resume=on".into());
        }
        if self.spare && !(self.tunnel && self.role == Some(Role::Gw)) {
            return Err("--spare is for --tunnel --role gw".into());
        }
        if self.tunnel && self.role.is_none() {
            return Err("--tunnel needs --role st (the end that dials) or --role gw".into());
        }
        let st_tunnel = self.tunnel && self.role == Some(Role::St);
        if self.qpep_listen.is_some() && !st_tunnel {
            return Err("--qpep-listen is for --tunnel --role st".into());
        }
        if self.qpep_to.is_some() && self.qpep_listen.is_none() {
            return Err("--qpep-to needs --qpep-listen".into());
        }
        if self.qpep_to.is_some() && self.qpep_to == self.qpep_listen {
            return Err("--qpep-to: the proxy's own --qpep-listen address (a loop)".into());
        }
        let gw_tunnel = self.tunnel && self.role == Some(Role::Gw);
        let gw_only =
            !self.qpep_allow.is_empty() || self.qpep_connect_cc.is_some() || self.qpep_spares > 0;
        if gw_only && !gw_tunnel {
            return Err(
                "--qpep-allow, --qpep-connect-cc and --qpep-spares are for --tunnel --role gw"
                    .into(),
            );
        }
        let transparent = self.transparent_config(gw_tunnel)?;
        let masque = self.masque_config()?;
        let fec = match (self.fec, self.role) {
            (None, _) => None,
            (Some(_), None) => {
                return Err(
                    "--fec needs --role: st codes its next-hop side, gw its --listen and --masque-listen".into(),
                )
            }
            (Some(setting), Some(_)) => Some(crate::fec::socket::FecOnHop {
                setting,
                hop_rtt: std::time::Duration::from_millis(
                    self.fec_hop_rtt_ms.unwrap_or(DEFAULT_FEC_HOP_RTT_MS),
                ),
            }),
        };
        let masque_via = self.masque_via_config()?;
        let allow = match self.qpep_allow.is_empty() {
            true => vec![DEFAULT_QPEP_ALLOW.parse()?],
            false => self.qpep_allow.into_iter().flat_map(|n| n.0).collect(),
        };
        if self.next_hop.is_some_and(|n| n == self.listen) {
            return Err(format!(
                "--next-hop {}: the proxy's own --listen address",
                self.listen
            ));
        }
        let next_hop = match (self.next_hop, self.next_hop_name) {
            (Some(addr), Some(name)) => Some((addr, name)),
            // clap asks for both unless --transparent, which needs neither at gw
            (None, None) if gw_tunnel && transparent.is_some() => None,
            // its name is Proxy-GW's, in `masque_via`
            (None, Some(_)) if masque_via.is_some() => None,
            (None, _) => return Err("--next-hop is required (Proxy-GW's address)".into()),
            (_, None) => return Err("--next-hop-name is required (Proxy-GW's name)".into()),
        };
        let trust = match (self.next_hop_ca, self.next_hop_spki) {
            (_, Some(pin)) => Some(Trust::Spki(pin)),
            (Some(ca), None) => Some(Trust::Cert(ca)),
            (None, None) if masque.is_some() => None,
            (None, None) => return Err("--next-hop-ca or --next-hop-spki is required".into()),
        };
        Ok(Config {
            listen: self.listen,
            cert: self.cert,
            key: self.key,
            next_hop,
            trust,
            transparent,
            label: self
                .label
                .unwrap_or_else(|| self.role.map_or("quic-pep", Role::name).to_string()),
            role: self.role,
            mode: if self.h3 { Mode::H3 } else { Mode::Parallel },
            tunnel: self.tunnel,
            spare: self.spare,
            alpn: self.alpn.0,
            qpep: Qpep {
                listen: self.qpep_listen,
                to: self.qpep_to,
                allow,
                connect_cc: self.qpep_connect_cc,
                spares: self.qpep_spares,
            },
            masque,
            fec,
            masque_via,
            accept,
            connect,
            qlog_dir: self.qlog_dir,
            careful_resume_log: self.careful_resume_log,
            log: self.log,
            conn_log: self.conn_log,
            stats: self.stats,
            max_connections: self.max_connections,
            max_conn_memory: self.max_conn_memory,
            threads: self.threads,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use satbench_transport::cli::{parse_from, Stop};

    /// The config, or the one-line error (a usage error or a bad setting).
    fn parse(s: &str) -> Result<Config, String> {
        match parse_from::<Cli, _, _>(std::iter::once("quic-pep").chain(s.split_whitespace())) {
            Ok(cli) => cli.config(),
            Err(Stop::Usage(line)) => Err(line),
            Err(Stop::Print(text)) => Err(format!("printed {text}")),
        }
    }

    const BASE: &str =
        "--listen 198.18.1.1:443 --cert c.pem --key k.pem --next-hop 198.18.2.2:443 \
                        --next-hop-name pep-gw.satbench.test --next-hop-ca gw.pem";

    fn config(extra: &str) -> Config {
        parse(&format!("{BASE} {extra}")).unwrap()
    }

    fn error(extra: &str) -> String {
        parse(&format!("{BASE} {extra}")).unwrap_err()
    }

    #[test]
    fn careful_resume_is_the_accepting_sides_with_its_log() {
        let gw =
            config("--role gw --tunnel --accept-side careful-resume=on --careful-resume-log /l");
        assert!(gw.accept.careful_resume);
        assert_eq!(gw.careful_resume_log, Some(PathBuf::from("/l")));
        assert!(error("--role st --connect-side careful-resume=on")
            .starts_with("--connect-side careful-resume: Careful Resume is the accepting end's"));
        assert_eq!(
            error("--careful-resume-log /l"),
            "--careful-resume-log: only with --accept-side careful-resume=on"
        );
        assert_eq!(
            error("--accept-side careful-resume=maybe"),
            "--accept-side careful-resume: expected off or on, got 'maybe'"
        );
    }

    #[test]
    fn fec_is_a_role_s_satellite_side_with_the_hop_s_round_trip() {
        let st = config("--role st --fec 8/10 --fec-hop-rtt-ms 40")
            .fec
            .unwrap();
        assert_eq!(st.setting.to_string(), "8/10");
        assert_eq!(st.hop_rtt, std::time::Duration::from_millis(40));
        let gw = config("--role gw --fec 4/6").fec.unwrap();
        assert_eq!(gw.hop_rtt.as_millis(), u128::from(DEFAULT_FEC_HOP_RTT_MS));
        assert!(config("").fec.is_none());
        assert!(error("--fec 8/10").contains("--fec needs --role"));
        assert!(error("--role st --fec 10/8").contains("N must be more than K"));
        assert!(error("--role st --fec-hop-rtt-ms 40").contains("--fec"));
    }

    #[test]
    fn tunnel_needs_a_role() {
        assert!(!config("").tunnel);
        assert!(config("--role st --tunnel").tunnel);
        assert!(error("--tunnel").contains("--tunnel needs --role"));
        assert!(config("--role gw --tunnel --spare").spare);
        assert!(error("--role st --tunnel --spare").contains("--spare is for"));
    }

    #[test]
    fn qpep_listens_at_st_and_connects_at_gw_within_the_allowed_networks() {
        let st = config("--role st --tunnel --qpep-listen 127.0.0.1:9481");
        assert_eq!(st.qpep.listen.unwrap().to_string(), "127.0.0.1:9481");
        assert_eq!(st.qpep.to, None);
        let gw = config("--role gw --tunnel");
        let allow: Vec<String> = gw.qpep.allow.iter().map(|n| n.to_string()).collect();
        assert_eq!(allow, ["198.18.0.0/15"]);
        let gw = config("--role gw --tunnel --qpep-allow 10.0.0.0/8,192.0.2.7 --qpep-allow 127.0.0.1 --qpep-connect-cc reno");
        let allow: Vec<String> = gw.qpep.allow.iter().map(|n| n.to_string()).collect();
        assert_eq!(allow, ["10.0.0.0/8", "192.0.2.7/32", "127.0.0.1/32"]);
        assert_eq!(gw.qpep.connect_cc.as_deref(), Some("reno"));
        assert_eq!(
            (
                gw.qpep.spares,
                config("--role gw --tunnel --qpep-spares 6").qpep.spares
            ),
            (0, 6)
        );
        assert!(error("--role st --tunnel --qpep-spares 6").contains("--qpep-spares are for"));
        assert!(
            error("--qpep-listen 127.0.0.1:1").contains("--qpep-listen is for --tunnel --role st")
        );
        assert!(
            error("--role gw --tunnel --qpep-listen 127.0.0.1:1").contains("--qpep-listen is for")
        );
        assert!(error("--role st --tunnel --qpep-to 127.0.0.1:1")
            .contains("--qpep-to needs --qpep-listen"));
        assert!(
            error("--role st --tunnel --qpep-listen 127.0.0.1:1 --qpep-to 127.0.0.1:1")
                .contains("a loop")
        );
        assert!(error("--role st --tunnel --qpep-allow 10.0.0.0/8")
            .contains("are for --tunnel --role gw"));
        let bad = error("--role gw --tunnel --qpep-allow 10.0.0.0/33");
        assert!(
            bad.contains("--qpep-allow") && bad.contains("10.0.0.0/33"),
            "{bad}"
        );
        assert!(error("--role st --tunnel --qpep-listen [::1]:9").contains("IPv4:PORT"));
    }

    const PIN: &str = "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=";

    #[test]
    fn transparent_st_names_each_destination_and_gw_dials_it() {
        let st = config("--role st --tunnel --transparent");
        assert_eq!(
            st.transparent,
            Some(Transparent {
                to: None,
                allow: vec![DEFAULT_QPEP_ALLOW.parse().unwrap()]
            })
        );
        assert!(st.next_hop.is_some(), "Proxy-GW");
        let st = config("--role st --tunnel --transparent --transparent-to 127.0.0.1:9");
        assert_eq!(
            st.transparent.unwrap().to.unwrap().to_string(),
            "127.0.0.1:9"
        );
        // Proxy-GW needs no next hop, only the origins' key
        let gw = parse(&format!(
            "--listen 198.18.2.2:443 --cert c.pem --key k.pem --role gw --tunnel --transparent \
             --next-hop-spki {PIN} --allow-dst 198.19.0.0/16 --allow-dst 198.18.3.2"
        ))
        .unwrap();
        assert_eq!(gw.next_hop, None);
        assert_eq!(gw.trust, Some(Trust::Spki(PIN.into())));
        let allow: Vec<String> = gw
            .transparent
            .unwrap()
            .allow
            .iter()
            .map(|n| n.to_string())
            .collect();
        assert_eq!(allow, ["198.19.0.0/16", "198.18.3.2/32"]);
    }

    #[test]
    fn transparent_is_refused_where_it_cannot_work() {
        let gw =
            "--listen 198.18.2.2:443 --cert c.pem --key k.pem --role gw --tunnel --transparent";
        let gw_err = |extra: &str| parse(&format!("{gw} {extra}")).unwrap_err();
        assert!(error("--transparent").contains("--transparent needs --tunnel"));
        assert!(error("--role st --transparent").contains("--transparent needs --tunnel"));
        assert!(
            error("--role st --tunnel --transparent --allow-dst 10.0.0.0/8")
                .contains("--allow-dst is for")
        );
        assert!(error("--role st --tunnel --transparent-to 127.0.0.1:9").contains("go with"));
        assert!(error("--allow-dst 10.0.0.0/8").contains("go with --transparent"));
        assert!(gw_err(&format!(
            "--next-hop-spki {PIN} --transparent-to 127.0.0.1:9"
        ))
        .contains("--transparent-to is for"));
        assert!(
            gw_err(&format!("--next-hop-spki {PIN} --next-hop 198.18.3.2:443"))
                .contains("dials each client connection's own destination")
        );
        assert!(gw_err(&format!("--next-hop-spki {PIN} --spare")).contains("--spare"));
        assert!(gw_err("").contains("--next-hop-ca"), "{}", gw_err(""));
        // Proxy-ST still needs Proxy-GW
        let st =
            "--listen 198.18.1.1:443 --cert c.pem --key k.pem --role st --tunnel --transparent";
        let e = parse(&format!("{st} --next-hop-ca gw.pem")).unwrap_err();
        assert!(e.contains("--next-hop is required"), "{e}");
        let e = parse(&format!(
            "{st} --next-hop-ca gw.pem --next-hop 198.18.2.2:443"
        ))
        .unwrap_err();
        assert!(e.contains("--next-hop-name is required"), "{e}");
    }

    #[test]
    fn masque_listens_at_gw_trusting_no_origin() {
        let gw =
            "--listen 198.18.2.2:443 --cert c.pem --key k.pem --role gw --tunnel --transparent";
        let c = parse(&format!("{gw} --masque-listen 198.18.2.2:4433")).unwrap();
        let m = c.masque.unwrap();
        assert_eq!(m.listen.to_string(), "198.18.2.2:4433");
        let allow: Vec<String> = m.allow.iter().map(|n| n.to_string()).collect();
        assert_eq!(allow, ["198.18.0.0/15"]);
        assert_eq!(c.trust, None, "no origin key");
        let c = parse(&format!(
            "{gw} --masque-listen 127.0.0.1:0 --masque-allow 127.0.0.1 --masque-allow 10.0.0.0/8 --next-hop-spki {PIN}"
        ))
        .unwrap();
        let allow: Vec<String> = c
            .masque
            .unwrap()
            .allow
            .iter()
            .map(|n| n.to_string())
            .collect();
        assert_eq!(allow, ["127.0.0.1/32", "10.0.0.0/8"]);
        assert_eq!(c.trust, Some(Trust::Spki(PIN.into())));
        let e = parse(&format!("{gw} --masque-listen 198.18.2.2:443")).unwrap_err();
        assert!(e.contains("own --listen address"), "{e}");
        assert!(error("--role st --masque-listen 127.0.0.1:1").contains("is for --role gw"));
        assert!(error("--masque-listen 127.0.0.1:1").contains("is for --role gw"));
        assert!(error("--role gw --masque-allow 10.0.0.0/8").contains("goes with --masque-listen"));
        let e = parse(&format!("{gw} --masque-listen 1.2.3.4")).unwrap_err();
        assert!(e.starts_with("--masque-listen: expected IP:PORT"), "{e}");
        // without it, a Proxy-GW still needs the origins' trust
        let e = parse(gw).unwrap_err();
        assert!(e.contains("--next-hop-ca"), "{e}");
    }

    #[test]
    fn masque_via_makes_st_a_client_of_gw_holding_no_key() {
        let st = "--listen 198.18.1.1:443 --role st --masque-via 198.18.2.2:4433 \
                  --next-hop-name pep-gw.satbench.test";
        let c = parse(&format!("{st} --next-hop-spki {PIN}")).unwrap();
        assert_eq!(
            c.masque_via,
            Some(crate::masque::client::Settings {
                via: "198.18.2.2:4433".parse().unwrap(),
                name: "pep-gw.satbench.test".into(),
                to: None,
                idle: std::time::Duration::from_millis(DEFAULT_MASQUE_IDLE_MS),
                carry: crate::masque::flows::Carry::Datagram,
            })
        );
        assert_eq!((c.cert, c.key, c.next_hop), (None, None, None));
        assert_eq!(c.trust, Some(Trust::Spki(PIN.into())));
        assert_eq!(c.connect.cc, Cc::NewReno, "the satellite hop's setting");
        let c = parse(&format!(
            "{st} --next-hop-ca gw.pem --masque-to 127.0.0.1:9 --masque-idle-ms 500"
        ))
        .unwrap();
        let m = c.masque_via.unwrap();
        assert_eq!(m.to, Some("127.0.0.1:9".parse().unwrap()));
        assert_eq!(m.idle, std::time::Duration::from_millis(500));
        let c = parse(&format!("{st} --next-hop-ca gw.pem --masque-mode stream")).unwrap();
        assert_eq!(
            c.masque_via.unwrap().carry,
            crate::masque::flows::Carry::Stream
        );
        let err = |extra: &str| parse(&format!("{st} --next-hop-spki {PIN} {extra}")).unwrap_err();
        assert!(err("--cert c.pem").contains("holds no key"));
        assert!(err("--tunnel").contains("not with --tunnel"));
        assert!(err("--next-hop 198.18.2.2:443").contains("not with"));
        assert!(err("--masque-to 198.18.1.1:443").contains("a loop"));
        assert!(err("--masque-idle-ms 0").starts_with("--masque-idle-ms: at least 1"));
        assert!(err("--masque-mode reliable").contains("--masque-mode"));
        let e = parse(&format!(
            "{} --next-hop-spki {PIN}",
            st.replace("--role st", "--role gw")
        ))
        .unwrap_err();
        assert!(e.contains("is for --role st"), "{e}");
        let e = parse(st).unwrap_err();
        assert!(e.contains("--next-hop-ca"), "{e}");
        let e = parse(
            "--listen 198.18.1.1:443 --role st --masque-via 198.18.2.2:4433 --next-hop-ca gw.pem",
        )
        .unwrap_err();
        assert!(e.contains("--next-hop-name"), "{e}");
        assert!(error("--masque-to 127.0.0.1:9").contains("go with --masque-via"));
        assert!(error("--masque-mode stream").contains("go with --masque-via"));
        // without it, a certificate is still required
        let e = parse(
            "--listen 198.18.1.1:443 --next-hop 198.18.2.2:443 --next-hop-name a --next-hop-ca x",
        )
        .unwrap_err();
        assert!(e.contains("--cert"), "{e}");
    }

    #[test]
    fn the_next_hop_is_trusted_by_its_certificate_or_its_key() {
        let c = parse(&format!(
            "{} --next-hop-spki {PIN}",
            BASE.replace(" --next-hop-ca gw.pem", "")
        ))
        .unwrap();
        assert_eq!(c.trust, Some(Trust::Spki(PIN.into())));
        let e = error(&format!("--next-hop-spki {PIN}"));
        assert_eq!(e, "--next-hop-ca: not with --next-hop-spki");
        let e = error("--next-hop-spki abc");
        assert!(
            e.starts_with("--next-hop-spki: expected base64 of a SHA-256"),
            "{e}"
        );
    }

    #[test]
    fn defaults() {
        let c = config("");
        assert_eq!(c.masque_via, None);
        assert_eq!(c.listen.to_string(), "198.18.1.1:443");
        let (hop, name) = c.next_hop.clone().unwrap();
        assert_eq!(
            (hop.to_string(), name.as_str()),
            ("198.18.2.2:443".into(), "pep-gw.satbench.test")
        );
        assert_eq!(c.trust, Some(Trust::Cert("gw.pem".into())));
        assert_eq!(c.masque, None);
        assert_eq!(c.transparent, None);
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
        assert_eq!(c.conn_log, None);
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
             --max-conn-memory 1000000 --threads 2 --conn-log /c",
        );
        assert_eq!(c.conn_log, Some(PathBuf::from("/c")));
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
        let e = parse("--listen 1.2.3.4").unwrap_err();
        assert!(e.starts_with("--listen: expected IP:PORT"), "{e}");
        let e = parse("--listen 127.0.0.1:4433").unwrap_err();
        assert!(
            e.contains("is required") && e.contains("--next-hop,"),
            "{e}"
        );
        let e = parse(
            "--listen 127.0.0.1:1 --cert c --key k --next-hop 127.0.0.1:1 --next-hop-name a --next-hop-ca x",
        )
        .unwrap_err();
        assert!(e.contains("own --listen address"), "{e}");
        let e = parse("--next-hop-name bad_name!").unwrap_err();
        assert!(e.starts_with("--next-hop-name:"), "{e}");
        let e = parse(&BASE.replace(" --next-hop-ca gw.pem", "")).unwrap_err();
        assert!(e.contains("--next-hop-ca is required"), "{e}");
    }

    #[test]
    fn help_and_version() {
        let help = parse("--help").unwrap_err();
        for spec in quic_keys::specs() {
            assert!(help.contains(&spec.name), "--help lists {}", spec.name);
        }
        assert!(help.contains("--next-hop-ca"), "{help}");
        assert!(parse("--version")
            .unwrap_err()
            .starts_with("printed quic-pep "));
    }

    #[test]
    fn a_repeated_flag_takes_the_last_value() {
        let c = config("--alpn a --alpn b,c --label x --label y");
        assert_eq!(c.alpn, vec![b"b".to_vec(), b"c".to_vec()]);
        assert_eq!(c.label, "y");
    }
}
