//! Real QUIC over loopback: a quinn client → quic-pep (ST) → quic-pep (GW)
//! → a scripted quinn server. Checks that stream IDs, data, FIN,
//! RESET_STREAM, STOP_SENDING and CONNECTION_CLOSE cross both proxies with
//! their codes, in both handshake modes; that the caps and garbage
//! datagrams are handled; and that the proxies free their connections.

use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use quinn::{ConnectionError, ReadError, VarInt, WriteError};
use satbench_quic_pep::tls;
use satbench_transport::testkit::{self, free_udp_port, spawn_ready, temp_dir, Running, Signal};

const T: Duration = Duration::from_secs(10);

/// `DIR/NAME/{cert,key}.pem` for NAME and 127.0.0.1.
fn gen_cert(dir: &Path, name: &str) -> PathBuf {
    testkit::gen_cert(&dir.join(name), name)
}

/// One quic-pep process; killed and reaped on drop.
struct Pep {
    process: Running,
    addr: SocketAddr,
    log: PathBuf,
    stats: PathBuf,
}

impl Pep {
    fn start(
        dir: &Path,
        label: &str,
        certs: &Path,
        next_hop: SocketAddr,
        next_cert: &Path,
        next_name: &str,
        extra: &[&str],
    ) -> Pep {
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, free_udp_port()));
        let log = dir.join(format!("{label}.log"));
        let stats = dir.join(format!("{label}.stats.json"));
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_quic-pep"));
        cmd.args(["--listen", &addr.to_string()])
            .args(["--cert", certs.join("cert.pem").to_str().unwrap()])
            .args(["--key", certs.join("key.pem").to_str().unwrap()])
            .args([
                "--next-hop",
                &next_hop.to_string(),
                "--next-hop-name",
                next_name,
            ])
            .args([
                "--next-hop-ca",
                next_cert.join("cert.pem").to_str().unwrap(),
            ])
            .args([
                "--label",
                label,
                "--log",
                log.to_str().unwrap(),
                "--stats",
                stats.to_str().unwrap(),
            ])
            .args([
                "--accept-side",
                "idle-timeout-ms=5000",
                "--connect-side",
                "idle-timeout-ms=5000",
            ])
            .args(extra)
            .stderr(Stdio::inherit());
        let process = spawn_ready(&mut cmd, T).unwrap_or_else(|e| {
            panic!(
                "{label} did not start ({e}); log: {}",
                std::fs::read_to_string(&log).unwrap_or_default()
            )
        });
        Pep {
            process,
            addr,
            log,
            stats,
        }
    }

    /// Fresh counters (SIGUSR1 makes it write them).
    async fn stats(&self) -> serde_json::Value {
        let before = std::fs::metadata(&self.stats)
            .and_then(|m| m.modified())
            .ok();
        self.process.signal(Signal::USR1);
        let end = Instant::now() + T;
        loop {
            let now = std::fs::metadata(&self.stats)
                .and_then(|m| m.modified())
                .ok();
            if now != before || Instant::now() > end {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        serde_json::from_str(&std::fs::read_to_string(&self.stats).unwrap()).unwrap()
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Waits until the log has `want` (lines are written as things happen,
    /// possibly just after the client saw them).
    async fn wait_log(&self, want: &str) {
        let end = Instant::now() + T;
        while !self.log().contains(want) {
            assert!(
                Instant::now() < end,
                "log never had '{want}': {}",
                self.log()
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    fn alive(&mut self) -> bool {
        self.process.is_running()
    }

    fn stop(mut self) -> std::process::ExitStatus {
        self.process.terminate(T)
    }
}

/// What the scripted server saw, one string per event.
#[derive(Clone, Default)]
struct Events(Arc<Mutex<Vec<String>>>);

impl Events {
    fn push(&self, e: String) {
        self.0.lock().unwrap().push(e);
    }
    fn all(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
    async fn wait_for(&self, want: &str) {
        let end = Instant::now() + T;
        while !self.all().iter().any(|e| e == want) {
            assert!(
                Instant::now() < end,
                "server never saw '{want}'; saw {:?}",
                self.all()
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

/// The server: opens a uni (3) and a bidi (1) stream on each connection;
/// on each client bidi stream, follows the first line:
/// `echo` (echo the rest, FIN), `reset-me N`, `stop-me N`, `flood`,
/// `expect-reset`, `close-conn N`. Client uni streams are read to the end.
async fn server(
    dir: &Path,
    alpn: &[&str],
    transport: quinn::TransportConfig,
) -> (SocketAddr, Events, quinn::Endpoint) {
    let certs = gen_cert(dir, "origin.test");
    let base = tls::server_tls(&certs.join("cert.pem"), &certs.join("key.pem")).unwrap();
    let mut cfg = quinn::ServerConfig::with_crypto(tls::with_alpn(
        &base,
        alpn.iter().map(|a| a.as_bytes().to_vec()).collect(),
    ));
    cfg.transport_config(Arc::new(transport));
    let ep = quinn::Endpoint::server(cfg, (Ipv4Addr::LOCALHOST, 0).into()).unwrap();
    let events = Events::default();
    let (e2, ep2) = (events.clone(), ep.clone());
    tokio::spawn(async move {
        while let Some(i) = ep2.accept().await {
            let events = e2.clone();
            tokio::spawn(async move {
                let Ok(conn) = i.await else { return };
                server_conn(conn, events).await;
            });
        }
    });
    (ep.local_addr().unwrap(), events, ep)
}

async fn server_conn(conn: quinn::Connection, ev: Events) {
    let mut u = conn.open_uni().await.unwrap();
    u.write_all(b"hello-uni").await.unwrap();
    u.finish().unwrap();
    ev.push(format!("opened uni {}", u64::from(u.id())));
    let (mut s, mut r) = conn.open_bi().await.unwrap();
    s.write_all(b"hello-bi").await.unwrap();
    s.finish().unwrap();
    ev.push(format!("opened bi {}", u64::from(s.id())));
    let ev2 = ev.clone();
    tokio::spawn(async move {
        if let Ok(reply) = r.read_to_end(1 << 20).await {
            ev2.push(format!(
                "bi {} reply {}",
                u64::from(r.id()),
                String::from_utf8_lossy(&reply)
            ));
        }
    });
    let (c2, ev2) = (conn.clone(), ev.clone());
    tokio::spawn(async move {
        while let Ok(mut r) = c2.accept_uni().await {
            let ev = ev2.clone();
            tokio::spawn(async move {
                let data = r.read_to_end(1 << 20).await.unwrap_or_default();
                ev.push(format!(
                    "uni {} {}",
                    u64::from(r.id()),
                    String::from_utf8_lossy(&data)
                ));
            });
        }
    });
    let (c2, ev2) = (conn.clone(), ev.clone());
    tokio::spawn(async move {
        while let Ok((s, r)) = c2.accept_bi().await {
            tokio::spawn(server_bi(c2.clone(), s, r, ev2.clone()));
        }
    });
    let e = conn.closed().await;
    ev.push(format!("closed {}", describe(&e)));
}

fn describe(e: &ConnectionError) -> String {
    match e {
        ConnectionError::ApplicationClosed(c) => {
            format!(
                "app {} {}",
                c.error_code,
                String::from_utf8_lossy(&c.reason)
            )
        }
        other => other.to_string(),
    }
}

async fn server_bi(
    conn: quinn::Connection,
    mut s: quinn::SendStream,
    mut r: quinn::RecvStream,
    ev: Events,
) {
    let id = u64::from(s.id());
    let mut buf = Vec::new();
    while !buf.contains(&b'\n') {
        match r.read_chunk(usize::MAX, true).await {
            Ok(Some(c)) => buf.extend_from_slice(&c.bytes),
            _ => return,
        }
    }
    let nl = buf.iter().position(|&b| b == b'\n').unwrap();
    let line = String::from_utf8_lossy(&buf[..nl]).into_owned();
    let rest = buf[nl + 1..].to_vec();
    let arg = |i: usize| -> u32 { line.split(' ').nth(i).unwrap().parse().unwrap() };
    match line.split(' ').next().unwrap() {
        "echo" => {
            s.write_all(&rest).await.unwrap();
            let mut n = rest.len();
            loop {
                match r.read_chunk(usize::MAX, true).await {
                    Ok(Some(c)) => {
                        n += c.bytes.len();
                        s.write_all(&c.bytes).await.unwrap();
                    }
                    Ok(None) => break,
                    Err(e) => {
                        ev.push(format!("bi {id} read error {e}"));
                        return;
                    }
                }
            }
            s.finish().unwrap();
            ev.push(format!("bi {id} echo {n}"));
        }
        "reset-me" => {
            s.write_all(b"partial").await.unwrap();
            tokio::time::sleep(Duration::from_millis(50)).await;
            s.reset(arg(1).into()).unwrap();
            ev.push(format!("bi {id} reset sent"));
        }
        "stop-me" => {
            r.stop(arg(1).into()).unwrap();
            ev.push(format!("bi {id} stop sent"));
            let _ = s.finish();
        }
        "flood" => {
            let chunk = vec![7u8; 16 * 1024];
            loop {
                if let Err(e) = s.write_all(&chunk).await {
                    let what = match e {
                        WriteError::Stopped(code) => format!("stopped {code}"),
                        other => other.to_string(),
                    };
                    ev.push(format!("bi {id} write {what}"));
                    return;
                }
            }
        }
        "expect-reset" => loop {
            match r.read_chunk(usize::MAX, true).await {
                Ok(Some(_)) => {}
                Ok(None) => {
                    ev.push(format!("bi {id} fin"));
                    return;
                }
                Err(ReadError::Reset(code)) => {
                    ev.push(format!("bi {id} reset {code}"));
                    return;
                }
                Err(e) => {
                    ev.push(format!("bi {id} read error {e}"));
                    return;
                }
            }
        },
        "close-conn" => conn.close(arg(1).into(), b"server-bye"),
        other => panic!("unknown command {other}"),
    }
}

async fn client(
    st: &Pep,
    st_cert: &Path,
    alpn: &str,
) -> Result<(quinn::Endpoint, quinn::Connection), ConnectionError> {
    let mut c = tls::client_tls(tls::load_pinned(&st_cert.join("cert.pem")).unwrap()).unwrap();
    c.alpn_protocols = vec![alpn.as_bytes().to_vec()];
    let quic = quinn::crypto::rustls::QuicClientConfig::try_from(c).unwrap();
    let mut cfg = quinn::ClientConfig::new(Arc::new(quic));
    let mut t = quinn::TransportConfig::default();
    t.max_idle_timeout(Some(VarInt::from_u32(5000).into()));
    cfg.transport_config(Arc::new(t));
    let ep = quinn::Endpoint::client((Ipv4Addr::LOCALHOST, 0).into()).unwrap();
    let conn = ep.connect_with(cfg, st.addr, "st.test").unwrap().await?;
    Ok((ep, conn))
}

struct Chain {
    dir: PathBuf,
    st: Pep,
    gw: Pep,
    st_cert: PathBuf,
    events: Events,
    _server: quinn::Endpoint,
}

async fn chain(
    tag: &str,
    st_extra: &[&str],
    gw_extra: &[&str],
    server_alpn: &[&str],
    transport: quinn::TransportConfig,
) -> Chain {
    let dir = temp_dir(tag);
    let (server_addr, events, ep) = server(&dir, server_alpn, transport).await;
    let gw_cert = gen_cert(&dir, "gw.test");
    let st_cert = gen_cert(&dir, "st.test");
    let gw = Pep::start(
        &dir,
        "gw",
        &gw_cert,
        server_addr,
        &dir.join("origin.test"),
        "origin.test",
        &[&["--role", "gw"], gw_extra].concat(),
    );
    let st = Pep::start(
        &dir,
        "st",
        &st_cert,
        gw.addr,
        &gw_cert,
        "gw.test",
        &[&["--role", "st"], st_extra].concat(),
    );
    Chain {
        dir,
        st,
        gw,
        st_cert,
        events,
        _server: ep,
    }
}

async fn read_all(r: &mut quinn::RecvStream) -> Result<Vec<u8>, ReadError> {
    let mut out = Vec::new();
    while let Some(c) = r.read_chunk(usize::MAX, true).await? {
        out.extend_from_slice(&c.bytes);
    }
    Ok(out)
}

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
    let mut u = tokio::time::timeout(T, conn.accept_uni())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(u64::from(u.id()), 3);
    assert_eq!(read_all(&mut u).await.unwrap(), b"hello-uni");
    let (mut s, mut r) = tokio::time::timeout(T, conn.accept_bi())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(u64::from(s.id()), 1);
    assert_eq!(read_all(&mut r).await.unwrap(), b"hello-bi");
    s.write_all(b"thanks").await.unwrap();
    s.finish().unwrap();
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
    let nobody = SocketAddr::from((Ipv4Addr::LOCALHOST, free_udp_port()));
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
    let (code, err) = run(&[
        "--listen",
        "127.0.0.1:1",
        "--cert",
        cert.to_str().unwrap(),
        "--key",
        key.to_str().unwrap(),
        "--next-hop",
        "127.0.0.1:2",
        "--next-hop-name",
        "gw.test",
        "--next-hop-ca",
        "/nonexistent.pem",
    ]);
    assert_eq!(code, Some(2));
    assert!(err.starts_with("--next-hop-ca /nonexistent.pem:"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    // a listen address that is not ours
    let (code, err) = run(&[
        "--listen",
        "192.0.2.1:4433",
        "--cert",
        cert.to_str().unwrap(),
        "--key",
        key.to_str().unwrap(),
        "--next-hop",
        "127.0.0.1:2",
        "--next-hop-name",
        "gw.test",
        "--next-hop-ca",
        cert.to_str().unwrap(),
    ]);
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
