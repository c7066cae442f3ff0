//! Real QUIC over loopback: a quinn client → quic-pep (ST) → quic-pep (GW)
//! → a scripted quinn server. Checks that stream IDs, data, FIN,
//! RESET_STREAM, STOP_SENDING and CONNECTION_CLOSE cross both proxies with
//! their codes, in both handshake modes; that the caps and garbage
//! datagrams are handled; and that the proxies free their connections.

mod common;

use std::net::{Ipv4Addr, UdpSocket};
use std::time::{Duration, Instant};

use common::*;
use std::process::Command;

use quinn::{ConnectionError, ReadError, VarInt};
use satbench_quic_pep::tls;
use satbench_transport::testkit::temp_dir;

/// Every stream kind, every stream end, and a client close, through the chain.
async fn relays_everything(mode_flags: &[&str], tag: &str) {
    let qlog = temp_dir(&format!("{tag}-qlog"));
    let st_flags = [mode_flags, &["--qlog-dir", qlog.to_str().unwrap()]].concat();
    let c = chain(
        tag,
        &st_flags,
        mode_flags,
        &["h3"],
        quinn::TransportConfig::default(),
    )
    .await;
    let (_ep, conn) = client(&c.st, &c.st_cert, "h3").await.unwrap();
    let alpn = tls::negotiated_alpn(conn.handshake_data()).unwrap();
    assert_eq!(alpn, b"h3");

    // client-initiated bidi: IDs 0, 4, 8, echoed with FIN
    for (i, want_id) in [0u64, 4, 8].into_iter().enumerate() {
        let (mut s, mut r) = conn.open_bi().await.unwrap();
        assert_eq!(u64::from(s.id()), want_id);
        let body = format!("echo\npayload {i} ").repeat(1000);
        s.write_all(body.as_bytes()).await.unwrap();
        s.finish().unwrap();
        let back = read_all(&mut r).await.unwrap();
        assert_eq!(back.len(), body.len() - 5);
        c.events
            .wait_for(&format!("bi {want_id} echo {}", body.len() - 5))
            .await;
    }
    // client-initiated uni: 2, 6
    for (data, want_id) in [("first", 2u64), ("second", 6)] {
        let mut u = conn.open_uni().await.unwrap();
        assert_eq!(u64::from(u.id()), want_id);
        u.write_all(data.as_bytes()).await.unwrap();
        u.finish().unwrap();
        c.events.wait_for(&format!("uni {want_id} {data}")).await;
    }
    // server-initiated uni (3) and bidi (1) arrive with their IDs
    origin_streams(&conn, b"thanks").await;
    c.events.wait_for("bi 1 reply thanks").await;

    // RESET_STREAM, client → server (stream 12)
    let (mut s, _r) = conn.open_bi().await.unwrap();
    s.write_all(b"expect-reset\nsome data").await.unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    s.reset(VarInt::from_u32(0x77)).unwrap();
    c.events.wait_for("bi 12 reset 119").await;

    // RESET_STREAM, server → client (stream 16)
    let (mut s, mut r) = conn.open_bi().await.unwrap();
    s.write_all(b"reset-me 85\n").await.unwrap();
    let e = read_all(&mut r).await.unwrap_err();
    assert_eq!(e, ReadError::Reset(VarInt::from_u32(85)));

    // STOP_SENDING, server → client (stream 20)
    let (mut s, _r) = conn.open_bi().await.unwrap();
    s.write_all(b"stop-me 102\n").await.unwrap();
    let stopped = tokio::time::timeout(T, s.stopped()).await.unwrap().unwrap();
    assert_eq!(stopped, Some(VarInt::from_u32(102)));

    // STOP_SENDING, client → server (stream 24)
    let (mut s, mut r) = conn.open_bi().await.unwrap();
    s.write_all(b"flood\n").await.unwrap();
    let first = r.read_chunk(1024, true).await.unwrap().unwrap();
    assert!(!first.bytes.is_empty());
    r.stop(VarInt::from_u32(0x99)).unwrap();
    c.events.wait_for("bi 24 write stopped 153").await;

    // the proxies counted it all
    let st = c.st.stats().await;
    assert_eq!(st["connections"], 1, "{st}");
    assert_eq!(st["active"], 1, "{st}");
    assert_eq!(st["streams"]["client_bidi"], 7, "{st}");
    assert_eq!(st["streams"]["client_uni"], 2, "{st}");
    assert_eq!(st["streams"]["server_uni"], 1, "{st}");
    assert_eq!(st["streams"]["server_bidi"], 1, "{st}");
    assert_eq!(st["resets_relayed"], 2, "{st}");
    // 2 asked for, plus STOP_SENDING(0) that quinn sends when the server drops
    // a stream it has not read to the end (16 and 24), relayed too
    let stops = st["stops_relayed"].as_u64().unwrap();
    assert!((2..=4).contains(&stops), "{st}");
    assert_eq!(st["stream_id_mismatches"], 0, "{st}");

    // CONNECTION_CLOSE, client → server
    conn.close(VarInt::from_u32(42), b"bye");
    c.events.wait_for("closed app 42 bye").await;

    // CONNECTION_CLOSE, server → client
    let (_ep2, conn2) = client(&c.st, &c.st_cert, "h3").await.unwrap();
    let (mut s, _r) = conn2.open_bi().await.unwrap();
    s.write_all(b"close-conn 7\n").await.unwrap();
    let e = tokio::time::timeout(T, conn2.closed()).await.unwrap();
    assert_eq!(describe(&e), "app 7 server-bye");

    // both proxies free both connections
    for pep in [&c.st, &c.gw] {
        let end = Instant::now() + T;
        loop {
            let s = pep.stats().await;
            if s["active"] == 0 && s["closed"] == 2 {
                assert_eq!(s["connections"], 2, "{s}");
                assert_eq!(s["closes_relayed"], 2, "{s}");
                break;
            }
            assert!(Instant::now() < end, "connections not freed: {s}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    c.st.wait_log("conn 1 relayed").await;
    c.st.wait_log("conn 1 closed by client side (app 0x2a \"bye\")")
        .await;
    c.st.wait_log("streams=client_bidi:7,server_bidi:1,client_uni:2,server_uni:1")
        .await;
    c.gw.wait_log("conn 2 closed by next hop (app 0x7 \"server-bye\")")
        .await;
    assert!(c.st.stop().success());
    assert!(c.gw.stop().success());
    // one qlog per connection and side
    for name in [
        "st-00001-client.sqlog",
        "st-00001-nexthop.sqlog",
        "st-00002-client.sqlog",
    ] {
        let len = std::fs::metadata(qlog.join(name))
            .map(|m| m.len())
            .unwrap_or(0);
        assert!(len > 100, "{name}: {len} bytes");
    }
    let names: Vec<String> = std::fs::read_dir(&qlog)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 4, "two connections, two sides each: {names:?}");
    std::fs::remove_dir_all(&c.dir).unwrap();
    std::fs::remove_dir_all(&qlog).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn relays_every_stream_and_close_in_parallel_mode() {
    relays_everything(&[], "parallel").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn relays_every_stream_and_close_in_h3_mode() {
    relays_everything(&["--h3"], "h3").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn h3_mode_takes_alpn_and_stream_limits_from_the_far_side() {
    let mut t = quinn::TransportConfig::default();
    t.max_concurrent_bidi_streams(7u32.into());
    t.max_concurrent_uni_streams(5u32.into());
    let flags = ["--h3", "--alpn", "satbulk,h3"];
    let c = chain("limits", &flags, &flags, &["h3"], t).await;
    let (_ep, conn) = client(&c.st, &c.st_cert, "h3").await.unwrap();
    assert_eq!(tls::negotiated_alpn(conn.handshake_data()).unwrap(), b"h3");
    // GW sees the origin's limits; ST sees GW's, which GW copied from the origin.
    let want = "alpn=h3 next_hop_limits=bidi:7,uni:5,";
    c.gw.wait_log(want).await;
    c.st.wait_log(want).await;
    // the client may have 7 bidi streams open at once, not 8
    let mut open = Vec::new();
    for _ in 0..7 {
        open.push(conn.open_bi().await.unwrap());
    }
    assert!(
        tokio::time::timeout(Duration::from_millis(300), conn.open_bi())
            .await
            .is_err()
    );
    // a client that does not speak the far side's protocol is refused
    let e = client(&c.st, &c.st_cert, "satbulk").await.unwrap_err();
    assert!(
        e.to_string().contains("no_application_protocol") || e.to_string().contains("120"),
        "{e}"
    );
    conn.close(0u32.into(), b"");
    std::fs::remove_dir_all(&c.dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refuses_connections_over_the_cap_with_a_log_line() {
    let c = chain(
        "cap",
        &["--max-connections", "1"],
        &[],
        &["h3"],
        quinn::TransportConfig::default(),
    )
    .await;
    let (_ep, conn) = client(&c.st, &c.st_cert, "h3").await.unwrap();
    let e = client(&c.st, &c.st_cert, "h3").await.unwrap_err();
    assert!(matches!(e, ConnectionError::ConnectionClosed(_)), "{e}");
    c.st.wait_log("cap: --max-connections 1 reached, refusing 127.0.0.1:")
        .await;
    let s = c.st.stats().await;
    assert_eq!(s["refused"], 1, "{s}");
    conn.close(0u32.into(), b"");
    std::fs::remove_dir_all(&c.dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_next_hop_that_does_not_answer_fails_the_client_cleanly() {
    let dir = temp_dir("nohop");
    let st_cert = gen_cert(&dir, "st.test");
    let gw_cert = gen_cert(&dir, "gw.test");
    // a port nobody answers on: held, so no other test can take it meanwhile
    let held = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    let nobody = held.local_addr().unwrap();
    for (mode, label) in [(&[][..], "par"), (&["--h3"][..], "h3")] {
        let flags = [mode, &["--connect-side", "idle-timeout-ms=500"]].concat();
        let mut st = Pep::start(&dir, label, &st_cert, nobody, &gw_cert, "gw.test", &flags);
        let r = client(&st, &st_cert, "h3").await;
        match r {
            // parallel: the client got in, then the proxy closed it with the reason
            Ok((_ep, conn)) => {
                let e = tokio::time::timeout(T, conn.closed()).await.unwrap();
                assert!(
                    describe(&e).contains("quic-pep: next hop: idle timeout"),
                    "{e}"
                );
            }
            // --h3: refused before the client's handshake finished
            Err(e) => assert_eq!(label, "h3", "{e}"),
        }
        st.wait_log("failed: next hop: timeout").await;
        let s = st.stats().await;
        assert_eq!(s["failed"], 1, "{s}");
        assert_eq!(s["active"], 0, "{s}");
        assert!(st.alive());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_datagrams_do_not_crash_it_or_leave_state() {
    let c = chain(
        "garbage",
        &[],
        &[],
        &["h3"],
        quinn::TransportConfig::default(),
    )
    .await;
    let sock = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut rnd = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut sent = 0;
    for size in [0usize, 1, 5, 20, 100, 1199, 1200, 1350, 1500, 9000] {
        for first in [0x00u8, 0x40, 0x80, 0xc0, 0xc3, 0xff] {
            for version in [
                [0, 0, 0, 1],
                [0xba, 0xba, 0xba, 0xba],
                [0, 0, 0, 0],
                [0x6b, 0x33, 0x43, 0xcf],
            ] {
                let mut d: Vec<u8> = (0..size).map(|_| rnd() as u8).collect();
                if size > 0 {
                    d[0] = first;
                }
                if size >= 6 {
                    d[1..5].copy_from_slice(&version);
                    d[5] = 8; // a plausible DCID length
                }
                sock.send_to(&d, c.st.addr).unwrap();
                sent += 1;
            }
        }
    }
    assert!(sent > 200);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut st = c.st;
    assert!(st.alive(), "quic-pep died on garbage");
    let s = st.stats().await;
    assert_eq!(s["accepted"], 0, "{s}");
    assert_eq!(s["active"], 0, "{s}");
    // and it still relays
    let (_ep, conn) = client(&st, &c.st_cert, "h3").await.unwrap();
    let (mut s, mut r) = conn.open_bi().await.unwrap();
    s.write_all(b"echo\nstill here").await.unwrap();
    s.finish().unwrap();
    assert_eq!(read_all(&mut r).await.unwrap(), b"still here");
    conn.close(0u32.into(), b"");
    assert!(st.stop().success());
    std::fs::remove_dir_all(&c.dir).unwrap();
}

#[test]
fn errors_are_one_line_and_exit_2() {
    let run = |args: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_quic-pep"))
            .args(args)
            .output()
            .unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let (code, err) = run(&["--listen", "127.0.0.1:1"]);
    assert_eq!(code, Some(2));
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("is required"), "{err}");
    let dir = temp_dir("errors");
    let certs = gen_cert(&dir, "st.test");
    let cert = certs.join("cert.pem");
    let key = certs.join("key.pem");
    // a complete command line but for these two
    let st = |listen: &str, next_hop_ca: &str| {
        run(&[
            "--listen",
            listen,
            "--cert",
            cert.to_str().unwrap(),
            "--key",
            key.to_str().unwrap(),
            "--next-hop",
            "127.0.0.1:2",
            "--next-hop-name",
            "gw.test",
            "--next-hop-ca",
            next_hop_ca,
        ])
    };
    let (code, err) = st("127.0.0.1:1", "/nonexistent.pem");
    assert_eq!(code, Some(2));
    assert!(err.starts_with("--next-hop-ca /nonexistent.pem:"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    // a listen address that is not ours
    let (code, err) = st("192.0.2.1:4433", cert.to_str().unwrap());
    assert_eq!(code, Some(2));
    assert!(err.starts_with("--listen 192.0.2.1:4433:"), "{err}");
    let o = Command::new(env!("CARGO_BIN_EXE_quic-pep"))
        .arg("--help")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stdout).contains("--next-hop-ca"));
    std::fs::remove_dir_all(&dir).unwrap();
}
