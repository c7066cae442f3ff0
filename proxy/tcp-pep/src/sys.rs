//! Thin wrappers over the system calls tokio does not offer: socket
//! options, pipes, splice(2). Each returns io::Result with errno intact.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

fn cvt(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

fn setsockopt<T>(fd: RawFd, level: libc::c_int, name: libc::c_int, v: &T) -> io::Result<()> {
    let r = unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            v as *const T as *const libc::c_void,
            std::mem::size_of::<T>() as libc::socklen_t,
        )
    };
    cvt(r).map(drop)
}

pub fn set_int(fd: RawFd, level: libc::c_int, name: libc::c_int, v: libc::c_int) -> io::Result<()> {
    setsockopt(fd, level, name, &v)
}

/// IP_TRANSPARENT: lets a listener accept connections TPROXY hands it for
/// addresses that are not this host's.
pub fn set_transparent(fd: RawFd) -> io::Result<()> {
    set_int(fd, libc::SOL_IP, libc::IP_TRANSPARENT, 1)
}

pub fn set_congestion(fd: RawFd, cc: &str) -> io::Result<()> {
    let r = unsafe {
        libc::setsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_CONGESTION,
            cc.as_ptr() as *const libc::c_void,
            cc.len() as libc::socklen_t,
        )
    };
    cvt(r).map(drop)
}

pub fn congestion(fd: RawFd) -> io::Result<String> {
    let mut buf = [0u8; 16];
    let mut len = buf.len() as libc::socklen_t;
    let r = unsafe {
        libc::getsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_CONGESTION,
            buf.as_mut_ptr() as *mut libc::c_void,
            &mut len,
        )
    };
    cvt(r)?;
    let s = &buf[..len as usize];
    let end = s.iter().position(|&b| b == 0).unwrap_or(s.len());
    Ok(String::from_utf8_lossy(&s[..end]).into_owned())
}

/// SO_SNDBUFFORCE / SO_RCVBUFFORCE: as root, not capped by net.core.*mem_max
/// (which a network namespace cannot change). Falls back to the plain
/// options without CAP_NET_ADMIN.
pub fn set_buffers(fd: RawFd, sndbuf: Option<u32>, rcvbuf: Option<u32>) -> io::Result<()> {
    for (v, force, plain) in [
        (sndbuf, libc::SO_SNDBUFFORCE, libc::SO_SNDBUF),
        (rcvbuf, libc::SO_RCVBUFFORCE, libc::SO_RCVBUF),
    ] {
        if let Some(v) = v {
            let v = v as libc::c_int;
            if set_int(fd, libc::SOL_SOCKET, force, v).is_err() {
                set_int(fd, libc::SOL_SOCKET, plain, v)?;
            }
        }
    }
    Ok(())
}

/// SO_LINGER 0: the next close sends RST, so a reset on one side becomes a
/// reset (an abort) on the other rather than a clean FIN.
pub fn set_linger_zero(fd: RawFd) -> io::Result<()> {
    let l = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    setsockopt(fd, libc::SOL_SOCKET, libc::SO_LINGER, &l)
}

pub fn shutdown_write(fd: RawFd) -> io::Result<()> {
    cvt(unsafe { libc::shutdown(fd, libc::SHUT_WR) }).map(drop)
}

/// A non-blocking pipe whose capacity is about `bytes` (the kernel rounds
/// up to a power of two pages; an unprivileged caller may get less).
pub struct Pipe {
    pub r: OwnedFd,
    pub w: OwnedFd,
}

impl Pipe {
    pub fn new(bytes: usize) -> io::Result<Pipe> {
        let mut fds = [0 as libc::c_int; 2];
        cvt(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_NONBLOCK | libc::O_CLOEXEC) })?;
        let p = unsafe {
            Pipe {
                r: OwnedFd::from_raw_fd(fds[0]),
                w: OwnedFd::from_raw_fd(fds[1]),
            }
        };
        // Best effort: the default 64 KiB still works, only slower.
        unsafe { libc::fcntl(p.w.as_raw_fd(), libc::F_SETPIPE_SZ, bytes as libc::c_int) };
        Ok(p)
    }
}

/// splice(2) without blocking; the sockets are non-blocking already.
pub fn splice(from: RawFd, to: RawFd, len: usize) -> io::Result<usize> {
    let r = unsafe {
        libc::splice(
            from,
            std::ptr::null_mut(),
            to,
            std::ptr::null_mut(),
            len,
            libc::SPLICE_F_MOVE | libc::SPLICE_F_NONBLOCK,
        )
    };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r as usize)
    }
}

/// Raises the soft open-files limit to the hard one; returns the new soft
/// limit. Each relayed connection holds six descriptors.
pub fn raise_nofile() -> io::Result<u64> {
    let mut l = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    cvt(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut l) })?;
    if l.rlim_cur < l.rlim_max {
        l.rlim_cur = l.rlim_max;
        cvt(unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &l) })?;
    }
    Ok(l.rlim_cur)
}
