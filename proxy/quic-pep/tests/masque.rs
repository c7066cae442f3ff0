//! Proxy-GW's CONNECT-UDP listener (`--masque-listen`) over loopback, with an
//! h3 client of ours: two proxying requests on one connection (streams 0
//! and 4) each relayed to its own UDP echo target, HTTP/3 Datagrams routed
//! back by their Quarter Stream ID, a DATAGRAM capsule on the request
//! stream, the refusals with their statuses, the request's end, and the
//! counters. aioquic's client (test/interop/connect_udp_client.py) does the
//! same from an HTTP/3 stack we did not write.

mod common;

use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;

use bytes::{Buf, Bytes};
use common::*;
use satbench_quic_pep::masque::{capsule, datagram};
use satbench_transport::testkit::temp_dir;
use tokio::net::UdpSocket;

type SendRequest = h3::client::SendRequest<h3_quinn::OpenStreams, Bytes>;
type Stream = h3::client::RequestStream<h3_quinn::BidiStream<Bytes>, Bytes>;

struct Client {
    _endpoint: quinn::Endpoint,
    conn: quinn::Connection,
    send: SendRequest,
    _drive: tokio::task::JoinHandle<()>,
}

async fn client(dir: &std::path::Path, at: SocketAddr, datagrams: bool) -> Client {
    let (endpoint, conn) = connect_pinned(
        &dir.join("gw.test"),
        at,
        "gw.test",
        b"h3",
        quinn::TransportConfig::default(),
    )
    .await
    .unwrap();
    let (mut driver, send) = h3::client::builder()
        .enable_extended_connect(true)
        .enable_datagram(datagrams)
        .build::<_, _, Bytes>(h3_quinn::Connection::new(conn.clone()))
        .await
        .unwrap();
    let drive = tokio::spawn(async move {
        let _ = std::future::poll_fn(|cx| driver.poll_close(cx)).await;
    });
    Client {
        _endpoint: endpoint,
        conn,
        send,
        _drive: drive,
    }
}

fn connect_udp(path: &str) -> http::Request<()> {
    http::Request::builder()
        .method(http::Method::CONNECT)
        .uri(format!("https://gw.test{path}"))
        .header("capsule-protocol", "?1")
        .extension(h3::ext::Protocol::CONNECT_UDP)
        .body(())
        .unwrap()
}

fn udp_path(to: SocketAddr) -> String {
    format!("/.well-known/masque/udp/{}/{}/", to.ip(), to.port())
}

async fn open(c: &mut Client, req: http::Request<()>) -> (http::Response<()>, Stream) {
    let mut s = c.send.send_request(req).await.unwrap();
    let resp = tokio::time::timeout(T, s.recv_response())
        .await
        .expect("a response")
        .unwrap();
    (resp, s)
}

async fn body(s: &mut Stream) -> String {
    let mut out = Vec::new();
    while let Ok(Some(mut b)) = s.recv_data().await {
        out.extend_from_slice(&b.copy_to_bytes(b.remaining()));
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The next HTTP/3 Datagram: its stream ID and UDP payload.
async fn next_datagram(conn: &quinn::Connection) -> (u64, Vec<u8>) {
    let frame = tokio::time::timeout(T, conn.read_datagram())
        .await
        .expect("a datagram back")
        .unwrap();
    let d = datagram::decode(&frame).unwrap();
    let (context, udp) = datagram::udp_payload(d.payload).unwrap();
    assert_eq!(context, 0);
    (d.stream_id, udp.to_vec())
}

#[tokio::test]
async fn two_requests_on_one_connection_each_reach_their_own_target() {
    let dir = temp_dir("masque-relay");
    let (gw, at) = masque_gw(&dir, &["--masque-allow", "127.0.0.1"]);
    let (a, a_peers) = echo("a:").await;
    let (b, b_peers) = echo("b:").await;
    let mut c = client(&dir, at, true).await;
    let (resp_a, mut sa) = open(&mut c, connect_udp(&udp_path(a))).await;
    let (resp_b, sb) = open(&mut c, connect_udp(&udp_path(b))).await;
    for r in [&resp_a, &resp_b] {
        assert_eq!(r.status(), 200);
        assert_eq!(r.headers()["capsule-protocol"], "?1");
        assert!(r.headers().get("content-length").is_none());
    }
    let (ida, idb) = (sa.id().into_inner(), sb.id().into_inner());
    assert_eq!((ida, idb), (0, 4), "stream 4 is Quarter Stream ID 1");
    // sizes from empty to a 1100-byte frame with its echo's 2 bytes (below
    // either end's limit before path MTU discovery, about 1160); the
    // Quarter Stream ID and Context ID take a byte each
    let max = 1100 - 4;
    let sizes = [0usize, 1, 100, 1000, max];
    for (i, n) in sizes.iter().enumerate() {
        for (sid, tag) in [(ida, "a:"), (idb, "b:")] {
            let payload: Vec<u8> = (0..*n).map(|k| (i + k) as u8).collect();
            c.conn
                .send_datagram(Bytes::from(datagram::encode_udp(sid, &payload)))
                .unwrap();
            let back = next_datagram(&c.conn).await;
            assert_eq!(back, (sid, [tag.as_bytes(), &payload].concat()), "size {n}");
        }
    }
    // a DATAGRAM capsule on the request stream is relayed too; the answer
    // comes as a datagram (both ends enabled them)
    sa.send_data(Bytes::from(capsule::encode_udp(b"in a capsule")))
        .await
        .unwrap();
    assert_eq!(
        next_datagram(&c.conn).await,
        (ida, b"a:in a capsule".to_vec())
    );
    // the targets see Proxy-GW's sockets, one per request, not the client's
    let (pa, pb) = (
        a_peers.lock().unwrap().clone(),
        b_peers.lock().unwrap().clone(),
    );
    assert!(pa.iter().all(|p| *p == pa[0]) && pb.iter().all(|p| *p == pb[0]));
    assert_ne!(pa[0], pb[0], "a socket per request");
    assert_ne!(pa[0], c._endpoint.local_addr().unwrap());
    // the client ends one request; the other goes on
    sa.finish().await.unwrap();
    gw.wait_log("to 127.0.0.1:").await;
    gw.wait_log(" closed by client ").await;
    c.conn
        .send_datagram(Bytes::from(datagram::encode_udp(idb, b"still")))
        .unwrap();
    assert_eq!(next_datagram(&c.conn).await, (idb, b"b:still".to_vec()));
    let s = gw.stats().await;
    let m = &s["masque"];
    assert_eq!(m["connections"], 1);
    assert_eq!(m["proxied"], 2);
    assert_eq!(m["active"], 1, "{m}");
    assert_eq!(m["capsules"]["up"], 1);
    assert_eq!(m["datagrams"]["up"], 2 * sizes.len() as u64 + 1);
    assert_eq!(m["refused"], serde_json::json!({}));
    drop(sb);
}

#[tokio::test]
async fn refusals_carry_the_status_the_rfcs_give() {
    let dir = temp_dir("masque-refuse");
    let (gw, at) = masque_gw(&dir, &["--masque-allow", "127.0.0.1"]);
    let mut c = client(&dir, at, true).await;
    let cases: Vec<(http::Request<()>, u16, &str)> = vec![
        (connect_udp("/index.html"), 404, "not a UDP proxying path"),
        (
            connect_udp("/.well-known/masque/udp/127.0.0.1/0/"),
            400,
            "1 to 65535",
        ),
        (
            connect_udp("/.well-known/masque/udp/127.0.0.1/"),
            400,
            "expected",
        ),
        (
            connect_udp("/.well-known/masque/udp/10.0.0.1/443/"),
            403,
            "not within --masque-allow 127.0.0.1/32",
        ),
        (connect_udp(&udp_path(at)), 403, "this proxy's own listener"),
        (
            http::Request::builder()
                .method(http::Method::CONNECT)
                .uri("https://gw.test/.well-known/masque/udp/127.0.0.1/9/")
                .extension(h3::ext::Protocol::WEB_TRANSPORT)
                .body(())
                .unwrap(),
            501,
            ":protocol webtransport is not supported",
        ),
        (
            http::Request::builder()
                .method(http::Method::GET)
                .uri("https://gw.test/.well-known/masque/udp/127.0.0.1/9/")
                .body(())
                .unwrap(),
            405,
            "only CONNECT",
        ),
        (
            http::Request::builder()
                .method(http::Method::CONNECT)
                .uri("https://gw.test/.well-known/masque/udp/127.0.0.1/9/")
                .header("capsule-protocol", "yes")
                .extension(h3::ext::Protocol::CONNECT_UDP)
                .body(())
                .unwrap(),
            400,
            "not a Boolean",
        ),
    ];
    let n = cases.len();
    for (req, status, why) in cases {
        let (resp, mut s) = open(&mut c, req).await;
        assert_eq!(resp.status(), status, "{why}");
        assert!(resp.headers().get("capsule-protocol").is_none());
        let text = body(&mut s).await;
        assert!(text.contains(why), "{status}: {text}");
        match status {
            403 => assert!(resp.headers()["proxy-status"]
                .to_str()
                .unwrap()
                .starts_with("gw;error=destination_ip_prohibited;details=")),
            405 => assert_eq!(resp.headers()["allow"], "CONNECT"),
            _ => assert!(resp.headers().get("proxy-status").is_none()),
        }
    }
    // a name that does not resolve: 502 with RFC 9209's dns_error
    let (resp, _) = open(
        &mut c,
        connect_udp("/.well-known/masque/udp/nowhere.invalid/53/"),
    )
    .await;
    assert_eq!(resp.status(), 502);
    assert!(resp.headers()["proxy-status"]
        .to_str()
        .unwrap()
        .contains("error=dns_error"));
    let m = gw.stats().await["masque"].clone();
    assert_eq!(m["requests"], n as u64 + 1);
    assert_eq!(m["proxied"], 0);
    assert_eq!(
        m["refused"],
        serde_json::json!({"400": 3, "403": 2, "404": 1, "405": 1, "501": 1, "502": 1})
    );
    gw.wait_log("refused 403: 10.0.0.1:443 is not within").await;
}

#[tokio::test]
async fn without_h3_datagrams_the_answers_come_as_capsules() {
    let dir = temp_dir("masque-capsules");
    let (gw, at) = masque_gw(&dir, &["--masque-allow", "127.0.0.1"]);
    let (a, _) = echo("a:").await;
    let mut c = client(&dir, at, false).await;
    let (resp, mut s) = open(&mut c, connect_udp(&udp_path(a))).await;
    assert_eq!(resp.status(), 200);
    // the client did not send SETTINGS_H3_DATAGRAM: it speaks capsules only
    s.send_data(Bytes::from(capsule::encode_udp(b"one")))
        .await
        .unwrap();
    let mut r = capsule::Reader::default();
    let got = loop {
        if let Some(c) = r.pop().unwrap() {
            break c;
        }
        let mut b = tokio::time::timeout(T, s.recv_data())
            .await
            .expect("a capsule back")
            .unwrap()
            .expect("data");
        r.push(&b.copy_to_bytes(b.remaining()));
    };
    assert_eq!(got, capsule::Capsule::Udp(b"a:one".to_vec()));
    let m = gw.stats().await["masque"].clone();
    assert_eq!(m["capsules"]["up"], 1);
    assert_eq!(m["capsules"]["down"], 1);
    assert_eq!(m["datagrams"]["down"], 0);
    // a malformed capsule stream ends the request with H3_MESSAGE_ERROR
    s.send_data(Bytes::from_static(&[0, 0])).await.unwrap();
    gw.wait_log("closed by client: malformed: a DATAGRAM capsule without a Context ID")
        .await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(gw.stats().await["masque"]["active"], 0);
}

#[tokio::test]
async fn a_target_that_refuses_closes_its_request_stream() {
    let dir = temp_dir("masque-unreachable");
    let (gw, at) = masque_gw(&dir, &["--masque-allow", "127.0.0.1"]);
    // a port nobody listens on: the first payload draws an ICMP port unreachable
    let closed = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0))
        .await
        .unwrap()
        .local_addr()
        .unwrap();
    let mut c = client(&dir, at, true).await;
    let (resp, mut s) = open(&mut c, connect_udp(&udp_path(closed))).await;
    assert_eq!(resp.status(), 200, "UDP cannot know before it sends");
    c.conn
        .send_datagram(Bytes::from(datagram::encode_udp(0, b"anyone?")))
        .unwrap();
    // the socket is no longer usable: Proxy-GW ends the request (RFC 9298 §3.1)
    let end = tokio::time::timeout(T, s.recv_data())
        .await
        .expect("the stream ends");
    assert!(matches!(end, Ok(None)), "a FIN, not data or a reset");
    gw.wait_log("closed by target: Connection refused").await;
    let m = gw.stats().await["masque"].clone();
    assert_eq!(
        (m["proxied"].clone(), m["active"].clone()),
        (1.into(), 0.into())
    );
}

/// More proxying requests open at once than quinn's default of 100
/// concurrent bidirectional streams: an archive's page opens a flow per
/// origin and connection, and none may wait for another to end.
#[tokio::test]
async fn more_than_a_hundred_requests_are_open_at_once() {
    const N: usize = 150;
    let dir = temp_dir("masque-many");
    let (gw, at) = masque_gw(&dir, &["--masque-allow", "127.0.0.1"]);
    let (a, _) = echo("a:").await;
    let mut c = client(&dir, at, true).await;
    let mut streams = Vec::new();
    for i in 1..=N {
        let (resp, s) = tokio::time::timeout(T, open(&mut c, connect_udp(&udp_path(a))))
            .await
            .unwrap_or_else(|_| panic!("request {i} of {N} not opened within {T:?}"));
        assert_eq!(resp.status(), 200, "request {i}");
        streams.push(s);
    }
    // the last one relays too
    let last = streams[N - 1].id().into_inner();
    c.conn
        .send_datagram(Bytes::from(datagram::encode_udp(last, b"last")))
        .unwrap();
    assert_eq!(next_datagram(&c.conn).await, (last, b"a:last".to_vec()));
    assert_eq!(gw.stats().await["masque"]["active"], N as u64);
}
