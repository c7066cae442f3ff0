//! What the client saw of one download, as plain values: bytes received per
//! time bin and the report `satbulk get` prints.
//!
//! Every time is measured from t0, the instant just before the client
//! starts to connect, so connection set-up is part of the curve (a PEP that
//! answers the handshake close to the client shows up there).

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Bytes received per bin of `bin` length; bin i covers [i·bin, (i+1)·bin).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bins {
    bin: Duration,
    bytes: Vec<u64>,
    total: u64,
    first: Option<Duration>,
    last: Option<Duration>,
}

impl Bins {
    pub fn new(bin: Duration) -> Bins {
        assert!(!bin.is_zero(), "bin length must be positive");
        Bins {
            bin,
            bytes: Vec::new(),
            total: 0,
            first: None,
            last: None,
        }
    }

    /// `n` bytes arrived at `at` (since t0).
    pub fn add(&mut self, at: Duration, n: u64) {
        if n == 0 {
            return;
        }
        let i = (at.as_nanos() / self.bin.as_nanos()) as usize;
        if self.bytes.len() <= i {
            self.bytes.resize(i + 1, 0);
        }
        self.bytes[i] += n;
        self.total += n;
        self.first.get_or_insert(at);
        self.last = Some(at);
    }

    pub fn total(&self) -> u64 {
        self.total
    }

    /// When the first byte arrived.
    pub fn first(&self) -> Option<Duration> {
        self.first
    }

    /// When the last byte arrived.
    pub fn last(&self) -> Option<Duration> {
        self.last
    }

    /// The bins up to `until` (rounded up to whole bins), empty ones as 0,
    /// so a curve always covers the time the download ran.
    pub fn padded(&self, until: Duration) -> Vec<u64> {
        let n = until.as_nanos().div_ceil(self.bin.as_nanos()) as usize;
        let mut v = self.bytes.clone();
        if v.len() < n {
            v.resize(n, 0);
        }
        v
    }
}

/// What the server of an upload answers with once it has counted: its
/// bins (from the client's t0) and when the first and last byte arrived.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Receipt {
    pub bin_ms: u64,
    pub bins: Vec<u64>,
    pub first_us: Option<u64>,
    pub last_us: Option<u64>,
}

impl Bins {
    /// The receipt of what these bins counted.
    pub fn receipt(&self) -> Receipt {
        let us = |d: Option<Duration>| d.map(|d| d.as_micros() as u64);
        Receipt {
            bin_ms: self.bin.as_millis() as u64,
            bins: self.bytes.clone(),
            first_us: us(self.first),
            last_us: us(self.last),
        }
    }

    /// The bins a receipt describes; a receipt that does not add up (bins
    /// without arrival times, or a bin of 0 ms) is an error.
    pub fn from_receipt(r: Receipt) -> Result<Bins, String> {
        let total: u64 = r.bins.iter().sum();
        if r.bin_ms == 0 || (total > 0) != (r.first_us.is_some() && r.last_us.is_some()) {
            return Err(format!("the server's receipt does not add up: {r:?}"));
        }
        Ok(Bins {
            bin: Duration::from_millis(r.bin_ms),
            bytes: r.bins,
            total,
            first: r.first_us.map(Duration::from_micros),
            last: r.last_us.map(Duration::from_micros),
        })
    }
}

/// Which way the bytes went: the server sends (down) or the client (up).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    Down,
    Up,
}

pub fn ms(d: Duration) -> f64 {
    (d.as_secs_f64() * 1e6).round() / 1e3
}

/// What `satbulk get --json` prints.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Report {
    pub ok: bool,
    pub error: Option<String>,
    pub protocol: &'static str,
    /// down: the server sent and the client counted; up: the client sent
    /// and the server counted (its bins, from the client's t0, in its receipt).
    pub direction: Direction,
    pub addr: String,
    /// TLS server name (QUIC only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alpn: Option<String>,
    /// Bytes asked for (`--bytes`), or null for a timed download.
    pub requested_bytes: Option<u64>,
    /// `--duration` in ms, or null.
    pub requested_duration_ms: Option<f64>,
    /// t0 as Unix time in ms (to line up with the sender's trace `unix_ms`).
    pub t0_unix_ms: u64,
    /// t0 to connection established (QUIC: handshake complete; TCP: connect()
    /// returned, i.e. SYN-ACK seen).
    pub connect_ms: Option<f64>,
    /// t0 to the first byte of the body.
    pub ttfb_ms: Option<f64>,
    /// Body bytes received (within the duration for a timed download).
    pub bytes: u64,
    /// Every byte asked for arrived (`--bytes`), or the duration ran out
    /// with the transfer still going (`--duration`).
    pub complete: bool,
    /// t0 to the last byte (`--bytes`) or to the end of the duration.
    pub duration_ms: f64,
    pub bin_ms: u64,
    /// Bytes received per bin, from t0.
    pub bins: Vec<u64>,
    /// The client's view of the connection at the end.
    pub transport: serde_json::Value,
    /// CPU time `satbulk get` used, user + system, in ms.
    pub cpu_ms: Option<f64>,
    /// `--revisit`: the first connection's transfer (this report is the
    /// second's, which resumed it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first: Option<Box<Report>>,
}

impl Report {
    /// The report of a download that ran until `end` (since t0).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        protocol: &'static str,
        addr: String,
        requested_bytes: Option<u64>,
        requested_duration: Option<Duration>,
        connect: Option<Duration>,
        bins: &Bins,
        end: Duration,
        bin_ms: u64,
    ) -> Report {
        let complete = match (requested_bytes, requested_duration) {
            (Some(n), _) => bins.total() >= n,
            (None, Some(d)) => end >= d,
            (None, None) => false,
        };
        Report {
            ok: complete,
            error: None,
            protocol,
            direction: Direction::Down,
            addr,
            t0_unix_ms: 0,
            name: None,
            alpn: None,
            requested_bytes,
            requested_duration_ms: requested_duration.map(ms),
            connect_ms: connect.map(ms),
            ttfb_ms: bins.first().map(ms),
            bytes: bins.total(),
            complete,
            duration_ms: ms(end),
            bin_ms,
            bins: bins.padded(end),
            transport: serde_json::Value::Null,
            cpu_ms: None,
            first: None,
        }
    }

    pub fn failed(mut self, error: String) -> Report {
        self.ok = false;
        self.error = Some(error);
        self
    }

    /// One line for people (without `--json`).
    pub fn human(&self) -> String {
        let f = |v: Option<f64>| v.map_or("-".into(), |x| format!("{x:.0} ms"));
        let secs = self.duration_ms / 1000.0;
        let mbps = if secs > 0.0 {
            self.bytes as f64 * 8.0 / secs / 1e6
        } else {
            0.0
        };
        let mut s = format!(
            "{} {}: {} bytes in {:.2} s ({:.2} Mbit/s), connect {}, first byte {}",
            self.protocol,
            self.addr,
            self.bytes,
            secs,
            mbps,
            f(self.connect_ms),
            f(self.ttfb_ms)
        );
        if let Some(e) = &self.error {
            s.push_str(&format!("; failed: {e}"));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: fn(u64) -> Duration = Duration::from_millis;

    #[test]
    fn bins_by_arrival_time() {
        let mut b = Bins::new(MS(100));
        b.add(MS(0), 10);
        b.add(MS(99), 5);
        b.add(MS(100), 7);
        b.add(MS(350), 1);
        b.add(MS(400), 0); // nothing: no bin, no "last"
        assert_eq!(b.padded(MS(0)), vec![15, 7, 0, 1]);
        assert_eq!(b.total(), 23);
        assert_eq!(b.first(), Some(MS(0)));
        assert_eq!(b.last(), Some(MS(350)));
    }

    #[test]
    fn pads_to_whole_bins_of_the_run() {
        let mut b = Bins::new(MS(100));
        b.add(MS(120), 3);
        assert_eq!(b.padded(MS(500)), vec![0, 3, 0, 0, 0]);
        assert_eq!(b.padded(MS(501)), vec![0, 3, 0, 0, 0, 0]);
        assert_eq!(Bins::new(MS(100)).padded(MS(250)), vec![0, 0, 0]);
    }

    #[test]
    fn a_sized_download_is_complete_when_every_byte_arrived() {
        let mut b = Bins::new(MS(100));
        b.add(MS(250), 1000);
        let r = Report::new(
            "tcp",
            "a".into(),
            Some(1000),
            None,
            Some(MS(30)),
            &b,
            MS(250),
            100,
        );
        assert!(r.ok && r.complete);
        assert_eq!(r.ttfb_ms, Some(250.0));
        assert_eq!(r.connect_ms, Some(30.0));
        assert_eq!(r.bins, vec![0, 0, 1000]);
        let short = Report::new("tcp", "a".into(), Some(1001), None, None, &b, MS(250), 100);
        assert!(!short.ok && !short.complete);
    }

    #[test]
    fn a_timed_download_is_complete_when_the_time_ran_out() {
        let mut b = Bins::new(MS(100));
        b.add(MS(50), 1);
        let r = Report::new(
            "quic",
            "a".into(),
            None,
            Some(MS(1000)),
            None,
            &b,
            MS(1000),
            100,
        );
        assert!(r.complete);
        assert_eq!(r.bins.len(), 10);
        assert_eq!(r.requested_duration_ms, Some(1000.0));
        let cut = Report::new(
            "quic",
            "a".into(),
            None,
            Some(MS(1000)),
            None,
            &b,
            MS(600),
            100,
        )
        .failed("connection lost".into());
        assert!(!cut.ok && !cut.complete);
        assert_eq!(cut.error.as_deref(), Some("connection lost"));
    }

    #[test]
    fn json_names_every_field() {
        let r = Report::new(
            "tcp",
            "198.18.3.2:5201".into(),
            Some(5),
            None,
            None,
            &Bins::new(MS(100)),
            MS(0),
            100,
        );
        let v = serde_json::to_value(&r).unwrap();
        for k in [
            "ok",
            "error",
            "protocol",
            "direction",
            "addr",
            "t0_unix_ms",
            "requested_bytes",
            "requested_duration_ms",
            "connect_ms",
            "ttfb_ms",
            "bytes",
            "complete",
            "duration_ms",
            "bin_ms",
            "bins",
            "transport",
            "cpu_ms",
        ] {
            assert!(v.get(k).is_some(), "{k} missing in {v}");
        }
        assert!(v.get("name").is_none());
    }

    #[test]
    fn a_receipt_round_trips_and_is_checked() {
        let mut b = Bins::new(MS(100));
        b.add(Duration::from_micros(150_500), 7);
        b.add(MS(420), 3);
        let r = b.receipt();
        assert_eq!(r.bins, vec![0, 7, 0, 0, 3]);
        assert_eq!((r.first_us, r.last_us), (Some(150_500), Some(420_000)));
        let json = serde_json::to_string(&r).unwrap();
        let back = Bins::from_receipt(serde_json::from_str(&json).unwrap()).unwrap();
        assert_eq!(back, b);
        let empty = Bins::new(MS(10)).receipt();
        assert_eq!(Bins::from_receipt(empty).unwrap().total(), 0);
        let no_times = Receipt {
            first_us: None,
            ..r.clone()
        };
        assert!(Bins::from_receipt(no_times)
            .unwrap_err()
            .contains("does not add up"));
        assert!(Bins::from_receipt(Receipt { bin_ms: 0, ..r }).is_err());
    }

    #[test]
    fn ms_keeps_microseconds() {
        assert_eq!(ms(Duration::from_micros(1_234_567)), 1234.567);
    }
}
