//! Proxy-ST's session tickets: a client that comes back resumes with one,
//! its 0-RTT is accepted, and the connection log (`--conn-log`) says so;
//! over the standing tunnel, a request sent in 0-RTT is carried before the
//! handshake ends and counted as early.

mod common;

use std::net::Ipv4Addr;
use std::sync::Arc;
use std::time::Duration;

use common::*;
use satbench_quic_pep::tls;

/// The connection log's lines once it has `n`, as JSON.
async fn lines(path: &std::path::Path, n: usize) -> Vec<serde_json::Value> {
    for _ in 0..500 {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        if text.lines().count() >= n {
            return text
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect();
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("{path:?} has fewer than {n} lines");
}

/// A client endpoint that trusts Proxy-ST's certificate (in `st_cert`),
/// asks for h3, and sends early data when a ticket allows it.
fn early_data_client(st_cert: &std::path::Path) -> quinn::Endpoint {
    let mut tls = tls::client_tls(tls::load_pinned(&st_cert.join("cert.pem")).unwrap()).unwrap();
    tls.alpn_protocols = vec![b"h3".to_vec()];
    tls.enable_early_data = true;
    let quic = quinn::crypto::rustls::QuicClientConfig::try_from(tls).unwrap();
    let mut ep = quinn::Endpoint::client((Ipv4Addr::LOCALHOST, 0).into()).unwrap();
    ep.set_default_client_config(quinn::ClientConfig::new(Arc::new(quic)));
    ep
}

/// A first connection to `st` from `ep` (for its tickets), closed; then a
/// second one in 0-RTT, and whether the server accepted it.
async fn come_back_in_0rtt(
    ep: &quinn::Endpoint,
    st: std::net::SocketAddr,
) -> (quinn::Connection, quinn::ZeroRttAccepted) {
    let first = ep.connect(st, "st.test").unwrap().await.unwrap();
    // the tickets come right after the handshake
    tokio::time::sleep(Duration::from_millis(200)).await;
    first.close(0u32.into(), b"");
    let Ok(second) = ep.connect(st, "st.test").unwrap().into_0rtt() else {
        panic!("no ticket that allows 0-RTT");
    };
    second
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_returning_client_resumes_and_its_0rtt_is_accepted() {
    let conns = std::env::temp_dir().join(format!("quic-pep-conns-{}.log", std::process::id()));
    let _ = std::fs::remove_file(&conns);
    let st_flags = ["--conn-log", conns.to_str().unwrap()];
    let c = chain(
        "resume",
        &st_flags,
        &[],
        &["h3"],
        quinn::TransportConfig::default(),
    )
    .await;
    let ep = early_data_client(&c.st_cert);
    tokio::time::timeout(T, async {
        let (second, accepted) = come_back_in_0rtt(&ep, c.st.addr).await;
        assert!(accepted.await, "0-RTT refused");
        second.close(0u32.into(), b"");
    })
    .await
    .expect("connections took over 10 s");
    let l = lines(&conns, 2).await;
    let facts = |l: &serde_json::Value| {
        ["handshake", "protocol"]
            .map(|k| l[k].as_str().unwrap().to_string())
            .join(" ")
            + &["psk_offered", "early_offered", "early_accepted"]
                .map(|k| format!(" {k}={}", l[k]))
                .concat()
    };
    assert_eq!(
        facts(&l[0]),
        "full h3 psk_offered=false early_offered=false early_accepted=false"
    );
    assert_eq!(
        facts(&l[1]),
        "resumed h3 psk_offered=true early_offered=true early_accepted=true"
    );
    let _ = std::fs::remove_file(&conns);
    std::fs::remove_dir_all(&c.dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_the_tunnel_a_request_in_0rtt_is_carried_and_counted_as_early() {
    let conns = std::env::temp_dir().join(format!("quic-pep-conns-t-{}.log", std::process::id()));
    let _ = std::fs::remove_file(&conns);
    let st_flags = ["--tunnel", "--conn-log", conns.to_str().unwrap()];
    let c = chain(
        "resume-tunnel",
        &st_flags,
        &["--tunnel", "--spare"],
        &["h3"],
        quinn::TransportConfig::default(),
    )
    .await;
    c.st.wait_log("tunnel up to").await;
    let ep = early_data_client(&c.st_cert);
    tokio::time::timeout(T, async {
        let (second, accepted) = come_back_in_0rtt(&ep, c.st.addr).await;
        // sent before the handshake is done: in 0-RTT packets
        let (mut s, mut r) = second.open_bi().await.unwrap();
        s.write_all(b"echo\nin 0-RTT").await.unwrap();
        s.finish().unwrap();
        assert_eq!(read_all(&mut r).await.unwrap(), b"in 0-RTT");
        assert!(accepted.await, "0-RTT refused");
        second.close(0u32.into(), b"");
    })
    .await
    .expect("connections took over 10 s");
    let l = lines(&conns, 2).await;
    assert_eq!(l[0]["early_requests"], 0, "{}", l[0]);
    assert_eq!(
        (
            l[1]["handshake"].as_str(),
            l[1]["early_accepted"].as_bool(),
            l[1]["early_requests"].as_u64()
        ),
        (Some("resumed"), Some(true), Some(1)),
        "{}",
        l[1]
    );
    let _ = std::fs::remove_file(&conns);
    std::fs::remove_dir_all(&c.dir).unwrap();
}
