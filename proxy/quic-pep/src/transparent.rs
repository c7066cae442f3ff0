//! `--transparent`, as plain decisions: where a client connection that
//! TPROXY handed Proxy-ST was going, and whether Proxy-GW may dial the
//! destination the tunnel names, with which server name.
//!
//! quinn reports the address each datagram was sent to (quinn-udp reads
//! IP_PKTINFO: `Incoming::local_ip`), not its port, so the original port is
//! taken to be `--listen`'s: the nftables rule must intercept that port
//! only. Replies leave from that same address (quinn-udp sets it as the
//! source with IP_PKTINFO, which IP_TRANSPARENT allows for an address that
//! is not the node's own).

use std::net::{IpAddr, SocketAddr, SocketAddrV4};

use crate::cli::Transparent;
use crate::qpep::allowed;
use crate::tunnel::frame::Target;

/// Pure: Proxy-ST's destination for a client connection whose datagrams
/// were sent to `local_ip`: `--transparent-to` if given, else that address
/// on `listen`'s port. An error says why the connection is refused.
pub fn destination(
    to: Option<SocketAddrV4>,
    local_ip: Option<IpAddr>,
    listen: SocketAddr,
) -> Result<SocketAddrV4, String> {
    if let Some(to) = to {
        return Ok(to);
    }
    match local_ip {
        None => Err("its destination address is unknown (no IP_PKTINFO)".into()),
        Some(ip) if ip == listen.ip() => {
            Err("sent to the proxy's own address, not intercepted: no destination".into())
        }
        Some(IpAddr::V4(ip)) => Ok(SocketAddrV4::new(ip, listen.port())),
        Some(IpAddr::V6(ip)) => match ip.to_ipv4_mapped() {
            Some(v4) if IpAddr::V4(v4) == listen.ip() => {
                Err("sent to the proxy's own address, not intercepted: no destination".into())
            }
            Some(v4) => Ok(SocketAddrV4::new(v4, listen.port())),
            None => Err(format!("IPv6 destination {ip}: only IPv4 is carried")),
        },
    }
}

/// Pure: what Proxy-GW dials for a client connection that names `to`
/// (None: its fixed `--next-hop`), given its `--transparent` settings and
/// its own address: the destination and the server name (the client's SNI,
/// else the address itself, which sends none). An error says why not.
pub fn dial_target(
    transparent: Option<&Transparent>,
    to: Option<&Target>,
    own: SocketAddr,
) -> Result<Option<(SocketAddr, String)>, String> {
    let (tr, t) = match (transparent, to) {
        (None, None) => return Ok(None),
        (None, Some(t)) => {
            return Err(format!(
                "Proxy-ST names a destination ({t}) but this Proxy-GW is not --transparent"
            ))
        }
        (Some(_), None) => {
            return Err("no destination: Proxy-ST is not --transparent".into());
        }
        (Some(tr), Some(t)) => (tr, t),
    };
    if SocketAddr::V4(t.addr) == own {
        return Err(format!("{}: the proxy's own address (a loop)", t.addr));
    }
    if !allowed(t.addr, &tr.allow) {
        return Err(format!("{}: not in --allow-dst", t.addr));
    }
    let name = match t.name.is_empty() {
        true => t.addr.ip().to_string(),
        false => t.name.clone(),
    };
    rustls_pki_types::ServerName::try_from(name.as_str())
        .map_err(|_| format!("{}: not a host name: '{name}'", t.addr))?;
    Ok(Some((SocketAddr::V4(t.addr), name)))
}

#[cfg(test)]
mod tests {
    use super::*;

    const LISTEN: &str = "198.18.1.1:443";

    fn dst(to: Option<&str>, local: Option<&str>) -> Result<String, String> {
        destination(
            to.map(|t| t.parse().unwrap()),
            local.map(|l| l.parse().unwrap()),
            LISTEN.parse().unwrap(),
        )
        .map(|d| d.to_string())
    }

    #[test]
    fn st_takes_the_address_the_client_sent_to_on_the_listening_port() {
        assert_eq!(dst(None, Some("198.19.1.2")), Ok("198.19.1.2:443".into()));
        assert_eq!(
            dst(None, Some("::ffff:198.19.1.2")),
            Ok("198.19.1.2:443".into())
        );
        assert_eq!(
            dst(Some("127.0.0.1:9"), Some("198.18.1.1")),
            Ok("127.0.0.1:9".into()),
            "--transparent-to wins"
        );
        assert!(dst(None, Some("198.18.1.1"))
            .unwrap_err()
            .contains("own address"));
        assert!(dst(None, Some("::ffff:198.18.1.1"))
            .unwrap_err()
            .contains("own address"));
        assert!(dst(None, None).unwrap_err().contains("unknown"));
        assert!(dst(None, Some("2001:db8::1")).unwrap_err().contains("IPv6"));
    }

    fn gw(allow: &str, to: Option<(&str, &str)>) -> Result<Option<(String, String)>, String> {
        let tr = Transparent {
            to: None,
            allow: satbench_transport::net::parse_list(allow).unwrap(),
        };
        let t = to.map(|(a, n)| Target {
            addr: a.parse().unwrap(),
            name: n.into(),
        });
        dial_target(Some(&tr), t.as_ref(), "198.18.2.2:443".parse().unwrap())
            .map(|o| o.map(|(a, n)| (a.to_string(), n)))
    }

    #[test]
    fn gw_dials_the_named_destination_within_allow_dst() {
        assert_eq!(
            gw("198.18.0.0/15", Some(("198.19.1.1:443", "a.test"))),
            Ok(Some(("198.19.1.1:443".into(), "a.test".into())))
        );
        // no SNI: the address is the server name (rustls then sends none)
        assert_eq!(
            gw("198.18.0.0/15", Some(("198.19.1.1:443", ""))),
            Ok(Some(("198.19.1.1:443".into(), "198.19.1.1".into())))
        );
        assert!(gw("198.19.1.0/24", Some(("198.18.3.2:443", "a.test")))
            .unwrap_err()
            .contains("not in --allow-dst"));
        assert!(gw("198.18.0.0/15", Some(("198.18.2.2:443", "gw.test")))
            .unwrap_err()
            .contains("a loop"));
        assert!(gw("198.18.0.0/15", Some(("198.19.1.1:443", "bad name!")))
            .unwrap_err()
            .contains("not a host name"));
        assert!(gw("198.18.0.0/15", None)
            .unwrap_err()
            .contains("Proxy-ST is not --transparent"));
    }

    #[test]
    fn a_gw_with_one_next_hop_refuses_a_named_destination() {
        let own = "198.18.2.2:443".parse().unwrap();
        assert_eq!(dial_target(None, None, own), Ok(None));
        let t = Target {
            addr: "198.19.1.1:443".parse().unwrap(),
            name: "a.test".into(),
        };
        assert!(dial_target(None, Some(&t), own)
            .unwrap_err()
            .contains("not --transparent"));
    }
}
