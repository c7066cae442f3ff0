//! TCP_INFO on a socket (and TCP_CONGESTION, from satbench-transport).
//!
//! `libc::tcp_info` stops at `tcpi_total_retrans`; the sender trace also
//! wants `tcpi_bytes_acked`, `tcpi_bytes_sent` and friends, so the kernel's
//! struct (include/uapi/linux/tcp.h) is read as bytes at fixed offsets.
//! Fields a kernel does not return (older kernels return a shorter struct)
//! come out as `None`.

use std::os::fd::{BorrowedFd, RawFd};

/// The fields the trace uses. Times in µs, windows in segments, as the
/// kernel gives them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpInfo {
    pub state: u8,
    pub ca_state: u8,
    pub snd_mss: u32,
    pub rtt_us: u32,
    pub rttvar_us: u32,
    pub snd_ssthresh: u32,
    pub snd_cwnd: u32,
    pub total_retrans: u32,
    pub bytes_acked: Option<u64>,
    pub bytes_sent: Option<u64>,
    pub bytes_retrans: Option<u64>,
    pub delivery_rate: Option<u64>,
    pub notsent_bytes: Option<u32>,
}

/// Byte offsets in `struct tcp_info`.
mod off {
    pub const STATE: usize = 0;
    pub const CA_STATE: usize = 1;
    pub const SND_MSS: usize = 16;
    pub const RTT: usize = 68;
    pub const RTTVAR: usize = 72;
    pub const SND_SSTHRESH: usize = 76;
    pub const SND_CWND: usize = 80;
    pub const TOTAL_RETRANS: usize = 100;
    pub const BYTES_ACKED: usize = 120;
    pub const NOTSENT_BYTES: usize = 144;
    pub const DELIVERY_RATE: usize = 160;
    pub const BYTES_SENT: usize = 200;
    pub const BYTES_RETRANS: usize = 208;
    /// Everything up to `tcpi_bytes_retrans`: what `read` asks for.
    pub const WANTED: usize = 216;
}

/// The kernel's "no slow-start threshold yet" (TCP_INFINITE_SSTHRESH).
pub const INFINITE_SSTHRESH: u32 = 0x7fff_ffff;

fn u32_at(b: &[u8], o: usize) -> Option<u32> {
    b.get(o..o + 4)
        .map(|s| u32::from_ne_bytes(s.try_into().unwrap()))
}

fn u64_at(b: &[u8], o: usize) -> Option<u64> {
    b.get(o..o + 8)
        .map(|s| u64::from_ne_bytes(s.try_into().unwrap()))
}

impl TcpInfo {
    /// Parses what getsockopt(TCP_INFO) returned (`b` is as long as the
    /// kernel said). None if even the basic fields are missing.
    pub fn parse(b: &[u8]) -> Option<TcpInfo> {
        Some(TcpInfo {
            state: *b.get(off::STATE)?,
            ca_state: *b.get(off::CA_STATE)?,
            snd_mss: u32_at(b, off::SND_MSS)?,
            rtt_us: u32_at(b, off::RTT)?,
            rttvar_us: u32_at(b, off::RTTVAR)?,
            snd_ssthresh: u32_at(b, off::SND_SSTHRESH)?,
            snd_cwnd: u32_at(b, off::SND_CWND)?,
            total_retrans: u32_at(b, off::TOTAL_RETRANS)?,
            bytes_acked: u64_at(b, off::BYTES_ACKED),
            bytes_sent: u64_at(b, off::BYTES_SENT),
            bytes_retrans: u64_at(b, off::BYTES_RETRANS),
            delivery_rate: u64_at(b, off::DELIVERY_RATE),
            notsent_bytes: u32_at(b, off::NOTSENT_BYTES),
        })
    }

    /// The congestion window in bytes: segments × sender MSS.
    pub fn cwnd_bytes(&self) -> u64 {
        u64::from(self.snd_cwnd) * u64::from(self.snd_mss)
    }

    /// The slow-start threshold in bytes, or None while there is none.
    pub fn ssthresh_bytes(&self) -> Option<u64> {
        (self.snd_ssthresh < INFINITE_SSTHRESH)
            .then(|| u64::from(self.snd_ssthresh) * u64::from(self.snd_mss))
    }
}

/// getsockopt(TCP_INFO).
pub fn read(fd: RawFd) -> std::io::Result<TcpInfo> {
    let mut buf = [0u8; off::WANTED];
    let mut len = buf.len() as libc::socklen_t;
    // Neither rustix nor nix reads TCP_INFO.
    // SAFETY: buf outlives the call and len is its size.
    let rc = unsafe {
        libc::getsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            buf.as_mut_ptr().cast(),
            &mut len,
        )
    };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    let len = (len as usize).min(buf.len());
    TcpInfo::parse(&buf[..len])
        .ok_or_else(|| std::io::Error::other(format!("TCP_INFO: only {len} bytes")))
}

/// setsockopt(TCP_CONGESTION) on a socket its caller holds open. Set on a
/// listening socket, accepted sockets inherit it.
pub fn set_congestion(fd: RawFd, name: &str) -> std::io::Result<()> {
    satbench_transport::tcp::set_congestion(borrow(fd), name)
}

/// getsockopt(TCP_CONGESTION) on a socket its caller holds open.
pub fn congestion(fd: RawFd) -> std::io::Result<String> {
    satbench_transport::tcp::congestion(borrow(fd))
}

/// The trace samples a socket that its sending task borrows mutably, so
/// callers hand over the raw descriptor rather than the socket.
fn borrow<'a>(fd: RawFd) -> BorrowedFd<'a> {
    // SAFETY: callers pass the descriptor of a socket they keep open, and
    // the borrow only lasts the get/setsockopt call, which touches no memory
    // of ours.
    unsafe { BorrowedFd::borrow_raw(fd) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::os::fd::AsRawFd;

    fn put32(b: &mut [u8], o: usize, v: u32) {
        b[o..o + 4].copy_from_slice(&v.to_ne_bytes());
    }

    fn put64(b: &mut [u8], o: usize, v: u64) {
        b[o..o + 8].copy_from_slice(&v.to_ne_bytes());
    }

    #[test]
    fn parses_fields_at_the_kernel_offsets() {
        let mut b = vec![0u8; off::WANTED];
        b[0] = 1; // TCP_ESTABLISHED
        put32(&mut b, off::SND_MSS, 1448);
        put32(&mut b, off::RTT, 580_000);
        put32(&mut b, off::SND_SSTHRESH, 70);
        put32(&mut b, off::SND_CWND, 100);
        put64(&mut b, off::BYTES_ACKED, 123_456);
        put64(&mut b, off::BYTES_SENT, 200_000);
        let i = TcpInfo::parse(&b).unwrap();
        assert_eq!(i.state, 1);
        assert_eq!(i.rtt_us, 580_000);
        assert_eq!(i.cwnd_bytes(), 144_800);
        assert_eq!(i.ssthresh_bytes(), Some(101_360));
        assert_eq!(i.bytes_acked, Some(123_456));
        assert_eq!(i.bytes_sent, Some(200_000));
    }

    #[test]
    fn an_older_kernel_leaves_the_newer_fields_out() {
        let b = vec![0u8; 104]; // up to tcpi_total_retrans (Linux 3.x)
        let i = TcpInfo::parse(&b).unwrap();
        assert_eq!((i.bytes_acked, i.bytes_sent), (None, None));
        assert!(TcpInfo::parse(&b[..50]).is_none());
    }

    #[test]
    fn no_ssthresh_before_the_first_loss() {
        let i = TcpInfo {
            snd_ssthresh: INFINITE_SSTHRESH,
            snd_mss: 1448,
            ..Default::default()
        };
        assert_eq!(i.ssthresh_bytes(), None);
    }

    #[test]
    fn reads_a_real_socket() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let mut c = std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (mut s, _) = l.accept().unwrap();
        s.write_all(&[7u8; 100_000]).unwrap();
        let mut got = vec![0u8; 100_000];
        c.read_exact(&mut got).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let i = read(s.as_raw_fd()).unwrap();
        assert_eq!(i.state, 1, "{i:?}");
        assert!(i.snd_mss > 500, "{i:?}");
        assert!(i.snd_cwnd >= 2, "{i:?}");
        // every kernel since 4.19 has tcpi_bytes_sent
        assert!(i.bytes_sent.unwrap() >= 100_000, "{i:?}");
        assert_eq!(i.bytes_acked, Some(100_000), "{i:?}");
        assert!(!congestion(s.as_raw_fd()).unwrap().is_empty());
        set_congestion(s.as_raw_fd(), "reno").unwrap();
        assert_eq!(congestion(s.as_raw_fd()).unwrap(), "reno");
        assert!(set_congestion(s.as_raw_fd(), "no-such-cc").is_err());
    }
}
