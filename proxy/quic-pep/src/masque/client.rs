//! I/O: Proxy-ST as a MASQUE client (`--masque-via`). nftables TPROXY
//! hands the clients' UDP to one transparent socket (`--listen`), which
//! learns each datagram's original destination (IP_ORIGDSTADDR). Each flow
//! (`flows::FlowKey`) gets one CONNECT-UDP request over the one HTTP/3
//! connection to Proxy-GW, kept up here; its payloads cross as HTTP/3
//! Datagrams (context 0) or, with `--masque-mode stream`, as DATAGRAM
//! capsules on the request stream (`flows::Carry`), sent from the request
//! on, before Proxy-GW's answer (which keeps them for the request:
//! `early`, or the stream itself); a refusal ends it. Proxy-GW answers in
//! kind; whatever way an answer comes, it goes to the flow's client.
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

use bytes::{Buf, Bytes};
use nix::sys::socket::{self, sockopt, ControlMessageOwned, MsgFlags, SockaddrIn, SockaddrStorage};
use quinn::VarInt;
use tokio::io::Interest;
use tokio::net::UdpSocket;
use tokio::sync::{mpsc, watch};

use super::capsule::{self, Capsule};
use super::datagram::{self, UDP_CONTEXT};
use super::flows::{self, Carry, FlowKey, Flows, Route};
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
    /// `--masque-mode`.
    pub carry: Carry,
}

/// A flow's payloads waiting for its request to be accepted, or for the
/// connection; beyond, they are dropped (RFC 9298 §6: no batching).
const QUEUE: usize = 256;

/// Flows carried at once; datagrams of more are dropped.
const MAX_FLOWS: usize = 4096;

/// Between dials of Proxy-GW while it does not answer.
const REDIAL: Duration = Duration::from_millis(500);

type SendRequest = h3::client::SendRequest<h3_quinn::OpenStreams, Bytes>;
type SendHalf = h3::client::RequestStream<h3_quinn::SendStream<Bytes>, Bytes>;
type RecvHalf = h3::client::RequestStream<h3_quinn::RecvStream, Bytes>;

/// An open flow, as the answers from Proxy-GW find it by its stream ID.
struct Open {
    /// Bound to the original destination, connected to the client.
    socket: Arc<UdpSocket>,
    /// The latest answer (the idle timer's other half), and how many.
    last_down: Mutex<Instant>,
    down: AtomicU64,
}

impl Open {
    /// An answer from Proxy-GW to the flow's client, counted as it came
    /// (`capsule` or HTTP/3 Datagram). Never waits on the client's socket:
    /// the other flows' answers would queue behind it.
    fn answer(&self, udp: &[u8], capsule: bool, s: &MasqueStats) {
        *self.last_down.lock().unwrap() = Instant::now();
        let way = match capsule {
            true => &s.capsules_down,
            false => &s.datagrams_down,
        };
        // counted before it leaves: the client may have it, and ask for
        // the stats, before this task runs again
        let len = udp.len() as u64;
        self.down.fetch_add(1, Relaxed);
        way.fetch_add(1, Relaxed);
        s.bytes_down.fetch_add(len, Relaxed);
        if self.socket.try_send(udp).is_err() {
            self.down.fetch_sub(1, Relaxed);
            way.fetch_sub(1, Relaxed);
            s.bytes_down.fetch_sub(len, Relaxed);
            s.dropped.fetch_add(1, Relaxed);
        }
    }
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
        let _ = stats.masque.mode.set(settings.carry.name());
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
             to {} ({}), its packets as {}; nothing decrypted), satellite side: {}, flows idle \
             after {} ms",
            match settings.to {
                Some(to) => format!("taken as sent to {to}"),
                None => "to its original destination".into(),
            },
            settings.via,
            settings.name,
            match settings.carry {
                Carry::Datagram => "HTTP Datagrams",
                Carry::Stream => "capsules on the request stream",
            },
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
            match open {
                Some((open, at)) => open.answer(&frame[at..], false, s),
                None => {
                    s.dropped.fetch_add(1, Relaxed);
                }
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
        let stream = tokio::time::timeout(
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
        // Proxy-GW's side of the stream is read by a task of its own: a
        // capsule that waits for room on the way up must not stop the
        // answers coming down (each side would wait for the other's window)
        let (mut up_stream, down_stream) = stream.split();
        let (tell, mut told) = mpsc::channel(2);
        let reader = tokio::spawn(from_gw(
            down_stream,
            open.clone(),
            self.stats.masque.clone(),
            tell,
        ));
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
                g = told.recv() => match g.unwrap_or(FromGw::Ended("the request stream ended".into())) {
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
            let way = match self.settings.carry {
                Carry::Datagram => &s.datagrams_up,
                Carry::Stream => &s.capsules_up,
            };
            way.fetch_add(1, Relaxed);
            s.bytes_up.fetch_add(len, Relaxed);
            let sent = send_up(
                self.settings.carry,
                &gw.conn,
                &mut up_stream,
                sid,
                &payload,
                &s.displaced,
            )
            .await;
            if sent != Up::Gone {
                way.fetch_sub(1, Relaxed);
                s.bytes_up.fetch_sub(len, Relaxed);
            }
            match sent {
                Up::Gone => up += 1,
                Up::Dropped => {
                    s.dropped.fetch_add(1, Relaxed);
                }
                Up::Ended(end) => break Ok(end),
            }
        };
        reader.abort();
        gw.routes.lock().unwrap().remove(&sid);
        s.active.fetch_sub(1, Relaxed);
        if end == Ok("idle") {
            s.closed_idle.fetch_add(1, Relaxed);
        }
        let _ = up_stream.finish().await;
        end.map(|end| (end, up, open.down.load(Relaxed)))
    }
}

/// What came from Proxy-GW on a flow's request stream.
enum FromGw {
    /// A 2xx: the request is open.
    Accepted,
    /// Another status, and why (its `Proxy-Status`).
    Refused(u16, String),
    /// The stream or connection ended, and how.
    Ended(String),
}

/// Proxy-GW's side of a flow's request stream, told to the flow: its
/// answer, then until the stream ends its DATAGRAM capsules (the answers
/// to the flow's own capsules), each to the flow's client.
async fn from_gw(
    mut recv: RecvHalf,
    open: Arc<Open>,
    s: Arc<MasqueStats>,
    tell: mpsc::Sender<FromGw>,
) {
    let answer = match recv.recv_response().await {
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
    };
    let accepted = matches!(answer, FromGw::Accepted);
    if tell.send(answer).await.is_err() || !accepted {
        return;
    }
    let mut capsules = capsule::Reader::default();
    let why = 'stream: loop {
        match recv.recv_data().await {
            Ok(Some(mut data)) => capsules.push(&data.copy_to_bytes(data.remaining())),
            Ok(None) => break "the request stream ended".to_string(),
            Err(e) => break e.to_string(),
        }
        loop {
            match capsules.pop() {
                Ok(None) => break,
                Ok(Some(Capsule::Udp(udp))) => open.answer(&udp, true, &s),
                Ok(Some(Capsule::OtherContext(_))) => {
                    s.dropped.fetch_add(1, Relaxed);
                }
                Ok(Some(Capsule::Skipped(_))) => {}
                Err(e) => break 'stream format!("Proxy-GW's capsules: {}", e.0),
            }
        }
    };
    let _ = tell.send(FromGw::Ended(why)).await;
}

/// How sending a payload up went.
#[derive(Debug, PartialEq, Eq)]
enum Up {
    /// On its way.
    Gone,
    /// Not sent (too large for the connection, or its queue full).
    Dropped,
    /// The flow can carry no more, and why.
    Ended(&'static str),
}

/// A flow's payload to Proxy-GW, as `carry` says: an HTTP/3 Datagram, or
/// a DATAGRAM capsule on the request stream (waiting for room on it).
async fn send_up(
    carry: Carry,
    conn: &quinn::Connection,
    stream: &mut SendHalf,
    sid: u64,
    udp: &[u8],
    displaced: &std::sync::atomic::AtomicU64,
) -> Up {
    match carry {
        Carry::Datagram => match datagram::send_counted(
            conn,
            Bytes::from(datagram::encode_udp(sid, udp)),
            displaced,
        ) {
            Ok(()) => Up::Gone,
            Err(quinn::SendDatagramError::ConnectionLost(_)) => Up::Ended("connection lost"),
            Err(_) => Up::Dropped,
        },
        Carry::Stream => match stream
            .send_data(Bytes::from(capsule::encode_udp(udp)))
            .await
        {
            Ok(()) => Up::Gone,
            Err(_) => Up::Ended("the request stream ended"),
        },
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
