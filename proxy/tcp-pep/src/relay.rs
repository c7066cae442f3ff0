//! Relaying one connection: two pumps (client → server, server → client),
//! each moving bytes socket → pipe → socket with splice(2), or through a
//! user-space buffer where splice is refused. What happens when a
//! direction ends (FIN, reset, error) is decided by `Conn`, plain state.

use std::io;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;

use tokio::io::Interest;
use tokio::net::TcpStream;
use tokio::time::Instant;

use crate::stats::End;
use crate::sys;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    /// Client → server.
    Up,
    /// Server → client.
    Down,
}

/// How one direction ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DirEnd {
    /// The sender shut down its side (FIN) and everything it sent was passed on.
    Eof,
    /// Either socket of the direction was reset or is gone.
    Reset(String),
    /// Anything else.
    Error(String),
}

/// Errors that mean the peer is gone rather than that we did wrong.
pub fn classify(e: &io::Error) -> DirEnd {
    match e.raw_os_error() {
        Some(
            libc::ECONNRESET
            | libc::EPIPE
            | libc::ECONNABORTED
            | libc::ETIMEDOUT
            | libc::EHOSTUNREACH
            | libc::ENETUNREACH,
        ) => DirEnd::Reset(e.to_string()),
        _ => DirEnd::Error(e.to_string()),
    }
}

/// What to do after a direction ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Pass the FIN on: shut down writing on the direction's receiver,
    /// keep relaying the other way.
    ShutdownWrite(Dir),
    /// Both directions are done: close both sockets normally.
    Close(End),
    /// Reset both sockets (SO_LINGER 0, close).
    Abort(End, String),
}

/// The connection's two directions.
#[derive(Debug, Default)]
pub struct Conn {
    up_done: bool,
    down_done: bool,
}

impl Conn {
    pub fn done(&self, d: Dir) -> bool {
        match d {
            Dir::Up => self.up_done,
            Dir::Down => self.down_done,
        }
    }

    pub fn ended(&mut self, d: Dir, how: DirEnd) -> Action {
        match d {
            Dir::Up => self.up_done = true,
            Dir::Down => self.down_done = true,
        }
        match how {
            DirEnd::Eof if self.up_done && self.down_done => Action::Close(End::Fin),
            DirEnd::Eof => Action::ShutdownWrite(d),
            DirEnd::Reset(why) => Action::Abort(End::Reset, why),
            DirEnd::Error(why) => Action::Abort(End::Error, why),
        }
    }
}

/// The time of the last byte moved either way, shared by both pumps.
pub struct Activity {
    start: Instant,
    last_ms: AtomicU64,
}

impl Activity {
    pub fn new() -> Activity {
        Activity {
            start: Instant::now(),
            last_ms: AtomicU64::new(0),
        }
    }

    fn touch(&self) {
        self.last_ms
            .store(self.start.elapsed().as_millis() as u64, Relaxed);
    }

    /// Completes once nothing has moved for `idle`.
    pub async fn idle(&self, idle: Duration) {
        loop {
            let deadline = self.start + Duration::from_millis(self.last_ms.load(Relaxed)) + idle;
            if Instant::now() >= deadline {
                return;
            }
            tokio::time::sleep_until(deadline).await;
        }
    }
}

impl Default for Activity {
    fn default() -> Self {
        Activity::new()
    }
}

pub struct PumpConfig {
    pub buf_bytes: usize,
    pub splice: bool,
    pub idle_timeout: Duration,
}

/// The proxy-wide counters a relay adds to.
#[derive(Clone, Copy)]
pub struct Totals<'a> {
    pub up: &'a AtomicU64,
    pub down: &'a AtomicU64,
    pub fallbacks: &'a AtomicU64,
}

#[derive(Debug)]
pub struct Outcome {
    pub end: End,
    pub up: u64,
    pub down: u64,
    pub detail: Option<String>,
}

/// Relays between `client` and `server` until both directions finished,
/// either side reset, or nothing moved for the idle timeout.
pub async fn relay(
    client: &TcpStream,
    server: &TcpStream,
    cfg: &PumpConfig,
    t: Totals<'_>,
) -> Outcome {
    let act = Activity::new();
    let (up_n, down_n) = (AtomicU64::new(0), AtomicU64::new(0));
    let up = pump(client, server, cfg, &up_n, t.up, &act, t.fallbacks);
    let down = pump(server, client, cfg, &down_n, t.down, &act, t.fallbacks);
    let idle = act.idle(cfg.idle_timeout);
    tokio::pin!(up, down, idle);
    let mut conn = Conn::default();
    let (end, detail) = loop {
        let (d, how) = tokio::select! {
            r = &mut up, if !conn.done(Dir::Up) => (Dir::Up, r),
            r = &mut down, if !conn.done(Dir::Down) => (Dir::Down, r),
            _ = &mut idle => break (End::Idle, None),
        };
        match conn.ended(d, how) {
            Action::ShutdownWrite(d) => {
                let to = if d == Dir::Up { server } else { client };
                if let Err(e) = sys::shutdown_write(to) {
                    abort(client, server);
                    break (End::Reset, Some(format!("passing FIN on: {e}")));
                }
            }
            Action::Close(end) => break (end, None),
            Action::Abort(end, why) => {
                abort(client, server);
                break (end, Some(why));
            }
        }
    };
    Outcome {
        end,
        up: up_n.load(Relaxed),
        down: down_n.load(Relaxed),
        detail,
    }
}

/// Both sockets send RST when dropped.
pub fn abort(a: &TcpStream, b: &TcpStream) {
    let _ = sys::set_linger_zero(a);
    let _ = sys::set_linger_zero(b);
}

/// Moves bytes from `src` to `dst` until `src` sends FIN (then returns
/// `Eof`; the caller passes the FIN on) or either fails. `moved` counts
/// bytes delivered to `dst`; `fallback` is bumped when splice is refused.
pub async fn pump(
    src: &TcpStream,
    dst: &TcpStream,
    cfg: &PumpConfig,
    moved: &AtomicU64,
    total: &AtomicU64,
    act: &Activity,
    fallback: &AtomicU64,
) -> DirEnd {
    if cfg.splice {
        match sys::Pipe::new(cfg.buf_bytes) {
            Ok(pipe) => {
                match splice_pump(src, dst, &pipe, cfg.buf_bytes, moved, total, act).await {
                    Some(end) => return end,
                    None => {
                        fallback.fetch_add(1, Relaxed);
                    }
                }
            }
            Err(e) => return DirEnd::Error(format!("pipe: {e}")),
        }
    }
    copy_pump(src, dst, cfg.buf_bytes, moved, total, act).await
}

/// None when the kernel refuses splice for these sockets before any byte
/// moved (the caller copies instead).
async fn splice_pump(
    src: &TcpStream,
    dst: &TcpStream,
    pipe: &sys::Pipe,
    len: usize,
    moved: &AtomicU64,
    total: &AtomicU64,
    act: &Activity,
) -> Option<DirEnd> {
    let mut first = true;
    loop {
        // The pipe is empty here, so EAGAIN means the socket has nothing.
        let n = loop {
            if let Err(e) = src.readable().await {
                return Some(classify(&e));
            }
            match src.try_io(Interest::READABLE, || sys::splice(src, &pipe.w, len)) {
                Ok(n) => break n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                Err(e) if first && e.raw_os_error() == Some(libc::EINVAL) => return None,
                Err(e) => return Some(classify(&e)),
            }
        };
        first = false;
        if n == 0 {
            return Some(DirEnd::Eof);
        }
        act.touch();
        let mut pending = n;
        while pending > 0 {
            if let Err(e) = dst.writable().await {
                return Some(classify(&e));
            }
            match dst.try_io(Interest::WRITABLE, || sys::splice(&pipe.r, dst, pending)) {
                Ok(m) => {
                    pending -= m;
                    moved.fetch_add(m as u64, Relaxed);
                    total.fetch_add(m as u64, Relaxed);
                    act.touch();
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                Err(e) => return Some(classify(&e)),
            }
        }
    }
}

async fn copy_pump(
    src: &TcpStream,
    dst: &TcpStream,
    len: usize,
    moved: &AtomicU64,
    total: &AtomicU64,
    act: &Activity,
) -> DirEnd {
    let mut buf = vec![0u8; len];
    loop {
        let n = loop {
            if let Err(e) = src.readable().await {
                return classify(&e);
            }
            match src.try_read(&mut buf) {
                Ok(n) => break n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                Err(e) => return classify(&e),
            }
        };
        if n == 0 {
            return DirEnd::Eof;
        }
        act.touch();
        let mut off = 0;
        while off < n {
            if let Err(e) = dst.writable().await {
                return classify(&e);
            }
            match dst.try_write(&buf[off..n]) {
                Ok(m) => {
                    off += m;
                    moved.fetch_add(m as u64, Relaxed);
                    total.fetch_add(m as u64, Relaxed);
                    act.touch();
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                Err(e) => return classify(&e),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fin_each_way_closes_cleanly() {
        let mut c = Conn::default();
        assert_eq!(
            c.ended(Dir::Up, DirEnd::Eof),
            Action::ShutdownWrite(Dir::Up)
        );
        assert!(c.done(Dir::Up) && !c.done(Dir::Down));
        assert_eq!(c.ended(Dir::Down, DirEnd::Eof), Action::Close(End::Fin));
        let mut c = Conn::default();
        assert_eq!(
            c.ended(Dir::Down, DirEnd::Eof),
            Action::ShutdownWrite(Dir::Down)
        );
        assert_eq!(c.ended(Dir::Up, DirEnd::Eof), Action::Close(End::Fin));
    }

    #[test]
    fn a_reset_aborts_both_sides_even_after_a_half_close() {
        let mut c = Conn::default();
        assert_eq!(
            c.ended(Dir::Up, DirEnd::Reset("r".into())),
            Action::Abort(End::Reset, "r".into())
        );
        let mut c = Conn::default();
        c.ended(Dir::Up, DirEnd::Eof);
        assert_eq!(
            c.ended(Dir::Down, DirEnd::Reset("x".into())),
            Action::Abort(End::Reset, "x".into())
        );
        let mut c = Conn::default();
        assert_eq!(
            c.ended(Dir::Down, DirEnd::Error("e".into())),
            Action::Abort(End::Error, "e".into())
        );
    }

    #[test]
    fn peer_gone_errors_are_resets() {
        for errno in [libc::ECONNRESET, libc::EPIPE, libc::ETIMEDOUT] {
            assert!(
                matches!(
                    classify(&io::Error::from_raw_os_error(errno)),
                    DirEnd::Reset(_)
                ),
                "{errno}"
            );
        }
        assert!(matches!(
            classify(&io::Error::from_raw_os_error(libc::EBADF)),
            DirEnd::Error(_)
        ));
    }

    #[tokio::test(start_paused = true)]
    async fn idle_waits_for_the_last_activity() {
        let a = Activity::new();
        let t0 = tokio::time::Instant::now();
        tokio::time::sleep(Duration::from_millis(300)).await;
        a.last_ms.store(300, Relaxed);
        a.idle(Duration::from_millis(1000)).await;
        assert!(
            t0.elapsed() >= Duration::from_millis(1300),
            "{:?}",
            t0.elapsed()
        );
    }
}
