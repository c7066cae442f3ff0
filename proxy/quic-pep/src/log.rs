//! The proxy's log: one line per event, `TIME LABEL EVENT k=v …`, e.g.
//! `2026-05-01T12:00:00.123Z st conn 3 relayed alpn=h3 …`. Each line is
//! written and flushed whole.

use std::io::Write;
use std::sync::Mutex;
use std::time::SystemTime;

use satbench_transport::time::rfc3339_millis;

pub struct Log {
    label: String,
    out: Mutex<Box<dyn Write + Send>>,
}

impl Log {
    pub fn stderr(label: &str) -> Log {
        Log {
            label: label.into(),
            out: Mutex::new(Box::new(std::io::stderr())),
        }
    }

    pub fn file(label: &str, path: &std::path::Path) -> std::io::Result<Log> {
        let f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        Ok(Log {
            label: label.into(),
            out: Mutex::new(Box::new(f)),
        })
    }

    pub fn line(&self, msg: &str) {
        let line = format_line(SystemTime::now(), &self.label, msg);
        if let Ok(mut out) = self.out.lock() {
            let _ = out.write_all(line.as_bytes());
            let _ = out.flush();
        }
    }
}

pub fn format_line(t: SystemTime, label: &str, msg: &str) -> String {
    // one event, one line
    format!(
        "{} {label} {}\n",
        rfc3339_millis(t),
        msg.replace(['\n', '\r'], " ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::UNIX_EPOCH;

    #[test]
    fn one_line_per_event() {
        assert_eq!(
            format_line(UNIX_EPOCH, "st", "conn 1 closed\nby x"),
            "1970-01-01T00:00:00.000Z st conn 1 closed by x\n"
        );
    }
}
