//! `satbulk serve`: the senders. A QUIC endpoint (ALPN satbulk) and a TCP
//! listener; each request (`request::parse`) gets its bytes, and each
//! connection is traced (`trace`) from accept until the peer is gone.

use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use satbench_transport::careful_resume::Resumer;
use satbench_transport::process::{say_ready, Shutdown};
use satbench_transport::{cert, time};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::Instant;

use crate::bins::Bins;
use crate::cli::{ServeArgs, ALPN};
use crate::request::{self, Parsed, Request, Upload};
use crate::tcpinfo;
use crate::trace::{self, Stamp, Trace};
use crate::{next_write, CHUNK};

/// A request that has not arrived after this long is dropped.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// After a TCP sender has written its last byte: how long it waits for the
/// client to close (so the trace covers the bytes still in flight).
const DRAIN_TIMEOUT: Duration = Duration::from_secs(120);

/// How many bytes the next write should carry: up to a chunk, never past
/// what was asked for; nothing for an upload (the server sends only its
/// receipt).
pub fn next_chunk(req: &Request, sent: u64) -> usize {
    if req.upload.is_some() {
        return 0;
    }
    next_write(req.bytes, sent)
}

fn log(msg: &str) {
    eprintln!("satbulk: {msg}");
}

/// Reads until the request line is complete; also returns how many bytes
/// past the line came with it (the start of an upload's body).
async fn read_request<R: tokio::io::AsyncRead + Unpin>(
    r: &mut R,
) -> Result<(Request, usize), String> {
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
            if let Parsed::Done(r, used) = request::parse(&buf)? {
                return Ok((r, buf.len() - used));
            }
        }
    };
    tokio::time::timeout(REQUEST_TIMEOUT, work)
        .await
        .map_err(|_| "request: none within 30 s".to_string())?
}

/// An upload counted as the client would count a download: per bin from
/// the client's t0, up to the bytes asked for or until the duration ends.
pub struct UploadCount {
    /// The client's t0 on this process's monotonic clock.
    base: Instant,
    until: Option<Instant>,
    want: Option<u64>,
    bins: Bins,
}

impl UploadCount {
    /// `since_t0`: how long ago the client's t0 was, by the host's clock.
    pub fn new(req: &Request, up: &Upload, since_t0: Duration) -> UploadCount {
        let now = Instant::now();
        let base = now.checked_sub(since_t0).unwrap_or(now);
        UploadCount {
            base,
            until: up.duration_ms.map(|d| base + Duration::from_millis(d)),
            want: req.bytes,
            bins: Bins::new(Duration::from_millis(up.bin_ms)),
        }
    }

    pub fn got(&mut self, n: usize) {
        let now = Instant::now();
        if self.until.is_none_or(|u| now < u) {
            self.bins.add(now - self.base, n as u64);
        }
    }

    pub fn done(&self) -> bool {
        self.want.is_some_and(|w| self.bins.total() >= w)
            || self.until.is_some_and(|u| Instant::now() >= u)
    }
}

/// The longest an upload's t0 may lie in the past: the client and the
/// server share a clock, and bins from a t0 further back would be a
/// mistake that costs memory.
const MAX_SINCE_T0: Duration = Duration::from_secs(3600);

/// How long ago `t0_unix_us` was by this host's clock (0 if it is ahead).
fn since_unix_us(t0_unix_us: u64) -> Result<Duration, String> {
    let since = time::unix_now().saturating_sub(Duration::from_micros(t0_unix_us));
    if since > MAX_SINCE_T0 {
        return Err(format!(
            "request: T0_UNIX_US {t0_unix_us} is {} s before this host's clock; client and server must share it",
            since.as_secs()
        ));
    }
    Ok(since)
}

/// Counts an upload's body (`early` bytes of it came with the request line)
/// until it is done or the client stops, and returns the receipt line.
async fn count_upload<R: tokio::io::AsyncRead + Unpin>(
    r: &mut R,
    req: &Request,
    up: &Upload,
    early: usize,
) -> Result<String, String> {
    let mut c = UploadCount::new(req, up, since_unix_us(up.t0_unix_us)?);
    c.got(early);
    let mut buf = vec![0u8; CHUNK];
    while !c.done() {
        let read = match c.until {
            Some(u) => match tokio::time::timeout_at(u, r.read(&mut buf)).await {
                Ok(read) => read,
                Err(_) => break, // the duration is over
            },
            None => r.read(&mut buf).await,
        };
        match read {
            Ok(0) | Err(_) => break,
            Ok(n) => c.got(n),
        }
    }
    let mut line = serde_json::to_string(&c.bins.receipt()).unwrap_or_default();
    line.push('\n');
    Ok(line)
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
    let (req, early) = read_request(&mut recv).await?;
    if let Some(up) = &req.upload {
        let receipt = count_upload(&mut recv, &req, up, early).await?;
        // a timed upload's client is still sending: tell it to stop
        let _ = recv.stop(0u32.into());
        send.write_all(receipt.as_bytes())
            .await
            .map_err(|e| format!("upload receipt: {e}"))?;
    }
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

/// `--quic-careful-resume on`: the server's Careful Resume and the config
/// it accepts connections with.
type Resume = Option<(Arc<Resumer>, quinn::ServerConfig)>;

async fn quic_connection(
    incoming: quinn::Incoming,
    id: u64,
    trace: Trace,
    payload: Bytes,
    resume: Resume,
) {
    let accepted = Instant::now();
    let peer = incoming.remote_address().to_string();
    // Careful Resume: a returning client's connection starts from what its
    // previous one measured
    let conn = match &resume {
        Some((r, config)) => r.accept(incoming, config).await,
        None => incoming.await,
    };
    let conn = match conn {
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

async fn serve_quic(
    endpoint: quinn::Endpoint,
    ids: Arc<AtomicU64>,
    trace: Trace,
    payload: Bytes,
    resume: Resume,
) {
    while let Some(incoming) = endpoint.accept().await {
        let id = ids.fetch_add(1, Ordering::Relaxed);
        tokio::spawn(quic_connection(
            incoming,
            id,
            trace.clone(),
            payload.clone(),
            resume.clone(),
        ));
    }
}

// ---------------------------------------------------------------- TCP

/// Sends what the connection asked for, then waits for the client to close.
async fn tcp_send(stream: &mut TcpStream, sent: &AtomicU64, payload: &[u8]) -> Result<(), String> {
    let (req, early) = read_request(stream).await?;
    let mut mine = 0u64;
    if let Some(up) = &req.upload {
        let receipt = count_upload(stream, &req, up, early).await?;
        stream
            .write_all(receipt.as_bytes())
            .await
            .map_err(|e| format!("upload receipt: {e}"))?;
    }
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
    let mut resume = None;
    if args.quic_port != 0 {
        let config = quic_server_config(&args)?;
        let addr = SocketAddr::new(args.addr, args.quic_port);
        if args.quic.careful_resume {
            let r = Resumer::new(&args.quic, args.careful_resume_log.as_deref())
                .map_err(|e| format!("--careful-resume-log {e}"))?;
            resume = Some((Arc::new(r), config.clone()));
        }
        let ep =
            quinn::Endpoint::server(config, addr).map_err(|e| format!("bind {addr}/udp: {e}"))?;
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
            resume,
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
        let r = Request::download(Some(CHUNK as u64 + 10));
        assert_eq!(next_chunk(&r, 0), CHUNK);
        assert_eq!(next_chunk(&r, CHUNK as u64), 10);
        assert_eq!(next_chunk(&r, CHUNK as u64 + 10), 0);
        assert_eq!(next_chunk(&r, u64::MAX), 0);
        assert_eq!(next_chunk(&Request::download(Some(1)), 0), 1);
    }

    #[test]
    fn an_upload_gets_nothing_but_its_receipt() {
        let up = Request {
            bytes: Some(10),
            upload: Some(Upload {
                duration_ms: None,
                t0_unix_us: 1,
                bin_ms: 1,
            }),
        };
        assert_eq!(next_chunk(&up, 0), 0);
    }

    #[test]
    fn until_closed_never_stops() {
        assert_eq!(next_chunk(&Request::download(None), u64::MAX - 1), CHUNK);
    }

    #[tokio::test]
    async fn reads_a_request_in_pieces() {
        let mut pieces = tokio_test_reader(&[b"satbulk", b" 42", b"\n"]);
        assert_eq!(
            read_request(&mut pieces).await,
            Ok((Request::download(Some(42)), 0))
        );
    }

    #[tokio::test]
    async fn a_peer_that_closes_early_is_an_error() {
        let mut r = tokio_test_reader(&[b"satbulk 4"]);
        assert!(read_request(&mut r).await.unwrap_err().contains("closed"));
    }

    #[tokio::test]
    async fn an_upload_is_counted_from_the_clients_t0_up_to_its_bytes() {
        let a_second_ago = time::unix_now().as_micros() as u64 - 1_000_000;
        let line = format!("satbulk up 5000 0 {a_second_ago} 100\nabc");
        let mut r = tokio_test_reader(&[line.as_bytes(), &[0u8; 4000], &[0u8; 2000]]);
        let (req, early) = read_request(&mut r).await.unwrap();
        assert_eq!(early, 3);
        let up = req.upload.unwrap();
        let receipt: crate::bins::Receipt =
            serde_json::from_str(count_upload(&mut r, &req, &up, early).await.unwrap().trim())
                .unwrap();
        // the count stops once the bytes asked for are in (the read that
        // crossed it, at most the pipe's 1024 bytes, counts whole), and
        // bins start at the client's t0
        let total = receipt.bins.iter().sum::<u64>();
        assert!((5000..5000 + 1024).contains(&total), "{total}");
        assert!((1_000_000..1_500_000).contains(&receipt.first_us.unwrap()));
        assert_eq!(receipt.bins.len(), 11);
    }

    #[tokio::test]
    async fn an_upload_from_a_t0_long_ago_is_refused() {
        let req = Request {
            bytes: Some(1),
            upload: Some(Upload {
                duration_ms: None,
                t0_unix_us: 0,
                bin_ms: 1,
            }),
        };
        let mut r = tokio_test_reader(&[b"x"]);
        let e = count_upload(&mut r, &req, &req.upload.unwrap(), 0).await;
        assert!(e.unwrap_err().contains("must share it"));
    }

    #[tokio::test(start_paused = true)]
    async fn a_timed_upload_counts_until_its_duration_after_t0() {
        let req = Request {
            bytes: None,
            upload: Some(Upload {
                duration_ms: Some(1000),
                t0_unix_us: 0,
                bin_ms: 100,
            }),
        };
        let up = req.upload.unwrap();
        let mut c = UploadCount::new(&req, &up, Duration::from_millis(250));
        c.got(10); // at 250 ms after t0: bin 2
        assert!(!c.done());
        tokio::time::advance(Duration::from_millis(700)).await;
        c.got(5); // at 950 ms: bin 9
        tokio::time::advance(Duration::from_millis(100)).await;
        c.got(99); // after the duration: not counted
        assert!(c.done());
        assert_eq!(
            c.bins.padded(Duration::ZERO),
            vec![0, 0, 10, 0, 0, 0, 0, 0, 0, 5]
        );
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
