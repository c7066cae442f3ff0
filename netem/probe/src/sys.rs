//! The few system calls std does not wrap: the monotonic clock in ns,
//! absolute-deadline sleeps, timer slack, forced socket buffer sizes.

use std::io;
use std::num::NonZeroU64;
use std::os::fd::AsFd;

use rustix::net::sockopt;
use rustix::time::{ClockId, Timespec};

const NS_PER_S: u64 = 1_000_000_000;

/// `CLOCK_MONOTONIC` in ns. Every timestamp of a run comes from here, in
/// every thread, so sender and receiver times subtract exactly.
pub fn now_ns() -> u64 {
    let ts = rustix::time::clock_gettime(ClockId::Monotonic);
    ts.tv_sec as u64 * NS_PER_S + ts.tv_nsec as u64
}

/// Sleeps until `CLOCK_MONOTONIC` reaches `deadline_ns` (returns at once if
/// it already has).
pub fn sleep_until(deadline_ns: u64) {
    let ts = Timespec {
        tv_sec: (deadline_ns / NS_PER_S) as _,
        tv_nsec: (deadline_ns % NS_PER_S) as _,
    };
    while rustix::thread::clock_nanosleep_absolute(ClockId::Monotonic, &ts)
        == Err(rustix::io::Errno::INTR)
    {}
}

/// Sets this thread's timer slack to 1 ns (the default 50 us would blur
/// every sleep and every receive timeout).
pub fn precise_timers() {
    let _ = rustix::thread::set_current_timer_slack(NonZeroU64::new(1));
}

/// Asks for a receive (or send) buffer of `bytes`: beyond `net.core.rmem_max`
/// with SO_RCVBUFFORCE when allowed (root), else as much as SO_RCVBUF gives.
pub fn grow_buffer(sock: &impl AsFd, receive: bool, bytes: usize) -> io::Result<()> {
    // The kernel doubles the value into an int.
    let v = bytes.min(i32::MAX as usize / 2);
    let fd = sock.as_fd();
    let r = if receive {
        sockopt::set_socket_recv_buffer_size_force(fd, v)
            .or_else(|_| sockopt::set_socket_recv_buffer_size(fd, v))
    } else {
        sockopt::set_socket_send_buffer_size_force(fd, v)
            .or_else(|_| sockopt::set_socket_send_buffer_size(fd, v))
    };
    Ok(r?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sleeps_until_the_deadline_on_the_same_clock() {
        let t0 = now_ns();
        sleep_until(t0 + 2_000_000);
        assert!(now_ns() >= t0 + 2_000_000);
        sleep_until(0); // long past: returns at once
    }

    #[test]
    fn buffers_grow_past_the_plain_maximum_as_root() {
        let s = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        grow_buffer(&s, true, 8 << 20).unwrap();
        grow_buffer(&s, false, 8 << 20).unwrap();
        let got = sockopt::socket_recv_buffer_size(&s).unwrap();
        if rustix::process::geteuid().is_root() {
            assert_eq!(got, 16 << 20, "SO_RCVBUFFORCE, doubled by the kernel");
        }
    }
}
