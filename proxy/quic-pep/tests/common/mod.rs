//! What the loopback tests share: quic-pep processes, a scripted quinn
//! origin, a client, and a chain of ST and GW in front of the origin.
#![allow(dead_code)]

use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use quinn::{ConnectionError, ReadError, VarInt, WriteError};
use satbench_quic_pep::tls;
use satbench_transport::testkit::{self, spawn_ready, temp_dir, Running, Signal};

pub const T: Duration = Duration::from_secs(10);

/// `DIR/NAME/{cert,key}.pem` for NAME and 127.0.0.1.
pub fn gen_cert(dir: &Path, name: &str) -> PathBuf {
    testkit::gen_cert(&dir.join(name), name)
}

/// One quic-pep process; killed and reaped on drop.
pub struct Pep {
    pub process: Running,
    /// Where it listens: the address it bound for `--listen 127.0.0.1:0`,
    /// as its start-up line names it, so no two tests can race for a port.
    pub addr: SocketAddr,
    pub log: PathBuf,
    pub stats: PathBuf,
}

impl Pep {
    pub fn start(
        dir: &Path,
        label: &str,
        certs: &Path,
        next_hop: SocketAddr,
        next_cert: &Path,
        next_name: &str,
        extra: &[&str],
    ) -> Pep {
        let next = [
            "--next-hop",
            &next_hop.to_string(),
            "--next-hop-name",
            next_name,
            "--next-hop-ca",
            next_cert.join("cert.pem").to_str().unwrap(),
        ]
        .map(String::from);
        let next: Vec<&str> = next.iter().map(String::as_str).collect();
        Pep::start_with(dir, label, certs, &[&next, extra].concat())
    }

    /// As `start`, with the next hop (or none) among `args`.
    pub fn start_with(dir: &Path, label: &str, certs: &Path, args: &[&str]) -> Pep {
        let tls = [
            "--cert",
            certs.join("cert.pem").to_str().unwrap(),
            "--key",
            certs.join("key.pem").to_str().unwrap(),
        ]
        .map(String::from);
        let tls: Vec<&str> = tls.iter().map(String::as_str).collect();
        Pep::start_args(dir, label, &[&tls, args].concat())
    }

    /// As `start_with`, with no certificate unless `args` give one.
    pub fn start_args(dir: &Path, label: &str, args: &[&str]) -> Pep {
        let log = dir.join(format!("{label}.log"));
        let stats = dir.join(format!("{label}.stats.json"));
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_quic-pep"));
        cmd.args(["--listen", "127.0.0.1:0"])
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
            .args(args)
            .stderr(Stdio::inherit());
        let process = spawn_ready(&mut cmd, T).unwrap_or_else(|e| {
            panic!(
                "{label} did not start ({e}); log: {}",
                std::fs::read_to_string(&log).unwrap_or_default()
            )
        });
        let addr = bound(
            &std::fs::read_to_string(&log).unwrap_or_default(),
            &format!(" {label} listening on "),
        );
        Pep {
            process,
            addr,
            log,
            stats,
        }
    }

    /// Where `--qpep-listen 127.0.0.1:0` listens, as its start-up line says.
    pub fn qpep_addr(&self) -> SocketAddr {
        bound(&self.log(), "qpep listening on ")
    }

    /// Fresh counters (SIGUSR1 makes it write them). A new file is told
    /// by its inode: the proxy writes a temporary file and renames it, and
    /// two writes within one clock tick have the same mtime.
    pub async fn stats(&self) -> serde_json::Value {
        use std::os::unix::fs::MetadataExt;
        let inode = || std::fs::metadata(&self.stats).map(|m| m.ino()).ok();
        let before = inode();
        self.process.signal(Signal::USR1);
        let end = Instant::now() + T;
        loop {
            let now = inode();
            if now != before || Instant::now() > end {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        serde_json::from_str(&std::fs::read_to_string(&self.stats).unwrap()).unwrap()
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Waits until the log has `want` (lines are written as things happen,
    /// possibly just after the client saw them).
    pub async fn wait_log(&self, want: &str) {
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

    pub fn alive(&mut self) -> bool {
        self.process.is_running()
    }

    pub fn stop(mut self) -> std::process::ExitStatus {
        self.process.terminate(T)
    }
}

/// The address the latest line of `log` with `what` names right after
/// it (`ADDR/udp`, `ADDR/tcp`): the proxy writes it before `ready`.
pub fn bound(log: &str, what: &str) -> SocketAddr {
    log.lines()
        .rev()
        .find_map(|l| l.split_once(what)?.1.split('/').next()?.parse().ok())
        .unwrap_or_else(|| panic!("no line with '{what}ADDR/' in the log: {log}"))
}

/// A UDP echo server that prefixes its answers with `tag` and remembers
/// who sent to it. Its socket lets another bind its address too
/// (SO_REUSEADDR), as Proxy-ST's MASQUE answers do, connected to their
/// client, when they leave from the origin's address.
pub async fn echo(tag: &'static str) -> (SocketAddr, Arc<Mutex<Vec<SocketAddr>>>) {
    let s = std::net::UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    nix::sys::socket::setsockopt(&s, nix::sys::socket::sockopt::ReuseAddr, &true).unwrap();
    s.set_nonblocking(true).unwrap();
    let s = tokio::net::UdpSocket::from_std(s).unwrap();
    let addr = s.local_addr().unwrap();
    let peers = Arc::new(Mutex::new(Vec::new()));
    let seen = peers.clone();
    tokio::spawn(async move {
        let mut buf = vec![0u8; 65536];
        while let Ok((n, from)) = s.recv_from(&mut buf).await {
            seen.lock().unwrap().push(from);
            let reply = [tag.as_bytes(), &buf[..n]].concat();
            let _ = s.send_to(&reply, from).await;
        }
    });
    (addr, peers)
}

/// Proxy-GW with only the CONNECT-UDP listener in use (certificate
/// `DIR/gw.test`), no origin trust; and where that listener is.
pub fn masque_gw(dir: &Path, extra: &[&str]) -> (Pep, SocketAddr) {
    let certs = gen_cert(dir, "gw.test");
    let args = [
        &[
            "--role",
            "gw",
            "--tunnel",
            "--transparent",
            "--masque-listen",
            "127.0.0.1:0",
        ][..],
        extra,
    ]
    .concat();
    let gw = Pep::start_with(dir, "gw", &certs, &args);
    let masque = bound(&gw.log(), "masque listening on ");
    (gw, masque)
}

/// What the scripted server saw, one string per event.
#[derive(Clone, Default)]
pub struct Events(pub Arc<Mutex<Vec<String>>>);

impl Events {
    pub fn push(&self, e: String) {
        self.0.lock().unwrap().push(e);
    }
    pub fn all(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
    pub async fn wait_for(&self, want: &str) {
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
pub async fn server(
    dir: &Path,
    alpn: &[&str],
    transport: quinn::TransportConfig,
) -> (SocketAddr, Events, quinn::Endpoint) {
    let certs = gen_cert(dir, "origin.test");
    let base = tls::server_tls(&certs.join("cert.pem"), &certs.join("key.pem")).unwrap();
    serve(&base, alpn, transport, server_conn)
}

/// A loopback QUIC server presenting `base` with `alpn`; each connection
/// goes to `each` with the server's events.
pub fn serve<F, Fut>(
    base: &rustls::ServerConfig,
    alpn: &[&str],
    transport: quinn::TransportConfig,
    each: F,
) -> (SocketAddr, Events, quinn::Endpoint)
where
    F: Fn(quinn::Connection, Events) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let mut cfg = quinn::ServerConfig::with_crypto(tls::with_alpn(
        base,
        alpn.iter().map(|a| a.as_bytes().to_vec()).collect(),
    ));
    cfg.transport_config(Arc::new(transport));
    let ep = quinn::Endpoint::server(cfg, (Ipv4Addr::LOCALHOST, 0).into()).unwrap();
    let events = Events::default();
    let (e2, ep2, each) = (events.clone(), ep.clone(), Arc::new(each));
    tokio::spawn(async move {
        while let Some(i) = ep2.accept().await {
            let (events, each) = (e2.clone(), each.clone());
            tokio::spawn(async move {
                let Ok(conn) = i.await else { return };
                each(conn, events).await;
            });
        }
    });
    (ep.local_addr().unwrap(), events, ep)
}

pub async fn server_conn(conn: quinn::Connection, ev: Events) {
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

pub fn describe(e: &ConnectionError) -> String {
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

pub async fn server_bi(
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

pub async fn client(
    st: &Pep,
    st_cert: &Path,
    alpn: &str,
) -> Result<(quinn::Endpoint, quinn::Connection), ConnectionError> {
    let mut t = quinn::TransportConfig::default();
    t.max_idle_timeout(Some(VarInt::from_u32(5000).into()));
    connect_pinned(st_cert, st.addr, "st.test", alpn.as_bytes(), t).await
}

/// A loopback QUIC client that trusts only the certificate in `cert`
/// (a `gen_cert` folder), connected to `addr` as `name` with `alpn`.
pub async fn connect_pinned(
    cert: &Path,
    addr: SocketAddr,
    name: &str,
    alpn: &[u8],
    transport: quinn::TransportConfig,
) -> Result<(quinn::Endpoint, quinn::Connection), ConnectionError> {
    let mut c = tls::client_tls(tls::load_pinned(&cert.join("cert.pem")).unwrap()).unwrap();
    c.alpn_protocols = vec![alpn.to_vec()];
    let quic = quinn::crypto::rustls::QuicClientConfig::try_from(c).unwrap();
    let mut cfg = quinn::ClientConfig::new(Arc::new(quic));
    cfg.transport_config(Arc::new(transport));
    let ep = quinn::Endpoint::client((Ipv4Addr::LOCALHOST, 0).into()).unwrap();
    let conn = ep.connect_with(cfg, addr, name).unwrap().await?;
    Ok((ep, conn))
}

pub struct Chain {
    pub dir: PathBuf,
    pub st: Pep,
    pub gw: Pep,
    pub st_cert: PathBuf,
    pub events: Events,
    pub _server: quinn::Endpoint,
}

pub async fn chain(
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

pub async fn read_all(r: &mut quinn::RecvStream) -> Result<Vec<u8>, ReadError> {
    let mut out = Vec::new();
    while let Some(c) = r.read_chunk(usize::MAX, true).await? {
        out.extend_from_slice(&c.bytes);
    }
    Ok(out)
}

/// The origin's streams `server_conn` opens, uni 3 and bidi 1, arrive with
/// their IDs and data; `reply` goes back on 1 (the server logs it).
pub async fn origin_streams(conn: &quinn::Connection, reply: &[u8]) {
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
    s.write_all(reply).await.unwrap();
    s.finish().unwrap();
}

/// The proxy's stats once `ok` holds (within `T`).
pub async fn wait_stats(
    pep: &Pep,
    what: &str,
    ok: impl Fn(&serde_json::Value) -> bool,
) -> serde_json::Value {
    let end = Instant::now() + T;
    loop {
        let s = pep.stats().await;
        if ok(&s) {
            return s;
        }
        assert!(Instant::now() < end, "{what}: {s}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The proxy's heap (bytes) and live tasks, from its stats.
pub async fn usage(pep: &Pep) -> (u64, u64) {
    let p = &pep.stats().await["process"];
    (
        p["heap_bytes"].as_u64().unwrap(),
        p["tasks"].as_u64().unwrap(),
    )
}

/// How much a soak round may add to a proxy's heap. quinn keeps the
/// receive state of each stream ID a tunnel has allowed, up to 16384 a
/// direction (`tunnel::MAX_STREAMS`), and reuses it after that: until
/// then a round of 220 connections adds about 250 kB. A client kept after
/// it ended (its connections with it) adds about 65 kB: 14 MB a round.
pub const HEAP_SLACK: u64 = 1 << 20;

/// Both proxies (st, gw) back to where a soak round left them (`before`,
/// from `usage`): every task started since has ended (waited for, within
/// `T`) and the heap has grown by less than `HEAP_SLACK`. Prints both for
/// the record.
pub async fn assert_back(peps: [&Pep; 2], before: [(u64, u64); 2]) {
    for ((pep, name), (heap, tasks)) in peps.into_iter().zip(["st", "gw"]).zip(before) {
        let s = wait_stats(pep, &format!("{name}: tasks back to {tasks}"), |s| {
            s["process"]["tasks"].as_u64() <= Some(tasks)
        })
        .await;
        let now = s["process"]["heap_bytes"].as_u64().unwrap();
        assert!(
            now < heap + HEAP_SLACK,
            "{name}: heap {heap} bytes before, {now} after"
        );
        eprintln!("{name}: heap {heap} -> {now} bytes, {tasks} tasks");
    }
}
