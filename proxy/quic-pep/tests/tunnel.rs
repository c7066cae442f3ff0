//! The standing tunnel (`--tunnel`) over loopback: quinn clients →
//! Proxy-ST ══ one tunnel ══ Proxy-GW → the scripted origin. Many client
//! connections share the tunnel with their own stream IDs; resets and
//! closes stay with their client; the tunnel outlives its clients; bad
//! framing closes the tunnel and is counted; memory returns after 200
//! clients in a row and 20 at once; a dead tunnel keeps the reason it died
//! of when the proxy closes it too.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use quinn::{ReadError, VarInt};
use satbench_quic_pep::tls;
use satbench_quic_pep::tunnel::{close_unless_closed, ALPN, TUNNEL_ERROR};
use satbench_transport::testkit::temp_dir;

async fn tunnel_chain(tag: &str) -> Chain {
    let c = chain(
        tag,
        &["--tunnel"],
        &["--tunnel", "--spare"],
        &["h3"],
        quinn::TransportConfig::default(),
    )
    .await;
    c.st.wait_log("tunnel up to").await;
    c
}

/// One client: echoes on three bidi streams at once, two uni streams, the
/// origin's streams 3 and 1; returns its connection.
async fn busy_client(c: &Chain, n: usize) -> (quinn::Endpoint, quinn::Connection) {
    let (ep, conn) = client(&c.st, &c.st_cert, "h3").await.unwrap();
    let mut echoes = Vec::new();
    for i in 0..3 {
        let (mut s, mut r) = conn.open_bi().await.unwrap();
        assert_eq!(u64::from(s.id()), 4 * i);
        let body = format!("echo\nclient {n} stream {i} ").repeat(500 * (i as usize + 1));
        echoes.push(tokio::spawn(async move {
            s.write_all(body.as_bytes()).await.unwrap();
            s.finish().unwrap();
            let back = read_all(&mut r).await.unwrap();
            assert_eq!(back, body.as_bytes()[5..], "client {n} stream {i}");
        }));
    }
    for (data, id) in [("first", 2u64), ("second", 6)] {
        let mut u = conn.open_uni().await.unwrap();
        assert_eq!(u64::from(u.id()), id);
        u.write_all(format!("{data}-{n}").as_bytes()).await.unwrap();
        u.finish().unwrap();
    }
    origin_streams(&conn, format!("thanks-{n}").as_bytes()).await;
    for e in echoes {
        tokio::time::timeout(T, e).await.unwrap().unwrap();
    }
    c.events.wait_for(&format!("bi 1 reply thanks-{n}")).await;
    (ep, conn)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn many_clients_share_one_tunnel_each_with_its_own_streams_and_ends() {
    let c = tunnel_chain("tunnel-many").await;
    // five clients at once, their streams interleaved on the tunnel
    let c = Arc::new(c);
    let mut clients = Vec::new();
    for n in 0..5 {
        let c = c.clone();
        clients.push(tokio::spawn(async move { busy_client(&c, n).await }));
    }
    let mut conns = Vec::new();
    for h in clients {
        conns.push(h.await.unwrap());
    }
    for n in 0..5 {
        for (data, id) in [("first", 2), ("second", 6)] {
            c.events.wait_for(&format!("uni {id} {data}-{n}")).await;
        }
    }
    // a reset on client 0's stream 12 reaches the origin; client 1 goes on
    let (mut s, _r) = conns[0].1.open_bi().await.unwrap();
    s.write_all(b"expect-reset\nsome data").await.unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    s.reset(VarInt::from_u32(0x77)).unwrap();
    c.events.wait_for("bi 12 reset 119").await;
    // a stream reset before anything was sent still takes its ID (16 at the origin)
    let (mut s, _r) = conns[0].1.open_bi().await.unwrap();
    s.write_all(b"x").await.unwrap();
    s.reset(VarInt::from_u32(0x78)).unwrap();
    let (mut s, mut r) = conns[0].1.open_bi().await.unwrap();
    s.write_all(b"echo\nafter").await.unwrap();
    s.finish().unwrap();
    assert_eq!(read_all(&mut r).await.unwrap(), b"after");
    // the origin resets client 1's stream; client 2 is not disturbed
    let (mut s, mut r) = conns[1].1.open_bi().await.unwrap();
    s.write_all(b"reset-me 85\n").await.unwrap();
    assert_eq!(
        read_all(&mut r).await.unwrap_err(),
        ReadError::Reset(VarInt::from_u32(85))
    );
    // client 0 closes with its code; the others still work
    conns[0].1.close(VarInt::from_u32(42), b"bye");
    c.events.wait_for("closed app 42 bye").await;
    let (mut s, mut r) = conns[2].1.open_bi().await.unwrap();
    s.write_all(b"echo\nstill here").await.unwrap();
    s.finish().unwrap();
    assert_eq!(read_all(&mut r).await.unwrap(), b"still here");
    // the origin closes client 3's connection: only client 3 sees it
    let (mut s, _r) = conns[3].1.open_bi().await.unwrap();
    s.write_all(b"close-conn 7\n").await.unwrap();
    let e = tokio::time::timeout(T, conns[3].1.closed()).await.unwrap();
    assert_eq!(describe(&e), "app 7 server-bye");
    assert!(conns[4].1.close_reason().is_none());
    assert!(conns[2].1.close_reason().is_none());

    let st = c.st.stats().await;
    assert_eq!(st["tunnel"]["opened"], 1, "{st}");
    assert_eq!(st["tunnel"]["up"], true, "{st}");
    assert_eq!(st["tunnel"]["clients"], 5, "{st}");
    assert!(st["tunnel"]["streams"].as_u64().unwrap() >= 5 * 5, "{st}");
    assert!(st["tunnel"]["cwnd"].as_u64().unwrap() > 0, "{st}");
    assert!(st["tunnel"]["handshake_ms"].as_f64().unwrap() > 0.0, "{st}");
    assert_eq!(st["tunnel"]["bad_headers"], 0, "{st}");
    assert_eq!(st["stream_id_mismatches"], 0, "{st}");
    // two by clients, one by the origin, and 0x102 for streams cut short by
    // the origin's close of client 3
    assert!(st["resets_relayed"].as_u64().unwrap() >= 3, "{st}");
    let gw = c.gw.stats().await;
    assert_eq!(gw["tunnel"]["opened"], 1, "{gw}");
    assert_eq!(gw["tunnel"]["clients"], 5, "{gw}");
    assert!(gw["tunnel"]["spares_used"].as_u64().unwrap() >= 1, "{gw}");
    assert!(gw["tunnel"]["streams"].as_u64().unwrap() >= 5 * 2, "{gw}");
    assert_eq!(gw["stream_id_mismatches"], 0, "{gw}");

    // the rest close; the tunnel outlives them and carries a new client
    for (_, conn) in &conns {
        conn.close(VarInt::from_u32(0), b"");
    }
    wait_stats(&c.st, "st frees its clients", |s| s["active"] == 0).await;
    // GW: only the tunnel itself is left
    wait_stats(&c.gw, "gw frees its origin connections", |s| {
        s["active"] == 1
    })
    .await;
    let (_ep, conn) = busy_client(&c, 9).await;
    conn.close(VarInt::from_u32(0), b"");
    let st = wait_stats(&c.st, "st frees the last client", |s| s["active"] == 0).await;
    assert_eq!(st["tunnel"]["opened"], 1, "still the one tunnel: {st}");
    c.st.wait_log("closed by client side (app 0x2a \"bye\")")
        .await;
    c.st.wait_log("closed by next hop (app 0x7 \"server-bye\")")
        .await;
    c.gw.wait_log("closed by next hop (app 0x7 \"server-bye\")")
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_tunnel_headers_close_that_tunnel_and_are_counted() {
    let c = tunnel_chain("tunnel-bad").await;
    let gw_cert = c.dir.join("gw.test");
    for garbage in [&[9u8, 9, 9][..], &[1, 7], &[1, 1, 0, 1]] {
        // a tunnel of our own, straight to GW
        let (_ep, conn) = connect_pinned(&gw_cert, c.gw.addr, "gw.test", ALPN, Default::default())
            .await
            .unwrap();
        let (mut s, _r) = conn.open_bi().await.unwrap();
        s.write_all(garbage).await.unwrap();
        let e = tokio::time::timeout(T, conn.closed()).await.unwrap();
        match e {
            quinn::ConnectionError::ApplicationClosed(a) => {
                assert_eq!(a.error_code, VarInt::from_u32(TUNNEL_ERROR), "{garbage:?}")
            }
            other => panic!("{garbage:?}: {other}"),
        }
    }
    let gw = c.gw.stats().await;
    assert_eq!(gw["tunnel"]["bad_headers"], 3, "{gw}");
    // ST's tunnel was not disturbed
    let (_ep, conn) = busy_client(&c, 0).await;
    conn.close(VarInt::from_u32(0), b"");
    let st = c.st.stats().await;
    assert_eq!(st["tunnel"]["opened"], 1, "{st}");
}

async fn one_echo(c: &Chain, n: usize) {
    let (_ep, conn) = client(&c.st, &c.st_cert, "h3").await.unwrap();
    let (mut s, mut r) = conn.open_bi().await.unwrap();
    let body = format!("echo\n{n} ").repeat(2000);
    s.write_all(body.as_bytes()).await.unwrap();
    s.finish().unwrap();
    assert_eq!(read_all(&mut r).await.unwrap().len(), body.len() - 5);
    conn.close(VarInt::from_u32(0), b"");
}

async fn twenty_at_once(c: &Arc<Chain>) {
    let mut all = Vec::new();
    for n in 0..20 {
        let c = c.clone();
        all.push(tokio::spawn(async move { one_echo(&c, n).await }));
    }
    for h in all {
        h.await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_tunnel_survives_200_in_a_row_and_20_at_once_with_memory_back() {
    let c = Arc::new(tunnel_chain("tunnel-soak").await);
    // The first two rounds warm up the allocators and quinn's buffers; the
    // third must leave the proxies where the second did.
    let mut rounds = Vec::new();
    for _ in 0..3 {
        for n in 0..200 {
            one_echo(&c, n).await;
        }
        twenty_at_once(&c).await;
        wait_stats(&c.st, "st idle", |s| s["active"] == 0).await;
        wait_stats(&c.gw, "gw idle", |s| s["active"] == 1).await;
        // quinn frees a closed connection after its drain period (3 PTO)
        tokio::time::sleep(Duration::from_millis(300)).await;
        rounds.push([usage(&c.st).await, usage(&c.gw).await]);
    }
    let st = wait_stats(&c.st, "st idle", |s| s["active"] == 0).await;
    let gw = wait_stats(&c.gw, "gw idle", |s| s["active"] == 1).await;
    assert_eq!(st["tunnel"]["opened"], 1, "{st}");
    assert_eq!(st["tunnel"]["clients"], 660, "{st}");
    assert_eq!(st["failed"], 0, "{st}");
    assert_eq!(gw["tunnel"]["clients"], 660, "{gw}");
    assert_back([&c.st, &c.gw], rounds[1]).await;
}

/// A tunnel the peer has closed keeps the peer's reason when the proxy
/// closes it too (as it does when the control stream ends with it), so
/// the log names why the tunnel died rather than quinn's "local".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_a_dead_tunnel_keeps_the_reason_it_died_of() {
    let certs = gen_cert(&temp_dir("tunnel-dead"), "gw.test");
    let base = tls::server_tls(&certs.join("cert.pem"), &certs.join("key.pem")).unwrap();
    let (addr, _events, _server) = serve(
        &base,
        &["t"],
        quinn::TransportConfig::default(),
        |conn, _| async move {
            conn.close(VarInt::from_u32(7), b"peer-gone");
            conn.closed().await;
        },
    );
    let (_ep, conn) = connect_pinned(&certs, addr, "gw.test", b"t", Default::default())
        .await
        .unwrap();
    tokio::time::timeout(T, conn.closed()).await.unwrap();
    close_unless_closed(&conn, b"control stream ended");
    match conn.close_reason() {
        Some(quinn::ConnectionError::ApplicationClosed(a)) => {
            assert_eq!(a.error_code, VarInt::from_u32(7));
            assert_eq!(&a.reason[..], b"peer-gone");
        }
        other => panic!("the peer's reason was replaced: {other:?}"),
    }
}

/// One echo on a new bidi stream of `conn`.
async fn echo_on(conn: &quinn::Connection, text: &str) {
    let (mut s, mut r) = conn.open_bi().await.unwrap();
    s.write_all(format!("echo\n{text}").as_bytes())
        .await
        .unwrap();
    s.finish().unwrap();
    assert_eq!(read_all(&mut r).await.unwrap(), text.as_bytes());
}

/// Proxy-GW's origin connections take places of its `--max-connections`,
/// as the tunnel itself does: with 2, the tunnel and one client
/// connection. A second client is refused as the listener refuses one
/// (counted in `refused`, one `cap:` line), its client closed with the
/// reason, until the first has ended.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn origin_connections_are_capped_by_max_connections() {
    let c = chain(
        "tunnel-cap",
        &["--tunnel"],
        &["--tunnel", "--spare", "--max-connections", "2"],
        &["h3"],
        quinn::TransportConfig::default(),
    )
    .await;
    c.st.wait_log("tunnel up to").await;
    let (_ep1, first) = client(&c.st, &c.st_cert, "h3").await.unwrap();
    echo_on(&first, "one").await;
    let (_ep2, second) = client(&c.st, &c.st_cert, "h3").await.unwrap();
    let e = tokio::time::timeout(T, second.closed()).await.unwrap();
    assert_eq!(
        describe(&e),
        "app 258 quic-pep: Proxy-GW: --max-connections 2 reached"
    );
    c.gw.wait_log("cap: --max-connections 2 reached, refusing conn 2")
        .await;
    let gw = c.gw.stats().await;
    assert_eq!(gw["refused"], 1, "{gw}");
    assert_eq!(gw["tunnel"]["clients"], 1, "{gw}");
    assert_eq!(gw["active"], 2, "the tunnel and the first client: {gw}");
    // the first goes on; once it has ended, its place is free again
    echo_on(&first, "still here").await;
    first.close(VarInt::from_u32(0), b"");
    wait_stats(&c.gw, "gw frees the place", |s| s["active"] == 1).await;
    let (_ep3, third) = client(&c.st, &c.st_cert, "h3").await.unwrap();
    echo_on(&third, "three").await;
    let gw = c.gw.stats().await;
    assert_eq!(gw["refused"], 1, "{gw}");
    assert_eq!(gw["tunnel"]["clients"], 2, "{gw}");
}

/// The qlogs in `dir` whose names start with `label` and end with `side`.
fn qlogs(dir: &std::path::Path, label: &str, side: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(&format!("{label}-")) && n.ends_with(&format!("-{side}.sqlog")))
        .collect();
    names.sort();
    names
}

/// Each dial of the tunnel has its own qlog: Proxy-ST dials again when
/// the tunnel drops (here a stand-in for Proxy-GW closes each tunnel soon
/// after it came up), and the first tunnel's qlog is still there, whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_dial_of_the_tunnel_has_its_own_qlog() {
    let dir = temp_dir("tunnel-qlog-st");
    let qlog = dir.join("qlog");
    let gw_cert = gen_cert(&dir, "gw.test");
    let base = tls::server_tls(&gw_cert.join("cert.pem"), &gw_cert.join("key.pem")).unwrap();
    let (gw, _events, _server) = serve(
        &base,
        &[std::str::from_utf8(ALPN).unwrap()],
        quinn::TransportConfig::default(),
        |conn, _| async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            conn.close(VarInt::from_u32(7), b"again");
            conn.closed().await;
        },
    );
    let st_cert = gen_cert(&dir, "st.test");
    let q = qlog.to_str().unwrap();
    let st = Pep::start(
        &dir,
        "st",
        &st_cert,
        gw,
        &gw_cert,
        "gw.test",
        &["--role", "st", "--tunnel", "--qlog-dir", q],
    );
    let s = wait_stats(&st, "st dials the tunnel again", |s| {
        s["tunnel"]["opened"].as_u64() >= Some(2)
    })
    .await;
    let dials = s["tunnel"]["dials"].as_u64().unwrap();
    let files = qlogs(&qlog, "st", "nexthop");
    assert!(files.len() as u64 >= dials, "{dials} dials: {files:?}");
    // the first tunnel's holds its packets, flushed once quinn freed it
    let first = qlog.join(&files[0]);
    let end = std::time::Instant::now() + T;
    while !std::fs::read_to_string(&first)
        .unwrap()
        .contains("packet_received")
    {
        assert!(
            std::time::Instant::now() < end,
            "{}: empty",
            first.display()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Proxy-GW, too, gives each tunnel it accepts its own qlog.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_tunnel_proxy_gw_accepts_has_its_own_qlog() {
    let dir = temp_dir("tunnel-qlog-gw");
    let qlog = dir.join("qlog");
    let q = qlog.to_str().unwrap();
    let c = chain(
        "tunnel-qlog-gw",
        &["--tunnel"],
        &["--tunnel", "--qlog-dir", q],
        &["h3"],
        quinn::TransportConfig::default(),
    )
    .await;
    c.st.wait_log("tunnel up to").await;
    let gw_cert = c.dir.join("gw.test");
    for _ in 0..2 {
        // a tunnel of our own, straight to GW, closed at once
        let (_ep, conn) = connect_pinned(&gw_cert, c.gw.addr, "gw.test", ALPN, Default::default())
            .await
            .unwrap();
        conn.close(VarInt::from_u32(0), b"");
    }
    let gw = wait_stats(&c.gw, "gw took three tunnels", |s| {
        s["tunnel"]["opened"] == 3
    })
    .await;
    let files = qlogs(&qlog, "gw", "client");
    assert_eq!(files.len(), 3, "{gw}: {files:?}");
}
