//! quinn discards the oldest queued HTTP Datagrams, silently, when a new
//! one finds its connection's datagram queue full; the MASQUE proxies
//! count each such send (`masque.displaced`), so that datagrams lost inside
//! the tunnel show in the record.

mod common;

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use bytes::Bytes;
use common::*;
use satbench_quic_pep::masque::datagram::send_counted;
use satbench_transport::testkit::temp_dir;

// current_thread: the connection's driver cannot send between the sends
#[tokio::test]
async fn a_datagram_sent_into_a_full_queue_is_counted() {
    let dir = temp_dir("quic-pep-dgq");
    let (addr, _events, _server) = server(&dir, &["h3"], quinn::TransportConfig::default()).await;
    let mut t = quinn::TransportConfig::default();
    t.datagram_send_buffer_size(3000);
    let (_ep, conn) = connect_pinned(&dir.join("origin.test"), addr, "origin.test", b"h3", t)
        .await
        .unwrap();
    let displaced = AtomicU64::new(0);
    for _ in 0..10 {
        send_counted(&conn, Bytes::from(vec![7u8; 1000]), &displaced).unwrap();
    }
    // two or three fit in 3000 bytes (as quinn counts a queued datagram);
    // each later one pushed an older one out
    let n = displaced.load(Relaxed);
    assert!((7..=8).contains(&n), "{n}");
    conn.close(0u32.into(), b"");
    let _ = std::fs::remove_dir_all(&dir);
}
