//! What the UDP modes (rtt, owd, rate, burst) share: the receiving and
//! sending sockets, sending one datagram, and receiving until the sender
//! says it is done.

use std::io;
use std::net::{Ipv4Addr, SocketAddrV4, UdpSocket};
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread;

use satprobe::cli::Common;
use satprobe::receiver_done;

use super::{is_timeout, joined, POLL};
use crate::sys;

/// Tells receivers when the sender is done: how many it sent, and until when
/// to wait for stragglers.
pub struct Finish {
    sent: AtomicU64,
    /// 0 while the sender is still sending.
    deadline_ns: AtomicU64,
}

impl Finish {
    fn new() -> Finish {
        Finish {
            sent: AtomicU64::new(0),
            deadline_ns: AtomicU64::new(0),
        }
    }
    /// The sender is done: it sent `sent` (`None`: it failed, receivers
    /// stop at once) and receivers wait `timeout_ms` for stragglers.
    fn sender_done(&self, sent: Option<u64>, timeout_ms: u64) {
        let (sent, deadline_ns) = match sent {
            Some(n) => (n, sys::now_ns() + timeout_ms * 1_000_000),
            None => (0, 1),
        };
        self.sent.store(sent, Ordering::Relaxed);
        self.deadline_ns.store(deadline_ns, Ordering::Release);
    }
    fn get(&self) -> Option<(u64, u64)> {
        match self.deadline_ns.load(Ordering::Acquire) {
            0 => None,
            d => Some((self.sent.load(Ordering::Relaxed), d)),
        }
    }
}

/// Runs `receive` on a thread of its own (`receiver` names it) while `send`
/// runs on this one and returns how many datagrams it sent and what it
/// timed. Then the receiver is told the sender is done (failed: stop at
/// once; else wait up to `timeout_ms` for stragglers) and waited for. The
/// sender's error comes before the receiver's.
pub fn send_while_receiving<S, R: Send>(
    timeout_ms: u64,
    receiver: &str,
    receive: impl FnOnce(&Finish) -> Result<R, String> + Send,
    send: impl FnOnce() -> Result<(u64, S), String>,
) -> Result<(S, R), String> {
    let finish = Finish::new();
    thread::scope(|s| {
        let receiving = s.spawn(|| receive(&finish));
        let sent = send();
        finish.sender_done(sent.as_ref().ok().map(|&(n, _)| n), timeout_ms);
        let received = joined(receiving.join(), receiver);
        let (_, timed) = sent?;
        Ok((timed, received?))
    })
}

/// Receives until `receiver_done`: `on(datagram, arrival ns)` returns whether
/// the datagram counts toward "everything sent has arrived".
pub fn receive_until_done(
    sock: &UdpSocket,
    buf: &mut [u8],
    finish: &Finish,
    mut on: impl FnMut(&[u8], u64) -> bool,
) -> io::Result<()> {
    sys::precise_timers();
    sock.set_read_timeout(Some(POLL))?;
    let mut received = 0u64;
    loop {
        match sock.recv(buf) {
            Ok(n) => {
                let t = sys::now_ns();
                if on(&buf[..n], t) {
                    received += 1;
                }
            }
            Err(e) if is_timeout(&e) => {}
            // An ICMP error for an earlier datagram on a connected socket.
            Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => {}
            Err(e) => return Err(e),
        }
        if receiver_done(finish.get(), received, sys::now_ns()) {
            return Ok(());
        }
    }
}

/// The receiving socket: bound to `to_addr:port` inside `to_netns`.
pub fn bind_receiver(c: &Common) -> Result<UdpSocket, String> {
    let at = SocketAddrV4::new(c.to_addr, c.port);
    netns::within(&c.to_netns, || UdpSocket::bind(at))
        .map_err(|e| format!("bind {at} in netns {}: {e}", c.to_netns))
}

/// The sending socket: opened in `from_netns`, connected to the receiver.
pub fn connect_sender(c: &Common) -> Result<UdpSocket, String> {
    let to = SocketAddrV4::new(c.to_addr, c.port);
    netns::within(&c.from_netns, || {
        let s = UdpSocket::bind(SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, 0))?;
        s.connect(to)?;
        Ok(s)
    })
    .map_err(|e| format!("UDP socket to {to} from netns {}: {e}", c.from_netns))
}

/// Sends one datagram; a local drop (ENOBUFS) counts as sent and lost.
pub fn send(sock: &UdpSocket, buf: &[u8], to: &Common) -> Result<(), String> {
    match sock.send(buf) {
        Ok(_) => Ok(()),
        Err(e) if rustix::io::Errno::from_io_error(&e) == Some(rustix::io::Errno::NOBUFS) => Ok(()),
        Err(e) => Err(format!(
            "send to {}:{} from netns {}: {e}",
            to.to_addr, to.port, to.from_netns
        )),
    }
}
