//! I/O: the FEC codec under a quinn endpoint (`--fec K/N`), as the UDP
//! socket quinn sends and receives through. Every datagram to a peer leaves
//! as a source packet of that peer's encoder, followed by its window's
//! repairs; every packet from a peer goes through that peer's decoder, and
//! quinn gets what it hands on (the datagrams as they came, and the lost
//! ones it rebuilt). quinn never learns of the code, and neither do the
//! endpoints beyond the hop: a loss repaired here costs no round trip.
//!
//! Both ends of the hop must run it (the packets carry the FEC header).
//! A partial window's repairs leave `flush_after` the hop's round trip
//! after its first datagram, from a task of their own. Packets that the
//! socket below refuses for now (`WouldBlock`) wait in a queue that the
//! next send, the poller and that task drain, in order.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::io::{self, IoSliceMut};
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::task::{ready, Context, Poll};
use std::time::{Duration, Instant};

use quinn::udp::{EcnCodepoint, RecvMeta, Transmit};
use quinn::{AsyncUdpSocket, UdpPoller};
use serde_json::{Map, Value};
use tokio::sync::Notify;

use super::{flush_after, Decoder, DecoderConfig, Encoder, FecSetting};

/// The hop's largest UDP payload: a 1500-byte link under IPv4 and UDP
/// headers. quinn's path MTU discovery stops at 1452 by default, which
/// with the repair header still fits.
pub const HOP_MTU: usize = 1472;

/// What `--fec` sets: the code and the hop's round trip its timers follow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FecOnHop {
    pub setting: FecSetting,
    pub hop_rtt: Duration,
}

/// A packet waiting for the socket below.
struct Pending {
    to: SocketAddr,
    src_ip: Option<IpAddr>,
    ecn: Option<EcnCodepoint>,
    bytes: Vec<u8>,
}

/// A datagram handed on, waiting for quinn's next receive.
struct Delivered {
    from: SocketAddr,
    dst_ip: Option<IpAddr>,
    ecn: Option<EcnCodepoint>,
    bytes: Vec<u8>,
}

#[derive(Default)]
struct SendSide {
    encoders: HashMap<SocketAddr, Encoder>,
    queue: VecDeque<Pending>,
    /// Datagrams longer than the code takes (dropped: should stay 0).
    too_long: u64,
}

#[derive(Default)]
struct RecvSide {
    decoders: HashMap<SocketAddr, Decoder>,
    out: VecDeque<Delivered>,
}

pub struct FecSocket {
    inner: Arc<dyn AsyncUdpSocket>,
    on_hop: FecOnHop,
    send: Mutex<SendSide>,
    recv: Mutex<RecvSide>,
    /// Wakes the flush task: a window opened, or packets wait.
    wake: Arc<Notify>,
}

impl fmt::Debug for FecSocket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FecSocket")
            .field("on_hop", &self.on_hop)
            .finish_non_exhaustive()
    }
}

impl Drop for FecSocket {
    /// The flush task ends with the socket: woken, it finds it gone.
    fn drop(&mut self) {
        self.wake.notify_one();
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl FecSocket {
    /// `inner` with the code on every datagram; starts the flush task on
    /// the current tokio runtime.
    pub fn new(inner: Arc<dyn AsyncUdpSocket>, on_hop: FecOnHop) -> Result<Arc<FecSocket>, String> {
        // fails now, not at the first datagram, on an MTU the code cannot take
        Encoder::new(on_hop.setting, HOP_MTU, flush_after(on_hop.hop_rtt))
            .map_err(|e| format!("--fec: {e}"))?;
        let socket = Arc::new(FecSocket {
            inner,
            on_hop,
            send: Mutex::default(),
            recv: Mutex::default(),
            wake: Arc::new(Notify::new()),
        });
        tokio::spawn(flush_task(Arc::downgrade(&socket), socket.wake.clone()));
        Ok(socket)
    }

    fn encoder(&self) -> Encoder {
        Encoder::new(
            self.on_hop.setting,
            HOP_MTU,
            flush_after(self.on_hop.hop_rtt),
        )
        .expect("checked in new")
    }

    /// Sends what waits, in order; false when the socket below is full.
    fn drain(&self, side: &mut SendSide) -> io::Result<bool> {
        while let Some(p) = side.queue.front() {
            let t = Transmit {
                destination: p.to,
                ecn: p.ecn,
                contents: &p.bytes,
                segment_size: None,
                src_ip: p.src_ip,
            };
            match self.inner.try_send(&t) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                // as quinn does with a send error: the packet is lost
                Err(e) => {
                    side.queue.pop_front();
                    return Err(e);
                }
            }
            side.queue.pop_front();
        }
        Ok(true)
    }

    /// The partial windows due by `now` closed, their repairs queued and
    /// sent; when the next one is due.
    fn flush_due(&self, now: Instant) -> (Option<Instant>, io::Result<bool>) {
        let mut side = lock(&self.send);
        let side = &mut *side;
        let mut next: Option<Instant> = None;
        for (to, enc) in side.encoders.iter_mut() {
            enc.handle_timeout(now);
            let repairs = std::iter::from_fn(|| enc.poll_transmit());
            side.queue.extend(repairs.map(|bytes| Pending {
                to: *to,
                src_ip: None,
                ecn: None,
                bytes,
            }));
            if let Some(t) = enc.poll_timeout() {
                next = Some(next.map_or(t, |n| n.min(t)));
            }
        }
        let sent = self.drain(side);
        (next, sent)
    }

    /// The counters of both directions, summed over the peers:
    /// `{"setting": "K/N", "sent": {…}, "received": {…}, "too_long": n}`.
    pub fn json(&self) -> Value {
        let send = lock(&self.send);
        let sent = sum(send.encoders.values().map(|e| e.counters().json()));
        let too_long = send.too_long;
        drop(send);
        let received = sum(lock(&self.recv)
            .decoders
            .values()
            .map(|d| d.counters().json()));
        serde_json::json!({
            "setting": self.on_hop.setting.to_string(),
            "hop_rtt_ms": self.on_hop.hop_rtt.as_secs_f64() * 1000.0,
            "sent": sent,
            "received": received,
            "too_long": too_long,
        })
    }
}

/// The counters of every coded socket of a proxy (Proxy-GW codes its
/// `--listen` and its `--masque-listen`), added up; None without one.
pub fn json_of(sockets: &[Arc<FecSocket>]) -> Option<Value> {
    let first = sockets.first()?.json();
    let all: Vec<Value> = sockets.iter().map(|s| s.json()).collect();
    let total = |key: &str| sum(all.iter().map(|v| v[key].clone()));
    Some(serde_json::json!({
        "setting": first["setting"],
        "hop_rtt_ms": first["hop_rtt_ms"],
        "sockets": sockets.len(),
        "sent": total("sent"),
        "received": total("received"),
        "too_long": all.iter().filter_map(|v| v["too_long"].as_u64()).sum::<u64>(),
    }))
}

/// Counter objects added key by key.
fn sum(values: impl Iterator<Item = Value>) -> Value {
    let mut out = Map::new();
    for v in values {
        let Value::Object(m) = v else { continue };
        for (k, n) in m {
            let add = n.as_u64().unwrap_or(0);
            let total = out.get(&k).and_then(Value::as_u64).unwrap_or(0);
            out.insert(k, (total + add).into());
        }
    }
    Value::Object(out)
}

/// Sends each partial window's repairs when due, and what waits once the
/// socket below takes it again; ends with the socket.
async fn flush_task(socket: Weak<FecSocket>, wake: Arc<Notify>) {
    let mut poller: Option<Pin<Box<dyn UdpPoller>>> = None;
    loop {
        let (next, sent) = match socket.upgrade() {
            Some(s) => {
                let r = s.flush_due(Instant::now());
                if poller.is_none() {
                    poller = Some(s.inner.clone().create_io_poller());
                }
                r
            }
            None => return,
        };
        if let Ok(false) = sent {
            // the socket below is full: wait until it takes more
            if let Some(p) = poller.as_mut() {
                let _ = std::future::poll_fn(|cx| p.as_mut().poll_writable(cx)).await;
            }
            continue;
        }
        match next {
            Some(at) => {
                tokio::select! {
                    _ = tokio::time::sleep_until(at.into()) => {}
                    _ = wake.notified() => {}
                }
            }
            None => wake.notified().await,
        }
    }
}

impl AsyncUdpSocket for FecSocket {
    fn create_io_poller(self: Arc<Self>) -> Pin<Box<dyn UdpPoller>> {
        Box::pin(FecPoller {
            below: self.inner.clone().create_io_poller(),
            socket: self,
        })
    }

    fn try_send(&self, transmit: &Transmit) -> io::Result<()> {
        let mut side = lock(&self.send);
        let side = &mut *side;
        // what waits goes first; while it cannot, quinn waits too
        if !self.drain(side)? {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        let now = Instant::now();
        let step = transmit
            .segment_size
            .unwrap_or(transmit.contents.len())
            .max(1);
        let mut opened = false;
        for datagram in transmit.contents.chunks(step) {
            let enc = side
                .encoders
                .entry(transmit.destination)
                .or_insert_with(|| self.encoder());
            let was_open = enc.poll_timeout().is_some();
            let packet = match enc.push(datagram, now) {
                Ok(p) => p,
                Err(_) => {
                    side.too_long += 1;
                    continue;
                }
            };
            opened |= !was_open && enc.poll_timeout().is_some();
            // the source packet, then the repairs it completed
            let repairs = std::iter::from_fn(|| enc.poll_transmit());
            side.queue
                .extend(std::iter::once(packet).chain(repairs).map(|bytes| Pending {
                    to: transmit.destination,
                    src_ip: transmit.src_ip,
                    ecn: transmit.ecn,
                    bytes,
                }));
        }
        let drained = self.drain(side);
        if opened || matches!(drained, Ok(false)) {
            self.wake.notify_one();
        }
        // the transmit is taken: what did not leave yet is queued
        drained.map(|_| ())
    }

    fn poll_recv(
        &self,
        cx: &mut Context,
        bufs: &mut [IoSliceMut<'_>],
        meta: &mut [RecvMeta],
    ) -> Poll<io::Result<usize>> {
        loop {
            {
                let mut side = lock(&self.recv);
                if !side.out.is_empty() {
                    return Poll::Ready(Ok(fill(&mut side.out, bufs, meta)));
                }
            }
            let n = ready!(self.inner.poll_recv(cx, bufs, meta))?;
            let now = Instant::now();
            let mut side = lock(&self.recv);
            let side = &mut *side;
            let config = DecoderConfig::for_hop(self.on_hop.hop_rtt);
            for (buf, m) in bufs.iter().zip(meta.iter()).take(n) {
                let dec = side
                    .decoders
                    .entry(m.addr)
                    .or_insert_with(|| Decoder::new(config));
                for packet in buf[..m.len].chunks(m.stride.max(1)) {
                    // a refused packet is counted by the decoder
                    let _ = dec.receive(packet, now);
                }
                while let Some(bytes) = dec.poll_datagram() {
                    side.out.push_back(Delivered {
                        from: m.addr,
                        dst_ip: m.dst_ip,
                        ecn: m.ecn,
                        bytes,
                    });
                }
            }
        }
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.inner.local_addr()
    }

    fn may_fragment(&self) -> bool {
        self.inner.may_fragment()
    }
}

/// Hands waiting datagrams to quinn, one per buffer: how many.
fn fill(
    out: &mut VecDeque<Delivered>,
    bufs: &mut [IoSliceMut<'_>],
    meta: &mut [RecvMeta],
) -> usize {
    let mut n = 0;
    for (buf, m) in bufs.iter_mut().zip(meta.iter_mut()) {
        let Some(d) = out.pop_front() else { break };
        let len = d.bytes.len().min(buf.len());
        buf[..len].copy_from_slice(&d.bytes[..len]);
        *m = RecvMeta {
            addr: d.from,
            len,
            stride: len,
            ecn: d.ecn,
            dst_ip: d.dst_ip,
        };
        n += 1;
    }
    n
}

/// quinn's wait for the socket: the socket below's, and what waits sent
/// before quinn is told it may send.
struct FecPoller {
    socket: Arc<FecSocket>,
    below: Pin<Box<dyn UdpPoller>>,
}

impl fmt::Debug for FecPoller {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FecPoller").finish_non_exhaustive()
    }
}

impl UdpPoller for FecPoller {
    fn poll_writable(mut self: Pin<&mut Self>, cx: &mut Context) -> Poll<io::Result<()>> {
        loop {
            ready!(self.below.as_mut().poll_writable(cx))?;
            let mut side = lock(&self.socket.send);
            if self.socket.drain(&mut side)? {
                return Poll::Ready(Ok(()));
            }
        }
    }
}

/// A quinn endpoint on `socket` with the code under it (`server`: what it
/// accepts, None for one that only dials); the FEC socket for its counters.
pub fn endpoint(
    socket: std::net::UdpSocket,
    server: Option<quinn::ServerConfig>,
    on_hop: FecOnHop,
) -> Result<(quinn::Endpoint, Arc<FecSocket>), String> {
    let runtime = quinn::default_runtime().ok_or("--fec: no async runtime")?;
    let inner = runtime
        .wrap_udp_socket(socket)
        .map_err(|e| format!("--fec: {e}"))?;
    let fec = FecSocket::new(inner, on_hop)?;
    let endpoint = quinn::Endpoint::new_with_abstract_socket(
        quinn::EndpointConfig::default(),
        server,
        fec.clone(),
        runtime,
    )
    .map_err(|e| format!("--fec: {e}"))?;
    Ok((endpoint, fec))
}
