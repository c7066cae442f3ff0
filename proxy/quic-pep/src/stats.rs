//! Counters: one set per relayed connection (its log line) and one for the
//! whole proxy (the `--stats` file the harness reads at the end of a run).

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

use serde_json::{json, Value};

use crate::streams::Kind;

/// Stream and byte counts; a relayed connection updates its own and the
/// proxy's (see `Pair`).
#[derive(Debug, Default)]
pub struct Counters {
    /// Streams relayed, by kind (index = the ID's low two bits).
    pub streams: [AtomicU64; 4],
    /// Stream bytes client → server and server → client.
    pub bytes_up: AtomicU64,
    pub bytes_down: AtomicU64,
    /// RESET_STREAM and STOP_SENDING carried across.
    pub resets: AtomicU64,
    pub stops: AtomicU64,
    /// Streams whose twin got another ID (should stay 0).
    pub id_mismatches: AtomicU64,
}

impl Counters {
    pub fn streams_json(&self) -> Value {
        let mut m = serde_json::Map::new();
        for k in Kind::ALL {
            m.insert(
                k.name().into(),
                self.streams[k.bits() as usize].load(Relaxed).into(),
            );
        }
        Value::Object(m)
    }

    pub fn total_streams(&self) -> u64 {
        self.streams.iter().map(|s| s.load(Relaxed)).sum()
    }
}

/// The proxy's counters.
#[derive(Debug, Default)]
pub struct Stats {
    /// Client connections whose handshake with the proxy completed.
    pub accepted: AtomicU64,
    /// Connections relayed: client side and next hop both up.
    pub relayed: AtomicU64,
    /// Client connections that ended before they were relayed (next hop
    /// unreachable, a handshake that failed).
    pub failed: AtomicU64,
    /// Connection attempts refused at --max-connections.
    pub refused: AtomicU64,
    /// Connections being handled now (admitted, not yet freed).
    pub active: AtomicU64,
    /// Relayed connections that have ended and been freed.
    pub closed: AtomicU64,
    /// CONNECTION_CLOSEs carried from one side to the other.
    pub closes_relayed: AtomicU64,
    pub counters: Counters,
    pub tunnel: TunnelStats,
    pub qpep: QpepStats,
    /// `--masque-listen`: the CONNECT-UDP listener's.
    pub masque: Arc<crate::masque::stats::MasqueStats>,
    /// `--transparent`: client connections by destination.
    pub destinations: Destinations,
    /// `--fec`: the satellite hop's code, on each socket that faces it.
    pub fec: std::sync::Mutex<Vec<Arc<crate::fec::socket::FecSocket>>>,
}

/// `--transparent`: client connections by destination address (ST: carried
/// over the tunnel; GW: connected to it), with the names they asked for.
/// At most `MAX_DESTINATIONS` addresses and `MAX_NAMES` names each are
/// listed; the connections beyond are counted in `unlisted`.
#[derive(Debug, Default)]
pub struct Destinations {
    by_addr: std::sync::Mutex<std::collections::BTreeMap<String, (u64, Vec<String>)>>,
    unlisted: AtomicU64,
}

pub const MAX_DESTINATIONS: usize = 1024;
pub const MAX_NAMES: usize = 16;

impl Destinations {
    /// One more client connection to `addr`, which asked for `name` (empty: none).
    pub fn count(&self, addr: std::net::SocketAddr, name: &str) {
        let mut m = self.by_addr.lock().unwrap_or_else(|p| p.into_inner());
        let key = addr.to_string();
        if !m.contains_key(&key) && m.len() >= MAX_DESTINATIONS {
            self.unlisted.fetch_add(1, Relaxed);
            return;
        }
        let (n, names) = m.entry(key).or_default();
        *n += 1;
        if !name.is_empty() && !names.iter().any(|x| x == name) && names.len() < MAX_NAMES {
            names.push(name.to_string());
        }
    }

    /// `{"198.19.1.1:443": {"connections": 2, "names": ["a.test"]}, …}`
    /// and how many were not listed.
    pub fn json(&self) -> (Value, u64) {
        let m = self.by_addr.lock().unwrap_or_else(|p| p.into_inner());
        let by: serde_json::Map<String, Value> = m
            .iter()
            .map(|(a, (n, names))| (a.clone(), json!({ "connections": n, "names": names })))
            .collect();
        (Value::Object(by), self.unlisted.load(Relaxed))
    }
}

/// QPEP: TCP connections carried over the tunnel. At st: accepted = handed
/// over by TPROXY, relayed = carried as a tunnel stream. At gw: accepted =
/// TCP tunnel streams that arrived, relayed = connected to the destination.
#[derive(Debug, Default)]
pub struct QpepStats {
    pub accepted: AtomicU64,
    pub relayed: AtomicU64,
    /// No tunnel (st), or the destination did not answer (gw).
    pub failed: AtomicU64,
    /// Over --max-connections (st), or a destination not allowed (gw).
    pub refused: AtomicU64,
    pub active: AtomicU64,
    /// Ended by a reset (either side's TCP, or the tunnel stream's).
    pub aborted: AtomicU64,
    /// Bytes client → server and server → client.
    pub bytes_up: AtomicU64,
    pub bytes_down: AtomicU64,
    /// gw: connections that got a spare dialled ahead (`--qpep-spares`).
    pub spares_used: AtomicU64,
}

impl QpepStats {
    pub fn json(&self) -> Value {
        json!({
            "accepted": self.accepted.load(Relaxed),
            "relayed": self.relayed.load(Relaxed),
            "failed": self.failed.load(Relaxed),
            "refused": self.refused.load(Relaxed),
            "active": self.active.load(Relaxed),
            "aborted": self.aborted.load(Relaxed),
            "bytes": { "up": self.bytes_up.load(Relaxed), "down": self.bytes_down.load(Relaxed) },
            "spares_used": self.spares_used.load(Relaxed),
        })
    }
}

/// The standing tunnel (`--tunnel`): how it came up, what it carried, and
/// its congestion state when the stats are written.
#[derive(Debug, Default)]
pub struct TunnelStats {
    /// Tunnels brought up (dialled at ST, accepted at GW).
    pub opened: AtomicU64,
    /// Dial attempts (ST).
    pub dials: AtomicU64,
    /// The latest tunnel's handshake, in microseconds (ST; 0: none yet).
    pub handshake_us: AtomicU64,
    /// Client connections carried.
    pub clients: AtomicU64,
    /// Client streams sent into the tunnel by this end.
    pub streams: AtomicU64,
    /// Headers and control messages refused (each closes the tunnel).
    pub bad_headers: AtomicU64,
    /// Client connections that got Proxy-GW's spare origin connection.
    pub spares_used: AtomicU64,
    /// The latest tunnel, while it is up.
    pub conn: std::sync::Mutex<Option<quinn::Connection>>,
}

impl TunnelStats {
    pub fn up(&self, conn: &quinn::Connection, handshake: std::time::Duration) {
        self.opened.fetch_add(1, Relaxed);
        self.handshake_us
            .store(handshake.as_micros().max(1) as u64, Relaxed);
        *self.conn.lock().unwrap() = Some(conn.clone());
    }

    pub fn down(&self) {
        *self.conn.lock().unwrap() = None;
    }

    pub fn json(&self) -> Value {
        let conn = self
            .conn
            .lock()
            .unwrap()
            .clone()
            .filter(|c| c.close_reason().is_none());
        let hs = self.handshake_us.load(Relaxed);
        json!({
            "up": conn.is_some(),
            "opened": self.opened.load(Relaxed),
            "dials": self.dials.load(Relaxed),
            "handshake_ms": (hs > 0).then(|| hs as f64 / 1000.0),
            "clients": self.clients.load(Relaxed),
            "streams": self.streams.load(Relaxed),
            "bad_headers": self.bad_headers.load(Relaxed),
            "spares_used": self.spares_used.load(Relaxed),
            "cwnd": conn.as_ref().map(|c| c.stats().path.cwnd),
            "rtt_ms": conn.as_ref().map(|c| c.rtt().as_secs_f64() * 1000.0),
        })
    }
}

impl Stats {
    pub fn json(&self, label: &str, mode: &str) -> Value {
        let c = &self.counters;
        let (destinations, unlisted) = self.destinations.json();
        json!({
            "label": label,
            "mode": mode,
            // relayed: both sides up (the field the split-TCP PEP has too)
            "connections": self.relayed.load(Relaxed),
            "accepted": self.accepted.load(Relaxed),
            "failed": self.failed.load(Relaxed),
            "refused": self.refused.load(Relaxed),
            "active": self.active.load(Relaxed),
            "closed": self.closed.load(Relaxed),
            "streams": c.streams_json(),
            "bytes": { "up": c.bytes_up.load(Relaxed), "down": c.bytes_down.load(Relaxed) },
            "resets_relayed": c.resets.load(Relaxed),
            "stops_relayed": c.stops.load(Relaxed),
            "closes_relayed": self.closes_relayed.load(Relaxed),
            "stream_id_mismatches": c.id_mismatches.load(Relaxed),
            "tunnel": self.tunnel.json(),
            "qpep": self.qpep.json(),
            "masque": self.masque.json(),
            "fec": crate::fec::socket::json_of(&self.fec.lock().unwrap_or_else(|e| e.into_inner())),
            "destinations": destinations,
            "destinations_unlisted": unlisted,
        })
    }

    /// Writes the JSON, with the process's `usage` as `process`, to
    /// `path` through a temporary file, so a reader never sees half of it.
    pub fn write(&self, path: &std::path::Path, label: &str, mode: &str) -> std::io::Result<()> {
        let mut j = self.json(label, mode);
        j["process"] = crate::usage::json();
        let tmp = path.with_extension("tmp");
        std::fs::write(&tmp, format!("{j}\n"))?;
        std::fs::rename(&tmp, path)
    }
}

/// A connection's counters and the proxy's, updated together.
#[derive(Clone)]
pub struct Pair {
    pub conn: Arc<Counters>,
    pub total: Arc<Stats>,
}

impl Pair {
    fn both(&self, f: impl Fn(&Counters) -> &AtomicU64, n: u64) {
        f(&self.conn).fetch_add(n, Relaxed);
        f(&self.total.counters).fetch_add(n, Relaxed);
    }
    pub fn stream(&self, kind: Kind) {
        self.both(|c| &c.streams[kind.bits() as usize], 1);
    }
    pub fn bytes(&self, up: bool, n: u64) {
        self.both(|c| if up { &c.bytes_up } else { &c.bytes_down }, n);
    }
    pub fn reset(&self) {
        self.both(|c| &c.resets, 1);
    }
    pub fn stop(&self) {
        self.both(|c| &c.stops, 1);
    }
    pub fn mismatch(&self) {
        self.both(|c| &c.id_mismatches, 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pair_counts_in_both() {
        let (conn, stats) = (Arc::new(Counters::default()), Arc::new(Stats::default()));
        stats.counters.bytes_up.store(100, Relaxed);
        let p = Pair {
            conn: conn.clone(),
            total: stats.clone(),
        };
        let total = &stats.counters;
        p.bytes(true, 5);
        p.bytes(false, 7);
        p.stream(Kind::CLIENT_UNI);
        p.reset();
        p.stop();
        assert_eq!(conn.bytes_up.load(Relaxed), 5);
        assert_eq!(total.bytes_up.load(Relaxed), 105);
        assert_eq!(total.bytes_down.load(Relaxed), 7);
        assert_eq!(conn.streams_json()["client_uni"], 1);
        assert_eq!(conn.total_streams(), 1);
        assert_eq!(
            (total.resets.load(Relaxed), total.stops.load(Relaxed)),
            (1, 1)
        );
    }

    #[test]
    fn destinations_count_connections_and_names_up_to_a_cap() {
        let d = Destinations::default();
        let a: std::net::SocketAddr = "198.19.1.1:443".parse().unwrap();
        d.count(a, "a.test");
        d.count(a, "a.test");
        d.count(a, "www.a.test");
        d.count("198.19.1.2:443".parse().unwrap(), "");
        let (j, unlisted) = d.json();
        assert_eq!(
            j,
            json!({
                "198.19.1.1:443": {"connections": 3, "names": ["a.test", "www.a.test"]},
                "198.19.1.2:443": {"connections": 1, "names": []},
            })
        );
        assert_eq!(unlisted, 0);
        for i in 0..MAX_DESTINATIONS + 5 {
            let ip = std::net::Ipv4Addr::from(0xc613_0000 + i as u32);
            d.count((ip, 443).into(), &format!("n{i}"));
        }
        for i in 0..MAX_NAMES + 3 {
            d.count(a, &format!("x{i}"));
        }
        let (j, unlisted) = d.json();
        assert_eq!(j.as_object().unwrap().len(), MAX_DESTINATIONS);
        assert!(unlisted > 0);
        assert_eq!(
            j["198.19.1.1:443"]["names"].as_array().unwrap().len(),
            MAX_NAMES
        );
    }

    #[test]
    fn json_has_the_connection_counts() {
        let s = Stats::default();
        s.accepted.store(3, Relaxed);
        s.relayed.store(2, Relaxed);
        let j = s.json("st", "h3");
        assert_eq!(j["label"], "st");
        assert_eq!(j["connections"], 2, "relayed");
        assert_eq!(j["accepted"], 3);
        assert_eq!(j["streams"]["client_bidi"], 0);
        assert_eq!(j["qpep"]["relayed"], 0);
        assert_eq!(j["qpep"]["bytes"]["down"], 0);
        let p = std::env::temp_dir().join(format!("quic-pep-stats-{}.json", std::process::id()));
        s.write(&p, "st", "h3").unwrap();
        let mut back: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
        let process = back.as_object_mut().unwrap().remove("process").unwrap();
        assert!(process["heap_bytes"].as_u64().unwrap() > 0, "{process}");
        assert_eq!(back, j);
        std::fs::remove_file(&p).unwrap();
    }
}
