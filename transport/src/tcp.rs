//! A TCP socket's congestion control (TCP_CONGESTION): tcp-pep sets it per
//! side, satbulk on its listener and reports it per connection.

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
