//! The request log: one line per request,
//! `TIME PROTOCOL METHOD PATH STATUS BYTES [PRIORITY]`, e.g.
//! `2026-05-01T12:00:00.123Z h3 GET /img/a.png 200 5120 u=2,i`.
//! PRIORITY (HTTP/3 only, when the client gave one) is the RFC 9218
//! priority the response was sent with, `u=N` or `u=N,i`.

use std::io::Write;
use std::sync::Mutex;
use std::time::SystemTime;

use satbench_transport::time::rfc3339_millis;

/// Control characters and spaces in the path would split the line; show
/// them escaped (request paths are normally percent-encoded already).
fn clean(s: &str) -> String {
    if s.is_empty() {
        return "-".into();
    }
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_control() || c == ' ' {
            for b in c.to_string().bytes() {
                out.push_str(&format!("%{b:02X}"));
            }
        } else {
            out.push(c);
        }
    }
    out
}

pub fn format_line(
    t: SystemTime,
    protocol: &str,
    method: &str,
    path: &str,
    status: u16,
    bytes: u64,
) -> String {
    format_line_with_priority(t, protocol, method, path, status, bytes, None)
}

/// `format_line` with the optional seventh field, the response's priority.
pub fn format_line_with_priority(
    t: SystemTime,
    protocol: &str,
    method: &str,
    path: &str,
    status: u16,
    bytes: u64,
    priority: Option<&str>,
) -> String {
    let mut line = format!(
        "{} {protocol} {} {} {status} {bytes}",
        rfc3339_millis(t),
        clean(method),
        clean(path)
    );
    if let Some(p) = priority {
        line.push(' ');
        line.push_str(&clean(p));
    }
    line.push('\n');
    line
}

/// Where the lines go: a file (appended) or stderr. Each line is written
/// and flushed whole.
pub struct RequestLog {
    out: Mutex<Box<dyn Write + Send>>,
}

impl RequestLog {
    pub fn stderr() -> RequestLog {
        RequestLog {
            out: Mutex::new(Box::new(std::io::stderr())),
        }
    }

    pub fn file(path: &std::path::Path) -> std::io::Result<RequestLog> {
        let f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        Ok(RequestLog {
            out: Mutex::new(Box::new(f)),
        })
    }

    pub fn request(&self, protocol: &str, method: &str, path: &str, status: u16, bytes: u64) {
        self.request_with_priority(protocol, method, path, status, bytes, None);
    }

    /// `request` with the response's priority as a seventh field, if any.
    pub fn request_with_priority(
        &self,
        protocol: &str,
        method: &str,
        path: &str,
        status: u16,
        bytes: u64,
        priority: Option<&str>,
    ) {
        let line = format_line_with_priority(
            SystemTime::now(),
            protocol,
            method,
            path,
            status,
            bytes,
            priority,
        );
        if let Ok(mut out) = self.out.lock() {
            let _ = out.write_all(line.as_bytes());
            let _ = out.flush();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::UNIX_EPOCH;

    #[test]
    fn formats_lines() {
        assert_eq!(
            format_line(UNIX_EPOCH, "h2", "GET", "/a b\n", 200, 42),
            "1970-01-01T00:00:00.000Z h2 GET /a%20b%0A 200 42\n"
        );
        assert_eq!(
            format_line(UNIX_EPOCH, "h3", "HEAD", "", 404, 0),
            "1970-01-01T00:00:00.000Z h3 HEAD - 404 0\n"
        );
        assert_eq!(
            format_line_with_priority(UNIX_EPOCH, "h3", "GET", "/a.css", 200, 9, Some("u=0")),
            "1970-01-01T00:00:00.000Z h3 GET /a.css 200 9 u=0\n"
        );
        assert_eq!(
            format_line_with_priority(UNIX_EPOCH, "h3", "GET", "/", 200, 9, Some("u=2,i")),
            "1970-01-01T00:00:00.000Z h3 GET / 200 9 u=2,i\n"
        );
    }
}
