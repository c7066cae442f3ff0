//! `--transparent` over loopback, without TPROXY (Proxy-ST's
//! `--transparent-to` stands in for the address a client sent to): each
//! client gets a certificate for the name it asks for, made with Proxy-ST's
//! one key; the name crosses the tunnel, and Proxy-GW reaches the origin
//! with it, trusting the origin by its key (`--next-hop-spki`); a
//! destination outside `--allow-dst` and an origin with another key are
//! refused, each closing only its client. The real interception (nftables
//! TPROXY, replies from the original address) is
//! test/integration/quic-pep-transparent.test.js's.

mod common;

use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::*;
use satbench_quic_pep::tls;
use satbench_transport::cert;
use satbench_transport::testkit::temp_dir;

/// An origin as a replayed site's: for every name a certificate made with
/// one key. Each bidi stream is answered with `NAME:` and what it carried
/// (`-` for a client that named none). Returns its address, its key's pin,
/// the endpoint and the names of the connections it saw (`conn NAME`).
fn start_origin(dir: &Path, tag: &str) -> (SocketAddr, String, quinn::Endpoint, Events) {
    let d = dir.join(tag);
    let g = cert::generate(&[format!("{tag}.test")], &[]).unwrap();
    cert::write(&d, &g).unwrap();
    let names = tls::PerName::new(&d.join("cert.pem"), &d.join("key.pem")).unwrap();
    let base = tls::server_tls_per_name(Arc::new(names));
    let each = |conn: quinn::Connection, ev: Events| async move {
        let name = tls::server_name(conn.handshake_data()).unwrap_or("-".into());
        ev.push(format!("conn {name}"));
        while let Ok((mut s, mut r)) = conn.accept_bi().await {
            let name = name.clone();
            tokio::spawn(async move {
                let body = read_all(&mut r).await.unwrap_or_default();
                let mut reply = format!("{name}:").into_bytes();
                reply.extend_from_slice(&body);
                let _ = s.write_all(&reply).await;
                let _ = s.finish();
            });
        }
    };
    let (addr, events, ep) = serve(&base, &["h3"], Default::default(), each);
    (addr, g.spki_pin, ep, events)
}

/// Proxy-GW with `--transparent`, trusting `origin_pin` within `allow`,
/// and what Proxy-STs in front of it need.
struct Gw {
    dir: PathBuf,
    gw: Pep,
    gw_cert: PathBuf,
    st_cert: PathBuf,
    st_pin: String,
}

impl Gw {
    fn start(dir: &Path, origin_pin: &str, allow: &str) -> Gw {
        let gw_cert = gen_cert(dir, "gw.test");
        let st_cert = gen_cert(dir, "st.test");
        let st_pin = std::fs::read_to_string(st_cert.join("spki.txt")).unwrap();
        let args = [
            "--role",
            "gw",
            "--tunnel",
            "--transparent",
            "--next-hop-spki",
            origin_pin,
            "--allow-dst",
            allow,
        ];
        Gw {
            dir: dir.to_path_buf(),
            gw: Pep::start_with(dir, "gw", &gw_cert, &args),
            gw_cert,
            st_cert,
            st_pin: st_pin.trim().to_string(),
        }
    }

    /// A `--transparent` Proxy-ST whose every client connection goes to
    /// `to`, once its tunnel is up.
    async fn st(&self, label: &str, to: &str) -> Pep {
        let st = Pep::start(
            &self.dir,
            label,
            &self.st_cert,
            self.gw.addr,
            &self.gw_cert,
            "gw.test",
            &[
                "--role",
                "st",
                "--tunnel",
                "--transparent",
                "--transparent-to",
                to,
            ],
        );
        st.wait_log("tunnel up to").await;
        st
    }

    /// A client asking `st` for `name`, trusting any certificate for that
    /// name with Proxy-ST's key (as Chromium's SPKI list, plus the name).
    async fn client(&self, st: &Pep, name: &str) -> (quinn::Endpoint, quinn::Connection) {
        let mut c = rustls::ClientConfig::builder_with_provider(cert::provider())
            .with_protocol_versions(&[&rustls::version::TLS13])
            .unwrap()
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(cert::SpkiPinned::new(self.st_pin.clone())))
            .with_no_client_auth();
        c.alpn_protocols = vec![b"h3".to_vec()];
        let quic = quinn::crypto::rustls::QuicClientConfig::try_from(c).unwrap();
        let ep = quinn::Endpoint::client((Ipv4Addr::LOCALHOST, 0).into()).unwrap();
        let conn = ep
            .connect_with(quinn::ClientConfig::new(Arc::new(quic)), st.addr, name)
            .unwrap()
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        (ep, conn)
    }
}

async fn ask(conn: &quinn::Connection, body: &str) -> Result<String, String> {
    let (mut s, mut r) = conn.open_bi().await.map_err(|e| e.to_string())?;
    s.write_all(body.as_bytes())
        .await
        .map_err(|e| e.to_string())?;
    s.finish().map_err(|e| e.to_string())?;
    let back = read_all(&mut r).await.map_err(|e| e.to_string())?;
    Ok(String::from_utf8_lossy(&back).into_owned())
}

/// How the client's connection was closed, once it is.
async fn closed(conn: &quinn::Connection) -> String {
    let e = tokio::time::timeout(T, conn.closed()).await.unwrap();
    describe(&e)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn each_name_gets_its_certificate_and_reaches_the_origin_with_it() {
    let dir = temp_dir("transparent");
    let (origin, origin_pin, _origin, events) = start_origin(&dir, "origin");
    let (rogue, _, _rogue, rogue_events) = start_origin(&dir, "rogue");
    let c = Gw::start(&dir, &origin_pin, "127.0.0.1");
    let st = c.st("st", &origin.to_string()).await;

    // two clients at once, each asking for its own name
    let ((_ea, a), (_eb, b)) = tokio::join!(c.client(&st, "a.test"), c.client(&st, "cdn.b.test"));
    let (ra, rb) = tokio::join!(ask(&a, "hello a"), ask(&b, "hello b"));
    assert_eq!(ra.unwrap(), "a.test:hello a");
    assert_eq!(rb.unwrap(), "cdn.b.test:hello b");
    events.wait_for("conn a.test").await;
    events.wait_for("conn cdn.b.test").await;
    for p in [&st, &c.gw] {
        let s = p.stats().await;
        let d = &s["destinations"][origin.to_string()];
        assert_eq!(d["connections"], 2, "{s}");
        let mut names: Vec<&str> = d["names"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_str().unwrap())
            .collect();
        names.sort();
        assert_eq!(names, ["a.test", "cdn.b.test"], "{s}");
    }
    st.wait_log(&format!("to {origin} name=a.test")).await;
    c.gw.wait_log(&format!("to {origin} name=cdn.b.test")).await;

    // an origin with another key: Proxy-GW refuses it, and only that client is closed
    let st_rogue = c.st("st-rogue", &rogue.to_string()).await;
    let (_ec, rc) = c.client(&st_rogue, "a.test").await;
    assert!(ask(&rc, "hello c").await.is_err());
    let why = closed(&rc).await;
    assert!(
        why.contains("the server's key is not the pinned one"),
        "{why}"
    );
    assert!(rogue_events.all().is_empty(), "{:?}", rogue_events.all());

    // a destination outside --allow-dst
    let st_far = c.st("st-far", "127.0.0.2:9").await;
    let (_ed, fc) = c.client(&st_far, "a.test").await;
    assert!(ask(&fc, "hello d").await.is_err());
    let why = closed(&fc).await;
    assert!(why.contains("127.0.0.2:9: not in --allow-dst"), "{why}");

    // the first two are untouched
    assert_eq!(ask(&a, "again").await.unwrap(), "a.test:again");
    let s = c.gw.stats().await;
    assert_eq!(
        (s["connections"].as_u64(), s["failed"].as_u64()),
        (Some(2), Some(2)),
        "{s}"
    );
    a.close(0u32.into(), b"done");
    b.close(0u32.into(), b"done");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_names_no_host_gets_the_fallback_certificate() {
    let dir = temp_dir("transparent-no-sni");
    let (origin, origin_pin, _origin, events) = start_origin(&dir, "origin");
    let c = Gw::start(&dir, &origin_pin, "127.0.0.0/8");
    let to = origin.to_string();
    let st = c.st("st", &to).await;
    // an IP address as the name: rustls sends no SNI; the key alone is checked
    let (_e, conn) = c.client(&st, "127.0.0.1").await;
    let certs = conn
        .peer_identity()
        .unwrap()
        .downcast::<Vec<rustls::pki_types::CertificateDer<'static>>>()
        .unwrap();
    let fallback = cert::read_certs(&c.st_cert.join("cert.pem"), "st").unwrap();
    assert_eq!(certs[0], fallback[0], "--cert itself");
    // Proxy-GW dials the origin by its address, without a name
    assert_eq!(ask(&conn, "hi").await.unwrap(), "-:hi");
    events.wait_for("conn -").await;
    st.wait_log(&format!("to {to} name=- ")).await;
    conn.close(0u32.into(), b"done");
}
