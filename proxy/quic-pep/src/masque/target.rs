//! Pure: the target of a UDP proxying request, read from its `:path` by
//! RFC 9298's default URI template (§3):
//! `/.well-known/masque/udp/{target_host}/{target_port}/`, and that path
//! made from a target (what Proxy-ST, the client, will send).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use percent_encoding::{percent_decode_str, utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};

/// The path of the default template, up to the target.
pub const PATH_PREFIX: &str = "/.well-known/masque/udp/";

/// What a simple template expansion leaves as it is: RFC 3986's unreserved
/// characters (RFC 6570 §3.2.2). An IPv6 literal's colons are encoded, as
/// RFC 9298 §3 requires.
const EXPANDED: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Host {
    Ip(IpAddr),
    /// A DNS name (lower case), resolved by the proxy before it answers.
    Name(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    pub host: Host,
    pub port: u16,
}

/// Why a path names no target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PathError {
    /// Not the template's path: another resource (404).
    NotTemplate,
    /// The template's path, but what stands for the target is not one (400).
    BadTarget(String),
}

/// The target `path` names, or why it names none.
pub fn parse_path(path: &str) -> Result<Target, PathError> {
    let rest = path
        .strip_prefix(PATH_PREFIX)
        .ok_or(PathError::NotTemplate)?;
    let bad = |why: &str| PathError::BadTarget(why.to_string());
    if rest.contains('?') || rest.contains('#') {
        return Err(bad("the template has no query"));
    }
    let (host, port) = match rest.split('/').collect::<Vec<_>>().as_slice() {
        [host, port, ""] => (*host, *port),
        _ => {
            return Err(bad(
                "expected /.well-known/masque/udp/TARGET_HOST/TARGET_PORT/",
            ))
        }
    };
    if host.is_empty() || port.is_empty() {
        return Err(bad("target_host and target_port must not be empty"));
    }
    Ok(Target {
        host: parse_host(host)?,
        port: parse_port(port)?,
    })
}

fn parse_host(raw: &str) -> Result<Host, PathError> {
    let bad = PathError::BadTarget;
    if raw.contains(':') {
        return Err(bad(format!(
            "target_host '{raw}': an IPv6 literal's colons must be percent-encoded"
        )));
    }
    let host = percent_decode_str(raw)
        .decode_utf8()
        .map_err(|_| bad(format!("target_host '{raw}': not UTF-8 once decoded")))?;
    if let Ok(v4) = host.parse::<Ipv4Addr>() {
        return Ok(Host::Ip(IpAddr::V4(v4)));
    }
    if host.contains(':') {
        return host
            .parse::<Ipv6Addr>()
            .map(|v6| Host::Ip(IpAddr::V6(v6)))
            .map_err(|_| bad(format!("target_host '{host}': not an IPv6 address")));
    }
    // a DNS name (RFC 9298's reg-name, as far as DNS can resolve it)
    rustls_pki_types::DnsName::try_from(&*host)
        .map(|n| Host::Name(n.as_ref().to_ascii_lowercase()))
        .map_err(|_| {
            bad(format!(
                "target_host '{host}': not an address or a DNS name"
            ))
        })
}

fn parse_port(raw: &str) -> Result<u16, PathError> {
    // digits only: `+1`, ` 1` and `0x1` are not ports
    match raw.bytes().all(|b| b.is_ascii_digit()) && raw.len() <= 5 {
        true => match raw.parse::<u16>() {
            Ok(p) if p > 0 => Ok(p),
            _ => Err(PathError::BadTarget(format!(
                "target_port '{raw}': must be 1 to 65535"
            ))),
        },
        false => Err(PathError::BadTarget(format!(
            "target_port '{raw}': must be 1 to 65535"
        ))),
    }
}

impl Target {
    /// The `:path` of a request for this target (the template expanded).
    pub fn path(&self) -> String {
        let host = match &self.host {
            Host::Ip(ip) => ip.to_string(),
            Host::Name(n) => n.clone(),
        };
        format!(
            "{PATH_PREFIX}{}/{}/",
            utf8_percent_encode(&host, EXPANDED),
            self.port
        )
    }
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.host {
            Host::Ip(IpAddr::V6(v6)) => write!(f, "[{v6}]:{}", self.port),
            Host::Ip(ip) => write!(f, "{ip}:{}", self.port),
            Host::Name(n) => write!(f, "{n}:{}", self.port),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(path: &str) -> Target {
        parse_path(path).unwrap()
    }

    fn bad(path: &str) -> String {
        match parse_path(path) {
            Err(PathError::BadTarget(why)) => why,
            other => panic!("{path}: expected a bad target, got {other:?}"),
        }
    }

    #[test]
    fn reads_the_rfcs_example_and_each_kind_of_host() {
        // RFC 9298 §3.4's example request
        let t = ok("/.well-known/masque/udp/192.0.2.6/443/");
        assert_eq!(t.host, Host::Ip("192.0.2.6".parse().unwrap()));
        assert_eq!(t.port, 443);
        // §3: "2001:db8::42" is sent as "2001%3Adb8%3A%3A42"
        let t = ok("/.well-known/masque/udp/2001%3Adb8%3A%3A42/53/");
        assert_eq!(t.host, Host::Ip("2001:db8::42".parse().unwrap()));
        assert_eq!(t.to_string(), "[2001:db8::42]:53");
        let t = ok("/.well-known/masque/udp/Origin.Satbench.test/65535/");
        assert_eq!(t.host, Host::Name("origin.satbench.test".into()));
        assert_eq!(t.port, 65535);
        let t = ok("/.well-known/masque/udp/%31%39%38.18.3.2/1/");
        assert_eq!(t.to_string(), "198.18.3.2:1");
    }

    #[test]
    fn another_path_is_another_resource() {
        for p in [
            "/",
            "/index.html",
            "/.well-known/masque/ip/192.0.2.6/443/",
            "/.well-known/masque/udp",
            "/.WELL-KNOWN/masque/udp/192.0.2.6/443/",
        ] {
            assert_eq!(parse_path(p), Err(PathError::NotTemplate), "{p}");
        }
    }

    #[test]
    fn a_missing_or_malformed_target_is_refused_with_the_reason() {
        assert!(bad("/.well-known/masque/udp/").contains("expected"));
        assert!(bad("/.well-known/masque/udp/192.0.2.6/").contains("expected"));
        assert!(bad("/.well-known/masque/udp/192.0.2.6/443").contains("expected"));
        assert!(bad("/.well-known/masque/udp/192.0.2.6/443/x/").contains("expected"));
        assert!(bad("/.well-known/masque/udp//443/").contains("empty"));
        assert!(bad("/.well-known/masque/udp/192.0.2.6//").contains("empty"));
        for port in ["0", "65536", "99999", "-1", "+1", "0x1b", "443a", "000443"] {
            let why = bad(&format!("/.well-known/masque/udp/192.0.2.6/{port}/"));
            assert!(why.contains("1 to 65535"), "{port}: {why}");
        }
        assert!(bad("/.well-known/masque/udp/2001:db8::42/53/").contains("percent-encoded"));
        assert!(bad("/.well-known/masque/udp/2001%3Azz/53/").contains("IPv6"));
        assert!(bad("/.well-known/masque/udp/a%20b/53/").contains("DNS name"));
        assert!(bad("/.well-known/masque/udp/%FF%FE/53/").contains("UTF-8"));
        assert!(bad("/.well-known/masque/udp/a.test/53/?x=1").contains("query"));
    }

    #[test]
    fn the_path_made_from_a_target_reads_back_as_that_target() {
        for t in [
            "/.well-known/masque/udp/198.19.1.1/443/",
            "/.well-known/masque/udp/2001%3Adb8%3A%3A42/53/",
            "/.well-known/masque/udp/cdn.b.test/8443/",
        ] {
            assert_eq!(ok(t).path(), t);
        }
        let v6 = Target {
            host: Host::Ip("::1".parse().unwrap()),
            port: 9,
        };
        assert_eq!(v6.path(), "/.well-known/masque/udp/%3A%3A1/9/");
        assert_eq!(ok(&v6.path()), v6);
    }
}
