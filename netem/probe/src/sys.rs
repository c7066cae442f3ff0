//! The few system calls std does not wrap: the monotonic clock in ns,
//! absolute-deadline sleeps, timer slack, forced socket buffer sizes.

use std::io;
use std::os::fd::AsRawFd;

/// `CLOCK_MONOTONIC` in ns. Every timestamp of a run comes from here, in
/// every thread, so sender and receiver times subtract exactly.
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid pointer to a timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Sleeps until `CLOCK_MONOTONIC` reaches `deadline_ns` (returns at once if
/// it already has).
pub fn sleep_until(deadline_ns: u64) {
    let ts = libc::timespec {
        tv_sec: (deadline_ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (deadline_ns % 1_000_000_000) as libc::c_long,
    };
    loop {
        // SAFETY: valid timespec; no remainder needed with TIMER_ABSTIME.
        let rc = unsafe {
            libc::clock_nanosleep(
                libc::CLOCK_MONOTONIC,
                libc::TIMER_ABSTIME,
                &ts,
                std::ptr::null_mut(),
            )
        };
        if rc != libc::EINTR {
            return;
        }
    }
}

/// Sets this thread's timer slack to 1 ns (the default 50 us would blur
/// every sleep and every receive timeout).
pub fn precise_timers() {
    // SAFETY: PR_SET_TIMERSLACK takes an unsigned long and touches only the
    // calling thread.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
}

fn setsockopt_int(fd: libc::c_int, opt: libc::c_int, value: libc::c_int) -> io::Result<()> {
    // SAFETY: valid fd and a pointer to an int of the given length.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            opt,
            &value as *const libc::c_int as *const libc::c_void,
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Asks for a receive (or send) buffer of `bytes`: beyond `net.core.rmem_max`
/// with SO_RCVBUFFORCE when allowed (root), else as much as SO_RCVBUF gives.
pub fn grow_buffer(sock: &impl AsRawFd, receive: bool, bytes: usize) -> io::Result<()> {
    let (force, plain) = if receive {
        (libc::SO_RCVBUFFORCE, libc::SO_RCVBUF)
    } else {
        (libc::SO_SNDBUFFORCE, libc::SO_SNDBUF)
    };
    let v = bytes.min(i32::MAX as usize / 2) as libc::c_int;
    setsockopt_int(sock.as_raw_fd(), force, v)
        .or_else(|_| setsockopt_int(sock.as_raw_fd(), plain, v))
}
