//! QPEP over loopback: TCP clients → Proxy-ST (`--qpep-listen`, with
//! `--qpep-to` in place of TPROXY) ══ one tunnel ══ Proxy-GW → a TCP echo
//! server. Each connection is its own tunnel stream: bytes and FINs cross
//! both ways, a reset on one stays with it, a destination that refuses or
//! is not allowed resets the client, and the proxies' memory returns after
//! 200 connections in a row and 20 at once.

mod common;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use common::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// A TCP server that echoes each connection's bytes once the client's FIN
/// arrives, and notes each connection ("accepted") and how it ended
/// ("echoed N" or "reset after N").
async fn echo_server(events: Events) -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = l.accept().await {
            let ev = events.clone();
            ev.push("accepted".into());
            tokio::spawn(async move {
                let mut got = Vec::new();
                match s.read_to_end(&mut got).await {
                    Ok(_) => {
                        s.write_all(&got).await.unwrap();
                        s.shutdown().await.unwrap();
                        ev.push(format!("echoed {}", got.len()));
                    }
                    Err(e) => ev.push(format!("reset after {} ({e})", got.len())),
                }
            });
        }
    });
    addr
}

struct Qpep {
    chain: Chain,
    listen: SocketAddr,
    events: Events,
}

/// A tunnel chain whose Proxy-ST carries TCP to `to` (the echo server by
/// default), with `gw_extra` at Proxy-GW.
async fn qpep_chain(tag: &str, to: Option<SocketAddr>, gw_extra: &[&str]) -> Qpep {
    let events = Events::default();
    let to = match to {
        Some(a) => a,
        None => echo_server(events.clone()).await,
    };
    let t = to.to_string();
    let chain = chain(
        tag,
        &["--tunnel", "--qpep-listen", "127.0.0.1:0", "--qpep-to", &t],
        &[&["--tunnel"], gw_extra].concat(),
        &["h3"],
        quinn::TransportConfig::default(),
    )
    .await;
    chain.st.wait_log("tunnel up to").await;
    Qpep {
        listen: chain.st.qpep_addr(),
        chain,
        events,
    }
}

/// One connection: sends `n` bytes, its FIN, and reads the echo to the end.
async fn echo(listen: SocketAddr, n: usize) -> Vec<u8> {
    let body: Vec<u8> = (0..n).map(|i| (i * 7 + n) as u8).collect();
    let mut s = TcpStream::connect(listen).await.unwrap();
    let (mut r, mut w) = s.split();
    let send = async {
        w.write_all(&body).await.unwrap();
        w.shutdown().await.unwrap();
    };
    let mut back = Vec::new();
    let recv = r.read_to_end(&mut back);
    let (_, got) = tokio::join!(send, recv);
    got.unwrap();
    assert_eq!(back.len(), body.len(), "{n} bytes");
    assert!(back == body, "{n} bytes came back changed");
    back
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn tcp_connections_share_one_tunnel_each_with_its_bytes_fins_and_resets() {
    let q = qpep_chain("qpep-many", None, &["--qpep-allow", "127.0.0.1"]).await;
    // one connection is reset half-way while the others go on
    let mut doomed = TcpStream::connect(q.listen).await.unwrap();
    doomed.write_all(&[7u8; 100_000]).await.unwrap();
    let mut all = Vec::new();
    for i in 0..20 {
        let listen = q.listen;
        all.push(tokio::spawn(async move {
            echo(listen, 1000 + i * 15_000).await
        }));
    }
    q.events.wait_for("echoed 1000").await;
    satbench_transport::tcp::set_linger_zero(&doomed).unwrap();
    drop(doomed);
    for h in all {
        tokio::time::timeout(T, h).await.unwrap().unwrap();
    }
    let end = std::time::Instant::now() + T;
    while !q.events.all().iter().any(|e| e.starts_with("reset after")) {
        assert!(std::time::Instant::now() < end, "{:?}", q.events.all());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let st = wait_stats(&q.chain.st, "st done", |s| s["qpep"]["active"] == 0).await;
    let gw = wait_stats(&q.chain.gw, "gw done", |s| s["qpep"]["active"] == 0).await;
    for s in [&st, &gw] {
        assert_eq!(s["qpep"]["relayed"], 21, "{s}");
        assert_eq!(s["qpep"]["aborted"], 1, "the reset, on both ends: {s}");
        assert_eq!(s["tunnel"]["opened"], 1, "one tunnel: {s}");
    }
    let echoed: u64 = (0..20).map(|i| 1000 + i * 15_000).sum();
    assert_eq!(st["qpep"]["bytes"]["down"], echoed, "{st}");
    assert!(
        st["qpep"]["bytes"]["up"].as_u64().unwrap() >= echoed + 100_000,
        "{st}"
    );
    assert_eq!(st["tunnel"]["streams"], 21, "{st}");
    let done = q.events.all();
    assert_eq!(
        done.iter().filter(|e| e.starts_with("echoed")).count(),
        20,
        "{done:?}"
    );
}

/// Waits until the echo server has accepted `want` connections.
async fn accepted(events: &Events, want: usize) {
    let end = std::time::Instant::now() + T;
    while events.all().iter().filter(|e| *e == "accepted").count() != want {
        assert!(std::time::Instant::now() < end, "{:?}", events.all());
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// `--qpep-spares 3`: after the first connection Proxy-GW keeps three more
/// to the server open; the next connections take them (each once, with
/// its own bytes) and Proxy-GW dials replacements.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn spare_connections_carry_the_next_clients_each_once() {
    let gw = ["--qpep-allow", "127.0.0.1", "--qpep-spares", "3"];
    let q = qpep_chain("qpep-spares", None, &gw).await;
    echo(q.listen, 1000).await;
    accepted(&q.events, 4).await;
    for n in [2000, 3000, 4000] {
        echo(q.listen, n).await;
    }
    accepted(&q.events, 7).await;
    let gw = wait_stats(&q.chain.gw, "gw done", |s| s["qpep"]["active"] == 0).await;
    assert_eq!(gw["qpep"]["spares_used"], 3, "{gw}");
    assert_eq!(gw["qpep"]["relayed"], 4, "{gw}");
    // sorted: the server notes an echo after sending it, so the client's
    // next connection may be noted first
    let mut echoed: Vec<String> = q
        .events
        .all()
        .into_iter()
        .filter(|e| e.starts_with("echoed"))
        .collect();
    echoed.sort();
    assert_eq!(
        echoed,
        ["echoed 1000", "echoed 2000", "echoed 3000", "echoed 4000"]
    );
    assert!(
        q.chain.gw.log().contains(" spare closed"),
        "{}",
        q.chain.gw.log()
    );
}

/// A server that sends 1 MB after reading its client's FIN, then holds the
/// connection open without a word, as a server done sending does.
async fn quiet_server() -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = l.accept().await {
            tokio::spawn(async move {
                let mut req = Vec::new();
                s.read_to_end(&mut req).await.unwrap();
                let _ = s.write_all(&vec![1u8; 1 << 20]).await;
                tokio::time::sleep(Duration::from_secs(3600)).await;
            });
        }
    });
    addr
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_client_that_resets_after_its_fin_ends_the_connection_at_both_proxies() {
    // the pattern of a timed download: request, FIN, read for a while, then
    // close with unread data (RST) while the server is quiet: Proxy-GW
    // learns it only from the STOP_SENDING
    let to = quiet_server().await;
    let q = qpep_chain(
        "qpep-reset-after-fin",
        Some(to),
        &["--qpep-allow", "127.0.0.1"],
    )
    .await;
    let mut s = TcpStream::connect(q.listen).await.unwrap();
    s.write_all(b"send").await.unwrap();
    s.shutdown().await.unwrap();
    let mut got = vec![0u8; 300_000];
    s.read_exact(&mut got).await.unwrap();
    satbench_transport::tcp::set_linger_zero(&s).unwrap();
    drop(s);
    for pep in [&q.chain.st, &q.chain.gw] {
        let s = wait_stats(pep, "the connection ends at both proxies", |s| {
            s["qpep"]["active"] == 0
        })
        .await;
        assert_eq!(s["qpep"]["aborted"], 1, "{s}");
    }
}

/// A connection to a destination that will not have it: the client sees
/// its connection reset, not a clean end.
async fn refused(q: &Qpep) {
    let mut back = Vec::new();
    // on loopback the reset may come before the connect or the write returns
    let e = tokio::time::timeout(T, async {
        let mut s = TcpStream::connect(q.listen).await?;
        s.write_all(b"GET / HTTP/1.1\r\n\r\n").await?;
        s.read_to_end(&mut back).await
    })
    .await
    .unwrap()
    .unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::ConnectionReset, "{e}");
    assert!(back.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_destination_that_refuses_or_is_not_allowed_resets_the_client() {
    // a port nobody listens on: bound, not listening, so it answers a
    // connection with a reset and no other test can take it meanwhile
    let held = tokio::net::TcpSocket::new_v4().unwrap();
    held.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let closed = held.local_addr().unwrap();
    let q = qpep_chain("qpep-refused", Some(closed), &["--qpep-allow", "127.0.0.1"]).await;
    refused(&q).await;
    let gw = wait_stats(&q.chain.gw, "gw", |s| s["qpep"]["failed"] == 1).await;
    assert_eq!(gw["qpep"]["relayed"], 0, "{gw}");
    assert!(q
        .chain
        .gw
        .log()
        .contains(&format!("tcp -> {closed} failed")));
    // the default --qpep-allow is the testbed's 198.18.0.0/15: not loopback
    let q = qpep_chain("qpep-not-allowed", None, &[]).await;
    refused(&q).await;
    let gw = wait_stats(&q.chain.gw, "gw", |s| s["qpep"]["refused"] == 1).await;
    assert_eq!(gw["qpep"]["relayed"], 0, "{gw}");
    assert!(q.chain.gw.log().contains("not in --qpep-allow"));
    let st = q.chain.st.stats().await;
    assert_eq!(st["tunnel"]["opened"], 1, "the tunnel stays up: {st}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_tunnel_carries_200_tcp_connections_in_a_row_and_20_at_once_with_memory_back() {
    let q = Arc::new(qpep_chain("qpep-soak", None, &["--qpep-allow", "127.0.0.1"]).await);
    let mut rounds = Vec::new();
    // The first two rounds warm up the allocators; the third must leave
    // the proxies where the second did.
    for _ in 0..3 {
        for n in 0..200 {
            echo(q.listen, 20_000 + n).await;
        }
        let mut all = Vec::new();
        for n in 0..20 {
            let listen = q.listen;
            all.push(tokio::spawn(async move { echo(listen, 50_000 + n).await }));
        }
        for h in all {
            h.await.unwrap();
        }
        wait_stats(&q.chain.st, "st idle", |s| s["qpep"]["active"] == 0).await;
        wait_stats(&q.chain.gw, "gw idle", |s| s["qpep"]["active"] == 0).await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        rounds.push([usage(&q.chain.st).await, usage(&q.chain.gw).await]);
    }
    let st = q.chain.st.stats().await;
    let gw = q.chain.gw.stats().await;
    for s in [&st, &gw] {
        assert_eq!(s["qpep"]["relayed"], 660, "{s}");
        assert_eq!(s["qpep"]["aborted"], 0, "{s}");
        assert_eq!(s["tunnel"]["opened"], 1, "{s}");
    }
    assert_back([&q.chain.st, &q.chain.gw], rounds[1]).await;
}

/// `--listen` and `--qpep-listen` with port 0: the proxy binds a free port
/// for each, and its start-up lines name the ports it bound. That is how
/// the tests get their proxies' ports without racing each other for one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_port_0_the_start_up_lines_name_the_ports_bound() {
    let dir = satbench_transport::testkit::temp_dir("qpep-port-0");
    let st_cert = gen_cert(&dir, "st.test");
    let gw_cert = gen_cert(&dir, "gw.test");
    // a Proxy-GW that never answers: the tunnel is not needed here
    let held = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let to = echo_server(Events::default()).await.to_string();
    let st = Pep::start(
        &dir,
        "st",
        &st_cert,
        held.local_addr().unwrap(),
        &gw_cert,
        "gw.test",
        &[
            "--role",
            "st",
            "--tunnel",
            "--qpep-listen",
            "127.0.0.1:0",
            "--qpep-to",
            &to,
        ],
    );
    assert_ne!(st.addr.port(), 0);
    let taken = std::net::UdpSocket::bind(st.addr).unwrap_err();
    assert_eq!(taken.kind(), std::io::ErrorKind::AddrInUse, "{}", st.addr);
    let qpep = st.qpep_addr();
    assert_ne!(qpep.port(), 0);
    TcpStream::connect(qpep).await.unwrap();
}
