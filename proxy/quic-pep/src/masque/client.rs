//! I/O: Proxy-ST as a MASQUE client (`--masque-via`). nftables TPROXY
//! hands the clients' UDP to one transparent socket (`--listen`), which
//! learns each datagram's original destination (IP_ORIGDSTADDR). Each flow
//! (`flows::FlowKey`) gets one CONNECT-UDP request over the one HTTP/3
//! connection to Proxy-GW, kept up here; its payloads cross as HTTP/3
//! Datagrams (context 0), sent from the request on, before Proxy-GW's
//! answer (which keeps them for the request: `early`); a refusal ends it.
//! The answers leave from a socket of the flow's own, bound with
//! IP_TRANSPARENT to the original destination and connected to the
//! client: the client sees the origin answer, and TPROXY hands the flow's
//! later datagrams to that socket. Nothing here holds a key the client
//! trusts: the client's QUIC stays end to end. Decisions are `flows`'.

use std::collections::HashMap;
use std::io::IoSliceMut;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use nix::sys::socket::{self, sockopt, ControlMessageOwned, MsgFlags, SockaddrIn, SockaddrStorage};
use quinn::VarInt;
use tokio::io::Interest;
use tokio::net::UdpSocket;
use tokio::sync::{mpsc, watch};

use super::datagram::{self, UDP_CONTEXT};
use super::flows::{self, FlowKey, Flows, Route};
use super::stats::MasqueStats;
use crate::cli::Config;
use crate::log::Log;
use crate::stats::Stats;
use crate::streams::Side;
use crate::tls;
use crate::transport::{QlogDir, SideTransport};

/// `--masque-via`'s settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// Proxy-GW's `--masque-listen`, and its name (`--next-hop-name`).
    pub via: SocketAddr,
    pub name: String,
    /// `--masque-to`: every datagram's destination (tests, no TPROXY).
    pub to: Option<SocketAddrV4>,
    /// `--masque-idle-ms`.
    pub idle: Duration,
}

/// A flow's payloads waiting for its request to be accepted, or for the
/// connection; beyond, they are dropped (RFC 9298 §6: no batching).
const QUEUE: usize = 256;

/// Flows carried at once; datagrams of more are dropped.
const MAX_FLOWS: usize = 4096;

/// Between dials of Proxy-GW while it does not answer.
const REDIAL: Duration = Duration::from_millis(500);

type SendRequest = h3::client::SendRequest<h3_quinn::OpenStreams, Bytes>;
type RequestStream = h3::client::RequestStream<h3_quinn::BidiStream<Bytes>, Bytes>;

/// An open flow, as the answers from Proxy-GW find it by its stream ID.
struct Open {
    /// Bound to the original destination, connected to the client.
    socket: Arc<UdpSocket>,
    /// The latest answer (the idle timer's other half), and how many.
    last_down: Mutex<Instant>,
    down: AtomicU64,
}

type Routes = Arc<Mutex<HashMap<u64, Arc<Open>>>>;

/// The HTTP/3 connection to Proxy-GW, while it is up.
#[derive(Clone)]
struct Gw {
    conn: quinn::Connection,
    send: SendRequest,
    routes: Routes,
}

pub struct Client {
    settings: Settings,
    listen: SocketAddr,
    socket: UdpSocket,
    endpoint: quinn::Endpoint,
    tls: rustls::ClientConfig,
    side: SideTransport,
    gw: watch::Sender<Option<Gw>>,
    flows: Mutex<Flows<mpsc::Sender<Bytes>>>,
    pub stats: Arc<Stats>,
    log: Arc<Log>,
    next_id: AtomicU64,
}

impl Client {
    /// Binds the transparent listener and the endpoint towards Proxy-GW.
    /// Must run inside a tokio runtime.
    pub fn bind(cfg: &Config, settings: Settings, log: Arc<Log>) -> Result<Arc<Client>, String> {
        let what = format!("--listen {}", cfg.listen);
        let socket = intercepting_socket(cfg.listen).map_err(|e| format!("{what}: {e}"))?;
        let listen = socket.local_addr().map_err(|e| format!("{what}: {e}"))?;
        let trust = cfg
            .trust
            .as_ref()
            .ok_or("--next-hop-ca or --next-hop-spki is required (Proxy-GW's)")?;
        let mut tls = tls::client_tls_for(trust)?;
        tls.alpn_protocols = vec![b"h3".to_vec()];
        let mut side = SideTransport::new(Side::Far, cfg.connect.clone());
        if let Some(dir) = &cfg.qlog_dir {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("--qlog-dir {}: {e}", dir.display()))?;
            side.qlog = Some(QlogDir {
                dir: dir.clone(),
                label: cfg.label.clone(),
            });
        }
        let stats = Arc::new(Stats::default());
        let unbound = |e: std::io::Error| {
            format!(
                "--masque-via {}: cannot bind a UDP socket: {e}",
                settings.via
            )
        };
        let any = std::net::SocketAddr::from((Ipv4Addr::UNSPECIFIED, 0));
        let endpoint = match cfg.fec {
            None => quinn::Endpoint::client(any).map_err(unbound)?,
            // the code under the satellite hop, as Proxy-GW's --masque-listen has it
            Some(on_hop) => {
                side.reorder_packets = Some(on_hop.setting.n() as u32);
                let socket = std::net::UdpSocket::bind(any).map_err(unbound)?;
                let (e, f) = crate::fec::socket::endpoint(socket, None, on_hop)?;
                stats.fec.lock().unwrap().push(f);
                e
            }
        };
        log.line(&format!(
            "listening on {listen}/udp (MASQUE client: each flow {}, a CONNECT-UDP request \
             to {} ({}); nothing decrypted), satellite side: {}, flows idle after {} ms",
            match settings.to {
                Some(to) => format!("taken as sent to {to}"),
                None => "to its original destination".into(),
            },
            settings.via,
            settings.name,
            side.describe(),
            settings.idle.as_millis()
        ));
        Ok(Arc::new(Client {
            settings,
            listen,
            socket,
            endpoint,
            tls,
            side,
            gw: watch::channel(None).0,
            flows: Mutex::new(Flows::new(MAX_FLOWS)),
            stats,
            log,
            next_id: AtomicU64::new(1),
        }))
    }

    fn masque(&self) -> &MasqueStats {
        &self.stats.masque
    }

    /// Carries flows until `shutdown` resolves.
    pub async fn run(self: Arc<Self>, shutdown: impl std::future::Future<Output = ()>) {
        tokio::pin!(shutdown);
        let keeper = tokio::spawn(self.clone().keep_up());
        let mut buf = vec![0u8; datagram::MAX_UDP_PAYLOAD];
        loop {
            tokio::select! {
                got = recv_with_destination(&self.socket, &mut buf) => match got {
                    Ok((n, from, orig)) => self.dispatch(&buf[..n], from, orig),
                    Err(e) => {
                        self.log.line(&format!("--listen {}: {e}", self.listen));
                        tokio::time::sleep(Duration::from_millis(10)).await;
                    }
                },
                _ = &mut shutdown => break,
            }
        }
        keeper.abort();
        self.endpoint
            .close(VarInt::from_u32(0x100), b"quic-pep: shutting down");
        let _ = tokio::time::timeout(Duration::from_millis(1000), self.endpoint.wait_idle()).await;
    }

    /// Keeps the HTTP/3 connection to Proxy-GW up: dials at start and
    /// again whenever it ends.
    async fn keep_up(self: Arc<Self>) {
        for dial in 1u64.. {
            match self.dial(dial).await {
                Ok((gw, driver)) => {
                    self.masque().connections.fetch_add(1, Relaxed);
                    self.log.line(&format!(
                        "masque connection {dial} to {} up (rtt {} ms)",
                        self.settings.via,
                        gw.conn.rtt().as_millis()
                    ));
                    let conn = gw.conn.clone();
                    let reader = tokio::spawn(self.clone().read_datagrams(gw.clone()));
                    self.gw.send_replace(Some(gw));
                    let why = driver.await.unwrap_or_else(|e| e.to_string());
                    self.gw.send_replace(None);
                    reader.abort();
                    self.log.line(&format!(
                        "masque connection {dial} to {} down: {why}",
                        self.settings.via
                    ));
                    conn.close(VarInt::from_u32(0), b"");
                }
                Err(e) => {
                    self.log.line(&format!(
                        "masque connection {dial} to {} failed: {e}",
                        self.settings.via
                    ));
                    tokio::time::sleep(REDIAL).await;
                }
            }
        }
    }

    /// One HTTP/3 connection to Proxy-GW, and its driver's task (which
    /// ends, with why, when the connection does).
    async fn dial(&self, n: u64) -> Result<(Gw, tokio::task::JoinHandle<String>), String> {
        let (t, _) = crate::tunnel::transport(&self.side, true, n, None)?;
        let crypto = quinn::crypto::rustls::QuicClientConfig::try_from(self.tls.clone())
            .map_err(|e| e.to_string())?;
        let mut cfg = quinn::ClientConfig::new(Arc::new(crypto));
        cfg.transport_config(Arc::new(t));
        let conn = self
            .endpoint
            .connect_with(cfg, self.settings.via, &self.settings.name)
            .map_err(|e| e.to_string())?
            .await
            .map_err(|e| e.to_string())?;
        let (mut driver, send) = h3::client::builder()
            .enable_extended_connect(true)
            .enable_datagram(true)
            .build::<_, _, Bytes>(h3_quinn::Connection::new(conn.clone()))
            .await
            .map_err(|e| format!("HTTP/3: {e}"))?;
        let drive = tokio::spawn(async move {
            std::future::poll_fn(|cx| driver.poll_close(cx))
                .await
                .to_string()
        });
        Ok((
            Gw {
                conn,
                send,
                routes: Routes::default(),
            },
            drive,
        ))
    }

    /// Proxy-GW's HTTP/3 Datagrams, each to its flow's client.
    async fn read_datagrams(self: Arc<Self>, gw: Gw) {
        let s = self.masque();
        while let Ok(frame) = gw.conn.read_datagram().await {
            let open = datagram::decode(&frame).ok().and_then(|d| {
                let udp = match datagram::udp_payload(d.payload) {
                    Some((UDP_CONTEXT, udp)) => udp,
                    _ => return None,
                };
                let open = gw.routes.lock().unwrap().get(&d.stream_id).cloned()?;
                Some((open, frame.len() - udp.len()))
            });
            let Some((open, at)) = open else {
                s.dropped.fetch_add(1, Relaxed);
                continue;
            };
            let udp = &frame[at..];
            *open.last_down.lock().unwrap() = Instant::now();
            // counted before it leaves: the client may have it, and ask for
            // the stats, before this task runs again
            let len = udp.len() as u64;
            open.down.fetch_add(1, Relaxed);
            s.datagrams_down.fetch_add(1, Relaxed);
            s.bytes_down.fetch_add(len, Relaxed);
            // never wait on one client's socket: the other flows' answers queue behind
            if open.socket.try_send(udp).is_err() {
                open.down.fetch_sub(1, Relaxed);
                s.datagrams_down.fetch_sub(1, Relaxed);
                s.bytes_down.fetch_sub(len, Relaxed);
                s.dropped.fetch_add(1, Relaxed);
            }
        }
    }

    /// A datagram from a client: to its flow, opened if new.
    fn dispatch(self: &Arc<Self>, payload: &[u8], from: SocketAddr, orig: Option<SocketAddr>) {
        let key = match flows::flow_key(from, orig, self.settings.to, self.listen) {
            Ok(k) => k,
            Err(why) => {
                self.masque().dropped.fetch_add(1, Relaxed);
                self.log.line(&format!("masque: a datagram dropped: {why}"));
                return;
            }
        };
        let mut table = self.flows.lock().unwrap();
        let queue = match table.route(&key) {
            Route::To(q) => q,
            Route::Full => {
                self.masque().dropped.fetch_add(1, Relaxed);
                return;
            }
            Route::Open => {
                let (tx, rx) = mpsc::channel(QUEUE);
                table.insert(key, tx.clone());
                tokio::spawn(self.clone().flow(key, rx));
                tx
            }
        };
        drop(table);
        if queue.try_send(Bytes::copy_from_slice(payload)).is_err() {
            self.masque().dropped.fetch_add(1, Relaxed);
        }
    }

    /// One flow, from its first datagram to its end.
    async fn flow(self: Arc<Self>, key: FlowKey, rx: mpsc::Receiver<Bytes>) {
        let id = self.next_id.fetch_add(1, Relaxed);
        let started = Instant::now();
        let line = match self.carry(id, key, rx).await {
            Ok((end, up, down)) => format!(
                "masque flow {id} {key} closed by {end} up={up} down={down} duration_ms={}",
                started.elapsed().as_millis()
            ),
            Err(why) => {
                self.masque().failed.fetch_add(1, Relaxed);
                format!("masque flow {id} {key} failed: {why}")
            }
        };
        self.flows.lock().unwrap().remove(&key);
        self.log.line(&line);
    }

    /// Opens the flow's request and relays until it ends: how it ended and
    /// the payloads each way; an error when Proxy-GW refused it or never
    /// answered.
    async fn carry(
        &self,
        id: u64,
        key: FlowKey,
        mut rx: mpsc::Receiver<Bytes>,
    ) -> Result<(&'static str, u64, u64), String> {
        let s = self.masque();
        let socket =
            Arc::new(answering_socket(key).map_err(|e| format!("a socket from {}: {e}", key.dst))?);
        let gw = tokio::time::timeout(
            self.settings.idle,
            self.gw.subscribe().wait_for(|g| g.is_some()),
        )
        .await
        .map_err(|_| format!("no connection to Proxy-GW {}", self.settings.via))?
        .map_err(|e| e.to_string())?
        .clone()
        .expect("waited for it");
        s.requests.fetch_add(1, Relaxed);
        let authority = format!("{}:{}", self.settings.name, self.settings.via.port());
        let mut send = gw.send.clone();
        let mut stream = tokio::time::timeout(
            self.settings.idle,
            send.send_request(flows::request(&authority, key.dst)),
        )
        .await
        .map_err(|_| "Proxy-GW did not take the request".to_string())?
        .map_err(|e| format!("request: {e}"))?;
        // The flow's datagrams go from now on, not once Proxy-GW has
        // answered (RFC 9298 §5 lets a client): over a satellite the answer
        // is a round trip away, and Proxy-GW keeps them for the request.
        let sid = stream.id().into_inner();
        self.log.line(&format!(
            "masque flow {id} {key} requested on stream {sid} of {}",
            self.settings.via
        ));
        let open = Arc::new(Open {
            socket: socket.clone(),
            last_down: Mutex::new(Instant::now()),
            down: AtomicU64::new(0),
        });
        gw.routes.lock().unwrap().insert(sid, open.clone());
        s.active.fetch_add(1, Relaxed);
        let (mut up, mut last_up) = (0u64, Instant::now());
        let mut buf = vec![0u8; datagram::MAX_UDP_PAYLOAD];
        let deadline = |last_up| {
            flows::idle_deadline(last_up, *open.last_down.lock().unwrap(), self.settings.idle)
        };
        let mut answered = false;
        let end = loop {
            let payload = tokio::select! {
                // what the client sent leaves before an answer is looked at
                biased;
                p = rx.recv() => match p {
                    Some(p) => p,
                    None => break Ok("proxy"),
                },
                // TPROXY hands the flow's later datagrams to its own socket
                r = socket.recv(&mut buf) => match r {
                    Ok(n) => Bytes::copy_from_slice(&buf[..n]),
                    Err(_) => break Ok("client socket"),
                },
                g = from_gw(&mut stream, answered) => match g {
                    FromGw::Accepted => {
                        answered = true;
                        s.proxied.fetch_add(1, Relaxed);
                        self.log.line(&format!("masque flow {id} {key} proxying on stream {sid}"));
                        continue;
                    }
                    FromGw::Refused(status, why) => {
                        s.refused(status);
                        break Err(why);
                    }
                    // capsules: none are sent to a client that takes datagrams
                    FromGw::Data => continue,
                    FromGw::Ended(why) if !answered => break Err(why),
                    FromGw::Ended(_) => break Ok("proxy-gw"),
                },
                // an answer since the timer was set moves the deadline on
                _ = tokio::time::sleep_until(deadline(last_up).into()) => match deadline(last_up) <= Instant::now() {
                    true if !answered => break Err("Proxy-GW did not answer the request".into()),
                    true => break Ok("idle"),
                    false => continue,
                },
            };
            last_up = Instant::now();
            // counted before it leaves: its answer may be back before this
            // task runs again
            let len = payload.len() as u64;
            s.datagrams_up.fetch_add(1, Relaxed);
            s.bytes_up.fetch_add(len, Relaxed);
            let sent = gw
                .conn
                .send_datagram(Bytes::from(datagram::encode_udp(sid, &payload)));
            if sent.is_err() {
                s.datagrams_up.fetch_sub(1, Relaxed);
                s.bytes_up.fetch_sub(len, Relaxed);
            }
            match sent {
                Ok(()) => up += 1,
                Err(quinn::SendDatagramError::ConnectionLost(_)) => break Ok("connection lost"),
                Err(_) => {
                    s.dropped.fetch_add(1, Relaxed);
                }
            }
        };
        gw.routes.lock().unwrap().remove(&sid);
        s.active.fetch_sub(1, Relaxed);
        if end == Ok("idle") {
            s.closed_idle.fetch_add(1, Relaxed);
        }
        let _ = stream.finish().await;
        end.map(|end| (end, up, open.down.load(Relaxed)))
    }
}

/// What came from Proxy-GW on a flow's request stream.
enum FromGw {
    /// A 2xx: the request is open.
    Accepted,
    /// Another status, and why (its `Proxy-Status`).
    Refused(u16, String),
    /// Data on the stream after the answer.
    Data,
    /// The stream or connection ended, and how.
    Ended(String),
}

/// The next thing on the request stream: its answer until it has one
/// (`answered`), then its data.
async fn from_gw(stream: &mut RequestStream, answered: bool) -> FromGw {
    if answered {
        return match stream.recv_data().await {
            Ok(Some(_)) => FromGw::Data,
            Ok(None) => FromGw::Ended("the request stream ended".into()),
            Err(e) => FromGw::Ended(e.to_string()),
        };
    }
    match stream.recv_response().await {
        Err(e) => FromGw::Ended(format!("response: {e}")),
        Ok(resp) => {
            let proxy_status = resp
                .headers()
                .get("proxy-status")
                .and_then(|v| v.to_str().ok());
            match flows::accepted(resp.status().as_u16(), proxy_status) {
                Ok(()) => FromGw::Accepted,
                Err(why) => FromGw::Refused(resp.status().as_u16(), why),
            }
        }
    }
}

/// The listener: a transparent UDP socket that reports each datagram's
/// original destination.
fn intercepting_socket(listen: SocketAddr) -> std::io::Result<UdpSocket> {
    let s = std::net::UdpSocket::bind(listen)?;
    satbench_transport::tcp::set_transparent(&s).map_err(|e| {
        std::io::Error::new(
            e.kind(),
            format!("IP_TRANSPARENT: {e} (needs CAP_NET_ADMIN)"),
        )
    })?;
    socket::setsockopt(&s, sockopt::Ipv4OrigDstAddr, &true)?;
    s.set_nonblocking(true)?;
    UdpSocket::from_std(s)
}

/// A flow's own socket: bound to its original destination (IP_TRANSPARENT
/// allows an address that is not this host's; SO_REUSEADDR lets every
/// client of that destination have one) and connected to its client.
fn answering_socket(key: FlowKey) -> std::io::Result<UdpSocket> {
    let fd = socket::socket(
        socket::AddressFamily::Inet,
        socket::SockType::Datagram,
        socket::SockFlag::SOCK_NONBLOCK | socket::SockFlag::SOCK_CLOEXEC,
        None,
    )?;
    socket::setsockopt(&fd, sockopt::ReuseAddr, &true)?;
    satbench_transport::tcp::set_transparent(&fd)?;
    socket::bind(fd.as_raw_fd(), &SockaddrIn::from(key.dst))?;
    socket::connect(fd.as_raw_fd(), &SockaddrIn::from(key.client))?;
    UdpSocket::from_std(std::net::UdpSocket::from(fd))
}

/// The next datagram on `socket`: its length, sender and original
/// destination (IP_ORIGDSTADDR).
async fn recv_with_destination(
    socket: &UdpSocket,
    buf: &mut [u8],
) -> std::io::Result<(usize, SocketAddr, Option<SocketAddr>)> {
    socket
        .async_io(Interest::READABLE, || {
            let mut iov = [IoSliceMut::new(buf)];
            let mut cmsg = nix::cmsg_space!(nix::libc::sockaddr_in);
            let msg = socket::recvmsg::<SockaddrStorage>(
                socket.as_raw_fd(),
                &mut iov,
                Some(&mut cmsg),
                MsgFlags::empty(),
            )?;
            let from = msg
                .address
                .and_then(|a| a.as_sockaddr_in().map(|a| SocketAddr::V4((*a).into())))
                .ok_or_else(|| std::io::Error::other("a datagram without an IPv4 sender"))?;
            let orig = msg.cmsgs()?.find_map(|c| match c {
                ControlMessageOwned::Ipv4OrigDstAddr(a) => Some(SocketAddr::V4(SocketAddrV4::new(
                    Ipv4Addr::from(u32::from_be(a.sin_addr.s_addr)),
                    u16::from_be(a.sin_port),
                ))),
                _ => None,
            });
            Ok((msg.bytes, from, orig))
        })
        .await
}
