//! Start the `origin` binary on 127.0.0.1 with unused ports and a temporary
//! root, then fetch over HTTP/1.1 cleartext, HTTP/1.1 and HTTP/2 over TLS,
//! and HTTP/3, trusting the certificate `origin gen-cert` made.

mod common;

use std::net::{Ipv4Addr, SocketAddr, TcpListener, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use bytes::{Buf, Bytes};
use common::{collect, fetch_h1, header, BIN, H3, T};
use http::{Request, Response, StatusCode, Version};
use http_body_util::Empty;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use satbench_transport::testkit::{
    free_tcp_and_udp_port, free_tcp_port, spawn_ready_on_fresh_ports, temp_dir, Running,
};

struct Fixture {
    dir: PathBuf,
    http: SocketAddr,
    https: SocketAddr,
    png: Vec<u8>,
    server: Running,
}

impl Drop for Fixture {
    fn drop(&mut self) {
        // the server is killed by its own drop
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn gen_cert(dir: &Path) {
    let out = Command::new(BIN)
        .args([
            "gen-cert",
            "--name",
            "localhost",
            "--ip",
            "127.0.0.1",
            "--out",
        ])
        .arg(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "gen-cert: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let spki = std::fs::read_to_string(dir.join("spki.txt")).unwrap();
    assert_eq!(spki.len(), 45, "{spki:?}");
    assert!(spki.ends_with("=\n"));
}

fn start() -> Fixture {
    start_with("serve", "1000000", &[])
}

/// The server on a fresh root (`tag` names its temporary directory) with
/// flow-control windows of 2 × `bdp_bytes`, and `extra` flags.
fn start_with(tag: &str, bdp_bytes: &str, extra: &[&str]) -> Fixture {
    let dir = temp_dir(tag);
    let root = dir.join("root");
    std::fs::create_dir_all(root.join("img")).unwrap();
    std::fs::write(root.join("index.html"), "<!doctype html><title>t</title>\n").unwrap();
    std::fs::write(root.join("style.css"), "body { color: red }\n").unwrap();
    // 200 kB of varied bytes: several read chunks, several frames
    let png: Vec<u8> = (0..200_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::write(root.join("img/a.png"), &png).unwrap();
    gen_cert(&dir);

    let (server, (http_port, https_port)) = spawn_ready_on_fresh_ports(T, || {
        let (http_port, https_port) = (free_tcp_port(), free_tcp_and_udp_port());
        let mut cmd = Command::new(BIN);
        cmd.arg("serve")
            .arg("--root")
            .arg(&root)
            .args(["--addr", "127.0.0.1", "--http-port", &http_port.to_string()])
            .args(["--https-port", &https_port.to_string()])
            .arg("--cert")
            .arg(dir.join("cert.pem"))
            .arg("--key")
            .arg(dir.join("key.pem"))
            .arg("--log")
            .arg(dir.join("requests.log"))
            .arg("--conn-log")
            .arg(dir.join("connections.log"))
            .args([
                "--quic-cc",
                "cubic",
                "--quic-initial-window",
                "10",
                "--bdp-bytes",
                bdp_bytes,
            ])
            .args(extra)
            .stderr(Stdio::inherit());
        (cmd, (http_port, https_port))
    })
    .unwrap_or_else(|e| panic!("origin serve: {e}"));
    Fixture {
        dir,
        http: SocketAddr::from((Ipv4Addr::LOCALHOST, http_port)),
        https: SocketAddr::from((Ipv4Addr::LOCALHOST, https_port)),
        png,
        server,
    }
}

fn client_tls(dir: &Path, alpn: &[&[u8]]) -> rustls::ClientConfig {
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(dir.join("cert.pem")).unwrap() {
        roots.add(cert.unwrap()).unwrap();
    }
    let mut c = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    c.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    c
}

fn request(method: &str, uri: &str) -> Request<Empty<Bytes>> {
    common::request(method, uri, "localhost")
}

async fn tls_connect(
    f: &Fixture,
    alpn: &[&[u8]],
) -> tokio_rustls::client::TlsStream<tokio::net::TcpStream> {
    let tcp = tokio::net::TcpStream::connect(f.https).await.unwrap();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(client_tls(&f.dir, alpn)));
    connector
        .connect(ServerName::try_from("localhost").unwrap(), tcp)
        .await
        .unwrap()
}

async fn fetch_h3(f: &Fixture, paths: &[&str]) -> Vec<(Response<()>, Vec<u8>)> {
    let socket = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    let mut h3 = H3::connect(client_tls(&f.dir, &[]), socket, f.https, "localhost").await;
    let mut out = Vec::new();
    for path in paths {
        let req = Request::get(format!("https://localhost:{}{path}", f.https.port()))
            .body(())
            .unwrap();
        out.push(h3.fetch(req).await);
    }
    h3.close();
    out
}

/// An HTTP/3 client connection to the fixture through `via` (a relay, or
/// the fixture's own address).
async fn h3_client(f: &Fixture, via: SocketAddr) -> H3 {
    let socket = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    large_receive_buffer(&socket);
    H3::connect(client_tls(&f.dir, &[]), socket, via, "localhost").await
}

fn terminate(f: &mut Fixture) -> std::process::ExitStatus {
    f.server.terminate(T)
}

/// `--alt-svc tcp`: HTTP/3 responses carry no Alt-Svc, TCP ones still do.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn alt_svc_tcp_leaves_it_off_h3() {
    let mut f = start_with("alt-svc-tcp", "1000000", &["--alt-svc", "tcp"]);
    tokio::time::timeout(T, async {
        let tcp = tokio::net::TcpStream::connect(f.http).await.unwrap();
        let (r, _) = fetch_h1(tcp, request("GET", "/")).await;
        assert_eq!(header(&r, "alt-svc"), format!("h3=\":{}\"", f.https.port()));
        let got = fetch_h3(&f, &["/", "/nope"]).await;
        assert_eq!(got[0].0.status(), StatusCode::OK);
        assert_eq!(
            (header(&got[0].0, "alt-svc"), header(&got[1].0, "alt-svc")),
            ("", "")
        );
    })
    .await
    .expect("fetches took over 10 s");
    assert_eq!(terminate(&mut f).code(), Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serves_over_h1_h2_and_h3() {
    let mut f = start();
    let alt_svc = format!("h3=\":{}\"", f.https.port());

    tokio::time::timeout(T, async {
        // HTTP/1.1 cleartext
        let tcp = tokio::net::TcpStream::connect(f.http).await.unwrap();
        let (r, body) = fetch_h1(tcp, request("GET", "/img/a.png")).await;
        assert_eq!(r.status(), StatusCode::OK);
        assert_eq!(r.version(), Version::HTTP_11);
        assert_eq!(header(&r, "content-type"), "image/png");
        assert_eq!(header(&r, "content-length"), "200000");
        assert_eq!(header(&r, "cache-control"), "no-store");
        assert_eq!(header(&r, "alt-svc"), alt_svc);
        assert_eq!(header(&r, "content-encoding"), "");
        assert!(body == f.png, "h1 body differs");

        let tcp = tokio::net::TcpStream::connect(f.http).await.unwrap();
        let (r, body) = fetch_h1(tcp, request("HEAD", "/")).await;
        assert_eq!(r.status(), StatusCode::OK);
        assert_eq!(header(&r, "content-length"), "32");
        assert!(body.is_empty());

        let tcp = tokio::net::TcpStream::connect(f.http).await.unwrap();
        let (r, _) = fetch_h1(tcp, request("GET", "/%2e%2e/%2e%2e/etc/passwd")).await;
        assert_eq!(r.status(), StatusCode::BAD_REQUEST);

        // HTTP/2 over TLS (ALPN h2 preferred)
        let tls = tls_connect(&f, &[b"h2", b"http/1.1"]).await;
        assert_eq!(tls.get_ref().1.alpn_protocol(), Some(&b"h2"[..]));
        let mut send = common::h2(tls).await;
        let uri = format!("https://localhost:{}", f.https.port());
        let (r, body) = collect(
            send.send_request(request("GET", &format!("{uri}/style.css")))
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(r.status(), StatusCode::OK);
        assert_eq!(r.version(), Version::HTTP_2);
        assert_eq!(header(&r, "content-type"), "text/css; charset=utf-8");
        assert_eq!(header(&r, "alt-svc"), alt_svc);
        assert_eq!(body, b"body { color: red }\n");
        let (r, body) = collect(
            send.send_request(request("GET", &format!("{uri}/img/a.png")))
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(r.status(), StatusCode::OK);
        assert!(body == f.png, "h2 body differs");
        let (r, _) = collect(
            send.send_request(request("GET", &format!("{uri}/missing.js")))
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(r.status(), StatusCode::NOT_FOUND);

        // HTTP/1.1 over TLS
        let tls = tls_connect(&f, &[b"http/1.1"]).await;
        assert_eq!(tls.get_ref().1.alpn_protocol(), Some(&b"http/1.1"[..]));
        let (r, body) = fetch_h1(tls, request("GET", "/")).await;
        assert_eq!(
            (r.status(), r.version()),
            (StatusCode::OK, Version::HTTP_11)
        );
        assert_eq!(header(&r, "content-type"), "text/html; charset=utf-8");
        assert_eq!(body, b"<!doctype html><title>t</title>\n");

        // HTTP/3
        let got = fetch_h3(&f, &["/", "/img/a.png", "/nope"]).await;
        let (r, body) = &got[0];
        assert_eq!((r.status(), r.version()), (StatusCode::OK, Version::HTTP_3));
        assert_eq!(header(r, "content-type"), "text/html; charset=utf-8");
        assert_eq!(header(r, "content-length"), "32");
        assert_eq!(header(r, "cache-control"), "no-store");
        assert_eq!(
            header(r, "alt-svc"),
            alt_svc,
            "--alt-svc all is the default"
        );
        assert_eq!(body, b"<!doctype html><title>t</title>\n");
        assert_eq!(header(&got[2].0, "alt-svc"), alt_svc, "on a 404 too");
        let (r, body) = &got[1];
        assert_eq!(header(r, "content-type"), "image/png");
        assert!(*body == f.png, "h3 body differs");
        assert_eq!(got[2].0.status(), StatusCode::NOT_FOUND);
    })
    .await
    .expect("fetches took over 10 s");

    let status = terminate(&mut f);
    assert_eq!(status.code(), Some(0), "exit status after SIGTERM");

    let log = std::fs::read_to_string(f.dir.join("requests.log")).unwrap();
    let lines: Vec<Vec<&str>> = log.lines().map(|l| l.split(' ').collect()).collect();
    assert!(lines.iter().all(|l| l.len() == 6), "{log}");
    let has = |proto: &str, method: &str, path: &str, status: &str, bytes: &str| {
        lines
            .iter()
            .any(|l| l[1..] == [proto, method, path, status, bytes])
    };
    assert!(
        has("http/1.1", "GET", "/img/a.png", "200", "200000"),
        "{log}"
    );
    assert!(has("http/1.1", "HEAD", "/", "200", "0"), "{log}");
    assert!(has("h2", "GET", "/style.css", "200", "20"), "{log}");
    assert!(has("h2", "GET", "/missing.js", "404", "14"), "{log}");
    assert!(has("h3", "GET", "/img/a.png", "200", "200000"), "{log}");
    assert!(has("h3", "GET", "/nope", "404", "14"), "{log}");
    assert!(has("http/1.1", "GET", "/", "200", "32"), "{log}"); // over TLS
    assert!(has("h3", "GET", "/", "200", "32"), "{log}");
    assert_eq!(lines.len(), 10, "{log}");
}

/// `req` with one more header.
fn with<B>(mut req: Request<B>, name: &'static str, value: &str) -> Request<B> {
    req.headers_mut().insert(name, value.parse().unwrap());
    req
}

/// Every response has an ETag and a Last-Modified; a request whose copy is
/// current gets a 304 without a body over each protocol, If-None-Match
/// deciding when both are sent; `--cache` sets the Cache-Control.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conditional_requests_get_304_over_h1_h2_and_h3() {
    let mut f = start_with("conditional", "1000000", &["--cache", "revalidate"]);
    tokio::time::timeout(T, async {
        let tcp = tokio::net::TcpStream::connect(f.http).await.unwrap();
        let (r, _) = fetch_h1(tcp, request("GET", "/style.css")).await;
        assert_eq!(r.status(), StatusCode::OK);
        assert_eq!(header(&r, "cache-control"), "no-cache");
        let etag = header(&r, "etag").to_string();
        let modified = header(&r, "last-modified").to_string();
        assert!(etag.starts_with('"') && etag.len() == 34, "{etag}");
        assert!(modified.ends_with(" GMT"), "{modified}");

        // h1: the tag, the date, and a stale tag with a current date
        let tcp = tokio::net::TcpStream::connect(f.http).await.unwrap();
        let req = with(request("GET", "/style.css"), "if-none-match", &etag);
        let (r, body) = fetch_h1(tcp, req).await;
        assert_eq!(r.status(), StatusCode::NOT_MODIFIED);
        assert_eq!(
            (header(&r, "etag"), header(&r, "cache-control")),
            (etag.as_str(), "no-cache")
        );
        assert!(body.is_empty());
        let tcp = tokio::net::TcpStream::connect(f.http).await.unwrap();
        let req = with(request("GET", "/style.css"), "if-modified-since", &modified);
        assert_eq!(
            fetch_h1(tcp, req).await.0.status(),
            StatusCode::NOT_MODIFIED
        );
        let tcp = tokio::net::TcpStream::connect(f.http).await.unwrap();
        let req = with(request("GET", "/style.css"), "if-none-match", "\"old\"");
        let req = with(req, "if-modified-since", &modified);
        let (r, body) = fetch_h1(tcp, req).await;
        assert_eq!(r.status(), StatusCode::OK, "If-None-Match decides");
        assert_eq!(body, b"body { color: red }\n");

        // h1 over TLS, h2
        let tls = tls_connect(&f, &[b"http/1.1"]).await;
        let req = with(request("GET", "/style.css"), "if-none-match", &etag);
        assert_eq!(
            fetch_h1(tls, req).await.0.status(),
            StatusCode::NOT_MODIFIED
        );
        let mut send = common::h2(tls_connect(&f, &[b"h2"]).await).await;
        let uri = format!("https://localhost:{}/style.css", f.https.port());
        let req = with(request("GET", &uri), "if-none-match", &etag);
        let (r, body) = collect(send.send_request(req).await.unwrap()).await;
        assert_eq!(
            (r.status(), r.version()),
            (StatusCode::NOT_MODIFIED, Version::HTTP_2)
        );
        assert!(body.is_empty());

        // h3
        let socket = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let mut h3 = H3::connect(client_tls(&f.dir, &[]), socket, f.https, "localhost").await;
        let req = Request::get(&uri).header("if-none-match", &etag).body(());
        let (r, body) = h3.fetch(req.unwrap()).await;
        assert_eq!(
            (r.status(), r.version()),
            (StatusCode::NOT_MODIFIED, Version::HTTP_3)
        );
        assert_eq!(header(&r, "etag"), etag);
        assert!(body.is_empty());
        h3.close();
    })
    .await
    .expect("fetches took over 10 s");
    assert_eq!(terminate(&mut f).code(), Some(0));
    let log = std::fs::read_to_string(f.dir.join("requests.log")).unwrap();
    let not_modified: Vec<&str> = log
        .lines()
        .filter(|l| l.ends_with(" GET /style.css 304 0"))
        .map(|l| l.split(' ').nth(1).unwrap())
        .collect();
    assert_eq!(
        not_modified,
        ["http/1.1", "http/1.1", "http/1.1", "h2", "h3"],
        "{log}"
    );
}

fn serve_error(args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(BIN).arg("serve").args(args).output().unwrap();
    assert!(out.stdout.is_empty());
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn errors_are_one_line_and_exit_2() {
    let dir = temp_dir("errors");
    gen_cert(&dir);
    let cert = dir.join("cert.pem").to_string_lossy().into_owned();
    let key = dir.join("key.pem").to_string_lossy().into_owned();
    let missing = dir.join("nope").to_string_lossy().into_owned();
    let root = dir.to_string_lossy().into_owned();

    let (code, err) = serve_error(&[
        "--root",
        &missing,
        "--addr",
        "127.0.0.1",
        "--cert",
        &cert,
        "--key",
        &key,
    ]);
    assert_eq!(code, Some(2));
    assert_eq!(err, format!("--root {missing}: no such directory\n"));

    let (code, err) = serve_error(&[
        "--root",
        &root,
        "--addr",
        "127.0.0.1",
        "--cert",
        &missing,
        "--key",
        &key,
    ]);
    assert_eq!(code, Some(2));
    assert!(
        err.starts_with(&format!("--cert {missing}: ")) && err.lines().count() == 1,
        "{err}"
    );

    // a port already taken
    let taken = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let https = free_tcp_and_udp_port().to_string();
    let (code, err) = serve_error(&[
        "--root",
        &root,
        "--addr",
        "127.0.0.1",
        "--http-port",
        &port,
        "--https-port",
        &https,
        "--cert",
        &cert,
        "--key",
        &key,
    ]);
    assert_eq!(code, Some(2));
    assert!(
        err.starts_with(&format!("bind 127.0.0.1:{port}: ")) && err.lines().count() == 1,
        "{err}"
    );

    let (code, err) = serve_error(&["--root", &root, "--addr", "127.0.0.1", "--quic-cc", "vegas"]);
    assert_eq!(code, Some(2));
    assert!(err.starts_with("--quic-cc: "), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Asks for a 4 MiB receive buffer (the kernel caps it at
/// net.core.rmem_max): datagrams arriving while the test's threads are not
/// scheduled should wait, not be dropped (a loss delays a response by a
/// retransmission and blurs the order the tests below look at).
fn large_receive_buffer(socket: &impl std::os::fd::AsFd) {
    let _ = rustix::net::sockopt::set_socket_recv_buffer_size(socket, 4 << 20);
}

/// Sends at `bytes_per_sec` on a schedule, not a sleep per datagram (timers
/// wake late): a late wake-up sends the datagrams due meanwhile at once.
struct Pacer {
    next: tokio::time::Instant,
    bytes_per_sec: f64,
}

impl Pacer {
    fn new(bytes_per_sec: f64) -> Pacer {
        Pacer {
            next: tokio::time::Instant::now(),
            bytes_per_sec,
        }
    }

    /// Waits until a datagram of `len` bytes may go.
    async fn wait(&mut self, len: usize) {
        let now = tokio::time::Instant::now();
        if self.next + Duration::from_millis(5) < now {
            self.next = now; // the link was idle
        }
        self.next += Duration::from_secs_f64(len as f64 / self.bytes_per_sec);
        if self.next > now {
            tokio::time::sleep_until(self.next).await;
        }
    }
}

/// A UDP relay in front of `server` whose way back is slow: it queues the
/// server's datagrams (dropping none) and delivers them at `bytes_per_sec`,
/// so which response finishes first depends on the order the server sends
/// in, not on how fast the test reads. Returns the address to connect to.
async fn slow_downlink(server: SocketAddr, bytes_per_sec: f64) -> SocketAddr {
    slow_relay(server, bytes_per_sec, None).await
}

/// `slow_downlink`, and with `up` the client's datagrams paced too, at
/// `up` bytes per second.
async fn slow_relay(server: SocketAddr, bytes_per_sec: f64, up: Option<f64>) -> SocketAddr {
    use tokio::net::UdpSocket as Udp;
    let bind = || async {
        let s = Udp::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
        large_receive_buffer(&s);
        Arc::new(s)
    };
    let (front, back) = (bind().await, bind().await);
    back.connect(server).await.unwrap();
    let addr = front.local_addr().unwrap();
    let (client_tx, client_rx) = tokio::sync::watch::channel(None);
    let (queue_tx, mut queue_rx) = tokio::sync::mpsc::unbounded_channel::<Vec<u8>>();
    let (up_tx, mut up_rx) = tokio::sync::mpsc::unbounded_channel::<Vec<u8>>();
    let (f, b) = (front.clone(), back.clone());
    tokio::spawn(async move {
        let mut buf = vec![0u8; 65_536];
        while let Ok((n, from)) = f.recv_from(&mut buf).await {
            client_tx.send_replace(Some(from));
            let _ = up_tx.send(buf[..n].to_vec());
        }
    });
    tokio::spawn(async move {
        let mut pacer = up.map(Pacer::new);
        while let Some(d) = up_rx.recv().await {
            if let Some(p) = &mut pacer {
                p.wait(d.len()).await;
            }
            let _ = b.send(&d).await;
        }
    });
    tokio::spawn(async move {
        let mut buf = vec![0u8; 65_536];
        while let Ok(n) = back.recv(&mut buf).await {
            let _ = queue_tx.send(buf[..n].to_vec());
        }
    });
    tokio::spawn(async move {
        let mut pacer = Pacer::new(bytes_per_sec);
        while let Some(d) = queue_rx.recv().await {
            pacer.wait(d.len()).await;
            let to = *client_rx.borrow();
            if let Some(to) = to {
                let _ = front.send_to(&d, to).await;
            }
        }
    });
    addr
}

/// Twelve 512 KiB requests with `priority: u=5`, then one more with `u=0`,
/// all on one connection, through a 20 MB/s way back, to a server started
/// with `extra` flags. Returns each response's completion
/// time, priority and file name, earliest first, and the request log.
async fn busy_connection(
    tag: &str,
    extra: &[&str],
) -> (Vec<(Duration, &'static str, String)>, String) {
    const SIZE: usize = 512 * 1024;
    // windows far above the 6.5 MB in flight: only quinn's scheduling decides
    let mut f = start_with(tag, "20000000", extra);
    let big = f.dir.join("root/big");
    std::fs::create_dir_all(&big).unwrap();
    let data: Vec<u8> = (0..SIZE as u32).map(|i| (i % 251) as u8).collect();
    for i in 0..=LOW {
        std::fs::write(big.join(format!("{i}.bin")), &data).unwrap();
    }

    let order = tokio::time::timeout(T, async {
        let relay = slow_downlink(f.https, 20e6).await;
        let h3 = h3_client(&f, relay).await;
        let mut send = h3.send.clone();
        let start = std::time::Instant::now();
        let mut readers = Vec::new();
        for i in 0..=LOW {
            // the u=0 request goes last, while the u=5 ones are being served
            let (name, prio) = if i == LOW {
                ("0.bin".to_string(), "u=0")
            } else {
                (format!("{}.bin", i + 1), "u=5")
            };
            let req = Request::get(format!("https://localhost:{}/big/{name}", f.https.port()))
                .header("priority", prio)
                .body(())
                .unwrap();
            let mut stream = send.send_request(req).await.unwrap();
            stream.finish().await.unwrap();
            readers.push(tokio::spawn(async move {
                let resp = stream.recv_response().await.unwrap();
                assert_eq!(resp.status(), StatusCode::OK);
                let mut n = 0;
                while let Some(chunk) = stream.recv_data().await.unwrap() {
                    n += chunk.remaining();
                }
                assert_eq!(n, SIZE, "{name}");
                (start.elapsed(), prio, name)
            }));
        }
        let mut done = Vec::new();
        for r in readers {
            done.push(r.await.unwrap());
        }
        drop(send);
        h3.close();
        done.sort();
        done
    })
    .await
    .expect("fetches took over 10 s");

    assert_eq!(terminate(&mut f).code(), Some(0));
    let log = std::fs::read_to_string(f.dir.join("requests.log")).unwrap();
    (order, log)
}

/// The requests of `busy_connection`.
const LOW: usize = 12;

/// RFC 9218 on HTTP/3: on a connection busy sending twelve 512 KiB
/// responses asked for with `priority: u=5`, a later 512 KiB request with
/// `priority: u=0` is sent first and completes before every one of them,
/// and the u=5 ones (not incremental) complete one by one in request order.
/// (Without priorities quinn sends all thirteen round-robin, and they all
/// finish together, in no particular order, at the end: see the next
/// test.) The way back is a 20 MB/s queue, so the server's sending order is
/// what the client sees. The request log carries each response's priority
/// as a seventh field.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn h3_sends_lower_urgency_first() {
    let (order, log) = busy_connection("prio", &[]).await;
    // u=0 first, and not by a hair (round-robin ends everything together)
    let pos = order.iter().position(|(_, p, _)| *p == "u=0").unwrap();
    assert_eq!(
        pos, 0,
        "u=0 finished after {pos} of the u=5 responses: {order:?}"
    );
    assert!(order[0].0 * 3 < order[LOW].0, "{order:?}");
    // the u=5 ones (not incremental) one after another: spread over the
    // transfer, not ending together ...
    assert!(order[1].0 * 2 < order[LOW].0, "{order:?}");
    // ... in request order (a response with a packet lost on the way and
    // resent may end a few places late: allow 8 inversions of the 66 pairs;
    // a random order has 33 on average)
    let seq: Vec<usize> = order[1..]
        .iter()
        .map(|(_, _, n)| n.trim_end_matches(".bin").parse().unwrap())
        .collect();
    let inversions: usize = (0..seq.len())
        .map(|i| (i + 1..seq.len()).filter(|&j| seq[j] < seq[i]).count())
        .sum();
    assert!(inversions <= 8, "{inversions} inversions: {order:?}");

    let lines: Vec<Vec<&str>> = log.lines().map(|l| l.split(' ').collect()).collect();
    assert_eq!(lines.len(), LOW + 1, "{log}");
    let size = (512 * 1024).to_string();
    assert!(
        lines
            .iter()
            .any(|l| l[1..] == ["h3", "GET", "/big/0.bin", "200", size.as_str(), "u=0"]),
        "{log}"
    );
    let low = lines
        .iter()
        .filter(|l| l.len() == 7 && l[6] == "u=5")
        .count();
    assert_eq!(low, LOW, "{log}");
}

/// `--h3-priorities off`: the same requests are served round-robin (as
/// before the server read priorities), so the u=0 response does not get
/// ahead — what makes the test above able to fail.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn h3_priorities_off_is_round_robin() {
    let (order, _) = busy_connection("prio-off", &["--h3-priorities", "off"]).await;
    let (u0, _, _) = order.iter().find(|(_, p, _)| *p == "u=0").unwrap();
    assert!(*u0 * 3 > order[LOW].0 * 2, "{order:?}");
    assert!(order[0].0 * 3 > order[LOW].0 * 2, "{order:?}");
}

/// The connection log's lines once it has `n` (each written when its
/// connection's handshake is done, so they may come a little after the
/// client's), as JSON.
async fn connection_lines(f: &Fixture, n: usize) -> Vec<serde_json::Value> {
    let path = f.dir.join("connections.log");
    for _ in 0..500 {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        if text.lines().count() >= n {
            return text
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect();
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("{path:?} has fewer than {n} lines");
}

/// The handshake facts of a connection log line.
fn facts(l: &serde_json::Value) -> (&str, &str, bool, bool, bool, u64) {
    (
        l["protocol"].as_str().unwrap(),
        l["handshake"].as_str().unwrap(),
        l["psk_offered"].as_bool().unwrap(),
        l["early_offered"].as_bool().unwrap(),
        l["early_accepted"].as_bool().unwrap(),
        l["early_requests"].as_u64().unwrap(),
    )
}

/// A QUIC client endpoint whose connections resume with the tickets its
/// earlier ones got, sending 0-RTT when a ticket allows it.
fn resuming_quic_client(f: &Fixture) -> quinn::Endpoint {
    let mut tls = client_tls(&f.dir, &[b"h3"]);
    tls.enable_early_data = true;
    let quic = quinn::crypto::rustls::QuicClientConfig::try_from(tls).unwrap();
    let mut ep = quinn::Endpoint::client(SocketAddr::from((Ipv4Addr::LOCALHOST, 0))).unwrap();
    ep.set_default_client_config(quinn::ClientConfig::new(Arc::new(quic)));
    ep
}

/// A GET of `/` over a new connection from `ep` to `to`, sent in 0-RTT
/// when `ep` may. Returns whether the server accepted 0-RTT (None: not
/// attempted) and the response's status.
async fn get_over_new_connection(
    ep: &quinn::Endpoint,
    to: SocketAddr,
) -> (Option<bool>, StatusCode) {
    let connecting = ep.connect(to, "localhost").unwrap();
    let (conn, zero_rtt) = match connecting.into_0rtt() {
        Ok((conn, accepted)) => (conn, Some(accepted)),
        Err(connecting) => (connecting.await.unwrap(), None),
    };
    let (mut driver, mut send) = h3::client::new(h3_quinn::Connection::new(conn.clone()))
        .await
        .unwrap();
    let drive = tokio::spawn(async move {
        let _ = std::future::poll_fn(|cx| driver.poll_close(cx)).await;
    });
    let req = Request::get(format!("https://localhost:{}/", to.port()))
        .body(())
        .unwrap();
    let mut stream = send.send_request(req).await.unwrap();
    stream.finish().await.unwrap();
    let status = stream.recv_response().await.unwrap().status();
    while stream.recv_data().await.unwrap().is_some() {}
    let accepted = match zero_rtt {
        Some(a) => Some(a.await),
        None => None,
    };
    // the tickets come right after the handshake: let them arrive
    tokio::time::sleep(Duration::from_millis(100)).await;
    drop(send);
    drive.abort();
    conn.close(0u32.into(), b"done");
    (accepted, status)
}

/// A client that comes back with the ticket of its first connection
/// resumes and sends its request in 0-RTT; the origin takes it before the
/// handshake completes (the server's flight reaches the client slowly,
/// through a relay, so the client's Finished comes long after its request)
/// and its connection log says so. With `--zero-rtt off` the ticket
/// resumes without early data.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn h3_resumes_with_a_ticket_and_takes_0rtt() {
    for (zero_rtt, tag) in [("on", "0rtt-on"), ("off", "0rtt-off")] {
        let mut f = start_with(tag, "1000000", &["--zero-rtt", zero_rtt]);
        tokio::time::timeout(T, async {
            // 20 kB/s back: the server's first flight takes about 100 ms
            let via = slow_downlink(f.https, 20_000.0).await;
            let ep = resuming_quic_client(&f);
            assert_eq!(
                get_over_new_connection(&ep, via).await,
                (None, StatusCode::OK)
            );
            let second = get_over_new_connection(&ep, via).await;
            let lines = connection_lines(&f, 2).await;
            assert_eq!(facts(&lines[0]), ("h3", "full", false, false, false, 0));
            if zero_rtt == "on" {
                assert_eq!(second, (Some(true), StatusCode::OK));
                assert_eq!(facts(&lines[1]), ("h3", "resumed", true, true, true, 1));
            } else {
                // the ticket allows no early data: the client does not try
                assert_eq!(second, (None, StatusCode::OK));
                assert_eq!(facts(&lines[1]), ("h3", "resumed", true, false, false, 0));
            }
            ep.close(0u32.into(), b"done");
        })
        .await
        .expect("connections took over 10 s");
        assert_eq!(terminate(&mut f).code(), Some(0));
    }
}

/// Over TLS on TCP a client's second connection resumes with its first's
/// ticket (and sends no early data: the tickets allow none); the
/// connection log says which.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_over_tcp_resumes_with_a_ticket() {
    let mut f = start_with("tls-resume", "1000000", &[]);
    tokio::time::timeout(T, async {
        let mut tls = client_tls(&f.dir, &[b"h2"]);
        tls.enable_early_data = true;
        let connector = tokio_rustls::TlsConnector::from(Arc::new(tls));
        for _ in 0..2 {
            let tcp = tokio::net::TcpStream::connect(f.https).await.unwrap();
            let tls = connector
                .connect(ServerName::try_from("localhost").unwrap(), tcp)
                .await
                .unwrap();
            let mut send = common::h2(tls).await;
            let resp = send.send_request(request("GET", "/")).await.unwrap();
            assert_eq!(collect(resp).await.0.status(), StatusCode::OK);
        }
        let lines = connection_lines(&f, 2).await;
        assert_eq!(facts(&lines[0]), ("h2", "full", false, false, false, 0));
        assert_eq!(facts(&lines[1]), ("h2", "resumed", true, false, false, 0));
    })
    .await
    .expect("connections took over 10 s");
    assert_eq!(terminate(&mut f).code(), Some(0));
}

/// A client whose ClientHello takes two Initial packets (as Chromium's
/// does, with its post-quantum key share) gets its answer when the second
/// packet comes a while after the first: HTTP/3 starts once the whole
/// hello is in. (It used to open its control stream before the client's
/// stream limits were known, and wait for them for ever.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn h3_serves_a_client_whose_hello_spans_two_packets() {
    let mut f = start_with("long-hello", "1000000", &[]);
    tokio::time::timeout(T, async {
        // 20 kB/s up: the second Initial comes about 60 ms after the first
        let via = slow_relay(f.https, 20e6, Some(20_000.0)).await;
        let mut tls = client_tls(&f.dir, &[]);
        // ALPN names the server does not take make the hello over 1200 bytes
        let filler: Vec<Vec<u8>> = (0..12).map(|i| vec![b'a' + i; 120]).collect();
        tls.alpn_protocols = [filler, vec![b"h3".to_vec()]].concat();
        let quic = quinn::crypto::rustls::QuicClientConfig::try_from(tls).unwrap();
        let mut ep = quinn::Endpoint::client(SocketAddr::from((Ipv4Addr::LOCALHOST, 0))).unwrap();
        ep.set_default_client_config(quinn::ClientConfig::new(Arc::new(quic)));
        assert_eq!(
            get_over_new_connection(&ep, via).await,
            (None, StatusCode::OK)
        );
        ep.close(0u32.into(), b"done");
    })
    .await
    .expect("no answer within 10 s");
    assert_eq!(terminate(&mut f).code(), Some(0));
}
