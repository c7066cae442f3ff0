//! The system calls tokio does not offer: socket options, pipes,
//! splice(2), the open-files limit. Each returns io::Result with errno
//! intact.

use std::io;
use std::os::fd::{AsFd, OwnedFd};

use rustix::net::sockopt;
use rustix::pipe::{PipeFlags, SpliceFlags};
use rustix::process::{Resource, Rlimit};

pub use satbench_transport::tcp::{set_congestion, set_linger_zero, set_transparent};

/// SO_SNDBUFFORCE / SO_RCVBUFFORCE: as root, not capped by net.core.*mem_max
/// (which a network namespace cannot change). Falls back to the plain
/// options without CAP_NET_ADMIN.
pub fn set_buffers(fd: impl AsFd, sndbuf: Option<u32>, rcvbuf: Option<u32>) -> io::Result<()> {
    let fd = fd.as_fd();
    if let Some(v) = sndbuf {
        sockopt::set_socket_send_buffer_size_force(fd, v as usize)
            .or_else(|_| sockopt::set_socket_send_buffer_size(fd, v as usize))?;
    }
    if let Some(v) = rcvbuf {
        sockopt::set_socket_recv_buffer_size_force(fd, v as usize)
            .or_else(|_| sockopt::set_socket_recv_buffer_size(fd, v as usize))?;
    }
    Ok(())
}

pub fn shutdown_write(fd: impl AsFd) -> io::Result<()> {
    Ok(rustix::net::shutdown(fd, rustix::net::Shutdown::Write)?)
}

/// A non-blocking pipe whose capacity is about `bytes` (the kernel rounds
/// up to a power of two pages; an unprivileged caller may get less).
pub struct Pipe {
    pub r: OwnedFd,
    pub w: OwnedFd,
}

impl Pipe {
    pub fn new(bytes: usize) -> io::Result<Pipe> {
        let (r, w) = rustix::pipe::pipe_with(PipeFlags::NONBLOCK | PipeFlags::CLOEXEC)?;
        // Best effort: the default 64 KiB still works, only slower.
        let _ = rustix::pipe::fcntl_setpipe_size(&w, bytes);
        Ok(Pipe { r, w })
    }
}

/// splice(2) without blocking; the sockets are non-blocking already.
pub fn splice(from: impl AsFd, to: impl AsFd, len: usize) -> io::Result<usize> {
    Ok(rustix::pipe::splice(
        from,
        None,
        to,
        None,
        len,
        SpliceFlags::MOVE | SpliceFlags::NONBLOCK,
    )?)
}

/// Raises the soft open-files limit to the hard one; returns the new soft
/// limit. Each relayed connection holds six descriptors.
pub fn raise_nofile() -> io::Result<u64> {
    let l = rustix::process::getrlimit(Resource::Nofile);
    // None is RLIM_INFINITY.
    let (cur, max) = (l.current.unwrap_or(u64::MAX), l.maximum.unwrap_or(u64::MAX));
    if cur < max {
        rustix::process::setrlimit(
            Resource::Nofile,
            Rlimit {
                current: l.maximum,
                maximum: l.maximum,
            },
        )?;
    }
    Ok(cur.max(max))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_buffers_reach_the_socket() {
        let s = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        set_buffers(&s, Some(65536), None).unwrap();
        // the kernel doubles what it is given, for its bookkeeping
        assert_eq!(sockopt::socket_send_buffer_size(&s).unwrap(), 2 * 65536);
        set_buffers(&s, None, Some(8192)).unwrap();
        assert_eq!(sockopt::socket_recv_buffer_size(&s).unwrap(), 2 * 8192);
    }

    #[test]
    fn the_open_files_limit_ends_at_the_hard_one() {
        let n = raise_nofile().unwrap();
        let l = rustix::process::getrlimit(Resource::Nofile);
        assert_eq!(l.current.unwrap_or(u64::MAX), n);
        assert_eq!(l.current, l.maximum);
    }

    #[test]
    fn a_pipe_is_non_blocking() {
        let p = Pipe::new(1 << 16).unwrap();
        let mut buf = [0u8; 4];
        let e = rustix::io::read(&p.r, &mut buf).unwrap_err();
        assert_eq!(e, rustix::io::Errno::AGAIN);
    }
}
