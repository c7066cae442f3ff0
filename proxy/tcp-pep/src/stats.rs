//! Counters the harness reads at the end of a run (JSON on SIGUSR1 and at
//! exit), and the one log line per relayed connection.

use std::fmt;
use std::net::SocketAddrV4;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;

use serde_json::{json, Value};

/// How a relayed connection ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// Both directions finished with FIN.
    Fin,
    /// One side reset (or vanished); the other was reset too.
    Reset,
    /// No data either way for the idle timeout.
    Idle,
    /// The onward connection could not be made; the client was reset.
    ConnectFailed,
    /// A local error (e.g. no pipe could be made).
    Error,
}

impl End {
    pub fn as_str(self) -> &'static str {
        match self {
            End::Fin => "fin",
            End::Reset => "reset",
            End::Idle => "idle",
            End::ConnectFailed => "connect-failed",
            End::Error => "error",
        }
    }
}

#[derive(Debug, Default)]
pub struct Stats {
    pub accepted: AtomicU64,
    /// Connections whose onward connection was made: the ones relayed.
    pub relayed: AtomicU64,
    pub active: AtomicU64,
    pub max_active: AtomicU64,
    pub refused_cap: AtomicU64,
    pub refused_loop: AtomicU64,
    pub refused_dst: AtomicU64,
    pub connect_failed: AtomicU64,
    pub end_fin: AtomicU64,
    pub end_reset: AtomicU64,
    pub end_idle: AtomicU64,
    pub end_error: AtomicU64,
    /// Client → server (towards the original destination).
    pub bytes_up: AtomicU64,
    /// Server → client.
    pub bytes_down: AtomicU64,
    pub splice_fallbacks: AtomicU64,
}

impl Stats {
    /// One more connection in flight; returns how many are.
    pub fn begin(&self) -> u64 {
        let n = self.active.fetch_add(1, Relaxed) + 1;
        self.max_active.fetch_max(n, Relaxed);
        n
    }

    pub fn end(&self, end: End) {
        self.active.fetch_sub(1, Relaxed);
        let c = match end {
            End::Fin => &self.end_fin,
            End::Reset => &self.end_reset,
            End::Idle => &self.end_idle,
            End::ConnectFailed => &self.connect_failed,
            End::Error => &self.end_error,
        };
        c.fetch_add(1, Relaxed);
    }

    pub fn snapshot(&self, name: &str, listen: SocketAddrV4, uptime: Duration) -> Value {
        let g = |c: &AtomicU64| c.load(Relaxed);
        json!({
            "name": name,
            "pid": std::process::id(),
            "listen": listen.to_string(),
            "uptime_ms": uptime.as_millis() as u64,
            "connections": g(&self.relayed),
            "accepted": g(&self.accepted),
            "active": g(&self.active),
            "max_active": g(&self.max_active),
            "refused": { "cap": g(&self.refused_cap), "loop": g(&self.refused_loop), "destination": g(&self.refused_dst) },
            "connect_failed": g(&self.connect_failed),
            "ended": { "fin": g(&self.end_fin), "reset": g(&self.end_reset), "idle": g(&self.end_idle), "error": g(&self.end_error) },
            "bytes": { "up": g(&self.bytes_up), "down": g(&self.bytes_down) },
            "splice_fallbacks": g(&self.splice_fallbacks),
        })
    }
}

/// The log line of one connection: `key=value` words, for people and grep.
pub struct ConnLine {
    pub src: SocketAddrV4,
    pub dst: SocketAddrV4,
    pub up: u64,
    pub down: u64,
    pub duration: Duration,
    pub end: End,
    pub detail: Option<String>,
}

impl fmt::Display for ConnLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "conn src={} dst={} up={} down={} ms={} end={}",
            self.src,
            self.dst,
            self.up,
            self.down,
            self.duration.as_millis(),
            self.end.as_str()
        )?;
        if let Some(d) = &self.detail {
            write!(f, " ({d})")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_in_flight_and_ends() {
        let s = Stats::default();
        assert_eq!(s.begin(), 1);
        assert_eq!(s.begin(), 2);
        s.end(End::Fin);
        s.end(End::ConnectFailed);
        assert_eq!(s.begin(), 1);
        s.end(End::Idle);
        let v = s.snapshot(
            "st",
            "127.0.0.1:9480".parse().unwrap(),
            Duration::from_millis(1500),
        );
        assert_eq!(v["name"], "st");
        assert_eq!(v["listen"], "127.0.0.1:9480");
        assert_eq!(v["active"], 0);
        assert_eq!(v["max_active"], 2);
        assert_eq!(v["ended"]["fin"], 1);
        assert_eq!(v["ended"]["idle"], 1);
        assert_eq!(v["connect_failed"], 1);
        assert_eq!(v["uptime_ms"], 1500);
    }

    #[test]
    fn log_line() {
        let l = ConnLine {
            src: "198.18.1.2:40000".parse().unwrap(),
            dst: "198.18.3.2:80".parse().unwrap(),
            up: 345,
            down: 12345,
            duration: Duration::from_millis(812),
            end: End::Fin,
            detail: None,
        };
        assert_eq!(
            l.to_string(),
            "conn src=198.18.1.2:40000 dst=198.18.3.2:80 up=345 down=12345 ms=812 end=fin"
        );
        let l = ConnLine {
            end: End::ConnectFailed,
            detail: Some("Connection refused".into()),
            ..l
        };
        assert!(l
            .to_string()
            .ends_with("end=connect-failed (Connection refused)"));
    }
}
