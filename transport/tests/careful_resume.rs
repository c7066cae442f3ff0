//! Careful Resume end to end: a quinn server with a `Resumer` sends a
//! client a file through a link of ours on loopback (a UDP relay with a
//! rate, a delay and a drop-tail queue, `Link`). The client's second
//! connection jumps on the same link and validates the jump; over a link at
//! half the rate with a short queue the jump loses packets, Careful Resume
//! retreats, and the transfer completes.

use std::collections::VecDeque;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use quinn::crypto::rustls::{QuicClientConfig, QuicServerConfig};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::PrivateKeyDer;
use satbench_transport::careful_resume::Resumer;
use satbench_transport::cert::{self, SpkiPinned};
use satbench_transport::quic::QuicOptions;
use serde_json::Value;
use tokio::net::UdpSocket;
use tokio::sync::Mutex;
use tokio::time::Instant;

const RTT: Duration = Duration::from_millis(100);
const RATE: u64 = 2_500_000; // 20 Mbit/s, in bytes per second
/// A drop-tail queue of one bandwidth-delay product, as the testbed's
/// profiles have.
const BDP_QUEUE: Duration = RTT;

/// A link between a client and `server` (the client sends to `addr`), on
/// a thread and runtime of its own so that the endpoints' work does not
/// delay it: downstream (server → client) has `rate` and a drop-tail queue
/// that holds `queue` at that rate; both ways take half the RTT.
struct Link {
    addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Link {
    fn drop(&mut self) {
        let _ = self.stop.take().map(|s| s.send(()));
        let _ = self.thread.take().map(|t| t.join());
    }
}

fn link(server: SocketAddr, rate: u64, queue: Duration) -> Link {
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let (tx, rx) = std::sync::mpsc::channel();
    let thread = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let front = Arc::new(UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap());
            let back = Arc::new(UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap());
            tx.send(front.local_addr().unwrap()).unwrap();
            tokio::select! {
                _ = stopped => {}
                _ = relay(front, back, server, rate, queue) => {}
            }
        });
    });
    Link {
        addr: rx.recv().unwrap(),
        stop: Some(stop),
        thread: Some(thread),
    }
}

/// Datagrams waiting for the link, each with when it arrives.
type Waiting = Arc<Mutex<VecDeque<(Instant, Vec<u8>)>>>;

async fn relay(
    front: Arc<UdpSocket>,
    back: Arc<UdpSocket>,
    server: SocketAddr,
    rate: u64,
    queue: Duration,
) {
    let client: Arc<Mutex<Option<SocketAddr>>> = Arc::default();
    let one_way = RTT / 2;
    let limit = queue.as_secs_f64() * rate as f64;
    let up = {
        let (front, back, client) = (front.clone(), back.clone(), client.clone());
        async move {
            let mut buf = vec![0u8; 65536];
            loop {
                let (n, from) = front.recv_from(&mut buf).await.unwrap();
                *client.lock().await = Some(from);
                let (back, data) = (back.clone(), buf[..n].to_vec());
                tokio::spawn(async move {
                    tokio::time::sleep(one_way).await;
                    let _ = back.send_to(&data, server).await;
                });
            }
        }
    };
    let waiting: Waiting = Arc::default();
    let deliver = {
        let (waiting, front, client) = (waiting.clone(), front.clone(), client.clone());
        async move {
            loop {
                let next = waiting.lock().await.pop_front();
                match next {
                    Some((at, data)) => {
                        tokio::time::sleep_until(at).await;
                        if let Some(c) = *client.lock().await {
                            let _ = front.send_to(&data, c).await;
                        }
                    }
                    None => tokio::time::sleep(Duration::from_millis(1)).await,
                }
            }
        }
    };
    let down = async move {
        let mut buf = vec![0u8; 65536];
        // when the link is free again
        let mut free_at = Instant::now();
        loop {
            let (n, _) = back.recv_from(&mut buf).await.unwrap();
            let now = Instant::now();
            let start = free_at.max(now);
            // bytes already waiting for the link
            let backlog = (start - now).as_secs_f64() * rate as f64;
            if backlog + n as f64 > limit {
                continue; // drop-tail
            }
            free_at = start + Duration::from_secs_f64(n as f64 / rate as f64);
            waiting
                .lock()
                .await
                .push_back((free_at + one_way, buf[..n].to_vec()));
        }
    };
    tokio::join!(up, deliver, down);
}

struct Server {
    addr: SocketAddr,
    _endpoint: quinn::Endpoint,
    pin: String,
    log: std::path::PathBuf,
}

/// A server that sends every client `size` bytes on a stream it opens.
fn server(size: usize, tag: &str) -> Server {
    let g = cert::generate(&["localhost".into()], &[Ipv4Addr::LOCALHOST.into()]).unwrap();
    let certs = vec![g.cert_der.clone().into()];
    let key = PrivateKeyDer::from_pem_slice(g.key_pem.as_bytes()).unwrap();
    let mut tls = cert::tls13_server(certs, key, std::path::Path::new("key")).unwrap();
    tls.alpn_protocols = vec![b"cr-test".to_vec()];
    let opts = QuicOptions {
        careful_resume: true,
        bdp_bytes: 1_000_000,
        ..Default::default()
    };
    let mut config =
        quinn::ServerConfig::with_crypto(Arc::new(QuicServerConfig::try_from(tls).unwrap()));
    config.transport_config(Arc::new(opts.transport_config()));
    let log = std::env::temp_dir().join(format!("cr-{tag}-{}.jsonl", std::process::id()));
    let _ = std::fs::remove_file(&log);
    let resumer = Arc::new(Resumer::new(&opts, Some(&log)).unwrap());
    let endpoint =
        quinn::Endpoint::server(config.clone(), (Ipv4Addr::LOCALHOST, 0).into()).unwrap();
    let addr = endpoint.local_addr().unwrap();
    let ep = endpoint.clone();
    tokio::spawn(async move {
        while let Some(incoming) = ep.accept().await {
            let (resumer, config) = (resumer.clone(), config.clone());
            tokio::spawn(async move {
                let conn = resumer.accept(incoming, &config).await.unwrap();
                let mut s = conn.open_uni().await.unwrap();
                s.write_all(&vec![7u8; size]).await.unwrap();
                s.finish().unwrap();
                let _ = s.stopped().await;
            });
        }
    });
    Server {
        addr,
        _endpoint: endpoint,
        pin: g.spki_pin,
        log,
    }
}

/// Connects through `via`, reads the whole stream, closes; returns the
/// bytes read.
async fn fetch(via: SocketAddr, pin: &str) -> usize {
    let mut tls = rustls::ClientConfig::builder_with_provider(cert::provider())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .unwrap()
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(SpkiPinned::new(pin.to_string())))
        .with_no_client_auth();
    tls.alpn_protocols = vec![b"cr-test".to_vec()];
    let mut client = quinn::ClientConfig::new(Arc::new(QuicClientConfig::try_from(tls).unwrap()));
    client.transport_config(Arc::new(
        QuicOptions {
            bdp_bytes: 1_000_000,
            ..Default::default()
        }
        .transport_config(),
    ));
    let mut endpoint = quinn::Endpoint::client((Ipv4Addr::LOCALHOST, 0).into()).unwrap();
    endpoint.set_default_client_config(client);
    let conn = endpoint.connect(via, "localhost").unwrap().await.unwrap();
    let mut s = conn.accept_uni().await.unwrap();
    let data = s.read_to_end(usize::MAX).await.unwrap();
    conn.close(0u32.into(), b"done");
    endpoint.wait_idle().await;
    data.len()
}

/// The log's lines, once the server has written `n` of them.
async fn log_lines(path: &std::path::Path, n: usize) -> Vec<Value> {
    for _ in 0..100 {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        if lines.len() >= n {
            return lines;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{} has fewer than {n} lines", path.display());
}

fn phases(line: &Value) -> Vec<String> {
    line["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            assert_eq!(e["name"], "recovery:careful_resume_phase_updated");
            e["data"]["new"].as_str().unwrap().to_string()
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_returning_client_jumps_to_half_the_saved_capacity_and_validates_it() {
    const SIZE: usize = 2_000_000;
    let s = server(SIZE, "jump");
    let l = link(s.addr, RATE, BDP_QUEUE);
    assert_eq!(fetch(l.addr, &s.pin).await, SIZE);
    assert!(
        std::fs::read_to_string(&s.log)
            .unwrap_or_default()
            .is_empty(),
        "a first connection has no saved path: no line"
    );
    assert_eq!(fetch(l.addr, &s.pin).await, SIZE);
    let line = &log_lines(&s.log, 1).await[0];
    eprintln!("{line}");
    let saved = line["saved_cwnd_bytes"].as_u64().unwrap();
    // the path carried about rate × RTT (250 kB) in a round trip
    assert!((100_000..=400_000).contains(&saved), "{line}");
    assert_eq!(line["jump_bytes"].as_u64().unwrap(), saved / 2, "{line}");
    let rtt = line["rtt_ms"].as_f64().unwrap();
    assert!((90.0..200.0).contains(&rtt), "{line}");
    assert_eq!(line["retreated"], false, "{line}");
    assert_eq!(line["phase_reached"], "normal", "{line}");
    let p = phases(line);
    assert_eq!(p.first().map(String::as_str), Some("unvalidated"), "{line}");
    assert_eq!(p.last().map(String::as_str), Some("normal"), "{line}");
    assert!(!p.contains(&"safe_retreat".to_string()), "{line}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_a_path_at_half_the_rate_the_jump_retreats_and_the_transfer_completes() {
    const SIZE: usize = 2_000_000;
    let s = server(SIZE, "retreat");
    let full = link(s.addr, RATE, BDP_QUEUE);
    assert_eq!(fetch(full.addr, &s.pin).await, SIZE);
    drop(full);
    // half the rate, and a queue shorter than one of quinn's pacing bursts
    // (10 packets): the jump, half the saved window paced over the RTT,
    // cannot pass it whole
    let half = link(s.addr, RATE / 2, Duration::from_millis(5));
    assert_eq!(
        fetch(half.addr, &s.pin).await,
        SIZE,
        "the transfer completes"
    );
    let line = &log_lines(&s.log, 1).await[0];
    eprintln!("{line}");
    assert!(line["jump_bytes"].as_u64().unwrap() > 0, "{line}");
    assert_eq!(line["retreated"], true, "{line}");
    let p = phases(line);
    assert!(p.contains(&"safe_retreat".to_string()), "{line}");
    assert_eq!(
        line["phase_reached"], "normal",
        "the jump's losses recovered: {line}"
    );
}
