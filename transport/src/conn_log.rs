//! The connection log (`--conn-log`): one JSON line per connection a
//! server accepted, written once its handshake is done, saying how the
//! handshake went (full or resumed) and what rode in 0-RTT. The harness
//! reads it back into each page load's record
//! (harness/servers/connection-log.js).

use std::io::Write;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Mutex;
use std::time::SystemTime;

use serde::Serialize;

use crate::time::rfc3339_millis;
use crate::tls_hello::Offer;

/// One accepted connection's handshake, as its line says it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Handshake {
    /// The ALPN agreed: `h3`, `h2`, `http/1.1`, or another a proxy relays.
    pub protocol: String,
    /// The client offered a session ticket.
    pub psk_offered: bool,
    /// The server took it: no certificate, no signature.
    pub resumed: bool,
    /// The client offered early data (0-RTT) under its ticket.
    pub early_offered: bool,
    /// The server accepted it.
    pub early_accepted: bool,
    /// Requests (QUIC: client-opened bidirectional streams) that arrived
    /// before the handshake completed, so in 0-RTT.
    pub early_requests: u64,
}

impl Handshake {
    /// From what the ClientHello offered and what the server did.
    pub fn new(protocol: &str, offer: Offer, resumed: bool, early_accepted: bool) -> Handshake {
        Handshake {
            protocol: protocol.to_string(),
            psk_offered: offer.psk,
            resumed,
            early_offered: offer.early_data,
            early_accepted,
            early_requests: 0,
        }
    }
}

#[derive(Serialize)]
struct Line<'a> {
    time: String,
    remote: String,
    handshake: &'static str,
    #[serde(flatten)]
    h: &'a Handshake,
}

/// Pure: the log line of `h` (with its newline).
pub fn line(t: SystemTime, remote: SocketAddr, h: &Handshake) -> String {
    let l = Line {
        time: rfc3339_millis(t),
        remote: remote.to_string(),
        handshake: if h.resumed { "resumed" } else { "full" },
        h,
    };
    // a struct of strings, bools and numbers always serializes
    format!("{}\n", serde_json::to_string(&l).unwrap_or_default())
}

/// Where the lines go: a file, appended, or nowhere.
pub struct ConnectionLog {
    out: Option<Mutex<std::fs::File>>,
}

impl ConnectionLog {
    pub fn none() -> ConnectionLog {
        ConnectionLog { out: None }
    }

    pub fn file(path: &Path) -> std::io::Result<ConnectionLog> {
        let f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        Ok(ConnectionLog {
            out: Some(Mutex::new(f)),
        })
    }

    /// `--conn-log FILE`, or none; errors name the flag.
    pub fn open(path: Option<&Path>) -> Result<ConnectionLog, String> {
        match path {
            Some(p) => {
                ConnectionLog::file(p).map_err(|e| format!("--conn-log {}: {e}", p.display()))
            }
            None => Ok(ConnectionLog::none()),
        }
    }

    /// Writes the line of one connection whole (one write: lines of
    /// connections that end together do not interleave).
    pub fn write(&self, remote: SocketAddr, h: &Handshake) {
        if let Some(out) = &self.out {
            let l = line(SystemTime::now(), remote, h);
            if let Ok(mut f) = out.lock() {
                let _ = f.write_all(l.as_bytes());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn one_json_line_per_connection() {
        let mut h = Handshake::new(
            "h3",
            Offer {
                psk: true,
                early_data: true,
            },
            true,
            true,
        );
        h.early_requests = 2;
        let t = UNIX_EPOCH + Duration::from_millis(1_500);
        let l = line(t, "198.18.1.2:5000".parse().unwrap(), &h);
        assert_eq!(
            l,
            "{\"time\":\"1970-01-01T00:00:01.500Z\",\"remote\":\"198.18.1.2:5000\",\"handshake\":\"resumed\",\
             \"protocol\":\"h3\",\"psk_offered\":true,\"resumed\":true,\"early_offered\":true,\
             \"early_accepted\":true,\"early_requests\":2}\n"
        );
        let full = Handshake::new("h2", Offer::default(), false, false);
        assert!(line(t, "[::1]:1".parse().unwrap(), &full).contains("\"handshake\":\"full\""));
    }

    #[test]
    fn writes_to_its_file_and_names_the_flag() {
        let dir = std::env::temp_dir().join(format!("conn-log-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("c.log");
        let log = ConnectionLog::open(Some(&p)).unwrap();
        let h = Handshake::new("h2", Offer::default(), false, false);
        log.write("127.0.0.1:1".parse().unwrap(), &h);
        log.write("127.0.0.1:2".parse().unwrap(), &h);
        let text = std::fs::read_to_string(&p).unwrap();
        assert_eq!(text.lines().count(), 2);
        ConnectionLog::none().write("127.0.0.1:1".parse().unwrap(), &h);
        let e = ConnectionLog::open(Some(&dir.join("no/such/dir")))
            .err()
            .unwrap();
        assert!(e.starts_with("--conn-log "), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
