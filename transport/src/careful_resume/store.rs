//! The server's saved paths, one per client. The key is the client's IP
//! address: what the server knows of a returning client before the
//! handshake. quinn 0.11 checks its address-validation tokens (Retry and
//! NEW_TOKEN) inside quinn-proto and tells the application only that the
//! address was validated (`Incoming::remote_address_validated`), never
//! the token, so the token cannot key the store; and a client's port
//! changes with each connection. The draft's "endpoint token" is then the
//! pair of addresses the path was measured between (`Endpoint`), and a
//! saved path is used only within its lifetime.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::phases::Saved;

/// How long a saved path is used (ours; the draft leaves the lifetime to
/// the sender): long enough for a revisit, short enough that a different
/// day's path is not assumed.
pub const LIFETIME: Duration = Duration::from_secs(3600);

/// Which path: the client's address and the server's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Endpoint {
    pub client: IpAddr,
    pub server: Option<IpAddr>,
}

impl Endpoint {
    pub fn new(remote: SocketAddr, local: Option<IpAddr>) -> Endpoint {
        Endpoint {
            client: remote.ip(),
            server: local,
        }
    }

    /// `198.18.0.2>198.18.3.2`, as the log names the path.
    pub fn name(&self) -> String {
        match self.server {
            Some(s) => format!("{}>{s}", self.client),
            None => self.client.to_string(),
        }
    }
}

#[derive(Debug)]
pub struct Store {
    lifetime: Duration,
    paths: Mutex<HashMap<Endpoint, (Saved, Instant)>>,
}

impl Default for Store {
    fn default() -> Self {
        Store::new(LIFETIME)
    }
}

impl Store {
    pub fn new(lifetime: Duration) -> Store {
        Store {
            lifetime,
            paths: Mutex::new(HashMap::new()),
        }
    }

    fn paths(&self) -> std::sync::MutexGuard<'_, HashMap<Endpoint, (Saved, Instant)>> {
        // a panic elsewhere leaves the map whole: keep using it
        self.paths.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The path saved for `e`, if it is within its lifetime at `now`.
    pub fn get(&self, e: &Endpoint, now: Instant) -> Option<Saved> {
        let mut paths = self.paths();
        match paths.get(e) {
            Some((s, at)) if now.saturating_duration_since(*at) <= self.lifetime => Some(*s),
            Some(_) => {
                paths.remove(e);
                None
            }
            None => None,
        }
    }

    pub fn save(&self, e: Endpoint, saved: Saved, now: Instant) {
        self.paths().insert(e, (saved, now));
    }

    /// Safe Retreat: the saved path proved wrong; no other connection
    /// uses it.
    pub fn forget(&self, e: &Endpoint) {
        self.paths().remove(e);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_is_kept_per_client_and_server_address_for_its_lifetime() {
        let t0 = Instant::now();
        let store = Store::new(Duration::from_secs(10));
        let a = Endpoint::new(
            "10.0.0.1:5000".parse().unwrap(),
            Some("10.0.0.9".parse().unwrap()),
        );
        let same_client_new_port = Endpoint::new("10.0.0.1:6000".parse().unwrap(), a.server);
        let other = Endpoint::new("10.0.0.2:5000".parse().unwrap(), a.server);
        let s = Saved {
            cwnd: 1000,
            rtt: Duration::from_millis(600),
        };
        store.save(a, s, t0);
        assert_eq!(store.get(&same_client_new_port, t0), Some(s));
        assert_eq!(store.get(&other, t0), None);
        assert_eq!(a.name(), "10.0.0.1>10.0.0.9");
        assert_eq!(store.get(&a, t0 + Duration::from_secs(11)), None, "too old");
        assert_eq!(store.get(&a, t0), None, "and gone");
        store.save(a, s, t0);
        store.forget(&a);
        assert_eq!(store.get(&a, t0), None);
    }
}
