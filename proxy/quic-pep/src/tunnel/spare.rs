//! Proxy-GW's spare origin connection: one connection to the origin,
//! dialled ahead of need, that the next client connection takes, so its
//! requests do not wait for the ground hop's handshake. A spare carries
//! nothing until it is taken, so stream IDs and HTTP/3's one control
//! stream per connection stay as they are; an origin connection is never
//! shared by two client connections.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

use quinn::Connection;
use tokio::task::JoinHandle;

use super::Dialer;
use crate::close::Ended;

type Dialling = JoinHandle<Result<Connection, Ended>>;

pub struct Spare {
    dial: Dialer,
    slot: std::sync::Mutex<Option<(Vec<u8>, Dialling)>>,
    /// Spares dialled, numbered from this (their qlog names).
    next: AtomicU64,
    stats: Arc<crate::stats::Stats>,
}

/// Spares are numbered apart from client connections in qlog names.
pub const FIRST_SPARE: u64 = 1_000_001;

impl Spare {
    pub fn new(dial: Dialer, stats: Arc<crate::stats::Stats>) -> Arc<Spare> {
        Arc::new(Spare {
            dial,
            slot: std::sync::Mutex::new(None),
            next: AtomicU64::new(FIRST_SPARE),
            stats,
        })
    }

    /// Starts dialling a spare for `alpn`, replacing any other.
    pub fn prepare(&self, alpn: Vec<u8>) {
        let n = self.next.fetch_add(1, Relaxed);
        let h = tokio::spawn((self.dial)(n, alpn.clone(), None));
        if let Some((_, old)) = self.slot.lock().unwrap().replace((alpn, h)) {
            old.abort();
        }
    }

    /// An origin connection for client connection `id`: the spare if it
    /// suits (same ALPN, still open), else a fresh one. Either way the
    /// next spare is being dialled when this returns.
    pub async fn take(&self, id: u64, alpn: Vec<u8>) -> Result<Connection, Ended> {
        let ready = self.slot.lock().unwrap().take();
        self.prepare(alpn.clone());
        if let Some((a, h)) = ready {
            if a == alpn {
                if let Ok(Ok(c)) = h.await {
                    if c.close_reason().is_none() {
                        self.stats.tunnel.spares_used.fetch_add(1, Relaxed);
                        return Ok(c);
                    }
                }
            } else {
                h.abort();
            }
        }
        (self.dial)(id, alpn, None).await
    }
}

impl Drop for Spare {
    fn drop(&mut self) {
        if let Some((_, h)) = self.slot.lock().unwrap().take() {
            h.abort();
        }
    }
}
