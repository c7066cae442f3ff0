//! `satbulk serve`: the senders. A QUIC endpoint (ALPN satbulk) and a TCP
//! listener; each request (`request::parse`) gets its bytes, and each
//! connection is traced (`trace`) from accept until the peer is gone.

use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use satbench_transport::cert;
use satbench_transport::process::{say_ready, Shutdown};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::Instant;

use crate::cli::{ServeArgs, ALPN};
use crate::request::{self, Parsed, Request};
use crate::tcpinfo;
use crate::trace::{self, Stamp, Trace};

/// What one write hands the transport: large enough that a 250 Mbit/s
/// sender makes few calls, small enough that a count per write is fine-grained.
const CHUNK: usize = 256 * 1024;

/// A request that has not arrived after this long is dropped.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// After a TCP sender has written its last byte: how long it waits for the
/// client to close (so the trace covers the bytes still in flight).
const DRAIN_TIMEOUT: Duration = Duration::from_secs(120);

/// How many bytes the next write should carry: up to a chunk, never past
/// what was asked for.
pub fn next_chunk(req: &Request, sent: u64) -> usize {
    match req.bytes {
        None => CHUNK,
        Some(n) => n.saturating_sub(sent).min(CHUNK as u64) as usize,
    }
}

fn log(msg: &str) {
    eprintln!("satbulk: {msg}");
}

/// Reads until the request line is complete.
async fn read_request<R: tokio::io::AsyncRead + Unpin>(r: &mut R) -> Result<Request, String> {
    let mut buf = Vec::new();
    let mut tmp = [0u8; request::MAX_LINE];
    let work = async {
        loop {
            let n = r
                .read(&mut tmp)
                .await
                .map_err(|e| format!("request: {e}"))?;
            if n == 0 {
                return Err("request: peer closed before sending one".to_string());
            }
            buf.extend_from_slice(&tmp[..n]);
            if let Parsed::Done(r) = request::parse(&buf)? {
                return Ok(r);
            }
        }
    };
    tokio::time::timeout(REQUEST_TIMEOUT, work)
        .await
        .map_err(|_| "request: none within 30 s".to_string())?
}

// ---------------------------------------------------------------- QUIC

fn quic_server_config(args: &ServeArgs) -> Result<quinn::ServerConfig, String> {
    let (certs, key) = cert::load_cert_and_key(&args.cert, &args.key)?;
    let mut tls = cert::tls13_server(certs, key, &args.key)?;
    tls.alpn_protocols = vec![ALPN.to_vec()];
    let crypto = quinn::crypto::rustls::QuicServerConfig::try_from(tls)
        .map_err(|e| format!("--cert {}: unusable for QUIC: {e}", args.cert.display()))?;
    let mut c = quinn::ServerConfig::with_crypto(Arc::new(crypto));
    c.transport_config(Arc::new(args.quic.transport_config()));
    Ok(c)
}

/// Sends what one stream asked for; `sent` counts body bytes handed to
/// quinn, for the trace.
async fn quic_stream(
    mut send: quinn::SendStream,
    mut recv: quinn::RecvStream,
    sent: Arc<AtomicU64>,
    payload: Bytes,
) -> Result<(), String> {
    let req = read_request(&mut recv).await?;
    let mut mine = 0u64;
    loop {
        let n = next_chunk(&req, mine);
        if n == 0 {
            break;
        }
        // a client that stops reading (timed download over) ends the loop
        if send.write_chunk(payload.slice(..n)).await.is_err() {
            return Ok(());
        }
        mine += n as u64;
        sent.fetch_add(n as u64, Ordering::Relaxed);
    }
    let _ = send.finish();
    // until the client has read it all: the trace covers the bytes in flight
    let _ = send.stopped().await;
    Ok(())
}

async fn quic_connection(incoming: quinn::Incoming, id: u64, trace: Trace, payload: Bytes) {
    let accepted = Instant::now();
    let peer = incoming.remote_address().to_string();
    let conn = match incoming.await {
        Ok(c) => c,
        Err(e) => return log(&format!("quic {peer}: handshake failed: {e}")),
    };
    let sent = Arc::new(AtomicU64::new(0));
    let streams = {
        let (conn, sent) = (conn.clone(), sent.clone());
        async move {
            // every stream runs on its own; the connection lives until closed
            while let Ok((s, r)) = conn.accept_bi().await {
                let (sent, payload) = (sent.clone(), payload.clone());
                tokio::spawn(async move {
                    if let Err(e) = quic_stream(s, r, sent, payload).await {
                        log(&e);
                    }
                });
            }
        }
    };
    let c = conn.clone();
    trace::sample_while(streams, trace::INTERVAL, |last| {
        if trace.enabled() {
            let stamp = Stamp::now(id, &peer, accepted.elapsed(), last);
            trace.write(&trace::quic_line(
                stamp,
                &c.stats(),
                sent.load(Ordering::Relaxed),
            ));
        }
    })
    .await;
}

async fn serve_quic(endpoint: quinn::Endpoint, ids: Arc<AtomicU64>, trace: Trace, payload: Bytes) {
    while let Some(incoming) = endpoint.accept().await {
        let id = ids.fetch_add(1, Ordering::Relaxed);
        tokio::spawn(quic_connection(
            incoming,
            id,
            trace.clone(),
            payload.clone(),
        ));
    }
}

// ---------------------------------------------------------------- TCP

/// Sends what the connection asked for, then waits for the client to close.
async fn tcp_send(stream: &mut TcpStream, sent: &AtomicU64, payload: &[u8]) -> Result<(), String> {
    let req = read_request(stream).await?;
    let mut mine = 0u64;
    loop {
        let n = next_chunk(&req, mine);
        if n == 0 {
            break;
        }
        let w = match stream.write(&payload[..n]).await {
            Ok(0) | Err(_) => return Ok(()), // the client went away: a timed download ended
            Ok(w) => w,
        };
        mine += w as u64;
        sent.fetch_add(w as u64, Ordering::Relaxed);
    }
    let _ = stream.shutdown().await;
    let mut sink = [0u8; 512];
    let _ = tokio::time::timeout(DRAIN_TIMEOUT, async {
        while let Ok(n) = stream.read(&mut sink).await {
            if n == 0 {
                break;
            }
        }
    })
    .await;
    Ok(())
}

async fn tcp_connection(
    mut stream: TcpStream,
    peer: SocketAddr,
    id: u64,
    trace: Trace,
    payload: Bytes,
) {
    let accepted = Instant::now();
    let fd = stream.as_raw_fd();
    let peer = peer.to_string();
    let sent = AtomicU64::new(0);
    let work = tcp_send(&mut stream, &sent, &payload);
    // the socket outlives `work` (it is dropped at the end of this function)
    let r = trace::sample_while(work, trace::INTERVAL, |last| {
        if !trace.enabled() {
            return;
        }
        if let Ok(info) = tcpinfo::read(fd) {
            let stamp = Stamp::now(id, &peer, accepted.elapsed(), last);
            trace.write(&trace::tcp_line(stamp, &info, sent.load(Ordering::Relaxed)));
        }
    })
    .await;
    if let Err(e) = r {
        log(&format!("tcp {peer}: {e}"));
    }
}

async fn serve_tcp(listener: TcpListener, ids: Arc<AtomicU64>, trace: Trace, payload: Bytes) {
    loop {
        match listener.accept().await {
            Ok((s, peer)) => {
                let id = ids.fetch_add(1, Ordering::Relaxed);
                tokio::spawn(tcp_connection(s, peer, id, trace.clone(), payload.clone()));
            }
            // out of descriptors and the like: back off, keep serving
            Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
}

/// Bind both, print `ready`, serve until SIGTERM or SIGINT.
pub async fn run(args: ServeArgs) -> Result<(), String> {
    let trace = match &args.trace {
        Some(p) => Trace::to_file(p).map_err(|e| format!("--trace {}: {e}", p.display()))?,
        None => Trace::none(),
    };
    let payload = Bytes::from(vec![0u8; CHUNK]);
    let ids = Arc::new(AtomicU64::new(1));

    let mut endpoint = None;
    if args.quic_port != 0 {
        let config = quic_server_config(&args)?;
        let addr = SocketAddr::new(args.addr, args.quic_port);
        let udp = std::net::UdpSocket::bind(addr).map_err(|e| format!("bind {addr}/udp: {e}"))?;
        let ep = quinn::Endpoint::new(
            quinn::EndpointConfig::default(),
            Some(config),
            udp,
            Arc::new(quinn::TokioRuntime),
        )
        .map_err(|e| format!("bind {addr}/udp: {e}"))?;
        endpoint = Some(ep);
    }
    let mut tcp = None;
    if args.tcp_port != 0 {
        let addr = SocketAddr::new(args.addr, args.tcp_port);
        let l = TcpListener::bind(addr)
            .await
            .map_err(|e| format!("bind {addr}: {e}"))?;
        if let Some(cc) = &args.tcp_cc {
            tcpinfo::set_congestion(l.as_raw_fd(), cc).map_err(|e| {
                format!(
                    "--tcp-cc {cc}: {e} (see /proc/sys/net/ipv4/tcp_available_congestion_control)"
                )
            })?;
        }
        tcp = Some(l);
    }

    let shutdown = Shutdown::listen()?;
    if let Some(ep) = &endpoint {
        tokio::spawn(serve_quic(
            ep.clone(),
            ids.clone(),
            trace.clone(),
            payload.clone(),
        ));
    }
    if let Some(l) = tcp {
        tokio::spawn(serve_tcp(l, ids.clone(), trace.clone(), payload.clone()));
    }
    say_ready();
    shutdown.requested().await;
    if let Some(ep) = endpoint {
        ep.close(0u32.into(), b"shutting down");
        let _ = tokio::time::timeout(Duration::from_millis(200), ep.wait_idle()).await;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_never_pass_the_request() {
        let r = Request {
            bytes: Some(CHUNK as u64 + 10),
        };
        assert_eq!(next_chunk(&r, 0), CHUNK);
        assert_eq!(next_chunk(&r, CHUNK as u64), 10);
        assert_eq!(next_chunk(&r, CHUNK as u64 + 10), 0);
        assert_eq!(next_chunk(&r, u64::MAX), 0);
        assert_eq!(next_chunk(&Request { bytes: Some(1) }, 0), 1);
    }

    #[test]
    fn until_closed_never_stops() {
        assert_eq!(next_chunk(&Request { bytes: None }, u64::MAX - 1), CHUNK);
    }

    #[tokio::test]
    async fn reads_a_request_in_pieces() {
        let mut pieces = tokio_test_reader(&[b"satbulk", b" 42", b"\n"]);
        assert_eq!(
            read_request(&mut pieces).await,
            Ok(Request { bytes: Some(42) })
        );
    }

    #[tokio::test]
    async fn a_peer_that_closes_early_is_an_error() {
        let mut r = tokio_test_reader(&[b"satbulk 4"]);
        assert!(read_request(&mut r).await.unwrap_err().contains("closed"));
    }

    /// A reader that returns each piece from a separate read, then EOF.
    fn tokio_test_reader(pieces: &[&[u8]]) -> impl tokio::io::AsyncRead + Unpin {
        let (client, mut server) = tokio::io::duplex(1024);
        let pieces: Vec<Vec<u8>> = pieces.iter().map(|p| p.to_vec()).collect();
        tokio::spawn(async move {
            for p in pieces {
                server.write_all(&p).await.unwrap();
                tokio::task::yield_now().await;
            }
        });
        client
    }
}
