//! `satbulk get`: one download over QUIC or TCP, every read timed from t0
//! (just before connecting) into `bins::Bins`.

use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::time::Duration;

use satbench_transport::cert;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::time::Instant;

use crate::bins::{ms, Bins, Report};
use crate::cli::{Amount, GetArgs, Proto, ALPN};
use crate::request::Request;
use crate::tcpinfo;

/// What a download has seen so far; kept when it is cut short, so a failed
/// run still reports its bytes.
struct Progress {
    t0: Instant,
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

fn request_of(amount: Amount) -> Request {
    match amount {
        Amount::Bytes(n) => Request { bytes: Some(n) },
        Amount::Duration(_) => Request { bytes: None },
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

async fn quic(args: &GetArgs, tls: rustls::ClientConfig, p: &mut Progress) -> Result<(), String> {
    let crypto =
        quinn::crypto::rustls::QuicClientConfig::try_from(tls).map_err(|e| format!("tls: {e}"))?;
    let mut config = quinn::ClientConfig::new(Arc::new(crypto));
    config.transport_config(Arc::new(args.quic.transport_config()));
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
    let connecting = endpoint
        .connect(args.addr, &args.name)
        .map_err(|e| format!("connect {}: {e}", args.addr))?;
    let conn = connecting
        .await
        .map_err(|e| format!("connect {}: {e}", args.addr))?;
    p.connect = Some(p.t0.elapsed());
    p.quic = Some((endpoint, conn.clone()));
    let (mut send, mut recv) = conn
        .open_bi()
        .await
        .map_err(|e| format!("open stream: {e}"))?;
    send.write_all(request_of(args.amount).encode().as_bytes())
        .await
        .map_err(|e| format!("send request: {e}"))?;
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
    stream
        .write_all(request_of(args.amount).encode().as_bytes())
        .await
        .map_err(|e| format!("send request: {e}"))?;
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
/// (`Err`, a usage error).
pub async fn get(args: GetArgs) -> Result<Report, String> {
    let tls = match (args.proto, &args.ca) {
        (Proto::Quic, Some(ca)) => Some(client_tls(ca)?),
        _ => None,
    };
    let (requested_bytes, requested_duration) = match args.amount {
        Amount::Bytes(n) => (Some(n), None),
        Amount::Duration(d) => (None, Some(d)),
    };
    let t0_unix_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let mut p = Progress {
        t0: Instant::now(),
        until: requested_duration,
        bins: Bins::new(args.bin),
        connect: None,
        quic: None,
        tcp: None,
    };
    let deadline = p.t0 + requested_duration.unwrap_or(args.timeout);
    let outcome = {
        let work = async {
            match args.proto {
                Proto::Quic => quic(&args, tls.unwrap(), &mut p).await,
                Proto::Tcp => tcp(&args, &mut p).await,
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
    report.t0_unix_ms = t0_unix_ms;
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
    Ok(report)
}
