//! Helpers for the binaries' tests (feature `testkit`, dev-dependencies
//! only): temporary directories, free ports, certificates, and a child
//! process that says `ready`, is signalled, and is killed when dropped.

use std::io::{BufRead, BufReader};
use std::net::{Ipv4Addr, TcpListener, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

pub use rustix::process::Signal;

/// A fresh, empty directory under the system's temporary one, unique to
/// this process and call (tests of one binary run in parallel).
pub fn temp_dir(tag: &str) -> PathBuf {
    static N: AtomicU32 = AtomicU32::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("satbench-{tag}-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temporary directory");
    dir
}

/// A UDP port on 127.0.0.1 that was free a moment ago.
pub fn free_udp_port() -> u16 {
    let s = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).expect("bind udp");
    s.local_addr().expect("local addr").port()
}

/// A TCP port on 127.0.0.1 that was free a moment ago.
pub fn free_tcp_port() -> u16 {
    let l = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).expect("bind tcp");
    l.local_addr().expect("local addr").port()
}

/// A port free for both TCP and UDP on 127.0.0.1 (HTTPS and HTTP/3 share
/// one).
pub fn free_tcp_and_udp_port() -> u16 {
    for _ in 0..50 {
        let tcp = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).expect("bind tcp");
        let port = tcp.local_addr().expect("local addr").port();
        if UdpSocket::bind((Ipv4Addr::LOCALHOST, port)).is_ok() {
            return port;
        }
    }
    panic!("no port free for both TCP and UDP");
}

/// `DIR/cert.pem`, `key.pem` and `spki.txt` for `name` and 127.0.0.1, as
/// `origin gen-cert` writes them; returns `dir`.
pub fn gen_cert(dir: &Path, name: &str) -> PathBuf {
    let g = crate::cert::generate(&[name.to_string()], &[Ipv4Addr::LOCALHOST.into()])
        .expect("certificate");
    crate::cert::write(dir, &g).expect("write certificate");
    dir.to_path_buf()
}

/// A child process; killed and reaped when dropped, so a failing test
/// leaves nothing running.
pub struct Running {
    pub child: Child,
}

impl Running {
    pub fn signal(&self, sig: Signal) {
        let pid = rustix::process::Pid::from_child(&self.child);
        let _ = rustix::process::kill_process(pid, sig);
    }

    /// The exit status, once there is one within `timeout`.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let end = Instant::now() + timeout;
        loop {
            if let Some(s) = self.child.try_wait().expect("try_wait") {
                return Some(s);
            }
            if Instant::now() >= end {
                return None;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// SIGTERM, then the exit status (panics after `timeout`).
    pub fn terminate(&mut self, timeout: Duration) -> ExitStatus {
        self.signal(Signal::TERM);
        self.wait_exit(timeout)
            .unwrap_or_else(|| panic!("no exit within {timeout:?} of SIGTERM"))
    }

    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `cmd` with stdout piped and waits up to `timeout` for its first
/// line; Err(that line, or why there was none) unless it is `ready`.
pub fn spawn_ready(cmd: &mut Command, timeout: Duration) -> Result<Running, String> {
    let mut child = cmd
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("spawn: {e}"))?;
    let stdout = child.stdout.take().expect("piped stdout");
    let running = Running { child };
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    match rx.recv_timeout(timeout) {
        Ok(line) if line == "ready\n" => Ok(running),
        Ok(line) => Err(format!("first line {line:?}, not `ready`")),
        Err(_) => Err(format!("no `ready` within {timeout:?}")),
    }
}

/// `spawn_ready` of what `attempt` builds (a command, and what it was built
/// with, such as its ports), up to three times: a port "free a moment ago"
/// can be taken by another test before the server binds it, so each
/// attempt picks its ports afresh. The last error if none came up.
pub fn spawn_ready_on_fresh_ports<T>(
    timeout: Duration,
    mut attempt: impl FnMut() -> (Command, T),
) -> Result<(Running, T), String> {
    let mut last = String::new();
    for _ in 0..3 {
        let (mut cmd, with) = attempt();
        match spawn_ready(&mut cmd, timeout) {
            Ok(running) => return Ok((running, with)),
            Err(e) => last = e,
        }
    }
    Err(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temp_dirs_are_fresh_and_distinct() {
        let (a, b) = (temp_dir("kit"), temp_dir("kit"));
        assert_ne!(a, b);
        assert!(a.is_dir() && std::fs::read_dir(&a).unwrap().next().is_none());
        std::fs::remove_dir_all(a).unwrap();
        std::fs::remove_dir_all(b).unwrap();
    }

    #[test]
    fn a_ready_child_is_signalled_and_reaped() {
        let sh = "trap 'exit 7' TERM; echo ready; while :; do sleep 0.05; done";
        let mut r =
            spawn_ready(Command::new("sh").args(["-c", sh]), Duration::from_secs(5)).unwrap();
        assert!(r.is_running());
        assert_eq!(r.terminate(Duration::from_secs(5)).code(), Some(7));
        let e = spawn_ready(
            Command::new("sh").args(["-c", "echo nope"]),
            Duration::from_secs(5),
        );
        assert_eq!(e.err().unwrap(), "first line \"nope\\n\", not `ready`");
    }

    #[test]
    fn certificates_and_ports() {
        let d = temp_dir("kit-cert");
        gen_cert(&d, "a.test");
        assert!(d.join("cert.pem").exists() && d.join("key.pem").exists());
        assert_ne!(free_udp_port(), 0);
        assert_ne!(free_tcp_port(), 0);
        assert_ne!(free_tcp_and_udp_port(), 0);
        std::fs::remove_dir_all(d).unwrap();
    }
}
