//! The standing ST↔GW tunnel (`--tunnel`): one QUIC connection between
//! Proxy-ST and Proxy-GW that carries every client connection's streams.
//!
//! Proxy-ST dials it at start and re-dials if it drops (`keep_up`);
//! Proxy-GW accepts it. Each end has a "local" connection per client
//! connection: at ST the client's, at GW its own to the origin (`origin`).
//! A stream opened on a local connection becomes a tunnel stream of the
//! same direction that starts with a `frame::Header` naming the client
//! connection and the original stream ID; the other end opens the local
//! twin in ID order, so IDs stay as the client and the origin number them.
//! Which client connections are carried and whose turn it is to be opened
//! is plain state (`clients`, over `order`); this file does the I/O. The
//! control stream carries Open, Close and Reset (`frame`). Stream data,
//! FIN, RESET_STREAM and STOP_SENDING cross with `relay::copy`, as without
//! the tunnel.

pub mod clients;
pub mod frame;
pub mod keep_up;
pub mod order;
pub mod origin;

use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use quinn::{Connection, RecvStream, SendStream, VarInt};
use satbench_transport::quic::keep_alive_every;
use satbench_transport::quic_handshake::Watch as Handshake;
use tokio::sync::{watch, Notify};

use crate::close::{self, Close, Ended, PEP_ERROR};
use crate::log::Log;
use crate::relay::{self, Accepted, Opened, Outcome, Tracker, DRAIN};
use crate::stats::{Counters, Pair, Stats};
use crate::streams::{Dir, Initiator, Kind, Mirror, Side};
use clients::{Clients, Next, OnOpen};
use frame::{FrameError, Header, Message, Target};
use origin::Origins;

/// The tunnel's ALPN: Proxy-GW in `--tunnel` mode accepts nothing else.
pub const ALPN: &[u8] = b"satbench-tunnel";
/// Application close code of a tunnel whose peer sent something that is
/// not our framing.
pub const TUNNEL_ERROR: u32 = 0x7475;

/// Closes a tunnel unless it is closed already: quinn would replace the
/// reason it ended with (a transport error such as "too many gaps in
/// stream buffer", which the log must name) by a local close.
pub fn close_unless_closed(conn: &Connection, reason: &[u8]) {
    if conn.close_reason().is_none() {
        conn.close(TUNNEL_ERROR.into(), reason);
    }
}

/// Streams of each direction the tunnel may have open at once: all
/// client connections' streams share it.
pub const MAX_STREAMS: u32 = 1 << 14;
/// How long a tunnel stream may take to deliver its header.
const HEADER_WAIT: Duration = Duration::from_secs(10);

/// Which end of the tunnel this proxy is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// Proxy-ST: local connections are clients'; it opens the control stream.
    St,
    /// Proxy-GW: local connections go to the origin.
    Gw,
}

impl End {
    /// Who opens the local streams this end carries into the tunnel (the
    /// peer's local side opens the others).
    fn local_opens(self) -> Initiator {
        match self {
            End::St => Initiator::Client,
            End::Gw => Initiator::Server,
        }
    }

    /// Who opens the streams the peer carries into the tunnel, whose local
    /// twins this end opens.
    fn peer_opens(self) -> Initiator {
        match self {
            End::St => Initiator::Server,
            End::Gw => Initiator::Client,
        }
    }

    /// The local connection's side in relay terms (for logs and closes).
    fn local_side(self) -> Side {
        match self {
            End::St => Side::Near,
            End::Gw => Side::Far,
        }
    }
}

/// A stream (or a reset standing in for one) waiting to be opened locally.
enum Item {
    Stream(Accepted),
    Reset(u64),
}

/// The I/O side of one client connection carried by the tunnel.
struct Client {
    id: u64,
    local: watch::Sender<Option<Connection>>,
    remote_close: watch::Sender<Option<Close>>,
    /// Wakes the opener of each kind the peer relays to us (bidi, uni)
    /// when a stream of that kind is queued.
    queued: [Notify; 2],
    tasks: Mutex<tokio::task::JoinSet<()>>,
    count: Pair,
    to_local: Tracker,
    to_tunnel: Tracker,
    /// Set when the client connection is forgotten: its tasks reset what
    /// they hold and end.
    gone: watch::Sender<bool>,
}

/// The client table with each client's I/O side and waiting streams.
type Table = Clients<Arc<Client>, Item>;

pub struct Tunnel {
    pub conn: Connection,
    end: End,
    control: tokio::sync::Mutex<Option<SendStream>>,
    clients: Arc<Mutex<Table>>,
    stats: Arc<Stats>,
    log: Arc<Log>,
}

/// What Proxy-GW does with a TCP stream (QPEP, `crate::qpep::Gw`): the
/// original destination and both halves of the stream.
pub type TcpHandler =
    Arc<dyn Fn(std::net::SocketAddrV4, SendStream, RecvStream) -> BoxFuture<()> + Send + Sync>;

/// Proxy-GW's answers to what the tunnel brings: client connections to
/// connect to the origin for, and TCP streams (none: they are refused).
#[derive(Clone, Default)]
pub struct Handlers {
    pub origins: Option<Arc<Origins>>,
    pub tcp: Option<TcpHandler>,
}

pub type BoxFuture<T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send>>;

impl Tunnel {
    /// A tunnel on `conn`. At ST it opens the control stream first.
    pub async fn new(
        conn: Connection,
        end: End,
        stats: Arc<Stats>,
        log: Arc<Log>,
    ) -> Result<Arc<Tunnel>, String> {
        let control = match end {
            End::St => {
                let (mut send, recv) = conn
                    .open_bi()
                    .await
                    .map_err(|e| format!("tunnel control stream: {e}"))?;
                send.write_all(&Header::Control.encode())
                    .await
                    .map_err(|e| format!("tunnel control stream: {e}"))?;
                Some((send, recv))
            }
            End::Gw => None,
        };
        let t = Arc::new(Tunnel {
            conn,
            end,
            control: tokio::sync::Mutex::new(None),
            clients: Arc::new(Mutex::new(Clients::new(end.peer_opens()))),
            stats,
            log,
        });
        if let Some((send, recv)) = control {
            *t.control.lock().await = Some(send);
            tokio::spawn(t.clone().read_control(recv, None));
        }
        Ok(t)
    }

    /// Accepts the peer's tunnel streams until the tunnel closes, then
    /// ends every client connection it carried.
    pub async fn serve(self: Arc<Self>, handlers: Handlers) {
        let bi = tokio::spawn(self.clone().accept_streams(Dir::Bi, handlers.clone()));
        let uni = tokio::spawn(self.clone().accept_streams(Dir::Uni, handlers));
        let err = self.conn.closed().await;
        bi.abort();
        uni.abort();
        let lost = Close {
            code: PEP_ERROR,
            reason: format!("quic-pep: tunnel lost: {}", Ended::from(&err).describe()).into_bytes(),
        };
        let clients = self.clients.lock().unwrap().handles();
        for c in clients {
            c.remote_close.send_replace(Some(lost.clone()));
        }
    }

    pub fn carrying(&self) -> usize {
        self.clients.lock().unwrap().len()
    }

    async fn send_control(&self, m: &Message) {
        let mut c = self.control.lock().await;
        if let Some(s) = c.as_mut() {
            // a failure here means the tunnel is gone, which ends every client
            let _ = s.write_all(&m.encode()).await;
        }
    }

    fn bad(&self, why: &str) {
        self.stats.tunnel.bad_headers.fetch_add(1, Relaxed);
        self.log
            .line(&format!("tunnel: bad input, closing it: {why}"));
        self.close(format!("quic-pep tunnel: {why}").as_bytes());
    }

    fn close(&self, reason: &[u8]) {
        close_unless_closed(&self.conn, reason);
    }

    /// The I/O side of a client connection new to the table, with the
    /// openers of the peer's two kinds of streams.
    fn new_client(&self, id: u64) -> Arc<Client> {
        let (local, _) = watch::channel(None);
        let (remote_close, _) = watch::channel(None);
        let c = Arc::new(Client {
            id,
            local,
            remote_close,
            queued: Default::default(),
            tasks: Mutex::new(tokio::task::JoinSet::new()),
            count: Pair {
                conn: Arc::new(Counters::default()),
                total: self.stats.clone(),
            },
            to_local: Tracker::default(),
            to_tunnel: Tracker::default(),
            gone: watch::channel(false).0,
        });
        {
            let mut tasks = c.tasks.lock().unwrap();
            for dir in [Dir::Bi, Dir::Uni] {
                let kind = Kind {
                    initiator: self.end.peer_opens(),
                    dir,
                };
                let clients = self.clients.clone();
                tasks.spawn(opener(kind, c.clone(), clients, self.end, self.log.clone()));
            }
        }
        c
    }

    /// Queues the peer's stream `id` (or a reset standing in for it) of
    /// client connection `conn` for its opener, adding the client
    /// connection if `add` and it is new; refuses it if it has no place.
    fn queue(&self, conn: u64, id: u64, item: Item, add: bool) {
        let mut clients = self.clients.lock().unwrap();
        if add {
            clients.add(conn, || self.new_client(conn));
        }
        let queued = clients.queue(conn, id, item).map(Arc::clone);
        drop(clients);
        match queued {
            Ok(c) => c.queued(Kind::of(id).dir).notify_one(),
            Err(item) => refuse(item),
        }
    }

    fn forget(&self, c: &Client) {
        let waiting = self.clients.lock().unwrap().forget(c.id);
        waiting.into_iter().for_each(refuse);
        c.gone.send_replace(true);
    }

    /// Proxy-ST: carries client connection `id` (already accepted, with
    /// ALPN `alpn`, going to `to` with `--transparent`) until it or its
    /// origin side ends. `requests`: told of each request (bidi stream) the
    /// client opens, so that those that came in 0-RTT are counted.
    pub async fn carry_client(
        self: &Arc<Self>,
        id: u64,
        near: Connection,
        alpn: Vec<u8>,
        to: Option<Target>,
        requests: Option<Handshake>,
    ) -> Outcome {
        let c = self
            .clients
            .lock()
            .unwrap()
            .add(id, || self.new_client(id))
            .cloned()
            .expect("a new client id");
        self.stats.tunnel.clients.fetch_add(1, Relaxed);
        self.send_control(&Message::Open { conn: id, alpn, to })
            .await;
        self.carry(c, near, requests).await
    }

    /// Relays one client connection between its local connection and the
    /// tunnel until one side ends, then closes the other.
    async fn carry(
        self: &Arc<Self>,
        c: Arc<Client>,
        local: Connection,
        requests: Option<Handshake>,
    ) -> Outcome {
        let started = Instant::now();
        c.local.send_replace(Some(local.clone()));
        for dir in [Dir::Bi, Dir::Uni] {
            let kind = Kind {
                initiator: self.end.local_opens(),
                dir,
            };
            let t = self.clone();
            let (c2, l2) = (c.clone(), local.clone());
            let r2 = requests.clone().filter(|_| dir == Dir::Bi);
            c.tasks
                .lock()
                .unwrap()
                .spawn(async move { t.local_streams(kind, c2, l2, r2).await });
        }
        let mut remote = c.remote_close.subscribe();
        let local_side = self.end.local_side();
        let (first, ended) = tokio::select! {
            e = local.closed() => {
                let ended = Ended::from(&e);
                let _ = tokio::time::timeout(DRAIN, c.to_tunnel.idle()).await;
                let cl = close::relay_close(&ended, local_side.name()).unwrap_or(Close { code: 0, reason: vec![] });
                self.send_control(&Message::Close { conn: c.id, code: cl.code, reason: cl.reason }).await;
                self.stats.closes_relayed.fetch_add(1, Relaxed);
                (local_side, ended)
            }
            cl = once_some(&mut remote) => {
                let cl = cl.unwrap_or(Close { code: PEP_ERROR, reason: b"quic-pep: tunnel lost".to_vec() });
                let _ = tokio::time::timeout(DRAIN, c.to_local.idle()).await;
                local.close(VarInt::from_u64(cl.code).unwrap_or(VarInt::MAX), &cl.reason);
                self.stats.closes_relayed.fetch_add(1, Relaxed);
                (local_side.other(), Ended::App { code: cl.code, reason: cl.reason })
            }
        };
        self.forget(&c);
        Outcome {
            first,
            ended,
            counters: c.count.conn.clone(),
            duration: started.elapsed(),
        }
    }

    /// Streams opened on the local connection, each into a tunnel stream
    /// with its header.
    async fn local_streams(
        self: Arc<Self>,
        kind: Kind,
        c: Arc<Client>,
        local: Connection,
        requests: Option<Handshake>,
    ) {
        let mut mirror = Mirror::new(kind);
        // towards the origin: client streams at ST's end
        let up = self.end == End::St;
        while let Some(accepted) = relay::accept(&local, kind.dir).await {
            if let Some(w) = &requests {
                w.request();
            }
            let id = match &accepted {
                Accepted::Bi(_, r) | Accepted::Uni(r) => u64::from(r.id()),
            };
            if let Err(e) = mirror.accepted(id) {
                c.count.mismatch();
                self.log
                    .line(&format!("conn {} stream-id mismatch: {e}", c.id));
            }
            let Some(opened) = relay::open(&self.conn, kind.dir).await else {
                relay::abort(accepted);
                break;
            };
            c.count.stream(kind);
            self.stats.tunnel.streams.fetch_add(1, Relaxed);
            match (accepted, opened) {
                (Accepted::Bi(lsend, lrecv), Opened::Bi(tsend, trecv)) => {
                    self.spawn_out(&c, id, lrecv, tsend, up);
                    c.spawn_copy(trecv, lsend, !up, Towards::Local);
                }
                (Accepted::Uni(lrecv), Opened::Uni(tsend)) => {
                    self.spawn_out(&c, id, lrecv, tsend, up);
                }
                _ => unreachable!("accept and open use the same direction"),
            }
        }
    }

    /// Local → tunnel: the header, then the data; a reset also goes on the
    /// control stream, since it may discard the header before it arrives.
    fn spawn_out(
        self: &Arc<Self>,
        c: &Arc<Client>,
        id: u64,
        recv: RecvStream,
        send: SendStream,
        up: bool,
    ) {
        c.spawn_copy(recv, send, up, Towards::Tunnel(Some((self.clone(), id))));
    }
    async fn accept_streams(self: Arc<Self>, dir: Dir, handlers: Handlers) {
        while let Some(a) = relay::accept(&self.conn, dir).await {
            tokio::spawn(self.clone().tunnel_stream(a, handlers.clone()));
        }
    }

    /// A stream the peer opened on the tunnel: its header says where it goes.
    async fn tunnel_stream(self: Arc<Self>, a: Accepted, handlers: Handlers) {
        let bidi = matches!(a, Accepted::Bi(..));
        let mut a = a;
        let recv = match &mut a {
            Accepted::Bi(_, r) | Accepted::Uni(r) => r,
        };
        let header = match tokio::time::timeout(HEADER_WAIT, read_header(recv)).await {
            Ok(Ok(h)) => h,
            Ok(Err(Some(bad))) => return self.bad(&format!("stream header: {bad}")),
            // reset before its header (a Reset message stands in) or too slow
            Ok(Err(None)) | Err(_) => return relay::abort(a),
        };
        let peer = self.end.peer_opens();
        match header {
            Header::Control => {
                let mut ctl = self.control.lock().await;
                match (self.end, bidi, ctl.is_none(), a) {
                    (End::Gw, true, true, Accepted::Bi(send, recv)) => {
                        *ctl = Some(send);
                        drop(ctl);
                        self.read_control(recv, handlers.origins).await;
                    }
                    _ => {
                        drop(ctl);
                        self.bad("a second control stream");
                    }
                }
            }
            Header::Stream { conn, id } => {
                if let Err(e) = header.check(bidi, peer) {
                    return self.bad(&e.to_string());
                }
                self.queue(conn, id, Item::Stream(a), self.end == End::Gw);
            }
            Header::Tcp { dst } => {
                if let Err(e) = header.check(bidi, peer) {
                    return self.bad(&e.to_string());
                }
                match (handlers.tcp, a) {
                    (Some(carry), Accepted::Bi(send, recv)) => carry(dst, send, recv).await,
                    (_, a) => relay::abort(a),
                }
            }
        }
    }

    /// The peer's control messages, until the stream or the tunnel ends.
    async fn read_control(self: Arc<Self>, mut recv: RecvStream, origins: Option<Arc<Origins>>) {
        loop {
            let m = match read_message(&mut recv).await {
                Ok(m) => m,
                Err(Some(bad)) => return self.bad(&format!("control message: {bad}")),
                Err(None) => {
                    // the control stream ending ends the tunnel
                    self.close(b"quic-pep tunnel: control stream ended");
                    return;
                }
            };
            match m {
                Message::Open { conn, alpn, to } => {
                    let (End::Gw, Some(o)) = (self.end, origins.as_ref()) else {
                        return self.bad("Open sent to Proxy-ST");
                    };
                    let opened = self
                        .clients
                        .lock()
                        .unwrap()
                        .open(conn, || self.new_client(conn));
                    match opened {
                        OnOpen::Start(c) => {
                            tokio::spawn(self.clone().origin(c, o.clone(), alpn, to));
                        }
                        OnOpen::Ended => continue,
                        OnOpen::Twice => return self.bad("Open twice"),
                    }
                }
                Message::Close { conn, code, reason } => {
                    let carried = self.clients.lock().unwrap().close(conn);
                    if let Some(c) = carried {
                        c.remote_close.send_replace(Some(Close { code, reason }));
                    }
                }
                Message::Reset { conn, id, code } => {
                    if Kind::of(id).initiator == self.end.local_opens() {
                        return self.bad("Reset of a stream the wrong side opened");
                    }
                    self.queue(conn, id, Item::Reset(code), false);
                }
            }
        }
    }
}

/// What `rx` holds once it holds something; None if its sender is gone.
async fn once_some<T: Clone>(rx: &mut watch::Receiver<Option<T>>) -> Option<T> {
    rx.wait_for(|v| v.is_some())
        .await
        .ok()
        .and_then(|v| v.clone())
}

/// A name for a log line: `-` when there is none.
pub fn or_dash(name: &str) -> &str {
    match name.is_empty() {
        true => "-",
        false => name,
    }
}

impl Client {
    fn queued(&self, dir: Dir) -> &Notify {
        &self.queued[usize::from(dir == Dir::Uni)]
    }
}

fn refuse(item: Item) {
    if let Item::Stream(a) = item {
        relay::abort(a);
    }
}

/// Where a copied stream direction flows. Towards the tunnel, a stream
/// this end opened carries its header (and its resets are announced).
enum Towards {
    Local,
    Tunnel(Option<(Arc<Tunnel>, u64)>),
}

impl Client {
    /// Copies one stream direction (`relay::copy`). If the client
    /// connection is forgotten first, both halves are reset: dropping a
    /// quinn stream would finish it, and the tunnel outlives the client.
    fn spawn_copy(self: &Arc<Self>, recv: RecvStream, send: SendStream, up: bool, to: Towards) {
        let entered = match to {
            Towards::Local => self.to_local.enter(),
            Towards::Tunnel(_) => self.to_tunnel.enter(),
        };
        let c = self.clone();
        self.tasks.lock().unwrap().spawn(async move {
            let (mut recv, mut send) = (recv, send);
            let mut gone = c.gone.subscribe();
            let opener = match &to {
                Towards::Tunnel(Some((_, id))) => Some(*id),
                _ => None,
            };
            let done = tokio::select! {
                r = async {
                    if let Some(id) = opener {
                        let h = Header::Stream { conn: c.id, id }.encode();
                        send.write_all(&h).await.ok()?;
                    }
                    relay::copy(&mut recv, &mut send, up, &c.count).await
                } => Some(r),
                _ = async { gone.wait_for(|g| *g).await.is_ok() } => None,
            };
            match (done, to) {
                (Some(Some(code)), Towards::Tunnel(Some((t, id)))) => {
                    t.send_control(&Message::Reset {
                        conn: c.id,
                        id,
                        code,
                    })
                    .await;
                }
                (Some(_), _) => {}
                (None, _) => {
                    let code = VarInt::from_u64(PEP_ERROR).unwrap();
                    let _ = send.reset(code);
                    let _ = recv.stop(code);
                }
            }
            drop(entered);
        });
    }
}

/// Opens the local twins of one kind of the peer's streams, in ID order,
/// once the local connection is up; refuses what is left when it stops or
/// the client connection is forgotten.
async fn opener(kind: Kind, c: Arc<Client>, clients: Arc<Mutex<Table>>, end: End, log: Arc<Log>) {
    let mut gone = c.gone.subscribe();
    tokio::select! {
        _ = open_in_order(kind, &c, &clients, end, &log) => {}
        _ = async { gone.wait_for(|g| *g).await.is_ok() } => {}
    }
    let left = clients.lock().unwrap().stop(c.id, kind.dir);
    left.into_iter().for_each(refuse);
}

async fn open_in_order(kind: Kind, c: &Arc<Client>, clients: &Mutex<Table>, end: End, log: &Log) {
    let Some(conn) = once_some(&mut c.local.subscribe()).await else {
        return;
    };
    let mirror = Mirror::new(kind);
    // data arriving from the tunnel flows towards the origin at GW's end
    let up = end == End::Gw;
    loop {
        let next = clients.lock().unwrap().next(c.id, kind.dir);
        let (id, item) = match next {
            Next::Open(id, item) => (id, item),
            Next::Wait => {
                c.queued(kind.dir).notified().await;
                continue;
            }
            Next::Broken(id, e) => {
                log.line(&format!("conn {} stream {id}: {e:?}, closing it", c.id));
                conn.close(
                    VarInt::from_u64(PEP_ERROR).unwrap(),
                    b"quic-pep: tunnel stream order",
                );
                return;
            }
            Next::Stop => return,
        };
        let Some(opened) = relay::open(&conn, kind.dir).await else {
            refuse(item);
            return;
        };
        relay::check_twin(&mirror, id, &opened, &c.count, log, c.id);
        c.count.stream(kind);
        match (item, opened) {
            (Item::Reset(code), o) => {
                let code = VarInt::from_u64(code).unwrap_or(VarInt::MAX);
                match o {
                    Opened::Bi(mut s, mut r) => {
                        let _ = s.reset(code);
                        let _ = r.stop(code);
                    }
                    Opened::Uni(mut s) => {
                        let _ = s.reset(code);
                    }
                }
                c.count.reset();
            }
            (Item::Stream(Accepted::Bi(tsend, trecv)), Opened::Bi(lsend, lrecv)) => {
                c.spawn_copy(trecv, lsend, up, Towards::Local);
                // the local answer goes back on the same tunnel stream
                c.spawn_copy(lrecv, tsend, !up, Towards::Tunnel(None));
            }
            (Item::Stream(Accepted::Uni(trecv)), Opened::Uni(lsend)) => {
                c.spawn_copy(trecv, lsend, up, Towards::Local);
            }
            (Item::Stream(a), _) => relay::abort(a),
        }
    }
}

/// Reads a stream header, never past it. `Err(Some)`: not our framing;
/// `Err(None)`: the stream ended or was reset first.
async fn read_header(recv: &mut RecvStream) -> Result<Header, Option<FrameError>> {
    let mut b = vec![0u8; 2];
    recv.read_exact(&mut b).await.map_err(|_| None)?;
    match Header::decode(&b) {
        Ok((h, _)) => return Ok(h),
        Err(FrameError::Incomplete) => {}
        Err(bad) => return Err(Some(bad)),
    }
    if b[1] == 2 {
        // TCP: the original destination follows
        b.resize(2 + frame::TCP_DST_LEN, 0);
        recv.read_exact(&mut b[2..]).await.map_err(|_| None)?;
    } else {
        // a client stream: the connection ID and the stream ID follow
        read_varint(recv, &mut b).await?;
        read_varint(recv, &mut b).await?;
    }
    Header::decode(&b).map(|(h, _)| h).map_err(Some)
}

/// Appends one varint read from `recv` to `b`: its first byte says its length.
async fn read_varint(recv: &mut RecvStream, b: &mut Vec<u8>) -> Result<(), Option<FrameError>> {
    let at = b.len();
    b.push(0);
    recv.read_exact(&mut b[at..]).await.map_err(|_| None)?;
    b.resize(at + frame::varint_len(b[at]), 0);
    recv.read_exact(&mut b[at + 1..]).await.map_err(|_| None)
}

/// Reads one control message. Errors as `read_header`.
async fn read_message(recv: &mut RecvStream) -> Result<Message, Option<FrameError>> {
    let mut b = Vec::new();
    read_varint(recv, &mut b).await?;
    read_varint(recv, &mut b).await?;
    let (_, len, head) = Message::decode_prefix(&b).map_err(Some)?;
    b.resize(head + len, 0);
    recv.read_exact(&mut b[head..]).await.map_err(|_| None)?;
    Message::decode(&b).map(|(m, _)| m).map_err(Some)
}

/// The transport of tunnel number `n` (its own qlog): the satellite hop's
/// settings, room for every client connection's streams, and (at the
/// dialling end) keep-alives well inside the idle timeout so the tunnel
/// outlives quiet spells. `accepted_from` (the accepting end: the peer's
/// address and ours) gives it Careful Resume when the side has it, and
/// the session to watch.
pub fn transport(
    side: &crate::transport::SideTransport,
    keep_alive: bool,
    n: u64,
    accepted_from: Option<(std::net::SocketAddr, Option<std::net::IpAddr>)>,
) -> Result<
    (
        quinn::TransportConfig,
        Option<satbench_transport::careful_resume::Session>,
    ),
    String,
> {
    let conn = crate::transport::Conn::Tunnel(n);
    let (mut t, session) = match accepted_from {
        Some((remote, local)) => side.accepted_config(conn, remote, local)?,
        None => (side.config(conn)?, None),
    };
    t.max_concurrent_bidi_streams(MAX_STREAMS.into());
    t.max_concurrent_uni_streams(MAX_STREAMS.into());
    if let Some(every) = keep_alive_every(side.opts.idle_timeout_ms).filter(|_| keep_alive) {
        t.keep_alive_interval(Some(every));
    }
    Ok((t, session))
}
