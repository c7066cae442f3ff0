//! `satbulk get`: one download over QUIC or TCP, every read timed from t0
//! (just before connecting) into `bins::Bins`; or, with `--direction up`,
//! one upload, which the server counts into the same bins from our t0 and
//! hands back as its receipt.

use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::time::Duration;

use satbench_transport::quic::keep_alive_every;
use satbench_transport::{cert, time};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::time::Instant;

use crate::bins::{ms, Bins, Direction, Receipt, Report};
use crate::cli::{Amount, GetArgs, Proto, ALPN};
use crate::request::{Request, Upload};
use crate::tcpinfo;
use crate::{next_write, CHUNK};

/// What a download has seen so far; kept when it is cut short, so a failed
/// run still reports its bytes.
struct Progress {
    t0: Instant,
    /// t0 by the host's clock, in µs since the Unix epoch (an upload's
    /// server counts from it).
    t0_unix_us: u64,
    /// Bytes read at or after this (since t0) are not counted: a timed
    /// download counts exactly its duration.
    until: Option<Duration>,
    bins: Bins,
    connect: Option<Duration>,
    quic: Option<(quinn::Endpoint, quinn::Connection)>,
    tcp: Option<tokio::net::TcpStream>,
}

impl Progress {
    fn got(&mut self, n: usize) {
        let at = self.t0.elapsed();
        if self.until.is_none_or(|u| at < u) {
            self.bins.add(at, n as u64);
        }
    }
}

/// The most an upload's receipt may take (bins of 1 ms for a long upload).
const MAX_RECEIPT: u64 = 64 << 20;

fn request_of(args: &GetArgs, t0_unix_us: u64) -> Request {
    let (bytes, duration) = match args.amount {
        Amount::Bytes(n) => (Some(n), None),
        Amount::Duration(d) => (None, Some(d.as_millis().max(1) as u64)),
    };
    Request {
        bytes,
        upload: (args.direction == Direction::Up).then_some(Upload {
            duration_ms: duration,
            t0_unix_us,
            bin_ms: args.bin.as_millis() as u64,
        }),
    }
}

/// Sends an upload's body (`bytes` of it, or until the server has had
/// enough) while waiting for the server's receipt: its count from our t0.
async fn upload<W, R>(w: &mut W, r: &mut R, bytes: Option<u64>) -> Result<Bins, String>
where
    W: AsyncWrite + Unpin,
    R: AsyncRead + Unpin,
{
    let body = vec![0u8; CHUNK];
    let send = async {
        let mut sent = 0u64;
        loop {
            let n = next_write(bytes, sent);
            if n == 0 {
                break;
            }
            match w.write(&body[..n]).await {
                Ok(0) | Err(_) => break, // the server stopped reading: its receipt is on its way
                Ok(k) => sent += k as u64,
            }
        }
        let _ = w.flush().await;
        std::future::pending::<()>().await
    };
    let receive = async {
        let mut v = Vec::new();
        r.take(MAX_RECEIPT)
            .read_to_end(&mut v)
            .await
            .map_err(|e| format!("receive the server's receipt: {e}"))?;
        let line = std::str::from_utf8(&v).unwrap_or_default().trim();
        if line.is_empty() {
            return Err("the server closed without a receipt".to_string());
        }
        let receipt: Receipt = serde_json::from_str(line)
            .map_err(|e| format!("the server's receipt: {e}: {line:.80}"))?;
        Bins::from_receipt(receipt)
    };
    tokio::select! {
        () = send => unreachable!("the sender waits for the receipt"),
        bins = receive => bins,
    }
}

/// The client TLS configuration: the certificates in `ca` are the only
/// trust anchors (a testbed certificate, or the PEP's).
pub fn client_tls(ca: &std::path::Path) -> Result<rustls::ClientConfig, String> {
    let mut roots = rustls::RootCertStore::empty();
    for c in cert::read_certs(ca, "--ca")? {
        roots
            .add(c)
            .map_err(|e| format!("--ca {}: {e}", ca.display()))?;
    }
    let mut c = rustls::ClientConfig::builder_with_provider(cert::provider())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(|e| format!("tls: {e}"))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    c.alpn_protocols = vec![ALPN.to_vec()];
    Ok(c)
}

/// The client endpoint every QUIC connection of the run leaves from: its
/// config keeps the TLS session tickets and the address-validation tokens
/// the server gives, so that a `--revisit` connection resumes the first.
fn quic_endpoint(args: &GetArgs, tls: rustls::ClientConfig) -> Result<quinn::Endpoint, String> {
    let crypto =
        quinn::crypto::rustls::QuicClientConfig::try_from(tls).map_err(|e| format!("tls: {e}"))?;
    let mut config = quinn::ClientConfig::new(Arc::new(crypto));
    let mut transport = args.quic.transport_config();
    // An upload through a PEP can wait on Proxy-ST's flow control for
    // longer than the idle timeout while the satellite drains what it took:
    // ping, as a browser does while streams are open.
    transport.keep_alive_interval(keep_alive_every(args.quic.idle_timeout_ms));
    config.transport_config(Arc::new(transport));
    let bind: SocketAddr = if args.addr.is_ipv4() {
        "0.0.0.0:0"
    } else {
        "[::]:0"
    }
    .parse()
    .unwrap();
    let mut endpoint =
        quinn::Endpoint::client(bind).map_err(|e| format!("bind {bind}/udp: {e}"))?;
    endpoint.set_default_client_config(config);
    Ok(endpoint)
}

async fn quic(args: &GetArgs, endpoint: &quinn::Endpoint, p: &mut Progress) -> Result<(), String> {
    let connecting = endpoint
        .connect(args.addr, &args.name)
        .map_err(|e| format!("connect {}: {e}", args.addr))?;
    let conn = connecting
        .await
        .map_err(|e| format!("connect {}: {e}", args.addr))?;
    p.connect = Some(p.t0.elapsed());
    p.quic = Some((endpoint.clone(), conn.clone()));
    let (mut send, mut recv) = conn
        .open_bi()
        .await
        .map_err(|e| format!("open stream: {e}"))?;
    let req = request_of(args, p.t0_unix_us);
    send.write_all(req.encode().as_bytes())
        .await
        .map_err(|e| format!("send request: {e}"))?;
    if req.upload.is_some() {
        p.bins = upload(&mut send, &mut recv, req.bytes).await?;
        return Ok(());
    }
    let _ = send.finish();
    loop {
        match recv.read_chunk(usize::MAX, true).await {
            Ok(Some(chunk)) => p.got(chunk.bytes.len()),
            Ok(None) => return Ok(()),
            Err(e) => return Err(format!("receive: {e}")),
        }
    }
}

async fn tcp(args: &GetArgs, p: &mut Progress) -> Result<(), String> {
    let stream = tokio::net::TcpStream::connect(args.addr)
        .await
        .map_err(|e| format!("connect {}: {e}", args.addr))?;
    p.connect = Some(p.t0.elapsed());
    let _ = stream.set_nodelay(true);
    let stream = p.tcp.insert(stream);
    let req = request_of(args, p.t0_unix_us);
    stream
        .write_all(req.encode().as_bytes())
        .await
        .map_err(|e| format!("send request: {e}"))?;
    if req.upload.is_some() {
        let (mut r, mut w) = stream.split();
        p.bins = upload(&mut w, &mut r, req.bytes).await?;
        return Ok(());
    }
    let mut buf = vec![0u8; 256 * 1024];
    loop {
        let n = p
            .tcp
            .as_mut()
            .unwrap()
            .read(&mut buf)
            .await
            .map_err(|e| format!("receive: {e}"))?;
        if n == 0 {
            return Ok(());
        }
        p.got(n);
    }
}

fn quic_transport(conn: &quinn::Connection) -> serde_json::Value {
    let s = conn.stats();
    serde_json::json!({
        "rtt_ms": ms(s.path.rtt),
        "min_rtt_ms": ms(s.path.min_rtt),
        "udp_rx_bytes": s.udp_rx.bytes,
        "udp_tx_bytes": s.udp_tx.bytes,
        "current_mtu": s.path.current_mtu,
        // an upload's sender is this end
        "cwnd": s.path.cwnd,
        "lost_packets": s.path.lost_packets,
        "alpn": conn.handshake_data()
            .and_then(|h| h.downcast::<quinn::crypto::rustls::HandshakeData>().ok())
            .and_then(|h| h.protocol)
            .map(|p| String::from_utf8_lossy(&p).into_owned()),
    })
}

fn tcp_transport(s: &tokio::net::TcpStream) -> serde_json::Value {
    match tcpinfo::read(s.as_raw_fd()) {
        Ok(i) => serde_json::json!({
            "rtt_ms": f64::from(i.rtt_us) / 1000.0,
            "rcv_mss": i.snd_mss,
            "congestion": tcpinfo::congestion(s.as_raw_fd()).ok(),
        }),
        Err(_) => serde_json::Value::Null,
    }
}

/// Runs the download and reports it; never fails (a failed download is a
/// report with ok false and the reason), except for local set-up errors
/// (`Err`, a usage error). With `--revisit`, a second connection from the
/// same endpoint does it again once the first has closed: the report is
/// the second's, with the first's in `first`.
pub async fn get(args: GetArgs) -> Result<Report, String> {
    let endpoint = match (args.proto, &args.ca) {
        (Proto::Quic, Some(ca)) => Some(quic_endpoint(&args, client_tls(ca)?)?),
        _ => None,
    };
    let first = once(&args, endpoint.as_ref()).await;
    if !args.revisit || !first.ok {
        return Ok(first);
    }
    if args.revisit_pause {
        wait_for_go().await?;
    }
    let mut second = once(&args, endpoint.as_ref()).await;
    second.first = Some(Box::new(first));
    Ok(second)
}

/// The line `--revisit-pause` writes to stderr once the first connection
/// has closed; the caller answers with a line on stdin.
pub const REVISIT_PAUSED: &str = "satbulk: first connection closed; waiting for a line on stdin";

/// Says the first visit is over and waits for the caller's line (EOF: go
/// on, so that a caller that closes stdin cannot hang the run).
async fn wait_for_go() -> Result<(), String> {
    eprintln!("{REVISIT_PAUSED}");
    tokio::task::spawn_blocking(|| {
        let mut line = String::new();
        std::io::stdin().read_line(&mut line).map(|_| ())
    })
    .await
    .map_err(|e| format!("--revisit-pause: {e}"))?
    .map_err(|e| format!("--revisit-pause: reading stdin: {e}"))
}

/// One transfer on a new connection (QUIC: from `endpoint`).
async fn once(args: &GetArgs, endpoint: Option<&quinn::Endpoint>) -> Report {
    let (requested_bytes, requested_duration) = match args.amount {
        Amount::Bytes(n) => (Some(n), None),
        Amount::Duration(d) => (None, Some(d)),
    };
    let t0_unix = time::unix_now();
    let mut p = Progress {
        t0: Instant::now(),
        t0_unix_us: t0_unix.as_micros() as u64,
        until: requested_duration,
        bins: Bins::new(args.bin),
        connect: None,
        quic: None,
        tcp: None,
    };
    let up = args.direction == Direction::Up;
    // an upload ends with the server's receipt, which follows the duration
    let deadline = p.t0
        + match requested_duration {
            Some(d) if !up => d,
            _ => args.timeout,
        };
    let outcome = {
        let work = async {
            match (args.proto, endpoint) {
                (Proto::Quic, Some(e)) => quic(args, e, &mut p).await,
                (Proto::Quic, None) => Err("QUIC without --ca".to_string()),
                (Proto::Tcp, _) => tcp(args, &mut p).await,
            }
        };
        tokio::time::timeout_at(deadline, work).await
    };
    let elapsed = p.t0.elapsed();
    let (end, error) = match (outcome, requested_duration) {
        // the duration ran out: what a timed download is for
        (Err(_), Some(d)) => (d, None),
        (Err(_), None) => (
            elapsed,
            Some(format!("timed out after {} s", args.timeout.as_secs_f64())),
        ),
        (Ok(Ok(())), Some(d)) if up => (d, None),
        (Ok(Ok(())), Some(_)) => (
            elapsed,
            Some("the server ended the stream before the duration".into()),
        ),
        (Ok(Ok(())), None) => (p.bins.last().unwrap_or(elapsed), None),
        (Ok(Err(e)), _) => (elapsed, Some(e)),
    };
    let mut report = Report::new(
        args.proto.name(),
        args.addr.to_string(),
        requested_bytes,
        requested_duration,
        p.connect,
        &p.bins,
        end,
        args.bin.as_millis() as u64,
    );
    report.t0_unix_ms = t0_unix.as_millis() as u64;
    report.direction = args.direction;
    if let (Some(n), None) = (requested_bytes, &error) {
        if p.bins.total() != n {
            report = report.failed(format!("received {} of {n} bytes", p.bins.total()));
        }
    }
    if let Some(e) = error {
        report = report.failed(e);
    }
    if let Some((endpoint, conn)) = p.quic.take() {
        report.transport = quic_transport(&conn);
        report.alpn = report.transport["alpn"].as_str().map(String::from);
        report.name = Some(args.name.clone());
        conn.close(0u32.into(), b"done");
        // long enough for the CONNECTION_CLOSE to leave, not for draining
        let _ = tokio::time::timeout(Duration::from_millis(100), endpoint.wait_idle()).await;
    } else if args.proto == Proto::Quic {
        report.name = Some(args.name.clone());
    }
    if let Some(s) = p.tcp.take() {
        report.transport = tcp_transport(&s);
    }
    report
}
