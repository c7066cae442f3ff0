//! The I/O edges: per address (`--addr`, repeatable), three listeners
//! that carry the site's decisions (`site::decide` for a directory,
//! `Archive::decide` for an archive; `Site` picks) to the wire.
//!
//! - `IP:http-port/tcp`: HTTP/1.1 cleartext (hyper)
//! - `IP:https-port/tcp`: TLS (tokio-rustls), then HTTP/2 if ALPN said `h2`,
//!   else HTTP/1.1 (hyper)
//! - `IP:https-port/udp`: QUIC (quinn) carrying HTTP/3 (h3), through our
//!   own h3↔quinn adapter (`h3_quinn_prio`) so each response is sent with
//!   the priority the request asked for (RFC 9218, see `priority`)
//!
//! TLS and QUIC take their certificate by SNI from `vhost::HostCerts`.
//! Both issue TLS 1.3 session tickets; QUIC also takes 0-RTT under them
//! (`--zero-rtt`), and its requests are served as they come, before the
//! handshake completes. Each connection's handshake goes to the
//! connection log (`--conn-log`): QUIC's watched by
//! `quic_handshake::watch`, TLS's from rustls and the ClientHello read
//! back (`tls_hello`).

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
use satbench_transport::careful_resume::Resumer;
use satbench_transport::cert;
use satbench_transport::conn_log::{ConnectionLog, Handshake};
use satbench_transport::process::{say_ready, Shutdown};
use satbench_transport::quic_handshake::{self, Watch};
use satbench_transport::tls_hello::{self, Parsed};
use tokio::io::AsyncReadExt;
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;
use tokio_util::io::InspectReader;

use crate::archive::{self, Archive};
use crate::body::{ResponseBody, CHUNK};
use crate::cache::{self, CachePolicy};
use crate::cli::{ServeArgs, Source};
use crate::conditional::{self, Conditions};
use crate::h3_quinn_prio::{self, StreamPriorities};
use crate::log::{Line, RequestLog};
use crate::priority::{self, Policy};
use crate::site::{self, AltSvc, Body, Decision};
use crate::validators::Memo;
use crate::vhost::HostCerts;

/// Where responses come from: a site directory (canonical, see
/// `site::stat_confined`) or a site archive. The listeners do not care.
pub enum Content {
    Dir(PathBuf),
    Archive(Archive),
}

/// A request as a listener hands it over.
pub struct Asked<'a> {
    pub method: &'a str,
    /// The listener's: `http` (cleartext) or `https` (TLS, QUIC).
    pub scheme: &'static str,
    /// `:authority`, or the Host header.
    pub authority: Option<&'a str>,
    /// As received (percent-encoded), without the query.
    pub path: &'a str,
    pub query: Option<&'a str>,
    /// Its `If-None-Match` and `If-Modified-Since`.
    pub conditions: Conditions,
}

impl<'a> Asked<'a> {
    pub fn of<T>(req: &'a Request<T>, scheme: &'static str) -> Asked<'a> {
        let uri = req.uri();
        let host = || req.headers().get(http::header::HOST)?.to_str().ok();
        Asked {
            method: req.method().as_str(),
            scheme,
            authority: uri.authority().map(|a| a.as_str()).or_else(host),
            path: uri.path(),
            query: uri.query(),
            conditions: Conditions::of(req.headers()),
        }
    }
}

/// A decision ready to send: the file it sends, opened, and the PATH
/// field of its log line.
struct Prepared {
    d: Decision,
    file: Option<tokio::fs::File>,
    logged: String,
}

/// What is served and where its requests are logged; shared by every
/// listener.
pub struct Site {
    content: Content,
    log: RequestLog,
    /// One line per TLS or QUIC connection, once its handshake is done.
    conn_log: ConnectionLog,
    alt_svc: String,
    /// Which responses carry `alt_svc`.
    alt_svc_on: AltSvc,
    http_port: u16,
    https_port: u16,
    /// `--cache`: None keeps each content's own (no-store, recorded).
    cache: Option<CachePolicy>,
    /// A site directory's ETags, each file hashed once per version.
    validators: Memo,
}

impl Site {
    pub fn new(
        content: Content,
        (log, conn_log): (RequestLog, ConnectionLog),
        (http_port, https_port): (u16, u16),
        alt_svc_on: AltSvc,
        cache: Option<CachePolicy>,
    ) -> Site {
        Site {
            content,
            log,
            conn_log,
            alt_svc: format!("h3=\":{https_port}\""),
            alt_svc_on,
            http_port,
            https_port,
            cache,
            validators: Memo::default(),
        }
    }

    /// The Alt-Svc value for a response over TCP (`tcp`) or HTTP/3, if any.
    fn alt_svc(&self, tcp: bool) -> Option<&str> {
        self.alt_svc_on.on(tcp).then_some(self.alt_svc.as_str())
    }

    /// The decision, with the cache policy's Cache-Control, or its 304
    /// when the request's preconditions hold; and the log's PATH field.
    fn decide(&self, a: &Asked, tcp: bool) -> (Decision, String) {
        let (d, logged) = self.content_decision(a, tcp);
        let d = cache::apply(d, self.cache);
        (conditional::answer(d, a.method, &a.conditions), logged)
    }

    /// The content's decision and the log's PATH field: the path for a
    /// directory, the URL the matching rule built for an archive.
    fn content_decision(&self, a: &Asked, tcp: bool) -> (Decision, String) {
        let alt_svc = self.alt_svc(tcp);
        match &self.content {
            Content::Dir(root) => {
                let stat = |p: &Path| site::stat_confined(root, p, &self.validators);
                let d = site::decide(a.method, a.path, root, stat, alt_svc);
                (d, a.path.to_string())
            }
            Content::Archive(archive) => {
                let port = match a.scheme {
                    "http" => self.http_port,
                    _ => self.https_port,
                };
                let url = archive::request_url(a.scheme, a.authority, a.path, a.query, port);
                let logged = match &url {
                    Some(u) => u.to_string(),
                    // no host, or no URL: logged as it came
                    None => {
                        let query = a.query.map(|q| format!("?{q}")).unwrap_or_default();
                        let host = a.authority.unwrap_or_default();
                        format!("{}://{host}{}{query}", a.scheme, a.path)
                    }
                };
                (archive.decide(a.method, url.as_ref(), alt_svc), logged)
            }
        }
    }

    /// The decision with, when it sends a file, the opened file. A file
    /// that cannot be opened after all turns the decision into a 404 or 500.
    async fn prepare(&self, a: &Asked<'_>, tcp: bool) -> Prepared {
        let (d, logged) = self.decide(a, tcp);
        let Body::File {
            path: file_path, ..
        } = &d.body
        else {
            return Prepared {
                d,
                file: None,
                logged,
            };
        };
        let (d, file) = match tokio::fs::File::open(file_path).await {
            Ok(f) => (d, Some(f)),
            Err(e) => {
                let gone = e.kind() == std::io::ErrorKind::NotFound;
                (site::unreadable(false, gone, self.alt_svc(tcp)), None)
            }
        };
        Prepared { d, file, logged }
    }

    fn log_request(&self, protocol: &str, a: &Asked, p: &Prepared, priority: Option<String>) {
        self.log.request(&Line {
            protocol,
            method: a.method,
            path: &p.logged,
            status: p.d.status,
            bytes: p.d.bytes,
            priority,
            unmatched: p.d.unmatched,
        });
    }
}

fn response_head(d: &Decision) -> http::response::Builder {
    let mut b = Response::builder().status(d.status);
    for (name, value) in &d.headers {
        b = b.header(name.as_ref(), value.as_str());
    }
    b
}

async fn handle_hyper(
    site: Arc<Site>,
    protocol: &'static str,
    scheme: &'static str,
    req: Request<Incoming>,
) -> Result<Response<ResponseBody>, Infallible> {
    let a = Asked::of(&req, scheme);
    let p = site.prepare(&a, true).await;
    site.log_request(protocol, &a, &p, None);
    let body = match (&p.d.body, p.file) {
        (Body::File { len, .. }, Some(f)) => ResponseBody::file(f, *len),
        (Body::Text(t), _) => ResponseBody::Bytes(Some(Bytes::from_static(t.as_bytes()))),
        _ => ResponseBody::Empty,
    };
    Ok(response_head(&p.d).body(body).unwrap_or_else(|_| {
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
    scheme: &'static str,
) {
    let svc = service_fn(move |req| handle_hyper(site.clone(), "http/1.1", scheme, req));
    let _ = http1::Builder::new()
        .keep_alive(true)
        .serve_connection(stream, svc)
        .await;
}

/// HTTP/1.1 cleartext.
pub async fn serve_http(listener: TcpListener, site: Arc<Site>) {
    loop {
        let stream = accept(&listener).await;
        tokio::spawn(serve_http1(TokioIo::new(stream), site.clone(), "http"));
    }
}

/// The bytes a TLS server reads before its handshake is done: the
/// client's first flight, kept (up to 16 KiB) to read its ClientHello back.
type FirstBytes = Arc<std::sync::Mutex<Option<Vec<u8>>>>;

const FIRST_BYTES: usize = 16 * 1024;

/// `stream`, keeping a copy of what is read from it into `first` until
/// that is taken (`Option::take`).
fn keeping_first_bytes(
    stream: TcpStream,
    first: FirstBytes,
) -> InspectReader<TcpStream, impl FnMut(&[u8])> {
    InspectReader::new(stream, move |read: &[u8]| {
        if let Ok(mut f) = first.lock() {
            if let Some(kept) = f.as_mut() {
                let room = FIRST_BYTES.saturating_sub(kept.len());
                kept.extend_from_slice(&read[..read.len().min(room)]);
            }
        }
    })
}

/// A finished TLS handshake's line: rustls's own verdict on resumption,
/// and what the ClientHello in `first` offered. Early data over TCP is
/// never accepted (see `tls_configs`).
fn tls_handshake(conn: &rustls::ServerConnection, first: &[u8]) -> Handshake {
    let protocol = match conn.alpn_protocol() {
        Some(p) => String::from_utf8_lossy(p).into_owned(),
        None => "http/1.1".into(),
    };
    let offer = match tls_hello::client_hello_in_records(first) {
        Parsed::Done(o) => o,
        _ => Default::default(),
    };
    let resumed = conn.handshake_kind() == Some(rustls::HandshakeKind::Resumed);
    Handshake::new(&protocol, offer, resumed, false)
}

/// TLS, then HTTP/2 (ALPN `h2`) or HTTP/1.1.
pub async fn serve_https(listener: TcpListener, acceptor: TlsAcceptor, site: Arc<Site>) {
    loop {
        let stream = accept(&listener).await;
        let Ok(remote) = stream.peer_addr() else {
            continue;
        };
        let (acceptor, site) = (acceptor.clone(), site.clone());
        tokio::spawn(async move {
            let first: FirstBytes = Arc::new(std::sync::Mutex::new(Some(Vec::new())));
            let Ok(tls) = acceptor
                .accept(keeping_first_bytes(stream, first.clone()))
                .await
            else {
                return;
            };
            let kept = first.lock().ok().and_then(|mut f| f.take());
            let h = tls_handshake(tls.get_ref().1, &kept.unwrap_or_default());
            site.conn_log.write(remote, &h);
            if tls.get_ref().1.alpn_protocol() == Some(b"h2") {
                let svc = service_fn(move |req| handle_hyper(site.clone(), "h2", "https", req));
                let _ = http2::Builder::new(TokioExecutor::new())
                    .max_concurrent_streams(100)
                    .serve_connection(TokioIo::new(tls), svc)
                    .await;
            } else {
                serve_http1(TokioIo::new(tls), site, "https").await;
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
    let a = Asked::of(&req, "https");
    let p = site.prepare(&a, false).await;
    site.log_request("h3", &a, &p, asked.map(|p| p.to_string()));
    let Ok(head) = response_head(&p.d).body(()) else {
        return;
    };
    if stream.send_response(head).await.is_err() {
        return;
    }
    let sent = match (&p.d.body, p.file) {
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

/// HTTP/3 over QUIC, responses ordered by `policy`. Each connection is
/// accepted with its handshake watched and served once its ClientHello is
/// in: requests that come in 0-RTT are answered before the handshake
/// completes (0.5-RTT data), as quinn lets a server do. With `resumer`
/// (Careful Resume), the connection's controller starts from what this
/// client's previous connection measured.
pub async fn serve_h3(
    endpoint: quinn::Endpoint,
    config: quinn::ServerConfig,
    site: Arc<Site>,
    policy: Policy,
    resumer: Option<Arc<Resumer>>,
) {
    while let Some(incoming) = endpoint.accept().await {
        let site = site.clone();
        let remote = incoming.remote_address();
        let (mut config, watch) = quic_handshake::watch(&config);
        let session = resumer.as_ref().map(|r| {
            let (transport, session) = r.connection(remote, incoming.local_ip());
            config.transport_config(Arc::new(transport));
            session
        });
        let resumer = resumer.clone();
        tokio::spawn(async move {
            let Ok(mut connecting) = incoming.accept_with(Arc::new(config)) else {
                return;
            };
            // Once the whole ClientHello is in (Chromium's spans two packets),
            // the client's stream limits are known: h3 opens its control
            // stream at once, and quinn would not wake an opener that came
            // before them (only MAX_STREAMS does, which a client that gave
            // enough at first never sends).
            if connecting.handshake_data().await.is_err() {
                return;
            }
            // a server's into_0rtt always succeeds
            let Ok((conn, established)) = connecting.into_0rtt() else {
                return;
            };
            if let (Some(r), Some(session)) = (&resumer, session) {
                r.watch(&conn, session);
            }
            tokio::spawn(log_quic_handshake(
                site.clone(),
                established,
                watch.clone(),
                remote,
            ));
            let conn = h3_quinn_prio::Connection::new(conn, policy);
            let priorities = conn.priorities();
            let Ok(mut h3) = h3::server::builder().build::<_, Bytes>(conn).await else {
                return;
            };
            while let Ok(Some(resolver)) = h3.accept().await {
                watch.request();
                tokio::spawn(handle_h3(site.clone(), priorities.clone(), resolver));
            }
        });
    }
}

/// The connection's line once its handshake completed (none if it failed).
async fn log_quic_handshake(
    site: Arc<Site>,
    established: quinn::ZeroRttAccepted,
    watch: Watch,
    remote: SocketAddr,
) {
    // on a server this resolves when the handshake completes or fails
    established.await;
    if watch.done() {
        site.conn_log.write(remote, &watch.handshake("h3"));
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

/// rustls configurations (ring provider), both with `certs` choosing the
/// certificate by SNI: TCP with ALPN h2 and http/1.1, QUIC (TLS 1.3 only)
/// with ALPN h3. Both issue two TLS 1.3 session tickets per connection
/// (rustls's default, kept in its in-memory store); QUIC's allow 0-RTT
/// when `zero_rtt`. TCP's never do: tokio-rustls finishes the handshake
/// before it hands the connection over, so a request sent as early data
/// could not be answered before the handshake anyway.
pub fn tls_configs(
    certs: Arc<HostCerts>,
    key_path: &Path,
    zero_rtt: bool,
) -> Result<(rustls::ServerConfig, rustls::ServerConfig), String> {
    let config = |versions: &[&'static rustls::SupportedProtocolVersion], alpn: &[&[u8]]| {
        let mut c = rustls::ServerConfig::builder_with_provider(cert::provider())
            .with_protocol_versions(versions)
            .map_err(|e| format!("--key {}: {e}", key_path.display()))?
            .with_no_client_auth()
            .with_cert_resolver(certs.clone());
        c.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
        Ok::<_, String>(c)
    };
    let tcp = config(rustls::DEFAULT_VERSIONS, &[b"h2", b"http/1.1"])?;
    let quic = quic_handshake::accept_0rtt(config(&[&rustls::version::TLS13], &[b"h3"])?, zero_rtt);
    Ok((tcp, quic))
}

/// The content and its certificates: a directory with `--cert`, or an
/// archive with a certificate per host for `--key`.
fn content(args: &ServeArgs) -> Result<(Content, HostCerts), String> {
    match &args.source {
        Source::Root { root, cert } => {
            let root = check_root(root)?;
            let (certs, key) = cert::load_cert_and_key(cert, &args.key)?;
            Ok((
                Content::Dir(root),
                HostCerts::single(certs, key, &args.key)?,
            ))
        }
        Source::Archive(dir) => {
            let archive = Archive::read(dir)?;
            let certs = HostCerts::per_host(&archive.https_hosts(), &args.key)?;
            Ok((Content::Archive(archive), certs))
        }
    }
}

/// One address's listeners.
struct Listeners {
    http: TcpListener,
    https: TcpListener,
    quic: quinn::Endpoint,
}

async fn bind(
    addr: std::net::IpAddr,
    args: &ServeArgs,
    quic_config: &quinn::ServerConfig,
) -> Result<Listeners, String> {
    let http_addr = SocketAddr::new(addr, args.http_port);
    let https_addr = SocketAddr::new(addr, args.https_port);
    let http = TcpListener::bind(http_addr)
        .await
        .map_err(|e| format!("bind {http_addr}: {e}"))?;
    let https = TcpListener::bind(https_addr)
        .await
        .map_err(|e| format!("bind {https_addr}: {e}"))?;
    // an endpoint per address: its replies leave from the address the
    // client sent to
    let quic = quinn::Endpoint::server(quic_config.clone(), https_addr)
        .map_err(|e| format!("bind {https_addr}/udp: {e}"))?;
    Ok(Listeners { http, https, quic })
}

/// Bind everything, print `ready`, serve until SIGTERM or SIGINT.
/// Errors are one line naming the problem.
pub async fn run(args: ServeArgs) -> Result<(), String> {
    let (content, certs) = content(&args)?;
    let (tcp_tls, quic_tls) = tls_configs(Arc::new(certs), &args.key, args.zero_rtt)?;
    let log = match &args.log {
        Some(p) => RequestLog::file(p).map_err(|e| format!("--log {}: {e}", p.display()))?,
        None => RequestLog::stderr(),
    };
    let conn_log = ConnectionLog::open(args.conn_log.as_deref())?;
    let ports = (args.http_port, args.https_port);
    let site = Arc::new(Site::new(
        content,
        (log, conn_log),
        ports,
        args.alt_svc,
        args.cache,
    ));
    // every file hashed before `ready`: no request of a load waits for it
    if let Content::Dir(root) = &site.content {
        site.validators.warm(root);
    }

    let quic_crypto = quinn::crypto::rustls::QuicServerConfig::try_from(quic_tls)
        .map_err(|e| format!("--key {}: unusable for QUIC: {e}", args.key.display()))?;
    let mut quic_config = quinn::ServerConfig::with_crypto(Arc::new(quic_crypto));
    quic_config.transport_config(Arc::new(args.quic.transport_config()));
    let resumer = match args.quic.careful_resume {
        true => Some(Arc::new(
            Resumer::new(&args.quic, args.careful_resume_log.as_deref())
                .map_err(|e| format!("--careful-resume-log {e}"))?,
        )),
        false => None,
    };

    let mut listeners = Vec::new();
    for addr in &args.addrs {
        listeners.push(bind(*addr, &args, &quic_config).await?);
    }

    let shutdown = Shutdown::listen()?;

    let acceptor = TlsAcceptor::from(Arc::new(tcp_tls));
    let mut endpoints = Vec::new();
    for l in listeners {
        tokio::spawn(serve_http(l.http, site.clone()));
        tokio::spawn(serve_https(l.https, acceptor.clone(), site.clone()));
        tokio::spawn(serve_h3(
            l.quic.clone(),
            quic_config.clone(),
            site.clone(),
            args.h3_priorities,
            resumer.clone(),
        ));
        endpoints.push(l.quic);
    }

    say_ready();
    shutdown.requested().await;
    for e in &endpoints {
        e.close(0u32.into(), b"shutting down");
    }
    let idle = async {
        for e in &endpoints {
            e.wait_idle().await;
        }
    };
    let _ = tokio::time::timeout(Duration::from_millis(200), idle).await;
    Ok(())
}
