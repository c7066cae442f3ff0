//! Pure: Proxy-ST's MASQUE flows (`--masque-via`). A flow is one client's
//! UDP to one original destination (the client's address and port, and
//! where it sent to); each gets one CONNECT-UDP request to Proxy-GW, made
//! here, and ends when Proxy-GW ends it or after carrying nothing either
//! way for the idle time. Its payloads cross as the flow's `Carry` says.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr, SocketAddrV4};
use std::time::{Duration, Instant};

use satbench_transport::net::v4;

use super::target::{Host, Target};

/// How a flow's UDP payloads cross the satellite hop (`--masque-mode`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Carry {
    /// As HTTP/3 Datagrams (RFC 9297 §2): unreliable, so the inner QUIC
    /// sees the hop's losses and recovers them end to end.
    #[default]
    Datagram,
    /// As DATAGRAM capsules on the request stream (RFC 9297 §3.5):
    /// reliable and in order, so the tunnel recovers a loss on the hop and
    /// the inner QUIC sees delay instead.
    Stream,
}

impl Carry {
    pub fn name(self) -> &'static str {
        match self {
            Carry::Datagram => "datagram",
            Carry::Stream => "stream",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FlowKey {
    pub client: SocketAddrV4,
    /// The original destination (the origin, as the client addressed it).
    pub dst: SocketAddrV4,
}

impl std::fmt::Display for FlowKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} -> {}", self.client, self.dst)
    }
}

/// The flow a datagram from `from` belongs to: sent to `to`
/// (`--masque-to`) if given, else to its original destination `orig` (what
/// IP_ORIGDSTADDR reported). The listener's own address is no destination
/// (a datagram sent to the proxy itself was not intercepted). An error
/// says why the datagram is dropped.
pub fn flow_key(
    from: SocketAddr,
    orig: Option<SocketAddr>,
    to: Option<SocketAddrV4>,
    listen: SocketAddr,
) -> Result<FlowKey, String> {
    let client = v4(from).ok_or_else(|| format!("from {from}: only IPv4 is carried"))?;
    if let Some(dst) = to {
        return Ok(FlowKey { client, dst });
    }
    let orig = orig.ok_or("its original destination is unknown (no IP_ORIGDSTADDR)")?;
    let dst = v4(orig).ok_or_else(|| format!("to {orig}: only IPv4 is carried"))?;
    if SocketAddr::V4(dst) == listen || v4(listen) == Some(dst) {
        return Err("sent to the proxy's own address, not intercepted: no destination".into());
    }
    Ok(FlowKey { client, dst })
}

/// The proxying request of a flow to `dst`, sent to Proxy-GW named
/// `authority`: RFC 9298's extended CONNECT with the default template.
pub fn request(authority: &str, dst: SocketAddrV4) -> http::Request<()> {
    let target = Target {
        host: Host::Ip(IpAddr::V4(*dst.ip())),
        port: dst.port(),
    };
    http::Request::builder()
        .method(http::Method::CONNECT)
        .uri(format!("https://{authority}{}", target.path()))
        .header("capsule-protocol", "?1")
        .extension(h3::ext::Protocol::CONNECT_UDP)
        .body(())
        .expect("a valid request")
}

/// Whether Proxy-GW took the request (any 2xx, RFC 9298 §3.5); else why
/// not, with its `Proxy-Status` when it gave one.
pub fn accepted(status: u16, proxy_status: Option<&str>) -> Result<(), String> {
    match (status, proxy_status) {
        (200..=299, _) => Ok(()),
        (s, Some(p)) => Err(format!("Proxy-GW answered {s} ({p})")),
        (s, None) => Err(format!("Proxy-GW answered {s}")),
    }
}

/// When a flow whose latest datagram either way was at `last` ends.
pub fn idle_deadline(last_up: Instant, last_down: Instant, idle: Duration) -> Instant {
    last_up.max(last_down) + idle
}

/// What to do with a datagram of a flow.
#[derive(Debug, PartialEq, Eq)]
pub enum Route<T> {
    /// The flow is open (or opening): hand it over.
    To(T),
    /// A new flow: open it (its request), then hand it over.
    Open,
    /// A new flow beyond the table's cap: drop it.
    Full,
}

/// The flows being carried, each with what reaches it (its queue).
#[derive(Debug)]
pub struct Flows<T> {
    map: HashMap<FlowKey, T>,
    max: usize,
}

impl<T: Clone> Flows<T> {
    pub fn new(max: usize) -> Flows<T> {
        Flows {
            map: HashMap::new(),
            max,
        }
    }

    pub fn route(&self, key: &FlowKey) -> Route<T> {
        match self.map.get(key) {
            Some(t) => Route::To(t.clone()),
            None if self.map.len() >= self.max => Route::Full,
            None => Route::Open,
        }
    }

    pub fn insert(&mut self, key: FlowKey, t: T) {
        self.map.insert(key, t);
    }

    pub fn remove(&mut self, key: &FlowKey) {
        self.map.remove(key);
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LISTEN: &str = "198.18.1.1:443";

    fn key(from: &str, orig: Option<&str>, to: Option<&str>) -> Result<String, String> {
        flow_key(
            from.parse().unwrap(),
            orig.map(|o| o.parse().unwrap()),
            to.map(|t| t.parse().unwrap()),
            LISTEN.parse().unwrap(),
        )
        .map(|k| k.to_string())
    }

    #[test]
    fn a_flow_is_the_client_and_its_original_destination() {
        assert_eq!(
            key("198.18.0.2:50000", Some("198.19.1.1:443"), None),
            Ok("198.18.0.2:50000 -> 198.19.1.1:443".into())
        );
        // an IPv4-mapped socket reports mapped addresses
        assert_eq!(
            key(
                "[::ffff:198.18.0.2]:5",
                Some("[::ffff:198.19.1.1]:8443"),
                None
            ),
            Ok("198.18.0.2:5 -> 198.19.1.1:8443".into())
        );
        // --masque-to wins over what the kernel says
        assert_eq!(
            key("127.0.0.1:9", Some("198.18.1.1:443"), Some("127.0.0.1:7")),
            Ok("127.0.0.1:9 -> 127.0.0.1:7".into())
        );
        assert!(key("198.18.0.2:5", Some(LISTEN), None)
            .unwrap_err()
            .contains("not intercepted"));
        assert!(key("198.18.0.2:5", None, None)
            .unwrap_err()
            .contains("unknown"));
        assert!(key("198.18.0.2:5", Some("[2001:db8::1]:443"), None)
            .unwrap_err()
            .contains("only IPv4"));
        assert!(key("[2001:db8::2]:5", Some("198.19.1.1:443"), None)
            .unwrap_err()
            .contains("only IPv4"));
    }

    #[test]
    fn the_request_names_the_original_destination_by_rfc_9298s_template() {
        let r = request(
            "pep-gw.satbench.test:4433",
            "198.19.1.1:443".parse().unwrap(),
        );
        assert_eq!(r.method(), http::Method::CONNECT);
        assert_eq!(
            r.uri().to_string(),
            "https://pep-gw.satbench.test:4433/.well-known/masque/udp/198.19.1.1/443/"
        );
        assert_eq!(
            r.extensions().get::<h3::ext::Protocol>(),
            Some(&h3::ext::Protocol::CONNECT_UDP)
        );
        assert_eq!(r.headers()["capsule-protocol"], "?1");
        // Proxy-GW's own decision reads the same target back
        let t = super::super::target::parse_path(r.uri().path()).unwrap();
        assert_eq!(t.to_string(), "198.19.1.1:443");
    }

    #[test]
    fn any_2xx_opens_the_flow_and_anything_else_says_why_not() {
        assert_eq!(accepted(200, None), Ok(()));
        assert_eq!(accepted(204, None), Ok(()));
        assert_eq!(
            accepted(403, Some("gw;error=destination_ip_prohibited")),
            Err("Proxy-GW answered 403 (gw;error=destination_ip_prohibited)".into())
        );
        assert_eq!(accepted(501, None), Err("Proxy-GW answered 501".into()));
        assert!(accepted(100, None).is_err());
    }

    #[test]
    fn a_datagram_either_way_keeps_the_flow() {
        let t0 = Instant::now();
        let idle = Duration::from_secs(30);
        let s = Duration::from_secs(1);
        assert_eq!(idle_deadline(t0, t0, idle), t0 + idle);
        assert_eq!(idle_deadline(t0 + s, t0, idle), t0 + s + idle);
        assert_eq!(idle_deadline(t0, t0 + 2 * s, idle), t0 + 2 * s + idle);
    }

    #[test]
    fn a_new_flow_is_opened_once_and_none_beyond_the_cap() {
        let mut f: Flows<u32> = Flows::new(2);
        let k = |port: u16| FlowKey {
            client: SocketAddrV4::new("198.18.0.2".parse().unwrap(), port),
            dst: "198.19.1.1:443".parse().unwrap(),
        };
        assert_eq!(f.route(&k(1)), Route::Open);
        f.insert(k(1), 10);
        assert_eq!(f.route(&k(1)), Route::To(10));
        // another client port is another flow to the same destination
        assert_eq!(f.route(&k(2)), Route::Open);
        f.insert(k(2), 20);
        assert_eq!(f.route(&k(3)), Route::Full);
        f.remove(&k(1));
        assert_eq!(f.route(&k(3)), Route::Open);
        assert_eq!(f.len(), 1);
    }
}
