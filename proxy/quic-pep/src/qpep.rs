//! QPEP (Pavur et al., NDSS 2021): TCP carried over the standing tunnel.
//!
//! Proxy-ST takes the clients' TCP connections from TPROXY
//! (`--qpep-listen`), so each client's handshake ends at once on its own
//! side of the satellite, and carries each connection as one bidi tunnel
//! stream opened with a `Header::Tcp` naming its original destination.
//! Proxy-GW connects there from its own address, and both ends copy bytes.
//! A TCP FIN becomes the stream's FIN and the other way round; a TCP reset,
//! or a destination that is not allowed or does not answer, resets the
//! stream, and a reset stream aborts the TCP connection with RST: the end
//! hosts see what they would have seen end to end.

use std::future::Future;
use std::net::{SocketAddr, SocketAddrV4};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use quinn::{RecvStream, SendStream, VarInt};
use satbench_transport::net::Ipv4Net;
use satbench_transport::tcp;
use tokio::io::{AsyncReadExt, AsyncWriteExt, Interest};
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::sync::watch;

use crate::cli::Qpep;
use crate::log::Log;
use crate::spares::{Policy, Spares};
use crate::stats::{QpepStats, Stats};
use crate::tunnel::frame::Header;
use crate::tunnel::{self, Tunnel};

/// Application code of a tunnel stream whose TCP connection was reset.
pub const TCP_RESET: u32 = 0x7172;
/// Application code of a tunnel stream whose destination is not allowed
/// or did not answer (the client then gets a reset, as from a refusal).
pub const TCP_UNREACHABLE: u32 = 0x7173;
const BUF: usize = 64 * 1024;
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
const BACKLOG: u32 = 1024;

/// `--qpep-spares N`: once a client's TCP connection to a server has
/// crossed the tunnel, Proxy-GW keeps up to N connections to that server
/// dialled ahead, so the client's next connections (a browser opens up to
/// six per host for HTTP/1.1) do not wait for the ground hop's handshake.
/// Kept for the 4 servers used last. A spare older than 5 s is not used:
/// servers close connections that send no request (H2O 2.2.5 after 10 s),
/// and one closed in the last moment would cost the client a reset.
pub fn spare_policy(per_server: usize) -> Policy {
    Policy {
        per_key: per_server,
        max_keys: 4,
        max_age: Some(Duration::from_secs(5)),
    }
}

/// Proxy-ST's TCP listener: transparent for TPROXY, or plain with `--qpep-to`.
pub fn listen(q: &Qpep) -> Result<Option<TcpListener>, String> {
    let Some(addr) = q.listen else {
        return Ok(None);
    };
    let what = format!("--qpep-listen {addr}");
    let s = TcpSocket::new_v4().map_err(|e| format!("{what}: {e}"))?;
    s.set_reuseaddr(true)
        .map_err(|e| format!("{what}: SO_REUSEADDR: {e}"))?;
    if q.to.is_none() {
        tcp::set_transparent(&s)
            .map_err(|e| format!("{what}: IP_TRANSPARENT: {e} (needs CAP_NET_ADMIN)"))?;
    }
    s.bind(SocketAddr::V4(addr))
        .map_err(|e| format!("{what}: {e}"))?;
    s.listen(BACKLOG)
        .map(Some)
        .map_err(|e| format!("{what}: {e}"))
}

/// The start-up line of Proxy-ST's TCP listener, with the address it
/// bound (`--qpep-listen` may have port 0); an error if that is `to`,
/// which would loop.
pub fn listening(l: &TcpListener, to: Option<SocketAddrV4>) -> Result<String, String> {
    let at = l.local_addr().map_err(|e| format!("--qpep-listen: {e}"))?;
    match to {
        Some(to) if SocketAddr::V4(to) == at => Err(format!(
            "--qpep-to {to}: the proxy's own --qpep-listen address (a loop)"
        )),
        Some(to) => Ok(format!(
            "qpep listening on {at}/tcp, every connection to {to}"
        )),
        None => Ok(format!(
            "qpep listening on {at}/tcp, each connection to its original destination (TPROXY)"
        )),
    }
}

/// Pure: where an accepted connection goes: `--qpep-to`, else its original
/// destination, which TPROXY leaves as the accepted socket's local address.
pub fn destination(to: Option<SocketAddrV4>, local: SocketAddr) -> Option<SocketAddrV4> {
    to.or(match local {
        SocketAddr::V4(a) => Some(a),
        SocketAddr::V6(a) => a
            .ip()
            .to_ipv4_mapped()
            .map(|ip| SocketAddrV4::new(ip, a.port())),
    })
}

/// Pure: whether Proxy-GW may connect to `dst`.
pub fn allowed(dst: SocketAddrV4, allow: &[Ipv4Net]) -> bool {
    allow.iter().any(|n| n.contains(*dst.ip()))
}

/// Proxy-ST's side.
pub struct St {
    pub tunnel: watch::Receiver<Option<Arc<Tunnel>>>,
    pub to: Option<SocketAddrV4>,
    pub max_connections: usize,
    pub stats: Arc<Stats>,
    pub log: Arc<Log>,
}

impl St {
    /// Accepts until the task is dropped.
    pub async fn accept_loop(self: Arc<Self>, listener: TcpListener) {
        let mut last_error: Option<Instant> = None;
        loop {
            match listener.accept().await {
                Ok((s, peer)) => {
                    tokio::spawn(self.clone().carry(s, peer));
                }
                Err(e) => {
                    // EMFILE and the like: say so at most once a second, back off
                    if last_error.is_none_or(|t| t.elapsed() > Duration::from_secs(1)) {
                        self.log.line(&format!("qpep accept: {e}"));
                        last_error = Some(Instant::now());
                    }
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
        }
    }

    async fn carry(self: Arc<Self>, tcp: TcpStream, peer: SocketAddr) {
        let q = &self.stats.qpep;
        q.accepted.fetch_add(1, Relaxed);
        let started = Instant::now();
        let Some(dst) = tcp.local_addr().ok().and_then(|l| destination(self.to, l)) else {
            return abort_tcp(tcp);
        };
        if q.active.load(Relaxed) as usize >= self.max_connections {
            q.refused.fetch_add(1, Relaxed);
            self.log.line(&format!(
                "tcp {peer} -> {dst} refused: --max-connections {} reached",
                self.max_connections
            ));
            return abort_tcp(tcp);
        }
        let opened = match tunnel::keep_up::wait_up(self.tunnel.clone()).await {
            Some(t) => t.conn.open_bi().await.map_err(|e| e.to_string()),
            None => Err("the tunnel is down".into()),
        };
        let (mut send, recv) = match opened {
            Ok(s) => s,
            Err(why) => {
                q.failed.fetch_add(1, Relaxed);
                self.log.line(&format!("tcp {peer} -> {dst} failed: {why}"));
                return abort_tcp(tcp);
            }
        };
        // the header leaves with the connection's first bytes
        if send.write_all(&Header::Tcp { dst }.encode()).await.is_err() {
            q.failed.fetch_add(1, Relaxed);
            return abort_tcp(tcp);
        }
        q.relayed.fetch_add(1, Relaxed);
        self.stats.tunnel.streams.fetch_add(1, Relaxed);
        q.active.fetch_add(1, Relaxed);
        let out = relay(tcp, send, recv, true, q).await;
        q.active.fetch_sub(1, Relaxed);
        self.log.line(&format!(
            "tcp {peer} -> {dst} {} duration_ms={}",
            out.describe(),
            started.elapsed().as_millis()
        ));
    }
}

/// Proxy-GW's side: where TCP streams from the tunnel may go, and how.
pub struct Gw {
    pub allow: Vec<Ipv4Net>,
    pub connect_cc: Option<String>,
    /// `--qpep-spares`: connections dialled ahead per destination
    /// (`spare_policy`).
    pub spares: Mutex<Spares<SocketAddrV4, TcpStream>>,
    pub stats: Arc<Stats>,
    pub log: Arc<Log>,
}

impl Gw {
    /// One TCP stream from the tunnel: connect to `dst`, then relay.
    pub async fn carry(
        self: Arc<Self>,
        dst: SocketAddrV4,
        mut send: SendStream,
        mut recv: RecvStream,
    ) {
        let q = &self.stats.qpep;
        q.accepted.fetch_add(1, Relaxed);
        let started = Instant::now();
        let refuse = |send: &mut SendStream, recv: &mut RecvStream| {
            let code = VarInt::from_u32(TCP_UNREACHABLE);
            let _ = send.reset(code);
            let _ = recv.stop(code);
        };
        if !allowed(dst, &self.allow) {
            q.refused.fetch_add(1, Relaxed);
            self.log
                .line(&format!("tcp -> {dst} refused: not in --qpep-allow"));
            return refuse(&mut send, &mut recv);
        }
        // `spare` names it in the log line
        let (tcp, spare) = match self.spare(dst) {
            Some(s) => (Ok(s), " spare"),
            None => (self.connect(dst).await, ""),
        };
        let tcp = match tcp {
            Ok(s) => {
                self.clone().refill(dst);
                s
            }
            Err(why) => {
                q.failed.fetch_add(1, Relaxed);
                self.log.line(&format!("tcp -> {dst} failed: {why}"));
                return refuse(&mut send, &mut recv);
            }
        };
        let setup = started.elapsed();
        q.relayed.fetch_add(1, Relaxed);
        q.active.fetch_add(1, Relaxed);
        let out = relay(tcp, send, recv, false, q).await;
        q.active.fetch_sub(1, Relaxed);
        self.log.line(&format!(
            "tcp -> {dst}{spare} {} setup_ms={} duration_ms={}",
            out.describe(),
            setup.as_millis(),
            started.elapsed().as_millis()
        ));
    }

    /// A spare connection to `dst` the server has not closed, if one is ready.
    fn spare(&self, dst: SocketAddrV4) -> Option<TcpStream> {
        loop {
            let s = self.spares.lock().unwrap().take(&dst, Instant::now())?;
            if !closed(&s) {
                self.stats.qpep.spares_used.fetch_add(1, Relaxed);
                return Some(s);
            }
        }
    }

    /// Dials what `dst` lacks of its spares, in the background.
    fn refill(self: Arc<Self>, dst: SocketAddrV4) {
        let n = self.spares.lock().unwrap().to_dial(&dst, Instant::now());
        for _ in 0..n {
            let gw = self.clone();
            tokio::spawn(async move {
                let c = gw.connect(dst).await.ok();
                gw.spares.lock().unwrap().dialled(&dst, c, Instant::now());
            });
        }
    }

    async fn connect(&self, dst: SocketAddrV4) -> Result<TcpStream, String> {
        let s = TcpSocket::new_v4().map_err(|e| e.to_string())?;
        if let Some(cc) = &self.connect_cc {
            tcp::set_congestion(&s, cc).map_err(|e| format!("TCP_CONGESTION {cc}: {e}"))?;
        }
        match tokio::time::timeout(CONNECT_TIMEOUT, s.connect(SocketAddr::V4(dst))).await {
            Ok(r) => r.map_err(|e| e.to_string()),
            Err(_) => Err(format!("no answer within {} s", CONNECT_TIMEOUT.as_secs())),
        }
    }
}

/// Whether the server has closed (or reset) an idle connection: a peek
/// that would wait means open, and any data waiting stays for the client.
fn closed(s: &TcpStream) -> bool {
    let mut b = [0u8; 1];
    let mut peek = std::pin::pin!(s.peek(&mut b));
    let r = peek.as_mut().poll(&mut Context::from_waker(Waker::noop()));
    matches!(r, Poll::Ready(Ok(0)) | Poll::Ready(Err(_)))
}

/// How a carried connection ended, and the bytes each way.
#[derive(Debug)]
pub struct Outcome {
    /// None: both directions ended with FIN; else why it was aborted.
    pub aborted: Option<String>,
    pub up: u64,
    pub down: u64,
}

impl Outcome {
    pub fn describe(&self) -> String {
        let how = match &self.aborted {
            None => "closed".to_string(),
            Some(why) => format!("aborted ({why})"),
        };
        format!("{how} up={} down={}", self.up, self.down)
    }
}

/// Copies between a TCP connection and its tunnel stream both ways until
/// both directions end with FIN, or one fails: then the TCP connection is
/// aborted (RST) and the stream reset and stopped. `up`: bytes read from
/// TCP flow client → server (at Proxy-ST).
pub async fn relay(
    tcp: TcpStream,
    mut send: SendStream,
    mut recv: RecvStream,
    up: bool,
    q: &QpepStats,
) -> Outcome {
    let _ = tcp.set_nodelay(true);
    let (mut rd, mut wr) = tcp.into_split();
    let count = |towards_server: bool, n: usize| {
        let c = if towards_server {
            &q.bytes_up
        } else {
            &q.bytes_down
        };
        c.fetch_add(n as u64, Relaxed);
    };
    let (mut from_tcp, mut to_tcp) = (0u64, 0u64);
    let aborted = {
        let out = async {
            // The peer's STOP_SENDING must end this side even while it waits
            // for TCP data that may never come (a server done sending).
            let stopped = send.stopped();
            tokio::pin!(stopped);
            let mut buf = vec![0u8; BUF];
            loop {
                let read = tokio::select! {
                    r = rd.read(&mut buf) => r,
                    s = &mut stopped => return Err(match s {
                        Ok(Some(code)) => format!("tunnel stream stopped with code {code}"),
                        _ => "tunnel stream stopped".to_string(),
                    }),
                };
                match read {
                    Ok(0) => {
                        let _ = send.finish();
                        return Ok(());
                    }
                    Ok(n) => {
                        send.write_all(&buf[..n])
                            .await
                            .map_err(|e| format!("tunnel stream: {e}"))?;
                        from_tcp += n as u64;
                        count(up, n);
                    }
                    Err(e) => return Err(format!("TCP: {e}")),
                }
            }
        };
        let inn = async {
            loop {
                // A reset from the TCP peer must end this side even while no
                // tunnel data comes to write (its FIN may be read already).
                let chunk = tokio::select! {
                    c = recv.read_chunk(BUF, true) => c,
                    _ = wr.as_ref().ready(Interest::ERROR) => {
                        let e = wr.as_ref().take_error().ok().flatten();
                        return Err(format!("TCP: {}", e.map_or("socket error".into(), |e| e.to_string())));
                    }
                };
                match chunk {
                    Ok(Some(c)) => {
                        wr.write_all(&c.bytes)
                            .await
                            .map_err(|e| format!("TCP: {e}"))?;
                        to_tcp += c.bytes.len() as u64;
                        count(!up, c.bytes.len());
                    }
                    Ok(None) => {
                        // the peer's FIN: ours follows
                        let _ = wr.shutdown().await;
                        return Ok(());
                    }
                    Err(e) => return Err(format!("tunnel stream: {e}")),
                }
            }
        };
        tokio::pin!(out, inn);
        let (mut out_done, mut in_done) = (false, false);
        loop {
            tokio::select! {
                r = &mut out, if !out_done => match r {
                    Ok(()) => out_done = true,
                    Err(e) => break Some(e),
                },
                r = &mut inn, if !in_done => match r {
                    Ok(()) => in_done = true,
                    Err(e) => break Some(e),
                },
            }
            if out_done && in_done {
                break None;
            }
        }
    };
    if aborted.is_some() {
        q.aborted.fetch_add(1, Relaxed);
        let code = VarInt::from_u32(TCP_RESET);
        let _ = send.reset(code);
        let _ = recv.stop(code);
        let _ = tcp::set_linger_zero(wr.as_ref());
        // no FIN from the write half's drop: the close below is the RST
        wr.forget();
    }
    drop(rd);
    let (up_bytes, down_bytes) = if up {
        (from_tcp, to_tcp)
    } else {
        (to_tcp, from_tcp)
    };
    Outcome {
        aborted,
        up: up_bytes,
        down: down_bytes,
    }
}

/// A TCP connection we will not carry: RST, not FIN.
fn abort_tcp(tcp: TcpStream) {
    let _ = tcp::set_linger_zero(&tcp);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_destination_is_the_original_one_unless_fixed() {
        let local: SocketAddr = "198.18.3.2:443".parse().unwrap();
        assert_eq!(
            destination(None, local),
            Some("198.18.3.2:443".parse().unwrap())
        );
        let fixed: SocketAddrV4 = "127.0.0.1:8080".parse().unwrap();
        assert_eq!(destination(Some(fixed), local), Some(fixed));
        let mapped: SocketAddr = "[::ffff:198.18.3.2]:80".parse().unwrap();
        assert_eq!(
            destination(None, mapped),
            Some("198.18.3.2:80".parse().unwrap())
        );
        assert_eq!(destination(None, "[::1]:80".parse().unwrap()), None);
    }

    #[test]
    fn only_allowed_networks_are_reached() {
        let allow: Vec<Ipv4Net> = vec!["198.18.0.0/15".parse().unwrap()];
        assert!(allowed("198.18.3.2:443".parse().unwrap(), &allow));
        assert!(allowed("198.19.0.1:80".parse().unwrap(), &allow));
        assert!(!allowed("8.8.8.8:443".parse().unwrap(), &allow));
        assert!(!allowed("127.0.0.1:443".parse().unwrap(), &allow));
        assert!(!allowed("198.18.3.2:443".parse().unwrap(), &[]));
    }

    /// `closed` over loopback: open while the server is quiet, still open
    /// (its bytes kept) when it spoke first, closed once it sent FIN.
    #[tokio::test]
    async fn a_spare_the_server_closed_is_seen_as_closed() {
        let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let c = TcpStream::connect(l.local_addr().unwrap()).await.unwrap();
        let (mut srv, _) = l.accept().await.unwrap();
        assert!(!closed(&c));
        srv.write_all(b"hi").await.unwrap();
        let mut c = c;
        c.readable().await.unwrap();
        assert!(!closed(&c));
        let mut b = [0u8; 2];
        c.read_exact(&mut b).await.unwrap();
        assert_eq!(&b, b"hi", "the peek took nothing");
        drop(srv);
        tokio::time::timeout(Duration::from_secs(5), async {
            while !closed(&c) {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
        .await
        .expect("the server's FIN was not seen");
    }
}
