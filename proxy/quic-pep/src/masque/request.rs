//! Pure: what Proxy-GW's CONNECT-UDP listener answers a request, from its
//! head alone (the target's address is checked once it is known:
//! `check_destination`).
//!
//! RFC 9298 §3.4: a UDP proxying request over HTTP/3 is an extended CONNECT
//! (RFC 9220) with `:protocol` `connect-udp`, a non-empty `:scheme` and
//! `:path` (the URI template expanded) and `:authority`; one that does not
//! conform is malformed (400, RFC 9114 §4.1.2 lets the server answer before
//! it resets). RFC 9220 §3: an unknown or unsupported `:protocol` SHOULD get
//! 501. RFC 9297 §3.4: `Capsule-Protocol` is a Boolean structured field, sent
//! at most once. RFC 9298 §3.1: a name is resolved before answering, and a
//! failure there is answered with a `Proxy-Status` (RFC 9209) saying why;
//! so is a target this proxy does not allow (403). Once open, its answers
//! go the way the client's payloads came (`answer_in_capsule`).

use std::net::{IpAddr, SocketAddr};

use satbench_transport::net::Ipv4Net;

use super::target::{parse_path, PathError, Target};

/// A request's head, as h3 hands it over.
#[derive(Clone, Debug, Default)]
pub struct Head<'a> {
    pub method: &'a str,
    pub protocol: Option<&'a str>,
    pub scheme: Option<&'a str>,
    pub authority: Option<&'a str>,
    pub path: Option<&'a str>,
    /// Every `Capsule-Protocol` field line, as sent.
    pub capsule_protocol: Vec<&'a [u8]>,
}

/// A refusal: the status, RFC 9209's error type for `Proxy-Status` where one
/// fits, and the reason (the response's text body and the log line).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    pub status: u16,
    pub proxy_error: Option<&'static str>,
    pub why: String,
}

impl Refusal {
    fn new(status: u16, why: impl Into<String>) -> Refusal {
        Refusal {
            status,
            proxy_error: None,
            why: why.into(),
        }
    }
}

/// The `:protocol` this listener serves.
pub const CONNECT_UDP: &str = "connect-udp";

/// The target a request asks for, or the refusal.
pub fn decide(head: &Head) -> Result<Target, Refusal> {
    if head.method != "CONNECT" {
        return Err(match head.protocol {
            Some(_) => Refusal::new(400, ":protocol is only defined for CONNECT (RFC 9220)"),
            None => Refusal::new(
                405,
                format!(
                    "{} is not served here: only CONNECT with :protocol {CONNECT_UDP}",
                    head.method
                ),
            ),
        });
    }
    match head.protocol {
        None => {
            return Err(Refusal::new(
                501,
                "CONNECT without :protocol (a TCP tunnel) is not served here, only connect-udp",
            ))
        }
        Some(p) if p != CONNECT_UDP => {
            return Err(Refusal::new(
                501,
                format!(":protocol {p} is not supported, only {CONNECT_UDP}"),
            ))
        }
        Some(_) => {}
    }
    let empty = |v: Option<&str>| v.is_none_or(str::is_empty);
    if empty(head.scheme) || empty(head.path) || empty(head.authority) {
        return Err(Refusal::new(
            400,
            "malformed: :scheme, :path and :authority must not be empty (RFC 9298 §3.4)",
        ));
    }
    if head.scheme != Some("https") {
        return Err(Refusal::new(
            400,
            format!(
                ":scheme {} (the template is https)",
                head.scheme.unwrap_or_default()
            ),
        ));
    }
    capsule_protocol(&head.capsule_protocol)?;
    parse_path(head.path.unwrap_or_default()).map_err(|e| match e {
        PathError::NotTemplate => Refusal::new(
            404,
            format!(
                "{} is not a UDP proxying path: /.well-known/masque/udp/HOST/PORT/",
                head.path.unwrap_or_default()
            ),
        ),
        PathError::BadTarget(why) => Refusal::new(400, why),
    })
}

/// `Capsule-Protocol`: absent, `?1` or `?0` (the same as absent), with any
/// parameters (ignored); anything else is malformed.
fn capsule_protocol(lines: &[&[u8]]) -> Result<(), Refusal> {
    match lines {
        [] => Ok(()),
        [value] => match sfv::Parser::new(value).parse::<sfv::Item>() {
            Ok(item) if item.bare_item.as_boolean().is_some() => Ok(()),
            _ => Err(Refusal::new(
                400,
                format!(
                    "Capsule-Protocol '{}': not a Boolean structured field",
                    String::from_utf8_lossy(value)
                ),
            )),
        },
        _ => Err(Refusal::new(400, "Capsule-Protocol sent more than once")),
    }
}

/// Whether the proxy may send to `to`: an IPv4 address within `allow`,
/// never one of the proxy's own listeners (a loop).
pub fn check_destination(
    to: SocketAddr,
    allow: &[Ipv4Net],
    own: &[SocketAddr],
) -> Result<(), Refusal> {
    let refuse = |why: String| Refusal {
        status: 403,
        proxy_error: Some("destination_ip_prohibited"),
        why,
    };
    if own.contains(&to) {
        return Err(refuse(format!("{to} is this proxy's own listener")));
    }
    match to.ip() {
        IpAddr::V4(v4) if allow.iter().any(|n| n.contains(v4)) => Ok(()),
        _ => Err(refuse(format!(
            "{to} is not within --masque-allow {}",
            nets(allow)
        ))),
    }
}

/// `allow` as `--masque-allow` takes it.
pub fn nets(allow: &[Ipv4Net]) -> String {
    allow
        .iter()
        .map(|n| n.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// A target name that did not resolve (RFC 9298 §3.1, RFC 9209's dns_error).
pub fn dns_failed(name: &str, why: &str) -> Refusal {
    Refusal {
        status: 502,
        proxy_error: Some("dns_error"),
        why: format!("{name}: {why}"),
    }
}

/// A UDP socket to the target that could not be opened.
pub fn unreachable(to: SocketAddr, why: &str) -> Refusal {
    Refusal {
        status: 502,
        proxy_error: Some("destination_ip_unroutable"),
        why: format!("{to}: {why}"),
    }
}

/// The header fields of a refusal: `Proxy-Status` (RFC 9209: this proxy,
/// the error type and the reason) where there is an error type, `Allow`
/// with a 405.
pub fn refusal_headers(r: &Refusal, proxy: &str) -> Vec<(&'static str, String)> {
    let mut h = Vec::new();
    if let Some(error) = r.proxy_error {
        h.push(("proxy-status", proxy_status(proxy, error, &r.why)));
    }
    if r.status == 405 {
        h.push(("allow", "CONNECT".into()));
    }
    h
}

fn key(k: &str) -> &sfv::KeyRef {
    sfv::KeyRef::from_str(k).expect("a valid key")
}

fn proxy_status(proxy: &str, error: &str, details: &str) -> String {
    // a structured-field String is printable ASCII only
    let printable: String = details
        .chars()
        .map(|c| match c {
            ' '..='~' => c,
            _ => '?',
        })
        .collect();
    // RFC 9209: the proxy's name is a Token, or a String where it cannot be one
    let item = sfv::ItemSerializer::new();
    let named = match sfv::TokenRef::from_str(proxy) {
        Ok(token) => item.bare_item(token),
        Err(_) => item.bare_item(sfv::StringRef::from_str(proxy).expect("a label is ASCII")),
    };
    named
        .parameter(
            key("error"),
            sfv::TokenRef::from_str(error).expect("RFC 9209 types are tokens"),
        )
        .parameter(
            key("details"),
            sfv::StringRef::from_str(&printable).expect("printable ASCII"),
        )
        .finish()
}

/// Whether an answer goes as a DATAGRAM capsule: in kind with the
/// request's first payload (`first_capsule`: a client that chose the
/// reliable stream wants its answers there too), else as an HTTP/3
/// Datagram once both ends enabled them (RFC 9297 §2.1.1).
pub fn answer_in_capsule(first_capsule: Option<bool>, datagrams_enabled: bool) -> bool {
    first_capsule.unwrap_or(false) || !datagrams_enabled
}

#[cfg(test)]
mod tests {
    use super::*;

    fn connect_udp<'a>(path: &'a str) -> Head<'a> {
        Head {
            method: "CONNECT",
            protocol: Some("connect-udp"),
            scheme: Some("https"),
            authority: Some("pep-gw.satbench.test:4433"),
            path: Some(path),
            capsule_protocol: vec![&b"?1"[..]],
        }
    }

    const PATH: &str = "/.well-known/masque/udp/198.19.1.1/443/";

    fn status(head: &Head) -> u16 {
        decide(head).unwrap_err().status
    }

    #[test]
    fn the_rfcs_request_is_proxied_to_its_target() {
        let t = decide(&connect_udp(PATH)).unwrap();
        assert_eq!(t.to_string(), "198.19.1.1:443");
        // Capsule-Protocol absent, ?0, or with a parameter: all the same
        for cp in [vec![], vec![&b"?0"[..]], vec![&b"?1;x=2"[..]]] {
            let head = Head {
                capsule_protocol: cp,
                ..connect_udp(PATH)
            };
            assert!(decide(&head).is_ok(), "{:?}", head.capsule_protocol);
        }
    }

    #[test]
    fn a_bad_method_or_protocol_is_refused_as_rfc_9220_and_http_say() {
        let get = Head {
            method: "GET",
            protocol: None,
            ..connect_udp(PATH)
        };
        assert_eq!(status(&get), 405);
        assert_eq!(
            refusal_headers(&decide(&get).unwrap_err(), "gw"),
            [("allow", "CONNECT".to_string())]
        );
        let get_with_protocol = Head {
            method: "GET",
            ..connect_udp(PATH)
        };
        assert_eq!(status(&get_with_protocol), 400);
        let tcp_connect = Head {
            protocol: None,
            ..connect_udp(PATH)
        };
        assert_eq!(status(&tcp_connect), 501);
        for p in ["connect-ip", "webtransport", "CONNECT-UDP", ""] {
            let h = Head {
                protocol: Some(p),
                ..connect_udp(PATH)
            };
            assert_eq!(status(&h), 501, "{p}");
        }
    }

    #[test]
    fn a_malformed_request_is_a_bad_request() {
        for h in [
            Head {
                scheme: None,
                ..connect_udp(PATH)
            },
            Head {
                scheme: Some("http"),
                ..connect_udp(PATH)
            },
            Head {
                authority: Some(""),
                ..connect_udp(PATH)
            },
            Head {
                path: None,
                ..connect_udp(PATH)
            },
            Head {
                capsule_protocol: vec![&b"1"[..]],
                ..connect_udp(PATH)
            },
            Head {
                capsule_protocol: vec![&b"?1"[..], &b"?1"[..]],
                ..connect_udp(PATH)
            },
            connect_udp("/.well-known/masque/udp/198.19.1.1/0/"),
            connect_udp("/.well-known/masque/udp/198.19.1.1/"),
        ] {
            assert_eq!(status(&h), 400, "{h:?}");
        }
        assert_eq!(status(&connect_udp("/elsewhere")), 404);
    }

    #[test]
    fn only_allowed_networks_and_never_the_proxy_itself() {
        let allow = [
            "198.18.0.0/15".parse().unwrap(),
            "127.0.0.1".parse().unwrap(),
        ];
        let own = ["198.18.2.2:443".parse().unwrap()];
        let to = |s: &str| s.parse::<SocketAddr>().unwrap();
        assert_eq!(
            check_destination(to("198.19.1.1:443"), &allow, &own),
            Ok(())
        );
        assert_eq!(check_destination(to("127.0.0.1:9"), &allow, &own), Ok(()));
        for bad in ["10.0.0.1:443", "127.0.0.2:9", "198.18.2.2:443", "[::1]:443"] {
            let r = check_destination(to(bad), &allow, &own).unwrap_err();
            assert_eq!(
                (r.status, r.proxy_error),
                (403, Some("destination_ip_prohibited")),
                "{bad}"
            );
        }
    }

    #[test]
    fn proxy_status_names_the_proxy_the_error_and_why() {
        let r = check_destination(
            "10.0.0.1:53".parse().unwrap(),
            &["198.18.0.0/15".parse().unwrap()],
            &[],
        )
        .unwrap_err();
        assert_eq!(
            refusal_headers(&r, "gw"),
            [(
                "proxy-status",
                r#"gw;error=destination_ip_prohibited;details="10.0.0.1:53 is not within --masque-allow 198.18.0.0/15""#
                    .to_string()
            )]
        );
        let r = dns_failed("nowhere.test", "no address \"found\"\u{e9}");
        let h = refusal_headers(&r, "gw");
        assert_eq!(r.status, 502);
        assert_eq!(
            h[0].1,
            r#"gw;error=dns_error;details="nowhere.test: no address \"found\"?""#
        );
        // an RFC 9209 list: sfv reads it back
        assert!(sfv::Parser::new(&h[0].1).parse::<sfv::List>().is_ok());
        // a label that is no Token (a digit first) is named as a String
        assert!(refusal_headers(&r, "1gw")[0]
            .1
            .starts_with(r#""1gw";error=dns_error"#));
    }

    #[test]
    fn answers_go_the_way_the_clients_first_payload_came() {
        // capsules first: capsules back, even with datagrams enabled
        assert!(answer_in_capsule(Some(true), true));
        // datagrams first, or nothing yet: datagrams when both ends can
        assert!(!answer_in_capsule(Some(false), true));
        assert!(!answer_in_capsule(None, true));
        // a client without datagrams gets capsules whatever it sent
        assert!(answer_in_capsule(None, false));
        assert!(answer_in_capsule(Some(false), false));
    }
}
