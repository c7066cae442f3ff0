//! I/O: Proxy-GW's CONNECT-UDP listener (`--masque-listen`). HTTP/3 over
//! quinn (h3 with extended CONNECT and SETTINGS_H3_DATAGRAM); each
//! proxying request gets its own connected UDP socket to its target, and
//! UDP payloads cross both ways: from the client as HTTP/3 Datagrams or
//! DATAGRAM capsules, to it in kind: the way the client's first payload
//! came (capsules when the client did not enable datagrams).
//! Decisions are `request`'s, encodings `datagram`'s and
//! `capsule`'s.

use std::collections::HashMap;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::{Buf, Bytes};
use h3::ConnectionState;
use quinn::VarInt;
use satbench_transport::net::Ipv4Net;
use tokio::net::UdpSocket;
use tokio::sync::mpsc;

use super::capsule::{self, Capsule};
use super::datagram::{self, UDP_CONTEXT};
use super::early::Early;
use super::request::{self, Head, Refusal};
use super::stats::MasqueStats;
use super::target::{Host, Target};
use crate::fec::socket::{endpoint as fec_endpoint, FecOnHop, FecSocket};
use crate::log::Log;
use crate::tls;

type Resolver = h3::server::RequestResolver<h3_quinn::Connection, Bytes>;
type Stream = h3::server::RequestStream<h3_quinn::BidiStream<Bytes>, Bytes>;

/// Where a connection's datagrams go, by stream ID (they arrive in one
/// place): each open proxying request's queue of UDP payloads, and those
/// that came before their request was open (`early`).
#[derive(Default)]
struct Table {
    open: HashMap<u64, mpsc::Sender<Bytes>>,
    early: Early,
}

type Routes = Arc<Mutex<Table>>;

/// UDP payloads waiting for one target's socket; beyond, they are dropped
/// (a UDP proxy SHOULD NOT queue to batch, RFC 9298 §6).
const QUEUE: usize = 256;

/// How long a target's name may take to resolve.
const RESOLVE_TIMEOUT: Duration = Duration::from_secs(5);

/// Proxying requests a client may hold open at once on one connection,
/// each a bidirectional stream: as many as Proxy-ST carries flows
/// (`client`'s MAX_FLOWS). quinn's default of 100 would make a page of
/// many origins and connections wait for earlier flows to end idle.
const MAX_REQUESTS: u32 = 4096;

/// `--masque-listen`'s settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    pub listen: SocketAddr,
    /// `--masque-allow`: where proxying requests may go.
    pub allow: Vec<Ipv4Net>,
}

pub struct Server {
    endpoint: quinn::Endpoint,
    allow: Vec<Ipv4Net>,
    /// The proxy's own listeners: never a target.
    own: Vec<SocketAddr>,
    /// The name in `Proxy-Status` and log lines.
    label: String,
    stats: Arc<MasqueStats>,
    log: Arc<Log>,
    next_id: AtomicU64,
}

impl Server {
    /// Binds the listener (ALPN h3, the proxy's certificate, `transport`
    /// with room for MAX_REQUESTS requests at once); with `fec`, the code
    /// under it, whose socket comes back too.
    #[allow(clippy::too_many_arguments)]
    pub fn bind(
        settings: &Settings,
        server_tls: &rustls::ServerConfig,
        mut transport: quinn::TransportConfig,
        own: Vec<SocketAddr>,
        label: &str,
        stats: Arc<MasqueStats>,
        log: Arc<Log>,
        fec: Option<FecOnHop>,
    ) -> Result<(Arc<Server>, Option<Arc<FecSocket>>), String> {
        let mut server =
            quinn::ServerConfig::with_crypto(tls::with_alpn(server_tls, vec![b"h3".to_vec()]));
        transport.max_concurrent_bidi_streams(VarInt::from_u32(MAX_REQUESTS));
        server.transport_config(Arc::new(transport));
        let what = format!("--masque-listen {}", settings.listen);
        let (endpoint, coded) = match fec {
            None => (
                quinn::Endpoint::server(server, settings.listen)
                    .map_err(|e| format!("{what}: {e}"))?,
                None,
            ),
            Some(on_hop) => {
                let socket = std::net::UdpSocket::bind(settings.listen)
                    .map_err(|e| format!("{what}: {e}"))?;
                let (e, f) = fec_endpoint(socket, Some(server), on_hop)?;
                (e, Some(f))
            }
        };
        let bound = endpoint.local_addr().map_err(|e| format!("{what}: {e}"))?;
        log.line(&format!(
            "masque listening on {bound}/udp (CONNECT-UDP, RFC 9298), targets within {}",
            request::nets(&settings.allow)
        ));
        Ok((
            Arc::new(Server {
                endpoint,
                allow: settings.allow.clone(),
                own: [own, vec![bound]].concat(),
                label: label.to_string(),
                stats,
                log,
                next_id: AtomicU64::new(1),
            }),
            coded,
        ))
    }

    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.endpoint.local_addr()
    }

    /// Accepts connections until `close`.
    pub async fn run(self: Arc<Self>) {
        while let Some(incoming) = self.endpoint.accept().await {
            tokio::spawn(self.clone().connection(incoming));
        }
    }

    pub fn close(&self) {
        self.endpoint
            .close(VarInt::from_u32(0x100), b"quic-pep: shutting down");
    }

    pub async fn wait_idle(&self) {
        self.endpoint.wait_idle().await;
    }

    async fn connection(self: Arc<Self>, incoming: quinn::Incoming) {
        let remote = incoming.remote_address();
        let conn = match incoming.await {
            Ok(c) => c,
            Err(e) => {
                self.log
                    .line(&format!("masque connection from {remote} failed: {e}"));
                return;
            }
        };
        self.stats.connections.fetch_add(1, Relaxed);
        let built = h3::server::builder()
            .enable_extended_connect(true)
            .enable_datagram(true)
            .build::<_, Bytes>(h3_quinn::Connection::new(conn.clone()))
            .await;
        let mut h3 = match built {
            Ok(h) => h,
            Err(e) => {
                self.log
                    .line(&format!("masque connection from {remote}: HTTP/3: {e}"));
                return;
            }
        };
        let routes = Routes::default();
        let reader = tokio::spawn(read_datagrams(
            conn.clone(),
            routes.clone(),
            self.stats.clone(),
        ));
        // accept() also serves the control streams: keep calling it
        while let Ok(Some(resolver)) = h3.accept().await {
            tokio::spawn(self.clone().request(resolver, conn.clone(), routes.clone()));
        }
        reader.abort();
    }

    async fn request(self: Arc<Self>, resolver: Resolver, conn: quinn::Connection, routes: Routes) {
        let id = self.next_id.fetch_add(1, Relaxed);
        let remote = conn.remote_address();
        let (req, stream) = match resolver.resolve_request().await {
            Ok(r) => r,
            Err(e) => {
                // h3 has reset it (H3_MESSAGE_ERROR): an unknown :protocol
                // among others
                self.stats.malformed.fetch_add(1, Relaxed);
                self.log.line(&format!(
                    "masque req {id} from {remote} malformed, reset by h3: {e}"
                ));
                return;
            }
        };
        self.stats.requests.fetch_add(1, Relaxed);
        let head = Head {
            method: req.method().as_str(),
            protocol: req
                .extensions()
                .get::<h3::ext::Protocol>()
                .map(|p| p.as_str()),
            scheme: req.uri().scheme_str(),
            authority: req.uri().authority().map(|a| a.as_str()),
            path: req.uri().path_and_query().map(|p| p.as_str()),
            capsule_protocol: req
                .headers()
                .get_all("capsule-protocol")
                .iter()
                .map(|v| v.as_bytes())
                .collect(),
        };
        let decided = request::decide(&head);
        let target = match decided {
            Ok(t) => t,
            Err(r) => return self.refuse(id, remote, stream, &routes, r).await,
        };
        let to = match resolve(&target).await {
            Ok(to) => to,
            Err(r) => return self.refuse(id, remote, stream, &routes, r).await,
        };
        if let Err(r) = request::check_destination(to, &self.allow, &self.own) {
            return self.refuse(id, remote, stream, &routes, r).await;
        }
        let socket = match open_socket(to).await {
            Ok(s) => s,
            Err(e) => {
                let r = request::unreachable(to, &e.to_string());
                return self.refuse(id, remote, stream, &routes, r).await;
            }
        };
        self.proxy(id, remote, stream, conn, routes, target, to, socket)
            .await;
    }

    async fn refuse(
        &self,
        id: u64,
        remote: SocketAddr,
        mut stream: Stream,
        routes: &Routes,
        r: Refusal,
    ) {
        self.stats.refused(r.status);
        // what the client sent ahead goes nowhere
        let ahead = routes.lock().unwrap().early.end(stream.id().into_inner());
        self.stats.dropped.fetch_add(ahead as u64, Relaxed);
        let mut resp = http::Response::builder()
            .status(r.status)
            .header("content-type", "text/plain; charset=utf-8");
        for (name, value) in request::refusal_headers(&r, &self.label) {
            resp = resp.header(name, value);
        }
        let sent = async {
            stream
                .send_response(resp.body(()).expect("a valid response"))
                .await?;
            stream
                .send_data(Bytes::from(format!("{}\n", r.why)))
                .await?;
            stream.finish().await
        }
        .await;
        self.log.line(&format!(
            "masque req {id} from {remote} refused {}: {}{}",
            r.status,
            r.why,
            match sent {
                Ok(()) => String::new(),
                Err(e) => format!(" (not delivered: {e})"),
            }
        ));
    }

    #[allow(clippy::too_many_arguments)]
    async fn proxy(
        &self,
        id: u64,
        remote: SocketAddr,
        mut stream: Stream,
        conn: quinn::Connection,
        routes: Routes,
        target: Target,
        to: SocketAddr,
        socket: UdpSocket,
    ) {
        let sid = stream.id().into_inner();
        let (tx, rx) = mpsc::channel(QUEUE);
        {
            let mut t = routes.lock().unwrap();
            // what the client sent ahead of our answer goes first
            for payload in t.early.take(sid) {
                let _ = tx.try_send(payload);
            }
            t.open.insert(sid, tx);
        }
        let ok = http::Response::builder()
            .status(200)
            .header("capsule-protocol", "?1")
            .body(())
            .expect("a valid response");
        if let Err(e) = stream.send_response(ok).await {
            routes.lock().unwrap().open.remove(&sid);
            self.log.line(&format!(
                "masque req {id} from {remote} to {target}: the response was not sent: {e}"
            ));
            return;
        }
        self.stats.proxied.fetch_add(1, Relaxed);
        self.stats.active.fetch_add(1, Relaxed);
        let local = socket.local_addr().map_or("-".into(), |a| a.to_string());
        self.log.line(&format!(
            "masque req {id} from {remote} proxying stream {sid} to {target} ({to}) from {local}"
        ));
        let started = Instant::now();
        let relay = Relay {
            sid,
            conn,
            socket,
            stats: &self.stats,
            up: 0,
            down: 0,
            first: None,
        };
        let (end, up, down) = relay.run(stream, rx).await;
        {
            let mut t = routes.lock().unwrap();
            t.open.remove(&sid);
            t.early.end(sid);
        }
        self.stats.active.fetch_sub(1, Relaxed);
        self.log.line(&format!(
            "masque req {id} to {target} closed by {end} up={up} down={down} duration_ms={}",
            started.elapsed().as_millis()
        ));
    }
}

/// The target's address: its IP, or its name resolved (IPv4 first: only
/// IPv4 targets are allowed).
async fn resolve(target: &Target) -> Result<SocketAddr, Refusal> {
    let name = match &target.host {
        Host::Ip(ip) => return Ok(SocketAddr::new(*ip, target.port)),
        Host::Name(n) => n,
    };
    let found = tokio::time::timeout(
        RESOLVE_TIMEOUT,
        tokio::net::lookup_host((name.as_str(), target.port)),
    )
    .await;
    let addrs: Vec<SocketAddr> = match found {
        Err(_) => return Err(request::dns_failed(name, "timed out")),
        Ok(Err(e)) => return Err(request::dns_failed(name, &e.to_string())),
        Ok(Ok(a)) => a.collect(),
    };
    addrs
        .iter()
        .find(|a| a.is_ipv4())
        .or(addrs.first())
        .copied()
        .ok_or_else(|| request::dns_failed(name, "no address"))
}

/// A UDP socket connected to `to` (the kernel then hands it only `to`'s
/// packets, RFC 9298 §3.1), with Don't Fragment set (§3.1: no IP
/// fragmentation).
async fn open_socket(to: SocketAddr) -> std::io::Result<UdpSocket> {
    let socket = UdpSocket::bind((Ipv4Addr::UNSPECIFIED, 0)).await?;
    socket.connect(to).await?;
    set_dont_fragment(&socket)?;
    Ok(socket)
}

fn set_dont_fragment(socket: &UdpSocket) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let v: libc::c_int = libc::IP_PMTUDISC_DO;
    // SAFETY: a valid socket and an int option of the size given.
    let r = unsafe {
        libc::setsockopt(
            socket.as_raw_fd(),
            libc::IPPROTO_IP,
            libc::IP_MTU_DISCOVER,
            (&v as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    match r {
        0 => Ok(()),
        _ => Err(std::io::Error::last_os_error()),
    }
}

/// A connection's HTTP/3 Datagrams, each to its request's queue.
async fn read_datagrams(conn: quinn::Connection, routes: Routes, stats: Arc<MasqueStats>) {
    while let Ok(frame) = conn.read_datagram().await {
        let d = match datagram::decode(&frame) {
            Ok(d) => d,
            Err(datagram::Malformed(why)) => {
                conn.close(
                    VarInt::from_u32(datagram::H3_DATAGRAM_ERROR),
                    why.as_bytes(),
                );
                return;
            }
        };
        let udp = match datagram::udp_payload(d.payload) {
            Some((UDP_CONTEXT, udp)) => udp,
            _ => {
                stats.dropped.fetch_add(1, Relaxed);
                continue;
            }
        };
        let at = frame.len() - udp.len();
        let payload = frame.slice(at..);
        let mut t = routes.lock().unwrap();
        let queued = match t.open.get(&d.stream_id) {
            Some(q) => q.try_send(payload).is_ok(),
            // not open (yet: its request may still be decided; or no
            // longer): kept a while, for a client's request stream only
            None if d.stream_id % 4 == 0 => {
                let now = Instant::now();
                let expired = t.early.expire(now);
                stats.dropped.fetch_add(expired as u64, Relaxed);
                let held = t.early.hold(d.stream_id, payload, now);
                if held {
                    stats.early.fetch_add(1, Relaxed);
                }
                held
            }
            None => false,
        };
        drop(t);
        if !queued {
            stats.dropped.fetch_add(1, Relaxed);
        }
    }
}

/// Why a relay ended: the log line's "closed by …".
enum End {
    /// The client finished its side of the request stream.
    Client,
    /// The client's capsules were malformed (RFC 9297 §3.3): the request
    /// is reset with H3_MESSAGE_ERROR.
    Malformed(String),
    /// Anything else: a socket error, the stream or connection gone.
    Failed(String),
}

impl std::fmt::Display for End {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            End::Client => f.write_str("client"),
            End::Malformed(why) => write!(f, "client: malformed: {why}"),
            End::Failed(why) => f.write_str(why),
        }
    }
}

/// One proxying request's relay, both ways, until either end stops.
struct Relay<'a> {
    sid: u64,
    conn: quinn::Connection,
    socket: UdpSocket,
    stats: &'a MasqueStats,
    /// UDP payloads sent to the target and received from it.
    up: u64,
    down: u64,
    /// How the client's first payload came: as a capsule or not.
    first: Option<bool>,
}

type SendHalf = h3::server::RequestStream<h3_quinn::SendStream<Bytes>, Bytes>;

impl Relay<'_> {
    async fn run(mut self, stream: Stream, mut queue: mpsc::Receiver<Bytes>) -> (End, u64, u64) {
        let (mut send, mut recv) = stream.split();
        let mut capsules = capsule::Reader::default();
        let mut buf = vec![0u8; 65536];
        let end = loop {
            let step = tokio::select! {
                Some(udp) = queue.recv() => self.send_to_target(&udp, false).await,
                data = recv.recv_data() => match data {
                    Ok(Some(mut data)) => {
                        capsules.push(&data.copy_to_bytes(data.remaining()));
                        self.capsules(&mut capsules).await
                    }
                    Ok(None) => Err(match capsules.finish() {
                        Ok(()) => End::Client,
                        Err(e) => End::Malformed(e.0),
                    }),
                    Err(e) => Err(End::Failed(format!("client: {e}"))),
                },
                got = self.socket.recv(&mut buf) => match got {
                    Ok(n) => self.send_to_client(&buf[..n], &mut send).await,
                    // e.g. ICMP port unreachable: the socket is no longer
                    // usable, so the request stream closes (RFC 9298 §3.1)
                    Err(e) => Err(End::Failed(format!("target: {e}"))),
                },
            };
            if let Err(end) = step {
                break end;
            }
        };
        // Only the send side is ended here: h3-quinn 0.0.10's stop_sending
        // unwraps a stream it lends to a pending read (a panic whenever the
        // relay ends by another branch). Dropping `recv` drops quinn's
        // stream, which sends STOP_SENDING itself if it was not read to the end.
        match &end {
            End::Malformed(_) => send.stop_stream(h3::error::Code::H3_MESSAGE_ERROR),
            _ => {
                let _ = send.finish().await;
            }
        }
        drop(recv);
        (end, self.up, self.down)
    }

    async fn capsules(&mut self, capsules: &mut capsule::Reader) -> Result<(), End> {
        loop {
            match capsules.pop() {
                Ok(None) => return Ok(()),
                Ok(Some(Capsule::Udp(udp))) => self.send_to_target(&udp, true).await?,
                Ok(Some(Capsule::OtherContext(_))) => {
                    self.stats.dropped.fetch_add(1, Relaxed);
                }
                Ok(Some(Capsule::Skipped(_))) => {}
                Err(e) => return Err(End::Malformed(e.0)),
            }
        }
    }

    async fn send_to_target(&mut self, udp: &[u8], capsule: bool) -> Result<(), End> {
        self.first.get_or_insert(capsule);
        self.socket
            .send(udp)
            .await
            .map_err(|e| End::Failed(format!("target: {e}")))?;
        self.up += 1;
        let s = self.stats;
        match capsule {
            true => s.capsules_up.fetch_add(1, Relaxed),
            false => s.datagrams_up.fetch_add(1, Relaxed),
        };
        s.bytes_up.fetch_add(udp.len() as u64, Relaxed);
        Ok(())
    }

    /// As `answer_in_capsule` says; a datagram too large for the
    /// connection is dropped, not sent as a capsule (RFC 9298 §6: that
    /// would hide the path's MTU from the endpoints).
    async fn send_to_client(&mut self, udp: &[u8], send: &mut SendHalf) -> Result<(), End> {
        let s = self.stats;
        if !request::answer_in_capsule(self.first, send.settings().enable_datagram()) {
            let frame = Bytes::from(datagram::encode_udp(self.sid, udp));
            match datagram::send_counted(&self.conn, frame, &s.displaced) {
                Ok(()) => {
                    s.datagrams_down.fetch_add(1, Relaxed);
                }
                Err(quinn::SendDatagramError::ConnectionLost(e)) => {
                    return Err(End::Failed(format!("connection: {e}")))
                }
                Err(_) => {
                    s.dropped.fetch_add(1, Relaxed);
                    return Ok(());
                }
            }
        } else {
            send.send_data(Bytes::from(capsule::encode_udp(udp)))
                .await
                .map_err(|e| End::Failed(format!("client: {e}")))?;
            s.capsules_down.fetch_add(1, Relaxed);
        }
        self.down += 1;
        s.bytes_down.fetch_add(udp.len() as u64, Relaxed);
        Ok(())
    }
}
