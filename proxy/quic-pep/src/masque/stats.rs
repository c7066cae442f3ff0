//! CONNECT-UDP's counters (`masque` in `--stats`): Proxy-GW's listener's
//! (`--masque-listen`) or, at Proxy-ST, the client's (`--masque-via`),
//! where `connections` are those to Proxy-GW, `requests` those sent,
//! `proxied` those accepted, `refused` Proxy-GW's refusals, `up` from the
//! clients and `down` to them, as HTTP/3 Datagrams or DATAGRAM capsules
//! (`mode`, Proxy-ST's `--masque-mode`).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Mutex, OnceLock};

use serde_json::{json, Value};

#[derive(Debug, Default)]
pub struct MasqueStats {
    /// Proxy-ST: how its flows' payloads cross (`--masque-mode`); Proxy-GW
    /// answers each request in kind, so has none.
    pub mode: OnceLock<&'static str>,
    /// HTTP/3 connections accepted on --masque-listen.
    pub connections: AtomicU64,
    /// Requests whose head arrived (h3 resets a malformed one itself:
    /// those count in `malformed`).
    pub requests: AtomicU64,
    pub malformed: AtomicU64,
    /// Requests answered 200 and relayed (RFC 9298's "proxying requests").
    pub proxied: AtomicU64,
    /// Being relayed now.
    pub active: AtomicU64,
    /// Refusals by status.
    refused: Mutex<BTreeMap<u16, u64>>,
    /// UDP payloads client → target, by how they came (HTTP/3 Datagrams,
    /// DATAGRAM capsules), and target → client, by how they went.
    pub datagrams_up: AtomicU64,
    pub capsules_up: AtomicU64,
    pub datagrams_down: AtomicU64,
    pub capsules_down: AtomicU64,
    pub bytes_up: AtomicU64,
    pub bytes_down: AtomicU64,
    /// HTTP Datagrams dropped: for no open request, another context, too
    /// large for the connection, or a full queue.
    pub dropped: AtomicU64,
    /// HTTP Datagrams sent while the connection's datagram queue had no
    /// room for them: quinn then discards the oldest queued ones, silently,
    /// so each is at least one datagram lost inside the tunnel (the
    /// satellite hop's window full: a queue drop of the tunnel's own).
    pub displaced: AtomicU64,
    /// Proxy-GW: HTTP Datagrams that came before their request was open
    /// and were kept for it (`early`).
    pub early: AtomicU64,
    /// Proxy-ST: flows that never opened (no connection to Proxy-GW, a
    /// refusal, no socket) and flows ended after the idle time.
    pub failed: AtomicU64,
    pub closed_idle: AtomicU64,
}

impl MasqueStats {
    pub fn refused(&self, status: u16) {
        *self.refused.lock().unwrap().entry(status).or_default() += 1;
    }

    pub fn json(&self) -> Value {
        let n = |a: &AtomicU64| a.load(Relaxed);
        let refused: serde_json::Map<String, Value> = self
            .refused
            .lock()
            .unwrap()
            .iter()
            .map(|(s, c)| (s.to_string(), (*c).into()))
            .collect();
        json!({
            "mode": self.mode.get(),
            "connections": n(&self.connections),
            "requests": n(&self.requests),
            "malformed": n(&self.malformed),
            "proxied": n(&self.proxied),
            "active": n(&self.active),
            "refused": refused,
            "datagrams": {"up": n(&self.datagrams_up), "down": n(&self.datagrams_down)},
            "capsules": {"up": n(&self.capsules_up), "down": n(&self.capsules_down)},
            "bytes": {"up": n(&self.bytes_up), "down": n(&self.bytes_down)},
            "dropped": n(&self.dropped),
            "displaced": n(&self.displaced),
            "early": n(&self.early),
            "failed": n(&self.failed),
            "closed_idle": n(&self.closed_idle),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_are_counted_by_status() {
        let s = MasqueStats::default();
        s.refused(403);
        s.refused(501);
        s.refused(403);
        s.datagrams_up.fetch_add(2, Relaxed);
        let j = s.json();
        assert_eq!(j["refused"], json!({"403": 2, "501": 1}));
        assert_eq!(j["datagrams"]["up"], 2);
        assert_eq!(j["proxied"], 0);
        assert_eq!(j["mode"], Value::Null);
        s.mode.set("stream").unwrap();
        assert_eq!(s.json()["mode"], "stream");
    }
}
