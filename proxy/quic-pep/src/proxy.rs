//! The listening side: the client-facing endpoint, admission up to
//! `--max-connections`, the two handshake modes, then `relay::run`.
//!
//! Handshake modes (Kosek et al.):
//! - parallel (default): the client is accepted at once; as soon as its
//!   ClientHello has been processed (quinn's `handshake_data`, which carries
//!   the ALPN the proxy chose from `--alpn`), the next hop is dialled with
//!   that ALPN, and both handshakes run side by side. Streams the client
//!   opens meanwhile wait in quinn's buffers (within flow control).
//! - `--h3`: the next hop first. The client's connection attempt (quinn's
//!   `Incoming`) is held, unanswered, while the proxy connects to the next
//!   hop offering `--alpn`; the client is then accepted with exactly the
//!   ALPN the next hop chose and the next hop's stream limits
//!   (initial_max_streams_bidi/uni), so HTTP/3's control and QPACK streams,
//!   relayed unchanged, see the same limits end to end. quinn 0.11 does not
//!   show a client's ClientHello before it is accepted (quinn issue #2024),
//!   so the next hop is offered `--alpn` rather than the client's own list.
//!
//! `--transparent` (with the tunnel): Proxy-ST's listener is a transparent
//! socket that TPROXY hands QUIC to any address; each client connection's
//! destination (`transparent::destination`) and the name it asked for go to
//! Proxy-GW in its Open, which dials them (`transparent::dial_target`).

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Instant;

use quinn::{Connecting, Incoming, VarInt};

use crate::cli::{Config, Mode, Role};
use crate::close::{self, Ended};
use crate::hop::{NextHop, Upstream};
use crate::limits::{self, Admission, Refusals};
use crate::log::Log;
use crate::qpep;
use crate::relay;
use crate::stats::Stats;
use crate::streams::Side;
use crate::tls;
use crate::transparent;
use crate::transport::{QlogDir, SideTransport};
use crate::tunnel::frame::Target;
use crate::tunnel::{self, Tunnel};

pub struct Proxy {
    pub cfg: Config,
    endpoint: quinn::Endpoint,
    hop: NextHop,
    server_tls: rustls::ServerConfig,
    accept: SideTransport,
    admission: Arc<Admission>,
    refusals: std::sync::Mutex<Refusals>,
    pub stats: Arc<Stats>,
    pub log: Arc<Log>,
    next_id: AtomicU64,
    /// Proxy-ST with `--tunnel`: the tunnel, while it is up.
    tunnel: tokio::sync::watch::Sender<Option<Arc<Tunnel>>>,
    /// Proxy-ST with `--qpep-listen`: the TCP listener, until `run` takes it.
    qpep_listener: std::sync::Mutex<Option<tokio::net::TcpListener>>,
}

impl Proxy {
    /// Loads certificates, sizes the windows under the memory cap and binds
    /// both endpoints. Must run inside a tokio runtime.
    pub fn bind(cfg: Config, log: Arc<Log>) -> Result<Arc<Proxy>, String> {
        let st_transparent = cfg.transparent.is_some() && cfg.role == Some(Role::St);
        let server_tls = match st_transparent {
            true => tls::server_tls_per_name(Arc::new(tls::PerName::new(&cfg.cert, &cfg.key)?)),
            false => tls::server_tls(&cfg.cert, &cfg.key)?,
        };
        let client_tls = tls::client_tls_for(&cfg.trust)?;
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
        let hop = NextHop::new(cfg.next_hop.clone(), client_tls, connect)?;
        let mut server =
            quinn::ServerConfig::with_crypto(tls::with_alpn(&server_tls, cfg.alpn.clone()));
        // Every connection is accepted with its own config (`server_config`);
        // this default one only has to exist, and writes no qlog.
        let plain = SideTransport {
            qlog: None,
            ..accept.clone()
        };
        server.transport_config(Arc::new(plain.config(0)?));
        // Attempts beyond the cap are refused one by one in `handle`; this
        // only bounds what quinn queues before we see them.
        server.max_incoming(cfg.max_connections.saturating_mul(2).max(16));
        let qpep_listener = qpep::listen(&cfg.qpep)?;
        let endpoint = match st_transparent {
            true => transparent_endpoint(server, cfg.listen)?,
            false => quinn::Endpoint::server(server, cfg.listen)
                .map_err(|e| format!("--listen {}: {e}", cfg.listen))?,
        };
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
            stats: Arc::new(Stats::default()),
            log,
            next_id: AtomicU64::new(1),
            tunnel: tokio::sync::watch::channel(None).0,
            qpep_listener: std::sync::Mutex::new(qpep_listener),
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
            let connect = move || -> tunnel::BoxFuture<_> {
                let p = p.clone();
                Box::pin(async move { p.hop.connect_tunnel().await })
            };
            tokio::spawn(tunnel::dial::keep_up(
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
        for task in [keeper, qpep].into_iter().flatten() {
            task.abort();
        }
        self.endpoint.close(0u32.into(), b"quic-pep: shutting down");
        self.hop.close(0, b"quic-pep: shutting down");
        let idle = async {
            tokio::join!(self.endpoint.wait_idle(), self.hop.wait_idle());
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
                Some(Role::Gw) => self.tunnel_from(incoming).await,
                _ => self.over_tunnel(id, incoming).await,
            };
            self.stats.active.fetch_sub(1, Relaxed);
            drop(ticket);
            self.log.line(&line);
            return;
        }
        let pair = match self.cfg.mode {
            Mode::Parallel => self.parallel(id, incoming).await,
            Mode::H3 => self.far_first(id, incoming).await,
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

    fn server_config(
        &self,
        id: u64,
        alpn: Vec<Vec<u8>>,
        far: Option<&Upstream>,
    ) -> Result<quinn::ServerConfig, String> {
        let mut t = self.accept.config(id)?;
        if let Some(l) = far.and_then(|u| u.limits) {
            let v = |x: u64| VarInt::from_u64(x).unwrap_or(VarInt::MAX);
            t.max_concurrent_bidi_streams(v(l.max_streams_bidi));
            t.max_concurrent_uni_streams(v(l.max_streams_uni));
        }
        let mut c = quinn::ServerConfig::with_crypto(tls::with_alpn(&self.server_tls, alpn));
        c.transport_config(Arc::new(t));
        Ok(c)
    }

    /// Default mode: both handshakes at once.
    async fn parallel(
        &self,
        id: u64,
        incoming: Incoming,
    ) -> Result<(quinn::Connection, Upstream), String> {
        let cfg = self.server_config(id, self.cfg.alpn.clone(), None)?;
        let mut connecting: Connecting = incoming
            .accept_with(Arc::new(cfg))
            .map_err(|e| format!("client side: {e}"))?;
        // Ready once the ClientHello is processed, long before the handshake ends.
        let hd = connecting
            .handshake_data()
            .await
            .map_err(|e| format!("client side: {}", Ended::from(&e).describe()))?;
        let alpn =
            tls::negotiated_alpn(Some(hd)).map_or_else(|| self.cfg.alpn.clone(), |a| vec![a]);
        let (near, far) = tokio::join!(connecting, self.hop.connect(alpn, id));
        match (near, far) {
            (Ok(n), Ok(f)) => {
                self.stats.accepted.fetch_add(1, Relaxed);
                Ok((n, f))
            }
            (Ok(n), Err(ended)) => {
                self.stats.accepted.fetch_add(1, Relaxed);
                self.refuse_near(&n, &ended);
                Err(format!("next hop: {}", ended.describe()))
            }
            (Err(e), far) => {
                let ended = Ended::from(&e);
                if let Ok(f) = far {
                    if let Some(c) = close::relay_close(&ended, Side::Near.name()) {
                        f.conn
                            .close(VarInt::from_u64(c.code).unwrap_or(VarInt::MAX), &c.reason);
                    }
                }
                Err(format!("client side: {}", ended.describe()))
            }
        }
    }

    /// `--h3`: the next hop first, then the client with its ALPN and limits.
    async fn far_first(
        &self,
        id: u64,
        incoming: Incoming,
    ) -> Result<(quinn::Connection, Upstream), String> {
        let far = match self.hop.connect(self.cfg.alpn.clone(), id).await {
            Ok(f) => f,
            Err(ended) => {
                // The client has had no answer yet: refusing tells it at once.
                self.refuse(incoming);
                return Err(format!("next hop: {}", ended.describe()));
            }
        };
        let alpn = far
            .alpn
            .clone()
            .map_or_else(|| self.cfg.alpn.clone(), |a| vec![a]);
        let cfg = self.server_config(id, alpn, Some(&far))?;
        let near = match incoming.accept_with(Arc::new(cfg)) {
            Ok(c) => c.await,
            Err(e) => Err(e),
        };
        match near {
            Ok(n) => {
                self.stats.accepted.fetch_add(1, Relaxed);
                Ok((n, far))
            }
            Err(e) => {
                let ended = Ended::from(&e);
                match close::relay_close(&ended, Side::Near.name()) {
                    Some(c) => far
                        .conn
                        .close(VarInt::from_u64(c.code).unwrap_or(VarInt::MAX), &c.reason),
                    None => far.conn.close(0u32.into(), b""),
                }
                Err(format!("client side: {}", ended.describe()))
            }
        }
    }

    /// Proxy-GW with `--tunnel`: a tunnel from Proxy-ST, served until it
    /// closes; each client connection it carries gets its own origin
    /// connection.
    async fn tunnel_from(self: &Arc<Self>, incoming: Incoming) -> String {
        let remote = incoming.remote_address();
        let started = Instant::now();
        let mut cfg = quinn::ServerConfig::with_crypto(tls::with_alpn(
            &self.server_tls,
            vec![tunnel::ALPN.to_vec()],
        ));
        match tunnel::transport(&self.accept, false) {
            Ok(t) => cfg.transport_config(Arc::new(t)),
            Err(e) => return format!("tunnel from {remote} failed: {e}"),
        };
        let conn = match incoming.accept_with(Arc::new(cfg)) {
            Ok(c) => c.await,
            Err(e) => Err(e),
        };
        let conn = match conn {
            Ok(c) => c,
            Err(e) => {
                self.stats.failed.fetch_add(1, Relaxed);
                return format!(
                    "tunnel from {remote} failed: {}",
                    Ended::from(&e).describe()
                );
            }
        };
        self.stats.accepted.fetch_add(1, Relaxed);
        let t = match Tunnel::new(
            conn.clone(),
            tunnel::End::Gw,
            self.stats.clone(),
            self.log.clone(),
        )
        .await
        {
            Ok(t) => t,
            Err(e) => return format!("tunnel from {remote} failed: {e}"),
        };
        self.stats.tunnel.up(&conn, started.elapsed());
        self.log.line(&format!("tunnel from {remote} up"));
        let p = self.clone();
        let dial: tunnel::Dialer = Arc::new(move |id, alpn, to| {
            let p = p.clone();
            Box::pin(async move { p.dial_origin(id, alpn, to).await })
        });
        // `--spare`: an origin connection ready for the next client
        // connection, first with the ALPN clients are most likely to agree on.
        let spare = tunnel::spare::Spare::new(dial.clone(), self.stats.clone());
        let take: tunnel::Dialer = match self.cfg.alpn.first().filter(|_| self.cfg.spare) {
            Some(alpn) => {
                spare.prepare(alpn.clone());
                let spare = spare.clone();
                Arc::new(move |id, alpn, to| {
                    let (spare, dial) = (spare.clone(), dial.clone());
                    Box::pin(async move {
                        match to {
                            None => spare.take(id, alpn).await,
                            // refused by dial_origin: the spare is the fixed next hop's
                            to => dial(id, alpn, to).await,
                        }
                    })
                })
            }
            None => dial,
        };
        let gw = Arc::new(qpep::Gw {
            allow: self.cfg.qpep.allow.clone(),
            connect_cc: self.cfg.qpep.connect_cc.clone(),
            spares: std::sync::Mutex::new(crate::tcp_spares::Spares::new(self.cfg.qpep.spares)),
            stats: self.stats.clone(),
            log: self.log.clone(),
        });
        let tcp: tunnel::TcpHandler = Arc::new(move |dst, send, recv| {
            let gw = gw.clone();
            Box::pin(async move { gw.carry(dst, send, recv).await })
        });
        t.serve(tunnel::Handlers {
            dial: Some(take),
            tcp: Some(tcp),
        })
        .await;
        self.stats.tunnel.down();
        format!(
            "tunnel from {remote} closed ({})",
            conn.close_reason()
                .map_or("-".into(), |e| Ended::from(&e).describe())
        )
    }

    /// Proxy-GW: the origin connection of one client connection: the
    /// destination it names with `--transparent`, else `--next-hop`.
    async fn dial_origin(
        &self,
        id: u64,
        alpn: Vec<u8>,
        to: Option<Target>,
    ) -> Result<quinn::Connection, Ended> {
        let target =
            transparent::dial_target(self.cfg.transparent.as_ref(), to.as_ref(), self.cfg.listen)
                .map_err(Ended::Failed)?;
        let up = match target {
            Some((addr, name)) => self.hop.connect_to(addr, &name, vec![alpn], id).await,
            None => self.hop.connect(vec![alpn], id).await,
        };
        up.map(|u| u.conn)
    }

    /// Proxy-ST with `--tunnel`: the client is accepted at once and
    /// carried over the standing tunnel (held for a while if the tunnel is
    /// being dialled).
    async fn over_tunnel(&self, id: u64, incoming: Incoming) -> String {
        let remote = incoming.remote_address();
        let started = Instant::now();
        // `--transparent`: where the client meant to go
        let dst = match &self.cfg.transparent {
            Some(tr) => {
                match transparent::destination(tr.to, incoming.local_ip(), self.cfg.listen) {
                    Ok(d) => Some(d),
                    Err(why) => {
                        self.stats.failed.fetch_add(1, Relaxed);
                        self.refuse(incoming);
                        return format!("conn {id} from {remote} refused: {why}");
                    }
                }
            }
            None => None,
        };
        let t = match tunnel::dial::wait_up(self.tunnel.subscribe()).await {
            Some(t) => t,
            None => {
                self.stats.failed.fetch_add(1, Relaxed);
                self.refuse(incoming);
                return format!("conn {id} from {remote} failed: the tunnel is down");
            }
        };
        let near = match self.server_config(id, self.cfg.alpn.clone(), None) {
            Ok(cfg) => match incoming.accept_with(Arc::new(cfg)) {
                Ok(c) => c.await.map_err(|e| Ended::from(&e).describe()),
                Err(e) => Err(Ended::from(&e).describe()),
            },
            Err(e) => Err(e),
        };
        let near = match near {
            Ok(n) => n,
            Err(why) => {
                self.stats.failed.fetch_add(1, Relaxed);
                return format!("conn {id} from {remote} failed: client side: {why}");
            }
        };
        let alpn = tls::negotiated_alpn(near.handshake_data()).unwrap_or_default();
        let to = dst.map(|addr| Target {
            addr,
            name: tls::server_name(near.handshake_data()).unwrap_or_default(),
        });
        self.stats.accepted.fetch_add(1, Relaxed);
        self.stats.relayed.fetch_add(1, Relaxed);
        if let Some(t) = &to {
            self.stats
                .destinations
                .count(std::net::SocketAddr::V4(t.addr), &t.name);
        }
        self.log.line(&format!(
            "conn {id} carried over the tunnel from {remote}{} alpn={} setup_ms={}",
            to.as_ref().map_or(String::new(), |t| format!(
                " to {} name={}",
                t.addr,
                tunnel::or_dash(&t.name)
            )),
            String::from_utf8_lossy(&alpn),
            started.elapsed().as_millis()
        ));
        let out = t.carry_client(id, near, alpn, to).await;
        self.stats.closed.fetch_add(1, Relaxed);
        format!("conn {id} {}", out.describe())
    }

    fn refuse_near(&self, near: &quinn::Connection, ended: &Ended) {
        let c = close::relay_close(ended, Side::Far.name()).unwrap_or(close::Close {
            code: close::PEP_ERROR,
            reason: b"quic-pep: next hop unavailable".to_vec(),
        });
        near.close(VarInt::from_u64(c.code).unwrap_or(VarInt::MAX), &c.reason);
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
        crate::cli::Trust::Cert(p) => format!("certificate {}", p.display()),
        crate::cli::Trust::Spki(pin) => format!("key {pin}"),
    };
    match (&cfg.next_hop, &cfg.transparent) {
        (Some((a, n)), _) if matches!(cfg.trust, crate::cli::Trust::Cert(_)) => {
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
