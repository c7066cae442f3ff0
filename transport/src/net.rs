//! IPv4 networks (`198.18.0.0/15`), for the proxies' allowed-destination
//! lists (tcp-pep's --allow-dst, quic-pep's --qpep-allow); `v4`, an
//! address as IPv4 (the proxies carry IPv4 only).

use std::fmt;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::str::FromStr;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ipv4Net {
    addr: Ipv4Addr,
    prefix: u8,
}

impl Ipv4Net {
    fn mask(&self) -> u32 {
        if self.prefix == 0 {
            0
        } else {
            u32::MAX << (32 - self.prefix)
        }
    }

    pub fn contains(&self, ip: Ipv4Addr) -> bool {
        u32::from(ip) & self.mask() == u32::from(self.addr) & self.mask()
    }
}

impl FromStr for Ipv4Net {
    type Err = String;

    /// `A.B.C.D/N`, or a bare address (a /32).
    fn from_str(s: &str) -> Result<Ipv4Net, String> {
        let (a, p) = s.split_once('/').unwrap_or((s, "32"));
        let addr: Ipv4Addr = a
            .parse()
            .map_err(|_| format!("not an IPv4 network: '{s}'"))?;
        let prefix: u8 = p
            .parse()
            .ok()
            .filter(|p| *p <= 32)
            .ok_or_else(|| format!("not an IPv4 network: '{s}' (prefix 0 to 32)"))?;
        Ok(Ipv4Net { addr, prefix })
    }
}

/// A comma-separated list of networks (`10.0.0.0/8, 192.0.2.7`); empty
/// `a` as an IPv4 address: itself, or the IPv4 address an IPv4-mapped
/// IPv6 one stands for (what a dual-stack socket reports); None for any
/// other IPv6 address.
pub fn v4(a: SocketAddr) -> Option<SocketAddrV4> {
    match a {
        SocketAddr::V4(a) => Some(a),
        SocketAddr::V6(a) => a
            .ip()
            .to_ipv4_mapped()
            .map(|ip| SocketAddrV4::new(ip, a.port())),
    }
}

/// items are skipped, so the list may come back empty.
pub fn parse_list(v: &str) -> Result<Vec<Ipv4Net>, String> {
    v.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::parse)
        .collect()
}

impl fmt::Display for Ipv4Net {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}/{}",
            Ipv4Addr::from(u32::from(self.addr) & self.mask()),
            self.prefix
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn net(s: &str) -> Ipv4Net {
        s.parse().unwrap()
    }

    #[test]
    fn v4_takes_ipv4_and_mapped_addresses_only() {
        let a = |s: &str| v4(s.parse().unwrap()).map(|a| a.to_string());
        assert_eq!(a("198.18.0.2:5"), Some("198.18.0.2:5".into()));
        assert_eq!(a("[::ffff:198.18.0.2]:5"), Some("198.18.0.2:5".into()));
        assert_eq!(a("[2001:db8::1]:5"), None);
    }

    #[test]
    fn contains() {
        let n = net("198.18.0.0/15");
        assert!(n.contains("198.18.3.2".parse().unwrap()));
        assert!(n.contains("198.19.255.255".parse().unwrap()));
        assert!(!n.contains("198.20.0.0".parse().unwrap()));
        assert!(!n.contains("8.8.8.8".parse().unwrap()));
        assert!(net("0.0.0.0/0").contains("8.8.8.8".parse().unwrap()));
        assert!(net("192.0.2.7").contains("192.0.2.7".parse().unwrap()));
        assert!(!net("192.0.2.7").contains("192.0.2.8".parse().unwrap()));
    }

    #[test]
    fn lists() {
        let l = parse_list("10.0.0.0/8, 192.0.2.7,").unwrap();
        assert_eq!(l, [net("10.0.0.0/8"), net("192.0.2.7")]);
        assert_eq!(parse_list("").unwrap(), []);
        assert!(parse_list("10.0.0.0/8,x").is_err());
    }

    #[test]
    fn parse_and_show() {
        assert_eq!(net("198.18.3.9/24").to_string(), "198.18.3.0/24");
        assert_eq!(net("10.1.2.3").to_string(), "10.1.2.3/32");
        for bad in [
            "198.18.0.0/33",
            "198.18.0/16",
            "::1/128",
            "x/8",
            "10.0.0.0/",
        ] {
            assert!(bad.parse::<Ipv4Net>().is_err(), "{bad}");
        }
    }
}
