//! Which accepted connections are relayed, and when to say so: plain
//! decisions, no I/O.

use std::fmt;
use std::net::SocketAddrV4;

use satbench_transport::net::Ipv4Net;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// `max_conns` connections are being relayed already.
    Cap,
    /// The original destination is the proxy itself or loopback: relaying
    /// would connect the proxy to itself.
    Loop,
    /// The original destination is outside `--allow-dst`.
    NotAllowed,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Refusal::Cap => "connection cap reached",
            Refusal::Loop => "destination is the proxy itself",
            Refusal::NotAllowed => "destination not allowed",
        })
    }
}

/// Decides whether a connection accepted for original destination `dst`
/// may be relayed while `active` others are.
pub fn admit(
    dst: SocketAddrV4,
    listen: SocketAddrV4,
    allow: &[Ipv4Net],
    active: usize,
    max: usize,
) -> Result<(), Refusal> {
    // A direct connection to the listener has the listener as its
    // "original destination"; loopback is never intercepted.
    if dst == listen
        || dst.ip().is_loopback()
        || dst.ip().is_unspecified()
        || (dst.port() == listen.port() && listen.ip().is_unspecified())
    {
        return Err(Refusal::Loop);
    }
    if !allow.iter().any(|n| n.contains(*dst.ip())) {
        return Err(Refusal::NotAllowed);
    }
    if active >= max {
        return Err(Refusal::Cap);
    }
    Ok(())
}

/// Says once that the cap was hit and once that it is over, rather than a
/// line per refused connection.
#[derive(Debug, Default)]
pub struct CapNotice {
    at_cap: bool,
    refused_since: u64,
}

impl CapNotice {
    /// A connection was refused for the cap: the line to log, if any.
    pub fn refused(&mut self, max: usize) -> Option<String> {
        self.refused_since += 1;
        if self.at_cap {
            return None;
        }
        self.at_cap = true;
        Some(format!(
            "connection cap reached: {max} connections are being relayed; new ones are reset until some end (--max-conns)"
        ))
    }

    /// A connection was admitted: the line to log, if the cap was hit before.
    pub fn admitted(&mut self) -> Option<String> {
        if !self.at_cap {
            return None;
        }
        self.at_cap = false;
        let n = std::mem::take(&mut self.refused_since);
        Some(format!(
            "below the connection cap again; {n} connections were reset meanwhile"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sa(s: &str) -> SocketAddrV4 {
        s.parse().unwrap()
    }

    fn allow() -> Vec<Ipv4Net> {
        vec!["198.18.0.0/15".parse().unwrap()]
    }

    #[test]
    fn relays_to_allowed_destinations_under_the_cap() {
        let l = sa("127.0.0.1:9480");
        assert_eq!(admit(sa("198.18.3.2:80"), l, &allow(), 0, 1), Ok(()));
        assert_eq!(admit(sa("198.18.3.2:443"), l, &allow(), 511, 512), Ok(()));
    }

    #[test]
    fn refuses_over_the_cap() {
        let l = sa("127.0.0.1:9480");
        assert_eq!(
            admit(sa("198.18.3.2:80"), l, &allow(), 512, 512),
            Err(Refusal::Cap)
        );
        assert_eq!(
            admit(sa("198.18.3.2:80"), l, &allow(), 1, 1),
            Err(Refusal::Cap)
        );
    }

    #[test]
    fn refuses_destinations_outside_the_allowed_nets() {
        let l = sa("127.0.0.1:9480");
        assert_eq!(
            admit(sa("8.8.8.8:80"), l, &allow(), 0, 10),
            Err(Refusal::NotAllowed)
        );
        let only_server: Vec<Ipv4Net> = vec!["198.18.3.2".parse().unwrap()];
        assert_eq!(
            admit(sa("198.18.3.1:80"), l, &only_server, 0, 10),
            Err(Refusal::NotAllowed)
        );
        // a bad destination is refused as such even at the cap
        assert_eq!(
            admit(sa("8.8.8.8:80"), l, &allow(), 10, 10),
            Err(Refusal::NotAllowed)
        );
    }

    #[test]
    fn never_connects_to_itself() {
        let l = sa("127.0.0.1:9480");
        assert_eq!(admit(l, l, &allow(), 0, 10), Err(Refusal::Loop));
        assert_eq!(
            admit(sa("127.0.0.1:80"), l, &allow(), 0, 10),
            Err(Refusal::Loop)
        );
        let any = sa("0.0.0.0:9480");
        assert_eq!(
            admit(sa("198.18.1.1:9480"), any, &allow(), 0, 10),
            Err(Refusal::Loop)
        );
        let wide: Vec<Ipv4Net> = vec!["0.0.0.0/0".parse().unwrap()];
        assert_eq!(admit(sa("0.0.0.0:80"), l, &wide, 0, 10), Err(Refusal::Loop));
    }

    #[test]
    fn cap_notice_logs_once_per_episode() {
        let mut n = CapNotice::default();
        assert_eq!(n.admitted(), None);
        let first = n.refused(4).unwrap();
        assert!(first.contains("connection cap reached: 4"), "{first}");
        assert_eq!(n.refused(4), None);
        assert_eq!(n.refused(4), None);
        assert!(n.admitted().unwrap().contains("3 connections were reset"));
        assert_eq!(n.admitted(), None);
        assert!(n.refused(4).is_some());
    }
}
