//! Proxy-ST as a MASQUE client (`--masque-via`) in front of Proxy-GW's
//! CONNECT-UDP listener, over loopback: `--masque-to` stands in for the
//! original destination TPROXY would report (the real interception is
//! test/integration/h3-masque-pageload.test.js's). Each client flow gets
//! its own proxying request on the one HTTP/3 connection, its datagrams
//! round-trip to a UDP echo origin, the answers come from the origin's own
//! address (Proxy-ST's socket for the flow is bound to it), idle flows end
//! and close their requests, and a refusal fails only its flow. Over a
//! lossy hop between them, `--masque-mode stream` delivers every datagram
//! in order where `datagram` loses some.

mod common;

use std::net::{Ipv4Addr, SocketAddr};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

use common::*;
use satbench_transport::testkit::temp_dir;
use tokio::net::UdpSocket;

/// Proxy-ST as Proxy-GW's MASQUE client, every flow taken as sent to `to`.
fn st(dir: &Path, gw: SocketAddr, to: SocketAddr, idle_ms: &str) -> Pep {
    st_with(dir, gw, to, idle_ms, &[])
}

/// As `st`, with `extra` arguments.
fn st_with(dir: &Path, gw: SocketAddr, to: SocketAddr, idle_ms: &str, extra: &[&str]) -> Pep {
    let via = gw.to_string();
    let ca = dir.join("gw.test").join("cert.pem");
    let to = to.to_string();
    let args = [
        &[
            "--role",
            "st",
            "--masque-via",
            &via,
            "--next-hop-name",
            "gw.test",
            "--next-hop-ca",
            ca.to_str().unwrap(),
            "--masque-to",
            &to,
            "--masque-idle-ms",
            idle_ms,
        ][..],
        extra,
    ]
    .concat();
    Pep::start_args(dir, "st", &args)
}

/// Sends `payload` to `st` and waits for the answer: its bytes and sender.
async fn round_trip(c: &UdpSocket, st: SocketAddr, payload: &[u8]) -> (Vec<u8>, SocketAddr) {
    c.send_to(payload, st).await.unwrap();
    let mut buf = vec![0u8; 65536];
    let (n, from) = tokio::time::timeout(T, c.recv_from(&mut buf))
        .await
        .expect("an answer")
        .unwrap();
    (buf[..n].to_vec(), from)
}

async fn client() -> UdpSocket {
    UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap()
}

#[tokio::test]
async fn each_flow_is_a_proxying_request_answered_from_the_origins_address() {
    let dir = temp_dir("masque-client");
    let (gw, at) = masque_gw(&dir, &["--masque-allow", "127.0.0.1"]);
    let (origin, peers) = echo("o:").await;
    let st = st(&dir, at, origin, "600");
    st.wait_log("masque connection 1 to ").await;
    let (a, b) = (client().await, client().await);
    // Chromium's packets are up to about 1350 bytes
    for (i, n) in [1usize, 100, 1200, 1350].into_iter().enumerate() {
        for c in [&a, &b] {
            let payload: Vec<u8> = (0..n).map(|k| (i + k) as u8).collect();
            let (back, from) = round_trip(c, st.addr, &payload).await;
            assert_eq!(back, [&b"o:"[..], &payload].concat(), "size {n}");
            assert_eq!(from, origin, "the answer comes from the origin's address");
        }
    }
    // the origin sees Proxy-GW's sockets, one per flow, never the clients
    let seen = peers.lock().unwrap().clone();
    let mut socks = seen.clone();
    socks.sort();
    socks.dedup();
    assert_eq!(socks.len(), 2, "{seen:?}");
    for c in [&a, &b] {
        assert!(!seen.contains(&c.local_addr().unwrap()));
    }
    let s = st.stats().await;
    let m = &s["masque"];
    assert_eq!(s["mode"], "masque-client");
    assert_eq!(m["connections"], 1, "one HTTP/3 connection: {m}");
    assert_eq!(
        (m["requests"].clone(), m["proxied"].clone()),
        (2.into(), 2.into())
    );
    assert_eq!(m["active"], 2);
    assert_eq!(m["datagrams"]["up"], 8);
    assert_eq!(m["datagrams"]["down"], 8);
    assert_eq!(m["bytes"]["up"], 2 * (1 + 100 + 1200 + 1350));
    assert_eq!(m["bytes"]["down"], 2 * (3 + 102 + 1202 + 1352));
    assert_eq!(m["dropped"], 0);
    let g = gw.stats().await;
    assert_eq!(g["masque"]["proxied"], 2);
    assert_eq!(g["masque"]["datagrams"]["up"], 8);
    assert_eq!(g["masque"]["dropped"], 0);
    // quiet flows end: Proxy-ST closes their requests, and Proxy-GW sees it
    st.wait_log("closed by idle up=4 down=4").await;
    gw.wait_log(" closed by client ").await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let m = st.stats().await["masque"].clone();
    assert_eq!(
        (m["active"].clone(), m["closed_idle"].clone()),
        (0.into(), 2.into())
    );
    assert_eq!(gw.stats().await["masque"]["active"], 0);
    // the same client again is a new flow, with a new request
    let (back, from) = round_trip(&a, st.addr, b"again").await;
    assert_eq!((back.as_slice(), from), (&b"o:again"[..], origin));
    assert_eq!(st.stats().await["masque"]["requests"], 3);
}

#[tokio::test]
async fn a_refused_request_fails_its_flow_with_proxy_gws_reason() {
    let dir = temp_dir("masque-client-refused");
    // the origin is on loopback, which this Proxy-GW may not reach
    let (gw, at) = masque_gw(&dir, &["--masque-allow", "10.0.0.0/8"]);
    let (origin, peers) = echo("o:").await;
    let st = st(&dir, at, origin, "5000");
    st.wait_log("masque connection 1 to ").await;
    let c = client().await;
    c.send_to(b"anyone?", st.addr).await.unwrap();
    st.wait_log("failed: Proxy-GW answered 403 (gw;error=destination_ip_prohibited")
        .await;
    let m = st.stats().await["masque"].clone();
    assert_eq!(m["refused"], serde_json::json!({"403": 1}));
    assert_eq!(
        (m["proxied"].clone(), m["failed"].clone()),
        (0.into(), 1.into())
    );
    assert!(peers.lock().unwrap().is_empty());
    gw.wait_log("refused 403").await;
    // Proxy-ST sent the datagram with its request, before the answer (kept
    // for it, or come after the refusal): it went nowhere, counted
    let end = std::time::Instant::now() + T;
    let g = loop {
        let g = gw.stats().await["masque"].clone();
        if g["dropped"] != 0 || std::time::Instant::now() > end {
            break g;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(
        (g["datagrams"]["up"].clone(), g["dropped"].clone()),
        (0.into(), 1.into()),
        "{g}"
    );
}

#[tokio::test]
async fn with_fec_the_tunnel_between_them_is_coded_both_ways() {
    let dir = temp_dir("masque-client-fec");
    let fec = ["--fec", "4/6", "--fec-hop-rtt-ms", "200"];
    let (gw, at) = masque_gw(&dir, &[&["--masque-allow", "127.0.0.1"][..], &fec].concat());
    let (origin, _) = echo("o:").await;
    let st = st_with(&dir, at, origin, "5000", &fec);
    st.wait_log("masque connection 1 to ").await;
    let c = client().await;
    for n in [1usize, 1200, 1350] {
        let payload = vec![7u8; n];
        let (back, from) = round_trip(&c, st.addr, &payload).await;
        assert_eq!((back.len(), from), (n + 2, origin));
    }
    // Proxy-ST codes what it sends Proxy-GW and decodes what comes back;
    // Proxy-GW codes its --listen and its --masque-listen
    let s = st.stats().await["fec"].clone();
    assert_eq!(
        (s["setting"].clone(), s["sockets"].clone()),
        ("4/6".into(), 1.into()),
        "{s}"
    );
    let g = gw.stats().await["fec"].clone();
    assert_eq!(g["sockets"], 2, "{g}");
    for (what, f) in [("st", &s), ("gw", &g)] {
        assert!(
            f["sent"]["source_packets"].as_u64().unwrap() > 3,
            "{what}: {f}"
        );
        assert!(
            f["sent"]["repair_packets"].as_u64().unwrap() > 0,
            "{what}: {f}"
        );
        assert!(
            f["received"]["source_packets"].as_u64().unwrap() > 3,
            "{what}: {f}"
        );
        assert_eq!(f["received"]["malformed"], 0, "{what}: {f}");
    }
}

/// The satellite hop between Proxy-ST and Proxy-GW, on loopback: a UDP
/// relay to `to` that loses every `every`-th datagram each way (netem-free);
/// where it listens, and how many it lost.
async fn lossy_hop(to: SocketAddr, every: u64) -> (SocketAddr, Arc<AtomicU64>) {
    let front = Arc::new(UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap());
    let back = Arc::new(UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap());
    back.connect(to).await.unwrap();
    let at = front.local_addr().unwrap();
    let lost = Arc::new(AtomicU64::default());
    let peer = Arc::new(std::sync::Mutex::new(None));
    let lose = move |n: &AtomicU64, lost: &AtomicU64| {
        let drop = (n.fetch_add(1, Relaxed) + 1).is_multiple_of(every);
        if drop {
            lost.fetch_add(1, Relaxed);
        }
        drop
    };
    let (f, b, p, l) = (front.clone(), back.clone(), peer.clone(), lost.clone());
    tokio::spawn(async move {
        let (mut buf, n) = (vec![0u8; 65536], AtomicU64::default());
        while let Ok((len, from)) = f.recv_from(&mut buf).await {
            *p.lock().unwrap() = Some(from);
            if !lose(&n, &l) {
                let _ = b.send(&buf[..len]).await;
            }
        }
    });
    let l = lost.clone();
    tokio::spawn(async move {
        let (mut buf, n) = (vec![0u8; 65536], AtomicU64::default());
        while let Ok(len) = back.recv(&mut buf).await {
            let to = *peer.lock().unwrap();
            if let (Some(to), false) = (to, lose(&n, &l)) {
                let _ = front.send_to(&buf[..len], to).await;
            }
        }
    });
    (at, lost)
}

/// Over a hop that loses every 5th packet, `count` numbered datagrams to
/// the echo origin through Proxy-ST in `mode`: the numbers of the answers
/// as they came, Proxy-ST's masque stats and Proxy-GW's.
async fn through_lossy_hop(
    mode: &str,
    count: u16,
) -> (Vec<u16>, serde_json::Value, serde_json::Value) {
    let dir = temp_dir(&format!("masque-client-lossy-{mode}"));
    let (gw, at) = masque_gw(&dir, &["--masque-allow", "127.0.0.1"]);
    let (hop, lost) = lossy_hop(at, 5).await;
    let (origin, _) = echo("o:").await;
    let st = st_with(&dir, hop, origin, "5000", &["--masque-mode", mode]);
    st.wait_log("masque connection 1 to ").await;
    // room for what a recovered loss releases at once (the default buffer
    // overflows on loopback, and the test would blame the tunnel)
    let c = std::net::UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    nix::sys::socket::setsockopt(&c, nix::sys::socket::sockopt::RcvBuf, &(4 << 20)).unwrap();
    c.set_nonblocking(true).unwrap();
    let c = UdpSocket::from_std(c).unwrap();
    for i in 0..count {
        let payload = [&i.to_be_bytes()[..], &[7u8; 200]].concat();
        c.send_to(&payload, st.addr).await.unwrap();
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let mut got = Vec::new();
    let mut buf = vec![0u8; 65536];
    // until a second passes without an answer
    while let Ok(Ok((n, from))) =
        tokio::time::timeout(Duration::from_secs(1), c.recv_from(&mut buf)).await
    {
        assert_eq!((n, from), (2 + 2 + 200, origin), "the origin's answer");
        got.push(u16::from_be_bytes([buf[2], buf[3]]));
    }
    assert!(lost.load(Relaxed) > 10, "the hop lost packets");
    let m = st.stats().await["masque"].clone();
    let g = gw.stats().await["masque"].clone();
    (got, m, g)
}

#[tokio::test]
async fn in_stream_mode_every_datagram_crosses_a_lossy_hop_in_order() {
    let (got, st, gw) = through_lossy_hop("stream", 300).await;
    assert_eq!(got, (0..300).collect::<Vec<_>>());
    assert_eq!(st["mode"], "stream");
    for (what, m) in [("st", &st), ("gw", &gw)] {
        assert_eq!(
            (m["capsules"]["up"].clone(), m["capsules"]["down"].clone()),
            (300.into(), 300.into()),
            "{what}: {m}"
        );
        assert_eq!(
            m["datagrams"],
            serde_json::json!({"up": 0, "down": 0}),
            "{what}: {m}"
        );
        assert_eq!(m["bytes"]["up"], 300 * 202, "{what}: {m}");
        assert_eq!(m["bytes"]["down"], 300 * 204, "{what}: {m}");
    }
}

#[tokio::test]
async fn in_datagram_mode_the_same_lossy_hop_loses_some() {
    let (got, st, gw) = through_lossy_hop("datagram", 300).await;
    assert!(got.len() < 300, "{} of 300 came back", got.len());
    assert!(got.len() > 100, "{} of 300 came back", got.len());
    assert_eq!(st["mode"], "datagram");
    assert_eq!(st["datagrams"]["up"], 300, "{st}");
    assert_eq!(st["capsules"], serde_json::json!({"up": 0, "down": 0}));
    assert_eq!(gw["capsules"], serde_json::json!({"up": 0, "down": 0}));
}
