//! Counters per direction and the stats file.

use serde::Serialize;
use std::io::{self, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};

/// Shared counters of one direction (written by its reader and writer
/// threads, read by whoever writes the stats file).
#[derive(Default, Debug)]
pub struct Counters {
    pub packets_in: AtomicU64,
    pub bytes_in: AtomicU64,
    pub packets_out: AtomicU64,
    pub bytes_out: AtomicU64,
    pub drops_loss: AtomicU64,
    pub drops_queue: AtomicU64,
    pub max_backlog_bytes: AtomicU64,
    /// Set once the direction has an access model: its counters are then
    /// reported.
    pub has_access: AtomicBool,
    pub access_requests: AtomicU64,
    pub frames: AtomicU64,
    pub frames_lost: AtomicU64,
}

/// What a direction's access model did: capacity requests (demand
/// assignment), and with frame loss the frames opened and lost.
#[derive(Serialize, Debug, Clone, PartialEq, Eq, Default)]
pub struct AccessStats {
    pub requests: u64,
    pub frames: u64,
    pub frames_lost: u64,
}

#[derive(Serialize, Debug, Clone, PartialEq, Eq, Default)]
pub struct Drops {
    pub loss: u64,
    pub queue: u64,
}

#[derive(Serialize, Debug, Clone, PartialEq, Eq, Default)]
pub struct DirStats {
    pub packets_in: u64,
    pub bytes_in: u64,
    pub packets_out: u64,
    pub bytes_out: u64,
    pub drops: Drops,
    pub max_backlog_bytes: u64,
    /// Only for a direction with an access model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub access: Option<AccessStats>,
}

impl Counters {
    pub fn snapshot(&self) -> DirStats {
        DirStats {
            packets_in: self.packets_in.load(Relaxed),
            bytes_in: self.bytes_in.load(Relaxed),
            packets_out: self.packets_out.load(Relaxed),
            bytes_out: self.bytes_out.load(Relaxed),
            drops: Drops {
                loss: self.drops_loss.load(Relaxed),
                queue: self.drops_queue.load(Relaxed),
            },
            max_backlog_bytes: self.max_backlog_bytes.load(Relaxed),
            access: self.has_access.load(Relaxed).then(|| AccessStats {
                requests: self.access_requests.load(Relaxed),
                frames: self.frames.load(Relaxed),
                frames_lost: self.frames_lost.load(Relaxed),
            }),
        }
    }

    pub fn store_access(&self, a: &AccessStats) {
        self.has_access.store(true, Relaxed);
        self.access_requests.store(a.requests, Relaxed);
        self.frames.store(a.frames, Relaxed);
        self.frames_lost.store(a.frames_lost, Relaxed);
    }
}

#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct StatsFile {
    pub name: String,
    pub uptime_s: f64,
    pub forward: DirStats,
    #[serde(rename = "return")]
    pub ret: DirStats,
    /// With a slot process: seconds into its slot at time 0.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slot_phase_s: Option<f64>,
    /// With a slot process: the wall-clock time of time 0, ms since the
    /// epoch (so a moment's place in its slot can be found later).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slot_t0_unix_ms: Option<f64>,
}

impl StatsFile {
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("stats serialize") + "\n"
    }

    /// Writes the file atomically (a temporary file beside it, renamed).
    pub fn write(&self, path: &Path) -> io::Result<()> {
        write_atomically(path, self.to_json().as_bytes())
    }
}

fn tmp_path(path: &Path) -> std::path::PathBuf {
    let mut name = path
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(format!(".tmp{}", std::process::id()));
    path.with_file_name(name)
}

pub fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let tmp = tmp_path(path);
    let mut f = std::fs::File::create(&tmp)?;
    f.write_all(bytes)?;
    f.flush()?;
    drop(f);
    std::fs::rename(&tmp, path)
}

/// Checks at start that the stats file can be written later (creating its
/// folder if needed), without leaving a file behind.
pub fn check_writable(path: &Path) -> io::Result<()> {
    if let Some(dir) = path.parent() {
        if !dir.as_os_str().is_empty() {
            std::fs::create_dir_all(dir)?;
        }
    }
    let tmp = tmp_path(path);
    std::fs::File::create(&tmp)?;
    std::fs::remove_file(&tmp)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_json_has_the_contract_keys() {
        let c = Counters::default();
        c.packets_in.store(3, Relaxed);
        c.drops_queue.store(1, Relaxed);
        let s = StatsFile {
            name: "sat".into(),
            uptime_s: 1.5,
            forward: c.snapshot(),
            ret: DirStats::default(),
            slot_phase_s: None,
            slot_t0_unix_ms: None,
        };
        let v: serde_json::Value = serde_json::from_str(&s.to_json()).unwrap();
        assert_eq!(v["name"], "sat");
        assert_eq!(v["uptime_s"], 1.5);
        assert_eq!(v["forward"]["packets_in"], 3);
        assert_eq!(v["forward"]["drops"]["queue"], 1);
        let mut keys: Vec<&str> = v["return"]
            .as_object()
            .unwrap()
            .keys()
            .map(|k| k.as_str())
            .collect();
        keys.sort();
        assert_eq!(
            keys,
            [
                "bytes_in",
                "bytes_out",
                "drops",
                "max_backlog_bytes",
                "packets_in",
                "packets_out"
            ]
        );
        assert_eq!(
            v["return"]["drops"],
            serde_json::json!({"loss": 0, "queue": 0})
        );
    }

    #[test]
    fn access_counters_only_with_an_access_model() {
        let c = Counters::default();
        assert_eq!(c.snapshot().access, None);
        c.store_access(&AccessStats {
            requests: 2,
            frames: 10,
            frames_lost: 1,
        });
        let v = serde_json::to_value(c.snapshot()).unwrap();
        assert_eq!(v["access"]["requests"], 2);
        assert_eq!(v["access"]["frames_lost"], 1);
    }

    #[test]
    fn write_is_atomic_and_check_creates_the_folder() {
        let dir = std::env::temp_dir().join(format!("linkem-stats-{}", std::process::id()));
        let p = dir.join("sub/sat.stats.json");
        check_writable(&p).unwrap();
        assert!(!p.exists());
        let s = StatsFile {
            name: "x".into(),
            uptime_s: 0.0,
            forward: DirStats::default(),
            ret: DirStats::default(),
            slot_phase_s: None,
            slot_t0_unix_ms: None,
        };
        s.write(&p).unwrap();
        assert!(std::fs::read_to_string(&p).unwrap().contains("\"return\""));
        assert_eq!(std::fs::read_dir(p.parent().unwrap()).unwrap().count(), 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
