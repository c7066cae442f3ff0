//! Attaching to an existing (persistent) tun device inside a namespace.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;

use nix::errno::Errno;

/// `struct ifreq` as TUNSETIFF reads it: a name and the flags (the union is
/// 24 bytes; only its first short is used here).
#[repr(C)]
struct IfReq {
    name: [u8; libc::IFNAMSIZ],
    flags: libc::c_short,
    _pad: [u8; 22],
}

fn if_exists(dev: &str) -> io::Result<bool> {
    // if_nametoindex asks through a socket, so it sees the calling thread's
    // network namespace.
    match nix::net::if_::if_nametoindex(dev) {
        Ok(_) => Ok(true),
        Err(Errno::ENODEV | Errno::ENXIO) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// Opens `/dev/net/tun` and attaches it to the existing tun device `dev` of
/// the calling thread's namespace (IFF_TUN | IFF_NO_PI). Refuses to create a
/// device that does not exist (TUNSETIFF alone would create one).
pub fn attach(dev: &str) -> io::Result<File> {
    if !if_exists(dev)? {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("no interface named {dev:?} here"),
        ));
    }
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/net/tun")?;
    let mut req = IfReq {
        name: [0; libc::IFNAMSIZ],
        flags: (libc::IFF_TUN | libc::IFF_NO_PI) as libc::c_short,
        _pad: [0; 22],
    };
    let bytes = dev.as_bytes();
    if bytes.len() >= libc::IFNAMSIZ {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "interface name too long",
        ));
    }
    req.name[..bytes.len()].copy_from_slice(bytes);
    // SAFETY: TUNSETIFF reads and writes a struct ifreq, which IfReq lays
    // out in full (name, flags, the rest of the union), and `req` outlives
    // the call. Neither rustix nor nix wraps TUN ioctls safely.
    let rc = unsafe { libc::ioctl(f.as_raw_fd(), libc::TUNSETIFF as _, &mut req as *mut IfReq) };
    if rc < 0 {
        let e = io::Error::last_os_error();
        let hint = match e.raw_os_error() {
            Some(libc::EBUSY) => " (another process is attached to it)",
            Some(libc::EINVAL) => " (is it a tun device? `ip tuntap add dev NAME mode tun`)",
            Some(libc::EPERM) => " (needs CAP_NET_ADMIN or the device's owner)",
            _ => "",
        };
        return Err(io::Error::new(e.kind(), format!("TUNSETIFF: {e}{hint}")));
    }
    Ok(f)
}
