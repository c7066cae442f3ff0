//! The relay over real loopback sockets: bytes intact both ways, FIN
//! passed on each way (half-close), reset passed on as reset, idle close.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;

use tcp_pep::relay::{relay, Outcome, PumpConfig, Totals};
use tcp_pep::stats::End;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

struct Rig {
    client: TcpStream,
    server: TcpStream,
    relay: tokio::task::JoinHandle<(Outcome, u64, u64)>,
}

/// client ── proxy (relay) ── server, all on 127.0.0.1.
async fn rig(splice: bool, idle_ms: u64) -> Rig {
    let front = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let back = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let client = TcpStream::connect(front.local_addr().unwrap())
        .await
        .unwrap();
    let (pc, _) = front.accept().await.unwrap();
    let ps = TcpStream::connect(back.local_addr().unwrap())
        .await
        .unwrap();
    let (server, _) = back.accept().await.unwrap();
    let relay = tokio::spawn(async move {
        let (up, down, fb) = (AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0));
        let cfg = PumpConfig {
            buf_bytes: 65536,
            splice,
            idle_timeout: Duration::from_millis(idle_ms),
        };
        let o = relay(
            &pc,
            &ps,
            &cfg,
            Totals {
                up: &up,
                down: &down,
                fallbacks: &fb,
            },
        )
        .await;
        assert_eq!(fb.load(Relaxed), 0, "splice fell back to copying");
        (o, up.load(Relaxed), down.load(Relaxed))
    });
    Rig {
        client,
        server,
        relay,
    }
}

fn pattern(n: usize, seed: u8) -> Vec<u8> {
    (0..n)
        .map(|i| (i as u32).wrapping_mul(2654435761).rotate_left(seed as u32) as u8)
        .collect()
}

async fn both_ways_intact(splice: bool) {
    let Rig {
        mut client,
        mut server,
        relay,
    } = rig(splice, 10_000).await;
    let (req, resp) = (pattern(3_000_017, 3), pattern(9_000_011, 7));
    let (req2, resp2) = (req.clone(), resp.clone());
    // The client sends its request and half-closes; the server answers
    // only after it saw the FIN, so the FIN must have been passed on.
    let srv = tokio::spawn(async move {
        let mut got = Vec::new();
        server.read_to_end(&mut got).await.unwrap();
        assert!(got == req2, "request corrupted ({} bytes)", got.len());
        server.write_all(&resp2).await.unwrap();
        server.shutdown().await.unwrap();
    });
    client.write_all(&req).await.unwrap();
    client.shutdown().await.unwrap();
    let mut got = Vec::new();
    client.read_to_end(&mut got).await.unwrap();
    assert!(got == resp, "response corrupted ({} bytes)", got.len());
    srv.await.unwrap();
    let (o, up, down) = relay.await.unwrap();
    assert_eq!(o.end, End::Fin, "{o:?}");
    assert_eq!((o.up, o.down), (req.len() as u64, resp.len() as u64));
    assert_eq!((up, down), (o.up, o.down));
}

#[tokio::test]
async fn splice_carries_both_ways_and_passes_fin_on() {
    both_ways_intact(true).await;
}

#[tokio::test]
async fn copy_carries_both_ways_and_passes_fin_on() {
    both_ways_intact(false).await;
}

#[tokio::test]
async fn a_server_reset_resets_the_client() {
    let Rig {
        mut client,
        server,
        relay,
    } = rig(true, 10_000).await;
    client.write_all(b"GET / HTTP/1.1\r\n\r\n").await.unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    tcp_pep::sys::set_linger_zero(&server).unwrap();
    drop(server); // unread data + linger 0: RST
    let mut buf = [0u8; 16];
    let e = client.read(&mut buf).await.unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::ConnectionReset, "{e}");
    assert_eq!(relay.await.unwrap().0.end, End::Reset);
}

#[tokio::test]
async fn a_client_reset_resets_the_server() {
    let Rig {
        client,
        mut server,
        relay,
    } = rig(true, 10_000).await;
    tcp_pep::sys::set_linger_zero(&client).unwrap();
    drop(client);
    let mut buf = [0u8; 16];
    let e = server.read(&mut buf).await.unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::ConnectionReset, "{e}");
    assert_eq!(relay.await.unwrap().0.end, End::Reset);
}

#[tokio::test]
async fn a_silent_connection_is_closed_after_the_idle_timeout() {
    let Rig {
        mut client,
        mut server,
        relay,
    } = rig(true, 300).await;
    let t0 = std::time::Instant::now();
    let (o, _, _) = tokio::time::timeout(Duration::from_secs(5), relay)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(o.end, End::Idle);
    assert!(
        t0.elapsed() >= Duration::from_millis(250),
        "{:?}",
        t0.elapsed()
    );
    let mut buf = [0u8; 16];
    assert_eq!(client.read(&mut buf).await.unwrap(), 0);
    assert_eq!(server.read(&mut buf).await.unwrap(), 0);
}

#[tokio::test]
async fn a_half_closed_connection_keeps_relaying_the_other_way() {
    let Rig {
        mut client,
        mut server,
        relay,
    } = rig(true, 10_000).await;
    client.shutdown().await.unwrap();
    let mut buf = [0u8; 16];
    assert_eq!(server.read(&mut buf).await.unwrap(), 0, "FIN passed on");
    for _ in 0..5 {
        tokio::time::sleep(Duration::from_millis(20)).await;
        server.write_all(b"still here").await.unwrap();
    }
    drop(server);
    let mut got = Vec::new();
    client.read_to_end(&mut got).await.unwrap();
    assert_eq!(got, b"still here".repeat(5));
    let (o, _, _) = relay.await.unwrap();
    assert_eq!((o.end, o.up, o.down), (End::Fin, 0, 50));
}
