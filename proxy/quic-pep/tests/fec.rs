//! `--fec`'s socket under real quinn endpoints on loopback: the sender's
//! socket below drops every 7th datagram it is given (a lossy hop). With
//! the code at both ends, every lost source is rebuilt at the receiver
//! before quinn misses it, and the sender declares a tenth as many packets
//! lost as without it (where each drop is a loss and a retransmission).

mod common;

use std::fmt;
use std::io::{self, IoSliceMut};
use std::net::{Ipv4Addr, SocketAddr};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use common::*;
use quinn::udp::{RecvMeta, Transmit};
use quinn::{AsyncUdpSocket, UdpPoller};
use satbench_quic_pep::fec::socket::{FecOnHop, FecSocket};
use satbench_quic_pep::tls;
use satbench_transport::testkit::temp_dir;

/// A socket that loses every `every`-th datagram it is asked to send.
struct Lossy {
    inner: Arc<dyn AsyncUdpSocket>,
    every: u64,
    sent: AtomicU64,
    dropped: AtomicU64,
}

impl fmt::Debug for Lossy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Lossy").finish_non_exhaustive()
    }
}

impl AsyncUdpSocket for Lossy {
    fn create_io_poller(self: Arc<Self>) -> Pin<Box<dyn UdpPoller>> {
        self.inner.clone().create_io_poller()
    }
    fn try_send(&self, t: &Transmit) -> io::Result<()> {
        assert!(t.segment_size.is_none(), "one datagram per transmit");
        if (self.sent.fetch_add(1, Relaxed) + 1).is_multiple_of(self.every) {
            self.dropped.fetch_add(1, Relaxed);
            return Ok(());
        }
        self.inner.try_send(t)
    }
    fn poll_recv(
        &self,
        cx: &mut Context,
        bufs: &mut [IoSliceMut<'_>],
        meta: &mut [RecvMeta],
    ) -> Poll<io::Result<usize>> {
        self.inner.poll_recv(cx, bufs, meta)
    }
    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.inner.local_addr()
    }
}

fn udp() -> Arc<dyn AsyncUdpSocket> {
    let s = std::net::UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    quinn::default_runtime()
        .unwrap()
        .wrap_udp_socket(s)
        .unwrap()
}

fn endpoint(
    socket: Arc<dyn AsyncUdpSocket>,
    server: Option<quinn::ServerConfig>,
) -> quinn::Endpoint {
    quinn::Endpoint::new_with_abstract_socket(
        quinn::EndpointConfig::default(),
        server,
        socket,
        quinn::default_runtime().unwrap(),
    )
    .unwrap()
}

const BYTES: usize = 2_000_000;

/// What one 2 MB download over the lossy hop cost: the server's lost
/// packets, the datagrams the hop dropped, and each FEC socket's counters.
struct Run {
    lost: u64,
    dropped: u64,
    server_fec: Option<serde_json::Value>,
    client_fec: Option<serde_json::Value>,
}

async fn download(fec: Option<&str>) -> Run {
    let dir = temp_dir("quic-pep-fec");
    let certs = gen_cert(&dir, "hop.test");
    let server_tls = tls::server_tls(&certs.join("cert.pem"), &certs.join("key.pem")).unwrap();
    let mut server =
        quinn::ServerConfig::with_crypto(tls::with_alpn(&server_tls, vec![b"t".to_vec()]));
    let on_hop = fec.map(|s| FecOnHop {
        setting: s.parse().unwrap(),
        // the decoder holds a window one hop round trip: long enough that a
        // busy machine's scheduling delays do not drop one before its repair
        hop_rtt: Duration::from_millis(200),
    });
    // A loopback round trip (tens of µs) is shorter than a window takes to
    // fill while the sender waits for acks, so 9/8 of it (RFC 9002's time
    // threshold) would call a packet lost before its repair could come; on
    // a satellite hop it is hundreds of ms. Both runs get the slack.
    let mut t = quinn::TransportConfig::default();
    t.time_threshold(100.0);
    if let Some(h) = on_hop {
        // as quic-pep's side with --fec: a rebuilt packet is up to a window late
        t.packet_threshold(h.setting.n() as u32);
    }
    server.transport_config(Arc::new(t));
    let lossy = Arc::new(Lossy {
        inner: udp(),
        every: 7,
        sent: AtomicU64::new(0),
        dropped: AtomicU64::new(0),
    });
    let (server_socket, server_fec): (Arc<dyn AsyncUdpSocket>, _) = match on_hop {
        Some(h) => {
            let f = FecSocket::new(lossy.clone(), h).unwrap();
            (f.clone(), Some(f))
        }
        None => (lossy.clone(), None),
    };
    let (client_socket, client_fec): (Arc<dyn AsyncUdpSocket>, _) = match on_hop {
        Some(h) => {
            let f = FecSocket::new(udp(), h).unwrap();
            (f.clone(), Some(f))
        }
        None => (udp(), None),
    };
    let server_ep = endpoint(server_socket, Some(server));
    let addr = server_ep.local_addr().unwrap();
    let mut client_tls =
        tls::client_tls(tls::load_pinned(&certs.join("cert.pem")).unwrap()).unwrap();
    client_tls.alpn_protocols = vec![b"t".to_vec()];
    let quic = quinn::crypto::rustls::QuicClientConfig::try_from(client_tls).unwrap();
    let client_ep = endpoint(client_socket, None);
    // At most 64 kB in flight: past the socket's receive buffer, loopback
    // would drop whole bursts the hop never did.
    let mut client = quinn::ClientConfig::new(Arc::new(quic));
    let mut t = quinn::TransportConfig::default();
    t.receive_window(quinn::VarInt::from_u32(64 << 10));
    t.stream_receive_window(quinn::VarInt::from_u32(64 << 10));
    client.transport_config(Arc::new(t));
    let serve = tokio::spawn(async move {
        let conn = server_ep.accept().await.unwrap().await.unwrap();
        let mut send = conn.open_uni().await.unwrap();
        send.write_all(&vec![7u8; BYTES]).await.unwrap();
        send.finish().unwrap();
        let _ = send.stopped().await;
        let lost = conn.stats().path.lost_packets;
        conn.close(0u32.into(), b"");
        server_ep.wait_idle().await;
        lost
    });
    let got = tokio::time::timeout(T, async {
        let conn = client_ep
            .connect_with(client, addr, "hop.test")
            .unwrap()
            .await
            .unwrap();
        let mut recv = conn.accept_uni().await.unwrap();
        recv.read_to_end(BYTES + 1).await.unwrap()
    })
    .await
    .expect("the download took over 10 s");
    assert_eq!(got, vec![7u8; BYTES], "the bytes crossed whole");
    let lost = tokio::time::timeout(T, serve).await.unwrap().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    Run {
        lost,
        dropped: lossy.dropped.load(Relaxed),
        server_fec: server_fec.map(|f| f.json()),
        client_fec: client_fec.map(|f| f.json()),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_code_rebuilds_the_hops_losses_before_quic_sees_them() {
    let plain = download(None).await;
    assert!(plain.dropped > 100, "the hop dropped {}", plain.dropped);
    assert!(plain.lost > 0, "without the code quinn lost nothing?");

    // one drop in 7 is at most one in a window of 8 sources and 2 repairs
    let coded = download(Some("8/10")).await;
    assert!(coded.dropped > 100, "the hop dropped {}", coded.dropped);
    // the sources were all rebuilt (below); what quinn still calls lost is
    // a rebuilt packet that came after its timer, far fewer than the drops
    assert!(
        coded.lost * 10 <= plain.lost,
        "quinn lost {} with the code, {} without",
        coded.lost,
        plain.lost
    );
    let sent = &coded.server_fec.unwrap()["sent"];
    let received = &coded.client_fec.unwrap()["received"];
    assert!(sent["repair_packets"].as_u64().unwrap() > 0, "{sent}");
    // every drop was a source or a repair; the sources among them were rebuilt
    let repaired = received["repaired"].as_u64().unwrap();
    assert!(repaired > 0 && repaired <= coded.dropped, "{received}");
    let sources = received["delivered"].as_u64().unwrap() + repaired;
    assert_eq!(
        sources,
        sent["source_packets"].as_u64().unwrap(),
        "{received}"
    );
    assert_eq!(received["lost"], 0, "{received}");
    assert_eq!(received["malformed"], 0, "{received}");
}
