//! The sender trace: one JSON line per connection about every `INTERVAL`,
//! made from plain values (quinn's `ConnectionStats`, the kernel's
//! TCP_INFO) so the lines can be tested without a network.
//!
//! A line: `{"conn":3,"proto":"tcp","peer":"198.18.1.2:40112","t_ms":1200.4,
//! "unix_ms":…,"bytes_sent":…,"cwnd":…,"rtt_ms":…,…,"final":false}`.
//! `t_ms` counts from the moment the server accepted the connection;
//! `unix_ms` lets lines be matched with other clocks on the machine.

use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Serialize;

use crate::bins::ms;
use crate::tcpinfo::TcpInfo;

pub const INTERVAL: Duration = Duration::from_millis(100);

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct TraceLine {
    pub conn: u64,
    pub proto: &'static str,
    pub peer: String,
    pub t_ms: f64,
    pub unix_ms: u64,
    /// Bytes on the wire so far: for TCP the kernel's `tcpi_bytes_sent`
    /// (payload incl. retransmissions), for QUIC quinn's UDP payload bytes
    /// (headers, retransmissions and ACKs included).
    pub bytes_sent: u64,
    /// Body bytes the application handed to the transport (QUIC buffers up
    /// to its send window, TCP up to its socket buffer, ahead of the wire).
    pub app_bytes: u64,
    /// TCP: `tcpi_bytes_acked`; QUIC: none (quinn does not count it).
    pub bytes_acked: Option<u64>,
    /// Congestion window in bytes: quinn's `path.cwnd`, or
    /// `tcpi_snd_cwnd × tcpi_snd_mss`.
    pub cwnd: u64,
    /// TCP only: slow-start threshold in bytes, null before the first loss.
    pub ssthresh: Option<u64>,
    /// Smoothed RTT.
    pub rtt_ms: f64,
    /// TCP: `tcpi_total_retrans` (segments); QUIC: `path.lost_packets`.
    pub lost_packets: u64,
    pub congestion_events: Option<u64>,
    /// The last line of this connection.
    #[serde(rename = "final")]
    pub last: bool,
}

fn unix_ms() -> u64 {
    satbench_transport::time::unix_now().as_millis() as u64
}

/// Who a line is about and when.
#[derive(Clone, Debug)]
pub struct Stamp {
    pub conn: u64,
    pub peer: String,
    pub elapsed: Duration,
    pub unix_ms: u64,
    pub last: bool,
}

impl Stamp {
    pub fn now(conn: u64, peer: &str, elapsed: Duration, last: bool) -> Stamp {
        Stamp {
            conn,
            peer: peer.to_string(),
            elapsed,
            unix_ms: unix_ms(),
            last,
        }
    }
}

pub fn quic_line(s: Stamp, stats: &quinn::ConnectionStats, app_bytes: u64) -> TraceLine {
    TraceLine {
        conn: s.conn,
        proto: "quic",
        peer: s.peer,
        t_ms: ms(s.elapsed),
        unix_ms: s.unix_ms,
        bytes_sent: stats.udp_tx.bytes,
        app_bytes,
        bytes_acked: None,
        cwnd: stats.path.cwnd,
        ssthresh: None,
        rtt_ms: ms(stats.path.rtt),
        lost_packets: stats.path.lost_packets,
        congestion_events: Some(stats.path.congestion_events),
        last: s.last,
    }
}

pub fn tcp_line(s: Stamp, info: &TcpInfo, app_bytes: u64) -> TraceLine {
    TraceLine {
        conn: s.conn,
        proto: "tcp",
        peer: s.peer,
        t_ms: ms(s.elapsed),
        unix_ms: s.unix_ms,
        // kernels before 4.19 lack tcpi_bytes_sent: what left the app is the
        // closest there is
        bytes_sent: info.bytes_sent.unwrap_or(app_bytes),
        app_bytes,
        bytes_acked: info.bytes_acked,
        cwnd: info.cwnd_bytes(),
        ssthresh: info.ssthresh_bytes(),
        rtt_ms: f64::from(info.rtt_us) / 1000.0,
        lost_packets: u64::from(info.total_retrans),
        congestion_events: None,
        last: s.last,
    }
}

/// Where lines go: a file shared by every connection (whole lines, one
/// write each, so lines of concurrent connections never interleave), or
/// nowhere.
#[derive(Clone)]
pub struct Trace {
    file: Option<Arc<Mutex<std::fs::File>>>,
}

impl Trace {
    pub fn none() -> Trace {
        Trace { file: None }
    }

    pub fn to_file(path: &Path) -> std::io::Result<Trace> {
        let f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        Ok(Trace {
            file: Some(Arc::new(Mutex::new(f))),
        })
    }

    pub fn enabled(&self) -> bool {
        self.file.is_some()
    }

    pub fn write(&self, line: &TraceLine) {
        let Some(f) = &self.file else { return };
        let Ok(mut text) = serde_json::to_string(line) else {
            return;
        };
        text.push('\n');
        if let Ok(mut f) = f.lock() {
            // a full disk must not stop the transfer being measured
            let _ = f.write_all(text.as_bytes());
        }
    }
}

/// Runs `work` to its end while calling `sample(false)` at once and then
/// every `interval`, and `sample(true)` once it has ended, so a trace
/// covers the whole transfer including its last moment.
pub async fn sample_while<F: std::future::Future>(
    work: F,
    interval: Duration,
    mut sample: impl FnMut(bool),
) -> F::Output {
    let mut tick = tokio::time::interval(interval);
    // after a stall, one sample, not a burst of catching-up ones
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tokio::pin!(work);
    let out = loop {
        tokio::select! {
            biased;
            out = &mut work => break out,
            _ = tick.tick() => sample(false),
        }
    };
    sample(true);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn samples_at_start_every_interval_and_at_the_end() {
        let start = tokio::time::Instant::now();
        let mut at = Vec::new();
        let out = sample_while(
            tokio::time::sleep(Duration::from_millis(350)),
            INTERVAL,
            |last| at.push((start.elapsed().as_millis(), last)),
        )
        .await;
        assert_eq!(out, ());
        assert_eq!(
            at,
            vec![
                (0, false),
                (100, false),
                (200, false),
                (300, false),
                (350, true)
            ]
        );
    }

    #[tokio::test(start_paused = true)]
    async fn work_done_at_once_still_gets_a_final_sample() {
        let mut n = Vec::new();
        assert_eq!(
            sample_while(async { 7 }, INTERVAL, |last| n.push(last)).await,
            7
        );
        assert_eq!(n, vec![true]);
    }

    fn stamp(last: bool) -> Stamp {
        Stamp {
            conn: 2,
            peer: "198.18.1.2:4000".into(),
            elapsed: Duration::from_micros(1_500_250),
            unix_ms: 1_700_000_000_000,
            last,
        }
    }

    #[test]
    fn a_quic_line_takes_cwnd_and_rtt_from_the_path() {
        let mut st = quinn::ConnectionStats::default();
        st.path.cwnd = 120_000;
        st.path.rtt = Duration::from_millis(580);
        st.path.lost_packets = 3;
        st.path.congestion_events = 1;
        st.udp_tx.bytes = 1_000_000;
        let l = quic_line(stamp(false), &st, 5_000_000);
        assert_eq!(l.proto, "quic");
        assert_eq!(l.t_ms, 1500.25);
        assert_eq!(l.cwnd, 120_000);
        assert_eq!(l.rtt_ms, 580.0);
        assert_eq!(l.bytes_sent, 1_000_000);
        assert_eq!(l.app_bytes, 5_000_000);
        assert_eq!(l.lost_packets, 3);
        assert_eq!(l.congestion_events, Some(1));
        assert_eq!(l.bytes_acked, None);
    }

    #[test]
    fn a_tcp_line_counts_the_window_in_bytes() {
        let info = TcpInfo {
            snd_mss: 1448,
            snd_cwnd: 100,
            snd_ssthresh: crate::tcpinfo::INFINITE_SSTHRESH,
            rtt_us: 30_500,
            total_retrans: 4,
            bytes_sent: Some(900),
            bytes_acked: Some(800),
            ..Default::default()
        };
        let l = tcp_line(stamp(true), &info, 1000);
        assert_eq!(l.cwnd, 144_800);
        assert_eq!(l.ssthresh, None);
        assert_eq!(l.rtt_ms, 30.5);
        assert_eq!(l.bytes_sent, 900);
        assert_eq!(l.bytes_acked, Some(800));
        assert_eq!(l.lost_packets, 4);
        assert!(l.last);
        let old_kernel = TcpInfo {
            bytes_sent: None,
            ..info
        };
        assert_eq!(tcp_line(stamp(false), &old_kernel, 1000).bytes_sent, 1000);
    }

    #[test]
    fn lines_are_json_with_final() {
        let l = tcp_line(stamp(true), &TcpInfo::default(), 0);
        let v: serde_json::Value =
            serde_json::from_str(&serde_json::to_string(&l).unwrap()).unwrap();
        assert_eq!(v["final"], true);
        assert_eq!(v["conn"], 2);
        assert_eq!(v["peer"], "198.18.1.2:4000");
        for k in [
            "t_ms",
            "unix_ms",
            "bytes_sent",
            "app_bytes",
            "cwnd",
            "rtt_ms",
            "lost_packets",
        ] {
            assert!(v[k].is_number(), "{k}: {v}");
        }
    }

    #[test]
    fn writes_whole_lines_to_a_file() {
        let p = std::env::temp_dir().join(format!("satbulk-trace-{}.jsonl", std::process::id()));
        let _ = std::fs::remove_file(&p);
        let t = Trace::to_file(&p).unwrap();
        assert!(t.enabled());
        t.write(&tcp_line(stamp(false), &TcpInfo::default(), 1));
        t.clone()
            .write(&tcp_line(stamp(true), &TcpInfo::default(), 2));
        let text = std::fs::read_to_string(&p).unwrap();
        let lines: Vec<_> = text.lines().collect();
        assert_eq!(lines.len(), 2);
        assert!(lines[1].contains("\"final\":true"));
        std::fs::remove_file(&p).unwrap();
        Trace::none().write(&tcp_line(stamp(true), &TcpInfo::default(), 2)); // nowhere, no panic
    }
}
