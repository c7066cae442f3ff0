//! `origin serve --archive`: a small archive of two hosts (a page on
//! www.example.test, a CDN on cdn.example.test: a gzip body, a redirect, a
//! query-string fallback, a POST) served on 127.0.0.2 and 127.0.0.3, fetched
//! over HTTP/1.1 (cleartext and TLS), HTTP/2 and HTTP/3 by a client that
//! trusts the key's SPKI pin, as Chromium is told to with
//! `--ignore-certificate-errors-spki-list`; each certificate must be for
//! its host alone. Then the request log.

mod common;

use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;

use common::{collect, fetch_h1, header, request, BIN, H3, T};
use http::{Request, Response, StatusCode, Version};
use rustls::pki_types::{CertificateDer, ServerName};
use rustls::server::ParsedCertificate;
use satbench_transport::cert::{self, SpkiPinned};
use satbench_transport::testkit::{
    free_tcp_and_udp_port, free_tcp_port, spawn_ready_on_fresh_ports, temp_dir, Running,
};
use serde_json::json;

const WWW: &str = "www.example.test";
const CDN: &str = "cdn.example.test";
const PAGE: &str = "<!doctype html><script src=https://cdn.example.test/app.js?v=2></script>\n";
const CSS: &str = "body { color: red }\n";
const JSON: &str = "{\"ok\":true}";
/// `console.log("replayed from the archive");` and a newline, `gzip -n -9`.
const GZIP_JS: [u8; 62] = [
    0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0x4b, 0xce, 0xcf, 0x2b, 0xce, 0xcf,
    0x49, 0xd5, 0xcb, 0xc9, 0x4f, 0xd7, 0x50, 0x2a, 0x4a, 0x2d, 0xc8, 0x49, 0xac, 0x4c, 0x4d, 0x51,
    0x48, 0x2b, 0xca, 0xcf, 0x55, 0x28, 0xc9, 0x48, 0x55, 0x48, 0x2c, 0x4a, 0xce, 0xc8, 0x2c, 0x4b,
    0x55, 0xd2, 0xb4, 0xe6, 0x02, 0x00, 0xdc, 0x3c, 0x23, 0x39, 0x2a, 0x00, 0x00, 0x00,
];
/// The length of the 404 for a request no entry matches.
const UNMATCHED_BYTES: &str = "23";

fn write_archive(dir: &Path) {
    std::fs::create_dir_all(dir.join("bodies")).unwrap();
    std::fs::write(dir.join("bodies/0000"), PAGE).unwrap();
    std::fs::write(dir.join("bodies/0001"), GZIP_JS).unwrap();
    std::fs::write(dir.join("bodies/0002"), CSS).unwrap();
    std::fs::write(dir.join("bodies/0003"), JSON).unwrap();
    let manifest = json!({
        "format": "satbench-archive",
        "version": 1,
        "page": "https://www.example.test/",
        "created": "2026-05-01T12:00:00.000Z",
        "source": {"tool": "record", "from": "https://www.example.test/"},
        "entries": [
            {"method": "GET", "url": "http://www.example.test/", "status": 301,
             "headers": [["location", "https://www.example.test/"]], "body": null},
            {"method": "GET", "url": "https://www.example.test/", "status": 200,
             "headers": [["content-type", "text/html; charset=utf-8"],
                         ["cache-control", "no-cache"], ["date", "Mon, 01 Jan 2001 00:00:00 GMT"],
                         ["set-cookie", "a=1"], ["set-cookie", "b=2"]],
             "body": "bodies/0000"},
            {"method": "GET", "url": "https://www.example.test/old", "status": 301,
             "headers": [["location", "https://www.example.test/"]], "body": null},
            {"method": "GET", "url": "https://cdn.example.test/app.js?v=2", "status": 200,
             "headers": [["content-type", "text/javascript"], ["content-encoding", "gzip"],
                         ["vary", "accept-encoding"]],
             "body": "bodies/0001"},
            {"method": "GET", "url": "https://cdn.example.test/style.css?v=1", "status": 200,
             "headers": [["content-type", "text/css"]], "body": "bodies/0002"},
            {"method": "POST", "url": "https://cdn.example.test/api", "status": 201,
             "headers": [["content-type", "application/json"]], "body": "bodies/0003"}
        ],
        "missing": [{"method": "GET", "url": "https://cdn.example.test/sw.js", "reason": "service worker"}]
    });
    std::fs::write(dir.join("archive.json"), manifest.to_string()).unwrap();
}

struct Fixture {
    dir: PathBuf,
    http_port: u16,
    https_port: u16,
    /// The SPKI pin of the key every certificate carries.
    pin: String,
    server: Running,
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `origin gen-cert` into DIR/cert: the key (and its pin) all hosts share.
fn gen_key(dir: &Path) -> String {
    let out = Command::new(BIN)
        .args(["gen-cert", "--name", "satbench.test", "--out"])
        .arg(dir.join("cert"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    std::fs::read_to_string(dir.join("cert/spki.txt"))
        .unwrap()
        .trim()
        .to_string()
}

fn start() -> Fixture {
    let dir = temp_dir("archive");
    write_archive(&dir.join("site"));
    let pin = gen_key(&dir);
    let (server, (http_port, https_port)) = spawn_ready_on_fresh_ports(T, || {
        let (http_port, https_port) = (free_tcp_port(), free_tcp_and_udp_port());
        let mut cmd = Command::new(BIN);
        cmd.arg("serve")
            .arg("--archive")
            .arg(dir.join("site"))
            .args(["--addr", "127.0.0.2", "--addr", "127.0.0.3"])
            .args(["--http-port", &http_port.to_string()])
            .args(["--https-port", &https_port.to_string()])
            .arg("--key")
            .arg(dir.join("cert/key.pem"))
            .arg("--log")
            .arg(dir.join("requests.log"))
            .stderr(Stdio::inherit());
        (cmd, (http_port, https_port))
    })
    .unwrap_or_else(|e| panic!("origin serve --archive: {e}"));
    Fixture {
        dir,
        http_port,
        https_port,
        pin,
        server,
    }
}

fn client_tls(f: &Fixture, alpn: &[&[u8]]) -> rustls::ClientConfig {
    // as Chromium given the pin (which would not check the name either)
    let pinned = Arc::new(SpkiPinned::new(f.pin.clone()));
    let mut c = rustls::ClientConfig::builder_with_provider(cert::provider())
        .with_safe_default_protocol_versions()
        .unwrap()
        .dangerous()
        .with_custom_certificate_verifier(pinned)
        .with_no_client_auth();
    c.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    c
}

/// The certificate is valid for `host` and for no other host of the
/// archive: its only SAN.
fn only_for(cert: &CertificateDer<'_>, host: &str) {
    let cert = ParsedCertificate::try_from(cert).unwrap();
    for name in [WWW, CDN, "elsewhere.test"] {
        let server_name = ServerName::try_from(name).unwrap();
        let valid = rustls::client::verify_server_name(&cert, &server_name).is_ok();
        assert_eq!(
            valid,
            name == host,
            "certificate for {host}, valid for {name}: {valid}"
        );
    }
}

fn addr(ip: u8, port: u16) -> SocketAddr {
    SocketAddr::from((Ipv4Addr::new(127, 0, 0, ip), port))
}

/// TLS to 127.0.0.`ip` naming `sni` (an IP address: no SNI), with `alpn`;
/// the certificate it got.
async fn tls(
    f: &Fixture,
    ip: u8,
    sni: &str,
    alpn: &[&[u8]],
) -> (
    tokio_rustls::client::TlsStream<tokio::net::TcpStream>,
    CertificateDer<'static>,
) {
    let tcp = tokio::net::TcpStream::connect(addr(ip, f.https_port))
        .await
        .unwrap();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(client_tls(f, alpn)));
    let tls = connector
        .connect(ServerName::try_from(sni.to_string()).unwrap(), tcp)
        .await
        .unwrap();
    let cert = tls.get_ref().1.peer_certificates().unwrap()[0].clone();
    (tls, cert)
}

/// HTTP/3 to 127.0.0.`ip` naming `sni`; the certificate it got.
async fn h3(f: &Fixture, ip: u8, sni: &str) -> (H3, CertificateDer<'static>) {
    let socket = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    let h3 = H3::connect(client_tls(f, &[]), socket, addr(ip, f.https_port), sni).await;
    let certs = h3.conn.peer_identity().unwrap();
    let certs = certs.downcast::<Vec<CertificateDer<'static>>>().unwrap();
    (h3, certs[0].clone())
}

fn h3_get(uri: &str, priority: &str) -> Request<()> {
    Request::get(uri)
        .header("priority", priority)
        .body(())
        .unwrap()
}

fn status_and_body(got: &(Response<()>, Vec<u8>)) -> (StatusCode, &[u8]) {
    (got.0.status(), got.1.as_slice())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serves_an_archive_by_host_over_h1_h2_and_h3() {
    let mut f = start();
    let alt_svc = format!("h3=\":{}\"", f.https_port);
    tokio::time::timeout(T, async {
        // HTTP/1.1 cleartext: http:// entries only
        let tcp = tokio::net::TcpStream::connect(addr(2, f.http_port))
            .await
            .unwrap();
        let (r, body) = fetch_h1(tcp, request("GET", "/", WWW)).await;
        assert_eq!(r.status(), StatusCode::MOVED_PERMANENTLY);
        assert_eq!(header(&r, "location"), "https://www.example.test/");
        assert_eq!(header(&r, "content-length"), "0");
        assert!(body.is_empty());
        let tcp = tokio::net::TcpStream::connect(addr(3, f.http_port))
            .await
            .unwrap();
        let (r, _) = fetch_h1(tcp, request("GET", "/app.js?v=2", CDN)).await;
        assert_eq!(r.status(), StatusCode::NOT_FOUND, "no http:// entry");

        // HTTP/2 on the page's address: its host's certificate
        let (stream, cert) = tls(&f, 2, WWW, &[b"h2", b"http/1.1"]).await;
        only_for(&cert, WWW);
        assert_eq!(stream.get_ref().1.alpn_protocol(), Some(&b"h2"[..]));
        let mut h2 = common::h2(stream).await;
        let mut get = |uri: &str, host: &str| h2.send_request(request("GET", uri, host));
        let (r, body) = collect(get("https://www.example.test/", WWW).await.unwrap()).await;
        assert_eq!((r.status(), r.version()), (StatusCode::OK, Version::HTTP_2));
        assert_eq!(body, PAGE.as_bytes());
        assert_eq!(header(&r, "content-type"), "text/html; charset=utf-8");
        assert_eq!(header(&r, "content-length"), PAGE.len().to_string());
        assert_eq!(
            header(&r, "cache-control"),
            "no-cache",
            "recorded headers stay"
        );
        let cookies: Vec<&str> = r
            .headers()
            .get_all("set-cookie")
            .iter()
            .map(|v| v.to_str().unwrap())
            .collect();
        assert_eq!(cookies, ["a=1", "b=2"]);
        assert_eq!(header(&r, "timing-allow-origin"), "*");
        assert_eq!(header(&r, "alt-svc"), alt_svc);
        assert_ne!(header(&r, "date"), "Mon, 01 Jan 2001 00:00:00 GMT");
        let (r, body) = collect(get("https://www.example.test/old", WWW).await.unwrap()).await;
        assert_eq!(r.status(), StatusCode::MOVED_PERMANENTLY);
        assert_eq!(header(&r, "location"), "https://www.example.test/");
        assert!(body.is_empty());
        let (r, body) = collect(get("https://www.example.test/nope.js", WWW).await.unwrap()).await;
        assert_eq!(r.status(), StatusCode::NOT_FOUND);
        assert_eq!(body, b"404 not in the archive\n");
        assert_eq!(header(&r, "alt-svc"), alt_svc);

        // no SNI (a connection to an IP address): the page's host's
        // certificate; the response still goes by :authority (and the
        // query-string fallback)
        let (stream, cert) = tls(&f, 3, "127.0.0.3", &[b"h2"]).await;
        only_for(&cert, WWW);
        let mut h2 = common::h2(stream).await;
        let req = request("GET", "https://cdn.example.test/style.css?v=7", CDN);
        let (r, body) = collect(h2.send_request(req).await.unwrap()).await;
        assert_eq!(
            (r.status(), body.as_slice()),
            (StatusCode::OK, CSS.as_bytes())
        );
        assert_eq!(header(&r, "content-type"), "text/css");

        // HTTP/1.1 over TLS on the CDN's address: its certificate, the gzip
        // body as recorded; Host with the listener's port is the default
        let host = format!("{CDN}:{}", f.https_port);
        let (stream, cert) = tls(&f, 3, CDN, &[b"http/1.1"]).await;
        only_for(&cert, CDN);
        let (r, body) = fetch_h1(stream, request("GET", "/app.js?v=2", &host)).await;
        assert_eq!(
            (r.status(), r.version()),
            (StatusCode::OK, Version::HTTP_11)
        );
        assert_eq!(body, GZIP_JS);
        assert_eq!(header(&r, "content-encoding"), "gzip");
        assert_eq!(header(&r, "content-length"), "62");
        assert_eq!(header(&r, "vary"), "accept-encoding");
        let (stream, _) = tls(&f, 3, CDN, &[b"http/1.1"]).await;
        let (r, body) = fetch_h1(stream, request("HEAD", "/app.js?v=2", &host)).await;
        assert_eq!(r.status(), StatusCode::OK);
        assert_eq!(header(&r, "content-length"), "62");
        assert!(body.is_empty());

        // HTTP/3 to the CDN, then to the page
        let (mut cdn, cert) = h3(&f, 3, CDN).await;
        only_for(&cert, CDN);
        let base = format!("https://{host}");
        let got = cdn
            .fetch(h3_get(&format!("{base}/app.js?v=2"), "u=1"))
            .await;
        assert_eq!(status_and_body(&got), (StatusCode::OK, &GZIP_JS[..]));
        assert_eq!(got.0.version(), Version::HTTP_3);
        assert_eq!(header(&got.0, "content-encoding"), "gzip");
        assert_eq!(header(&got.0, "alt-svc"), alt_svc);
        let got = cdn.fetch(h3_get(&format!("{base}/style.css"), "u=0")).await;
        assert_eq!(status_and_body(&got), (StatusCode::OK, CSS.as_bytes()));
        let post = Request::post(format!("{base}/api")).body(()).unwrap();
        let got = cdn.fetch(post).await;
        assert_eq!(
            status_and_body(&got),
            (StatusCode::CREATED, JSON.as_bytes())
        );
        let got = cdn
            .fetch(h3_get(&format!("{base}/missing.png"), "u=3, i"))
            .await;
        assert_eq!(got.0.status(), StatusCode::NOT_FOUND);
        cdn.close();
        let (mut www, cert) = h3(&f, 2, WWW).await;
        only_for(&cert, WWW);
        let got = www
            .fetch(Request::get("https://www.example.test/").body(()).unwrap())
            .await;
        assert_eq!(status_and_body(&got), (StatusCode::OK, PAGE.as_bytes()));
        www.close();
    })
    .await
    .expect("fetches took over 10 s");
    assert_eq!(f.server.terminate(T).code(), Some(0));

    // PATH is the URL; unmatched requests say so last
    let log = std::fs::read_to_string(f.dir.join("requests.log")).unwrap();
    let lines: Vec<&str> = log.lines().map(|l| l.split_once(' ').unwrap().1).collect();
    let page = PAGE.len().to_string();
    let css = CSS.len().to_string();
    let miss = UNMATCHED_BYTES;
    let expected = [
        "http/1.1 GET http://www.example.test/ 301 0".to_string(),
        format!("http/1.1 GET http://cdn.example.test/app.js?v=2 404 {miss} unmatched"),
        format!("h2 GET https://www.example.test/ 200 {page}"),
        "h2 GET https://www.example.test/old 301 0".to_string(),
        format!("h2 GET https://www.example.test/nope.js 404 {miss} unmatched"),
        format!("h2 GET https://cdn.example.test/style.css?v=7 200 {css}"),
        "http/1.1 GET https://cdn.example.test/app.js?v=2 200 62".to_string(),
        "http/1.1 HEAD https://cdn.example.test/app.js?v=2 200 0".to_string(),
        "h3 GET https://cdn.example.test/app.js?v=2 200 62 u=1".to_string(),
        format!("h3 GET https://cdn.example.test/style.css 200 {css} u=0"),
        format!("h3 POST https://cdn.example.test/api 201 {}", JSON.len()),
        format!("h3 GET https://cdn.example.test/missing.png 404 {miss} u=3,i unmatched"),
        format!("h3 GET https://www.example.test/ 200 {page}"),
    ];
    assert_eq!(lines, expected, "{log}");
}

fn serve_error(args: &[&str]) -> String {
    let out = Command::new(BIN).arg("serve").args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(err.lines().count(), 1, "{err}");
    err
}

#[test]
fn a_bad_archive_is_one_line_and_exit_2() {
    let dir = temp_dir("archive-errors");
    let site = dir.join("site");
    write_archive(&site);
    gen_key(&dir);
    let key = dir.join("cert/key.pem").display().to_string();
    let run = |archive: &Path| {
        let archive = archive.display().to_string();
        serve_error(&["--archive", &archive, "--addr", "127.0.0.2", "--key", &key])
    };
    let manifest = site.join("archive.json");
    std::fs::remove_file(site.join("bodies/0002")).unwrap();
    let canonical = std::fs::canonicalize(&site).unwrap();
    assert_eq!(
        run(&site),
        format!(
            "--archive {}: entries[4].body: {}: No such file or directory (os error 2)\n",
            manifest.display(),
            canonical.join("bodies/0002").display()
        )
    );
    std::fs::write(&manifest, r#"{"format": "satbench-archive", "version": 7}"#).unwrap();
    assert_eq!(
        run(&site),
        format!(
            "--archive {}: version: expected 1 (the version this origin reads), got 7\n",
            manifest.display()
        )
    );
    let nowhere = dir.join("nowhere");
    assert_eq!(
        run(&nowhere),
        format!(
            "--archive {}: No such file or directory (os error 2)\n",
            nowhere.join("archive.json").display()
        )
    );
    let _ = std::fs::remove_dir_all(&dir);
}
