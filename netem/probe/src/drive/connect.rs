//! `satprobe connect`: TCP handshakes one at a time from the sender's
//! namespace to a listener in the receiver's, each connect() timed.

use std::io;
use std::net::{SocketAddrV4, TcpListener};
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::Duration;

use rustix::net::sockopt::{self, Timeout};
use rustix::net::{AddressFamily, SocketFlags, SocketType};
use satbench_transport::tcp::set_linger_zero;
use satprobe::cli::{Common, ConnectOpts};
use satprobe::schedule::{golden_offset_ns, Schedule};
use satprobe::{connect_timed_out, ns_to_ms};
use serde::Serialize;

use super::{is_timeout, joined, LEAD_NS, POLL};
use crate::sys;

#[derive(Serialize)]
pub struct ConnectOut {
    sent: u64,
    connected: u64,
    /// One per connect() that succeeded, in order: from just before the
    /// call to its return (SYN out, SYN-ACK back).
    connect_ms: Vec<f64>,
}

pub fn run(o: &ConnectOpts) -> Result<ConnectOut, String> {
    let c = &o.common;
    let at = SocketAddrV4::new(c.to_addr, c.port);
    let listener = netns::within(&c.to_netns, || TcpListener::bind(at))
        .map_err(|e| format!("listen on TCP {at} in netns {}: {e}", c.to_netns))?;
    // accept() honours SO_RCVTIMEO: the acceptor looks every POLL whether
    // it may stop.
    sockopt::set_socket_timeout(&listener, Timeout::Recv, Some(POLL))
        .map_err(|e| format!("listener timeout: {e}"))?;
    let stop = AtomicBool::new(false);
    sys::precise_timers();

    let times = thread::scope(|s| -> Result<Vec<u64>, String> {
        // The kernel completes the handshakes; accepting only keeps the
        // backlog empty. An accepted connection is closed at once.
        let acceptor = s.spawn(|| -> Result<(), String> {
            while !stop.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok(_) => {}
                    Err(e) if is_timeout(&e) => {}
                    Err(e) if e.kind() == io::ErrorKind::ConnectionAborted => {}
                    Err(e) => return Err(format!("accepting in netns {}: {e}", c.to_netns)),
                }
            }
            Ok(())
        });

        let sched = Schedule::every(sys::now_ns() + LEAD_NS, o.interval_ms, o.count);
        let mut times = Vec::with_capacity(o.count as usize);
        let mut result = Ok(());
        for i in 0..o.count {
            // A connect() that ran past the next due time delays it: one
            // handshake at a time.
            sys::sleep_until(sched.due_ns(i) + golden_offset_ns(i, o.spread_ms * 1e6));
            match connect_once(c) {
                Ok(Some(ns)) => times.push(ns),
                Ok(None) => {}
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        stop.store(true, Ordering::Relaxed);
        let accepted = joined(acceptor.join(), "acceptor");
        result?;
        accepted?;
        Ok(times)
    })?;

    Ok(ConnectOut {
        sent: o.count,
        connected: times.len() as u64,
        connect_ms: times.into_iter().map(ns_to_ms).collect(),
    })
}

/// One connect() from `from_netns`: its duration, or `None` if it timed out
/// (`timeout_ms`).
fn connect_once(c: &Common) -> Result<Option<u64>, String> {
    let to = SocketAddrV4::new(c.to_addr, c.port);
    // The socket belongs to the namespace it was opened in; connect() may
    // then run from this thread's own.
    let fd = netns::within(&c.from_netns, || {
        Ok(rustix::net::socket_with(
            AddressFamily::INET,
            SocketType::STREAM,
            SocketFlags::CLOEXEC,
            None,
        )?)
    })
    .map_err(|e| format!("TCP socket in netns {}: {e}", c.from_netns))?;
    sockopt::set_socket_timeout(
        &fd,
        Timeout::Send,
        Some(Duration::from_millis(c.timeout_ms)),
    )
    .map_err(|e| format!("connect timeout: {e}"))?;
    let t0 = sys::now_ns();
    let r = rustix::net::connect(&fd, &to);
    let took = sys::now_ns() - t0;
    match r {
        Ok(()) => {
            // Closed with a reset, not a FIN exchange that would cross the
            // link during the next handshake.
            let _ = set_linger_zero(&fd);
            Ok(Some(took))
        }
        Err(e) if connect_timed_out(e) => Ok(None),
        Err(e) => Err(format!(
            "connect to TCP {to} from netns {}: {e}",
            c.from_netns
        )),
    }
}
