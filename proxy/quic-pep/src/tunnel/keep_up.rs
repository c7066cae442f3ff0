//! Proxy-ST keeping the tunnel up: dial Proxy-GW at start, keep the tunnel
//! in a `watch` for the client connections (QUIC and QPEP's TCP), and dial
//! again when it drops.

use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::{Duration, Instant};

use quinn::Connection;
use tokio::sync::watch;

use super::{once_some, BoxFuture, End, Tunnel};
use crate::close::Ended;
use crate::log::Log;
use crate::stats::Stats;

/// How long a client connection (QUIC or QPEP's TCP) waits, unanswered,
/// for a tunnel being dialled.
pub const TUNNEL_WAIT: Duration = Duration::from_secs(3);

/// The tunnel once it is up, within `TUNNEL_WAIT`; None if it is not.
pub async fn wait_up(mut current: watch::Receiver<Option<Arc<Tunnel>>>) -> Option<Arc<Tunnel>> {
    tokio::time::timeout(TUNNEL_WAIT, once_some(&mut current))
        .await
        .ok()
        .flatten()
}

/// The wait before dialling again doubles from the first to the last.
pub const RETRY: (Duration, Duration) = (Duration::from_millis(100), Duration::from_secs(2));

/// The next wait after `last`.
pub fn next_retry(last: Option<Duration>) -> Duration {
    last.map_or(RETRY.0, |d| (d * 2).min(RETRY.1))
}

/// Keeps a tunnel up in `current` until the task is dropped. `connect`
/// dials, given the dial's number (from 1: `tunnel.dials`), which names
/// the dial's qlog.
pub async fn keep_up(
    connect: impl Fn(u64) -> BoxFuture<Result<Connection, Ended>>,
    current: watch::Sender<Option<Arc<Tunnel>>>,
    stats: Arc<Stats>,
    log: Arc<Log>,
) {
    let mut wait = None;
    loop {
        let started = Instant::now();
        let dial = stats.tunnel.dials.fetch_add(1, Relaxed) + 1;
        let conn = match connect(dial).await {
            Ok(c) => c,
            Err(e) => {
                let w = next_retry(wait);
                wait = Some(w);
                log.line(&format!(
                    "tunnel: dial failed ({}), again in {} ms",
                    e.describe(),
                    w.as_millis()
                ));
                tokio::time::sleep(w).await;
                continue;
            }
        };
        let handshake = started.elapsed();
        let remote = conn.remote_address();
        let t = match Tunnel::new(conn.clone(), End::St, stats.clone(), log.clone()).await {
            Ok(t) => t,
            Err(e) => {
                log.line(&format!("tunnel: {e}"));
                tokio::time::sleep(next_retry(wait)).await;
                continue;
            }
        };
        wait = None;
        stats.tunnel.up(&conn, handshake);
        log.line(&format!(
            "tunnel up to {remote} handshake_ms={}",
            handshake.as_millis()
        ));
        current.send_replace(Some(t.clone()));
        t.clone().serve(Default::default()).await;
        current.send_replace(None);
        stats.tunnel.down();
        log.line(&format!(
            "tunnel to {remote} lost ({}), dialling again",
            conn.close_reason()
                .map_or("-".into(), |e| Ended::from(&e).describe())
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_back_off_to_a_ceiling() {
        let mut w = None;
        let mut seen = vec![];
        for _ in 0..8 {
            let d = next_retry(w);
            seen.push(d.as_millis());
            w = Some(d);
        }
        assert_eq!(seen, [100, 200, 400, 800, 1600, 2000, 2000, 2000]);
    }
}
