//! The listening side: the client-facing endpoint, admission up to
//! `--max-connections`, then one relay strategy per client connection,
//! each in a file of its own:
//! - `parallel` (default): both handshakes at once, then `relay::run`;
//! - `next_hop_first` (`--h3`): the next hop first, then the client with
//!   its ALPN and stream limits, then `relay::run`;
//! - `st_over_tunnel` (Proxy-ST with `--tunnel`): the client carried over
//!   the standing tunnel;
//! - `gw_tunnel` (Proxy-GW with `--tunnel`): a tunnel from Proxy-ST, whose
//!   client connections each get their own origin connection
//!   (`tunnel::origin`).
//!
//! `--transparent` (with the tunnel): Proxy-ST's listener is a transparent
//! socket that TPROXY hands QUIC to any address; each client connection's
//! destination (`transparent::destination`) and the name it asked for go to
//! Proxy-GW in its Open, which dials them (`transparent::dial_target`).

mod gw_tunnel;
mod next_hop_first;
mod parallel;
mod st_over_tunnel;

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Instant;

use quinn::{Incoming, VarInt};
use satbench_transport::careful_resume::{Resumer, Session};
use satbench_transport::conn_log::ConnectionLog;
use satbench_transport::quic_handshake::{self, Watch};

use crate::cli::{Config, Mode, Role};
use crate::hop::{NextHop, Upstream};
use crate::limits::{self, Admission, Refusals};
use crate::log::Log;
use crate::masque;
use crate::qpep;
use crate::relay;
use crate::stats::Stats;
use crate::streams::Side;
use crate::tls;
use crate::transport::{Conn, QlogDir, SideTransport};
use crate::tunnel::{self, Tunnel};

pub struct Proxy {
    pub cfg: Config,
    endpoint: quinn::Endpoint,
    /// Shared with each tunnel's `tunnel::origin::Origins` at Proxy-GW.
    hop: Arc<NextHop>,
    server_tls: rustls::ServerConfig,
    accept: SideTransport,
    admission: Arc<Admission>,
    refusals: std::sync::Mutex<Refusals>,
    pub stats: Arc<Stats>,
    pub log: Arc<Log>,
    /// `--conn-log`: a line per client connection once its handshake is done.
    conn_log: ConnectionLog,
    next_id: AtomicU64,
    /// Proxy-ST with `--tunnel`: the tunnel, while it is up.
    tunnel: tokio::sync::watch::Sender<Option<Arc<Tunnel>>>,
    /// Proxy-ST with `--qpep-listen`: the TCP listener, until `run` takes it.
    qpep_listener: std::sync::Mutex<Option<tokio::net::TcpListener>>,
    /// Proxy-GW with `--masque-listen`: the CONNECT-UDP listener.
    masque: Option<Arc<masque::server::Server>>,
}

impl Proxy {
    /// Loads certificates, sizes the windows under the memory cap and binds
    /// both endpoints. `--listen` may have port 0: from here on `cfg.listen`
    /// is the address bound, which the start-up line names (the tests read
    /// it there). Must run inside a tokio runtime.
    pub fn bind(mut cfg: Config, log: Arc<Log>) -> Result<Arc<Proxy>, String> {
        let st_transparent = cfg.transparent.is_some() && cfg.role == Some(Role::St);
        let (cert, key) = cfg
            .cert
            .as_deref()
            .zip(cfg.key.as_deref())
            .ok_or("--cert and --key are required")?;
        let server_tls = match st_transparent {
            true => tls::server_tls_per_name(Arc::new(tls::PerName::new(cert, key)?)),
            false => tls::server_tls(cert, key)?,
        };
        // session tickets that allow 0-RTT, as a deployed QUIC server's do
        let server_tls = quic_handshake::accept_0rtt(server_tls, true);
        let conn_log = ConnectionLog::open(cfg.conn_log.as_deref())?;
        let client_tls = match &cfg.trust {
            Some(trust) => tls::client_tls_for(trust)?,
            None => tls::client_tls_trusting_nothing(),
        };
        let mut accept = SideTransport::new(Side::Near, cfg.accept.clone());
        let mut connect = SideTransport::new(Side::Far, cfg.connect.clone());
        let mtu = u64::from(cfg.accept.initial_mtu.max(cfg.connect.initial_mtu)).max(1500);
        let relay_bytes = limits::relay_bytes(100, 100, mtu);
        let fit = limits::fit(
            accept.windows,
            connect.windows,
            relay_bytes,
            cfg.max_conn_memory,
        )?;
        if fit.clamped {
            log.line(&format!(
                "cap: --max-conn-memory {}: windows shrunk to fit (client side {} -> {}, next hop {} -> {} bytes each)",
                cfg.max_conn_memory,
                accept.windows.connection_receive,
                fit.accept.connection_receive,
                connect.windows.connection_receive,
                fit.connect.connection_receive
            ));
        }
        accept.windows = fit.accept;
        connect.windows = fit.connect;
        // the code goes on the socket that faces the satellite: Proxy-ST's
        // next-hop side, Proxy-GW's --listen
        let st_fec = cfg.fec.filter(|_| cfg.role == Some(Role::St));
        let gw_fec = cfg.fec.filter(|_| cfg.role == Some(Role::Gw));
        if let Some(f) = st_fec {
            connect.reorder_packets = Some(f.setting.n() as u32);
        }
        if let Some(f) = gw_fec {
            accept.reorder_packets = Some(f.setting.n() as u32);
        }
        if cfg.accept.careful_resume {
            let r = Resumer::new(&cfg.accept, cfg.careful_resume_log.as_deref())
                .map_err(|e| format!("--careful-resume-log {e}"))?;
            accept.resumer = Some(Arc::new(r));
        }
        if let Some(dir) = &cfg.qlog_dir {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("--qlog-dir {}: {e}", dir.display()))?;
            let q = QlogDir {
                dir: dir.clone(),
                label: cfg.label.clone(),
            };
            accept.qlog = Some(q.clone());
            connect.qlog = Some(q);
        }
        let (hop, mut fec) = NextHop::new(cfg.next_hop.clone(), client_tls, connect, st_fec)?;
        let hop = Arc::new(hop);
        let mut server =
            quinn::ServerConfig::with_crypto(tls::with_alpn(&server_tls, cfg.alpn.clone()));
        // Every connection is accepted with its own config (`server_config`);
        // this default one only has to exist, and writes no qlog.
        let plain = SideTransport {
            qlog: None,
            ..accept.clone()
        };
        server.transport_config(Arc::new(plain.config(Conn::Client(0))?));
        // Attempts beyond the cap are refused one by one in `handle`; this
        // only bounds what quinn queues before we see them.
        server.max_incoming(cfg.max_connections.saturating_mul(2).max(16));
        let qpep_listener = qpep::listen(&cfg.qpep)?;
        let endpoint = match (st_transparent, gw_fec) {
            (true, _) => transparent_endpoint(server, cfg.listen)?,
            (false, Some(on_hop)) => {
                let socket = std::net::UdpSocket::bind(cfg.listen)
                    .map_err(|e| format!("--listen {}: {e}", cfg.listen))?;
                let (e, f) = crate::fec::socket::endpoint(socket, Some(server), on_hop)?;
                fec = Some(f);
                e
            }
            (false, None) => quinn::Endpoint::server(server, cfg.listen)
                .map_err(|e| format!("--listen {}: {e}", cfg.listen))?,
        };
        cfg.listen = endpoint
            .local_addr()
            .map_err(|e| format!("--listen {}: {e}", cfg.listen))?;
        log.line(&format!(
            "listening on {}/udp{}, next hop {}, mode {}, alpn {}, client side: {}, next hop side: {}, \
             max {} connections of at most {} bytes",
            cfg.listen,
            match st_transparent {
                true => " (transparent: any destination TPROXY hands it)",
                false => "",
            },
            next_hop_text(&cfg),
            mode_name(cfg.mode),
            alpn_list(&cfg.alpn),
            accept.describe(),
            hop.transport.describe(),
            cfg.max_connections,
            fit.bound
        ));
        if let Some(l) = &qpep_listener {
            log.line(&qpep::listening(l, cfg.qpep.to)?);
        }
        let stats = Arc::new(Stats::default());
        if let Some(f) = fec {
            stats.fec.lock().unwrap().push(f);
        }
        let masque = match &cfg.masque {
            // the satellite hop's transport, as the tunnel's
            Some(m) => {
                let (server, coded) = masque::server::Server::bind(
                    m,
                    &server_tls,
                    plain.config(Conn::Client(0))?,
                    vec![cfg.listen],
                    &cfg.label,
                    stats.masque.clone(),
                    log.clone(),
                    gw_fec,
                )?;
                stats.fec.lock().unwrap().extend(coded);
                Some(server)
            }
            None => None,
        };
        Ok(Arc::new(Proxy {
            admission: Admission::new(cfg.max_connections),
            // a client retransmits its Initial for a few seconds at most
            refusals: std::sync::Mutex::new(Refusals::new(
                std::time::Duration::from_secs(10),
                4096,
            )),
            cfg,
            endpoint,
            hop,
            server_tls,
            accept,
            stats,
            log,
            conn_log,
            next_id: AtomicU64::new(1),
            tunnel: tokio::sync::watch::channel(None).0,
            qpep_listener: std::sync::Mutex::new(qpep_listener),
            masque,
        }))
    }

    pub fn local_addr(&self) -> std::io::Result<std::net::SocketAddr> {
        self.endpoint.local_addr()
    }

    /// Accepts and relays until `shutdown` resolves, then closes every
    /// connection on both sides.
    pub async fn run(self: Arc<Self>, shutdown: impl std::future::Future<Output = ()>) {
        tokio::pin!(shutdown);
        let keeper = (self.cfg.tunnel && self.cfg.role == Some(Role::St)).then(|| {
            let p = self.clone();
            let connect = move |dial| -> tunnel::BoxFuture<_> {
                let p = p.clone();
                Box::pin(async move { p.hop.connect_tunnel(dial).await })
            };
            tokio::spawn(tunnel::keep_up::keep_up(
                connect,
                self.tunnel.clone(),
                self.stats.clone(),
                self.log.clone(),
            ))
        });
        let qpep_listener = self.qpep_listener.lock().unwrap().take();
        let qpep = qpep_listener.map(|l| {
            let st = Arc::new(qpep::St {
                tunnel: self.tunnel.subscribe(),
                to: self.cfg.qpep.to,
                max_connections: self.cfg.max_connections,
                stats: self.stats.clone(),
                log: self.log.clone(),
            });
            tokio::spawn(st.accept_loop(l))
        });
        let masque = self.masque.clone().map(|m| tokio::spawn(m.run()));
        loop {
            tokio::select! {
                incoming = self.endpoint.accept() => match incoming {
                    Some(i) => {
                        tokio::spawn(self.clone().handle(i));
                    }
                    None => break,
                },
                _ = &mut shutdown => break,
            }
        }
        for task in [keeper, qpep, masque].into_iter().flatten() {
            task.abort();
        }
        self.endpoint.close(0u32.into(), b"quic-pep: shutting down");
        self.hop.close(0, b"quic-pep: shutting down");
        if let Some(m) = &self.masque {
            m.close();
        }
        let idle = async {
            let masque = async {
                if let Some(m) = &self.masque {
                    m.wait_idle().await;
                }
            };
            tokio::join!(self.endpoint.wait_idle(), self.hop.wait_idle(), masque);
        };
        // Long enough for the closes to go out and the qlog writers to be
        // dropped (flushed); short of the harness's 2 s before SIGKILL.
        let _ = tokio::time::timeout(std::time::Duration::from_millis(1000), idle).await;
    }

    fn refuse(&self, incoming: Incoming) {
        if let Ok(mut r) = self.refusals.lock() {
            r.remember(&incoming.orig_dst_cid(), Instant::now());
        }
        incoming.refuse();
    }

    async fn handle(self: Arc<Self>, incoming: Incoming) {
        let remote = incoming.remote_address();
        let cid = incoming.orig_dst_cid();
        if self
            .refusals
            .lock()
            .is_ok_and(|mut r| r.contains(&cid, Instant::now()))
        {
            // a retransmission of an attempt already refused
            incoming.ignore();
            return;
        }
        let Some(ticket) = self.admission.try_admit() else {
            self.stats.refused.fetch_add(1, Relaxed);
            self.log.line(&format!(
                "cap: --max-connections {} reached, refusing {remote}",
                self.admission.max()
            ));
            self.refuse(incoming);
            return;
        };
        self.stats.active.fetch_add(1, Relaxed);
        let id = self.next_id.fetch_add(1, Relaxed);
        let started = Instant::now();
        if self.cfg.tunnel {
            let line = match self.cfg.role {
                Some(Role::Gw) => self.tunnel_from(id, incoming).await,
                _ => self.over_tunnel(id, incoming).await,
            };
            self.stats.active.fetch_sub(1, Relaxed);
            drop(ticket);
            self.log.line(&line);
            return;
        }
        let pair = match self.cfg.mode {
            Mode::Parallel => self.parallel(id, incoming).await,
            Mode::H3 => self.next_hop_first(id, incoming).await,
        };
        // Counters first, then the log line: whoever reads the line finds
        // the counters (and the freed slot) already updated.
        let line = match pair {
            Ok((near, far)) => {
                self.stats.relayed.fetch_add(1, Relaxed);
                self.log.line(&format!(
                    "conn {id} relayed {remote} -> {} alpn={} next_hop_limits={} setup_ms={}",
                    far.conn.remote_address(),
                    far.alpn
                        .as_deref()
                        .map_or("-".into(), |a| String::from_utf8_lossy(a).into_owned()),
                    far.limits.map_or("-".into(), |l| format!(
                        "bidi:{},uni:{},data:{}",
                        l.max_streams_bidi, l.max_streams_uni, l.max_data
                    )),
                    started.elapsed().as_millis()
                ));
                let out =
                    relay::run(id, near, far.conn, self.stats.clone(), self.log.clone()).await;
                self.stats.closed.fetch_add(1, Relaxed);
                format!("conn {id} {}", out.describe())
            }
            Err(why) => {
                self.stats.failed.fetch_add(1, Relaxed);
                format!("conn {id} from {remote} failed: {why}")
            }
        };
        self.stats.active.fetch_sub(1, Relaxed);
        drop(ticket);
        self.log.line(&line);
    }

    /// The server configuration one client connection (`incoming`) is
    /// accepted with, its handshake watched (`log_handshake` writes what it
    /// showed), and its Careful Resume session (`self.accept.watch` it once
    /// accepted).
    fn server_config(
        &self,
        id: u64,
        alpn: Vec<Vec<u8>>,
        far: Option<&Upstream>,
        incoming: &quinn::Incoming,
    ) -> Result<(quinn::ServerConfig, Watch, Option<Session>), String> {
        let (mut t, session) = self.accept.accepted_config(
            Conn::Client(id),
            incoming.remote_address(),
            incoming.local_ip(),
        )?;
        if let Some(l) = far.and_then(|u| u.limits) {
            let v = |x: u64| VarInt::from_u64(x).unwrap_or(VarInt::MAX);
            t.max_concurrent_bidi_streams(v(l.max_streams_bidi));
            t.max_concurrent_uni_streams(v(l.max_streams_uni));
        }
        let mut c = quinn::ServerConfig::with_crypto(tls::with_alpn(&self.server_tls, alpn));
        c.transport_config(Arc::new(t));
        let (c, watch) = quic_handshake::watch(&c);
        Ok((c, watch, session))
    }

    /// The connection log's line of a client connection whose handshake
    /// is done. Over the tunnel a 0-RTT client's streams are taken before
    /// (st_over_tunnel), and counted as early; the other modes take them
    /// only after, so `early_requests` is 0 there even when 0-RTT carried one.
    fn log_handshake(&self, near: &quinn::Connection, watch: &Watch) {
        let alpn = tls::negotiated_alpn(near.handshake_data()).unwrap_or_default();
        self.conn_log.write(
            near.remote_address(),
            &watch.handshake(&String::from_utf8_lossy(&alpn)),
        );
    }

    pub fn mode_name(&self) -> &'static str {
        mode_name(self.cfg.mode)
    }
}

/// Proxy-ST with `--transparent`: the listening socket may receive what
/// TPROXY hands it for any address, and send from that address
/// (IP_TRANSPARENT).
fn transparent_endpoint(
    server: quinn::ServerConfig,
    listen: std::net::SocketAddr,
) -> Result<quinn::Endpoint, String> {
    let what = format!("--listen {listen}");
    let socket = std::net::UdpSocket::bind(listen).map_err(|e| format!("{what}: {e}"))?;
    satbench_transport::tcp::set_transparent(&socket)
        .map_err(|e| format!("{what}: IP_TRANSPARENT: {e} (needs CAP_NET_ADMIN)"))?;
    let runtime = quinn::default_runtime().ok_or_else(|| format!("{what}: no async runtime"))?;
    quinn::Endpoint::new(
        quinn::EndpointConfig::default(),
        Some(server),
        socket,
        runtime,
    )
    .map_err(|e| format!("{what}: {e}"))
}

/// Where connections go, for the start-up line.
fn next_hop_text(cfg: &Config) -> String {
    let trust = match &cfg.trust {
        Some(crate::cli::Trust::Cert(p)) => format!("certificate {}", p.display()),
        Some(crate::cli::Trust::Spki(pin)) => format!("key {pin}"),
        None => "no origin".into(),
    };
    match (&cfg.next_hop, &cfg.transparent) {
        (Some((a, n)), _) if matches!(cfg.trust, Some(crate::cli::Trust::Cert(_))) => {
            format!("{a} ({n})")
        }
        (Some((a, n)), _) => format!("{a} ({n}, trusting {trust})"),
        (None, Some(t)) => format!(
            "each client connection's own destination within {} (trusting {trust})",
            t.allow
                .iter()
                .map(|n| n.to_string())
                .collect::<Vec<_>>()
                .join(",")
        ),
        (None, None) => "none".into(),
    }
}

pub fn mode_name(m: Mode) -> &'static str {
    match m {
        Mode::Parallel => "parallel",
        Mode::H3 => "h3",
    }
}

fn alpn_list(a: &[Vec<u8>]) -> String {
    a.iter()
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect::<Vec<_>>()
        .join(",")
}
