//! TCP socket options several binaries set: the congestion control
//! (TCP_CONGESTION; tcp-pep per side, satbulk on its listener, quic-pep's
//! QPEP on its connections to the server), IP_TRANSPARENT for a TPROXY
//! listener (tcp-pep, quic-pep's QPEP) and SO_LINGER 0 for an abort.

use std::io;
use std::os::fd::AsFd;

/// Sets the socket's congestion control (`reno`, `cubic`, `bbr`, … as the
/// kernel offers). Set on a listening socket, accepted sockets inherit it.
pub fn set_congestion(fd: impl AsFd, name: &str) -> io::Result<()> {
    Ok(rustix::net::sockopt::set_tcp_congestion(fd, name)?)
}

/// The socket's congestion control, as the kernel names it.
pub fn congestion(fd: impl AsFd) -> io::Result<String> {
    Ok(rustix::net::sockopt::tcp_congestion(fd)?)
}

/// IP_TRANSPARENT: lets a listener accept connections TPROXY hands it for
/// addresses that are not this host's (needs CAP_NET_ADMIN).
pub fn set_transparent(fd: &impl AsFd) -> io::Result<()> {
    // rustix has no IP_TRANSPARENT; nix does.
    Ok(nix::sys::socket::setsockopt(
        fd,
        nix::sys::socket::sockopt::IpTransparent,
        &true,
    )?)
}

/// SO_LINGER 0: the next close sends RST, so a reset on one side becomes a
/// reset (an abort) on the other rather than a clean FIN.
pub fn set_linger_zero(fd: impl AsFd) -> io::Result<()> {
    Ok(rustix::net::sockopt::set_socket_linger(
        fd,
        Some(std::time::Duration::ZERO),
    )?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_and_reads_back_on_a_real_socket() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        assert!(!congestion(&l).unwrap().is_empty());
        set_congestion(&l, "reno").unwrap();
        assert_eq!(congestion(&l).unwrap(), "reno");
        // accepted sockets inherit the listener's
        let _c = std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (s, _) = l.accept().unwrap();
        assert_eq!(congestion(&s).unwrap(), "reno");
    }

    #[test]
    fn an_unknown_algorithm_is_an_error() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let e = set_congestion(&l, "no-such-cc").unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound, "{e}");
    }
}
