//! The I/O edges: three listeners that carry `site::decide` to the wire.
//!
//! - `IP:http-port/tcp`: HTTP/1.1 cleartext (hyper)
//! - `IP:https-port/tcp`: TLS (tokio-rustls), then HTTP/2 if ALPN said `h2`,
//!   else HTTP/1.1 (hyper)
//! - `IP:https-port/udp`: QUIC (quinn) carrying HTTP/3 (h3), through our
//!   own h3↔quinn adapter (`h3_quinn_prio`) so each response is sent with
//!   the priority the request asked for (RFC 9218, see `priority`)

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use http::{Request, Response};
use hyper::body::Incoming;
use hyper::server::conn::{http1, http2};
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use satbench_transport::cert;
use satbench_transport::process::{say_ready, Shutdown};
use tokio::io::AsyncReadExt;
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;

use crate::body::{ResponseBody, CHUNK};
use crate::cli::ServeArgs;
use crate::h3_quinn_prio::{self, StreamPriorities};
use crate::log::RequestLog;
use crate::priority::{self, Policy};
use crate::site::{self, AltSvc, Body, Decision};

/// The site being served and where its requests are logged; shared by the
/// three listeners.
pub struct Site {
    root: PathBuf,
    log: RequestLog,
    alt_svc: String,
    /// Which responses carry `alt_svc`.
    alt_svc_on: AltSvc,
}

impl Site {
    /// `root` must be canonical (see `site::stat_confined`).
    pub fn new(root: PathBuf, log: RequestLog, https_port: u16, alt_svc_on: AltSvc) -> Site {
        Site {
            root,
            log,
            alt_svc: format!("h3=\":{https_port}\""),
            alt_svc_on,
        }
    }

    /// The Alt-Svc value for a response over TCP (`tcp`) or HTTP/3, if any.
    fn alt_svc(&self, tcp: bool) -> Option<&str> {
        self.alt_svc_on.on(tcp).then_some(self.alt_svc.as_str())
    }

    fn decide(&self, method: &str, path: &str, tcp: bool) -> Decision {
        let root = self.root.as_path();
        let alt_svc = self.alt_svc(tcp);
        site::decide(
            method,
            path,
            root,
            |p| site::stat_confined(root, p),
            alt_svc,
        )
    }

    /// The decision and, when it sends a file, the opened file. A file that
    /// cannot be opened after all turns the decision into a 404 or 500.
    async fn prepare(
        &self,
        method: &str,
        path: &str,
        tcp: bool,
    ) -> (Decision, Option<tokio::fs::File>) {
        let d = self.decide(method, path, tcp);
        let Body::File {
            path: file_path, ..
        } = &d.body
        else {
            return (d, None);
        };
        match tokio::fs::File::open(file_path).await {
            Ok(f) => (d, Some(f)),
            Err(e) => {
                let gone = e.kind() == std::io::ErrorKind::NotFound;
                (site::unreadable(false, gone, self.alt_svc(tcp)), None)
            }
        }
    }
}

fn response_head(d: &Decision) -> http::response::Builder {
    let mut b = Response::builder().status(d.status);
    for (name, value) in &d.headers {
        b = b.header(*name, value.as_str());
    }
    b
}

async fn handle_hyper(
    site: Arc<Site>,
    protocol: &'static str,
    req: Request<Incoming>,
) -> Result<Response<ResponseBody>, Infallible> {
    let method = req.method().as_str();
    let path = req.uri().path();
    let (d, file) = site.prepare(method, path, true).await;
    site.log.request(protocol, method, path, d.status, d.bytes);
    let body = match (&d.body, file) {
        (Body::File { len, .. }, Some(f)) => ResponseBody::file(f, *len),
        (Body::Text(t), _) => ResponseBody::Bytes(Some(Bytes::from_static(t.as_bytes()))),
        _ => ResponseBody::Empty,
    };
    Ok(response_head(&d).body(body).unwrap_or_else(|_| {
        let mut r = Response::new(ResponseBody::Empty);
        *r.status_mut() = http::StatusCode::INTERNAL_SERVER_ERROR;
        r
    }))
}

async fn accept(listener: &TcpListener) -> TcpStream {
    loop {
        match listener.accept().await {
            Ok((stream, _)) => {
                let _ = stream.set_nodelay(true);
                return stream;
            }
            // out of descriptors and the like: back off, keep serving
            Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
}

async fn serve_http1(
    stream: impl hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
    site: Arc<Site>,
) {
    let svc = service_fn(move |req| handle_hyper(site.clone(), "http/1.1", req));
    let _ = http1::Builder::new()
        .keep_alive(true)
        .serve_connection(stream, svc)
        .await;
}

/// HTTP/1.1 cleartext.
pub async fn serve_http(listener: TcpListener, site: Arc<Site>) {
    loop {
        let stream = accept(&listener).await;
        tokio::spawn(serve_http1(TokioIo::new(stream), site.clone()));
    }
}

/// TLS, then HTTP/2 (ALPN `h2`) or HTTP/1.1.
pub async fn serve_https(listener: TcpListener, acceptor: TlsAcceptor, site: Arc<Site>) {
    loop {
        let stream = accept(&listener).await;
        let (acceptor, site) = (acceptor.clone(), site.clone());
        tokio::spawn(async move {
            let Ok(tls) = acceptor.accept(stream).await else {
                return;
            };
            if tls.get_ref().1.alpn_protocol() == Some(b"h2") {
                let svc = service_fn(move |req| handle_hyper(site.clone(), "h2", req));
                let _ = http2::Builder::new(TokioExecutor::new())
                    .max_concurrent_streams(100)
                    .serve_connection(TokioIo::new(tls), svc)
                    .await;
            } else {
                serve_http1(TokioIo::new(tls), site).await;
            }
        });
    }
}

type H3Resolver = h3::server::RequestResolver<h3_quinn_prio::Connection, Bytes>;

type H3Stream = h3::server::RequestStream<h3_quinn_prio::BidiStream<Bytes>, Bytes>;

/// Send `len` bytes of `file` in chunks; false if the stream or the file
/// failed (a file that shrank resets the stream rather than end it short).
async fn send_file(stream: &mut H3Stream, mut file: tokio::fs::File, len: u64) -> bool {
    let mut remaining = len;
    while remaining > 0 {
        let mut buf = BytesMut::zeroed(remaining.min(CHUNK as u64) as usize);
        let n = match file.read(&mut buf).await {
            Ok(0) | Err(_) => {
                stream.stop_stream(h3::error::Code::H3_INTERNAL_ERROR);
                return false;
            }
            Ok(n) => n,
        };
        buf.truncate(n);
        remaining -= n as u64;
        if stream.send_data(buf.freeze()).await.is_err() {
            return false;
        }
    }
    true
}

async fn handle_h3(site: Arc<Site>, priorities: StreamPriorities, resolver: H3Resolver) {
    let Ok((req, mut stream)) = resolver.resolve_request().await else {
        return;
    };
    // before the first byte of the response is queued in quinn
    let asked = priorities.apply_request(
        stream.id().into_inner(),
        priority::from_headers(req.headers()),
    );
    let method = req.method().as_str();
    let path = req.uri().path();
    let (d, file) = site.prepare(method, path, false).await;
    site.log.request_with_priority(
        "h3",
        method,
        path,
        d.status,
        d.bytes,
        asked.map(|p| p.to_string()).as_deref(),
    );
    let Ok(head) = response_head(&d).body(()) else {
        return;
    };
    if stream.send_response(head).await.is_err() {
        return;
    }
    let sent = match (&d.body, file) {
        (Body::Text(t), _) => stream
            .send_data(Bytes::from_static(t.as_bytes()))
            .await
            .is_ok(),
        (Body::File { len, .. }, Some(f)) => send_file(&mut stream, f, *len).await,
        _ => true,
    };
    if sent {
        let _ = stream.finish().await;
    }
}

/// HTTP/3 over QUIC, responses ordered by `policy`.
pub async fn serve_h3(endpoint: quinn::Endpoint, site: Arc<Site>, policy: Policy) {
    while let Some(incoming) = endpoint.accept().await {
        let site = site.clone();
        tokio::spawn(async move {
            let Ok(conn) = incoming.await else { return };
            let conn = h3_quinn_prio::Connection::new(conn, policy);
            let priorities = conn.priorities();
            let Ok(mut h3) = h3::server::builder().build::<_, Bytes>(conn).await else {
                return;
            };
            while let Ok(Some(resolver)) = h3.accept().await {
                tokio::spawn(handle_h3(site.clone(), priorities.clone(), resolver));
            }
        });
    }
}

/// The canonical root, or `--root DIR: …`.
pub fn check_root(root: &Path) -> Result<PathBuf, String> {
    match std::fs::metadata(root) {
        Ok(m) if m.is_dir() => {
            std::fs::canonicalize(root).map_err(|e| format!("--root {}: {e}", root.display()))
        }
        Ok(_) => Err(format!("--root {}: not a directory", root.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Err(format!("--root {}: no such directory", root.display()))
        }
        Err(e) => Err(format!("--root {}: {e}", root.display())),
    }
}

/// rustls configurations (ring provider): TCP with ALPN h2 and http/1.1,
/// QUIC (TLS 1.3 only) with ALPN h3.
pub fn tls_configs(
    certs: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
    key_path: &Path,
) -> Result<(rustls::ServerConfig, rustls::ServerConfig), String> {
    let err = |e: rustls::Error| format!("--key {}: {e}", key_path.display());
    let mut tcp = rustls::ServerConfig::builder_with_provider(cert::provider())
        .with_safe_default_protocol_versions()
        .map_err(err)?
        .with_no_client_auth()
        .with_single_cert(certs.clone(), key.clone_key())
        .map_err(err)?;
    tcp.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    let mut quic = cert::tls13_server(certs, key, key_path)?;
    quic.alpn_protocols = vec![b"h3".to_vec()];
    Ok((tcp, quic))
}

/// Bind everything, print `ready`, serve until SIGTERM or SIGINT.
/// Errors are one line naming the problem.
pub async fn run(args: ServeArgs) -> Result<(), String> {
    let root = check_root(&args.root)?;
    let (certs, key) = cert::load_cert_and_key(&args.cert, &args.key)?;
    let (tcp_tls, quic_tls) = tls_configs(certs, key, &args.key)?;
    let log = match &args.log {
        Some(p) => RequestLog::file(p).map_err(|e| format!("--log {}: {e}", p.display()))?,
        None => RequestLog::stderr(),
    };
    let site = Arc::new(Site::new(root, log, args.https_port, args.alt_svc));

    let quic_crypto = quinn::crypto::rustls::QuicServerConfig::try_from(quic_tls)
        .map_err(|e| format!("--cert {}: unusable for QUIC: {e}", args.cert.display()))?;
    let mut quic_config = quinn::ServerConfig::with_crypto(Arc::new(quic_crypto));
    quic_config.transport_config(Arc::new(args.quic.transport_config()));

    let http_addr = SocketAddr::new(args.addr, args.http_port);
    let https_addr = SocketAddr::new(args.addr, args.https_port);
    let http = TcpListener::bind(http_addr)
        .await
        .map_err(|e| format!("bind {http_addr}: {e}"))?;
    let https = TcpListener::bind(https_addr)
        .await
        .map_err(|e| format!("bind {https_addr}: {e}"))?;
    let endpoint = quinn::Endpoint::server(quic_config, https_addr)
        .map_err(|e| format!("bind {https_addr}/udp: {e}"))?;

    let shutdown = Shutdown::listen()?;

    tokio::spawn(serve_http(http, site.clone()));
    tokio::spawn(serve_https(
        https,
        TlsAcceptor::from(Arc::new(tcp_tls)),
        site.clone(),
    ));
    tokio::spawn(serve_h3(endpoint.clone(), site.clone(), args.h3_priorities));

    say_ready();
    shutdown.requested().await;
    endpoint.close(0u32.into(), b"shutting down");
    let _ = tokio::time::timeout(Duration::from_millis(200), endpoint.wait_idle()).await;
    Ok(())
}
