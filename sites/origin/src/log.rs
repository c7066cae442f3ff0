//! The request log: one line per request,
//! `TIME PROTOCOL METHOD PATH STATUS BYTES [PRIORITY] [unmatched]`, e.g.
//! `2026-05-01T12:00:00.123Z h3 GET /img/a.png 200 5120 u=2,i`.
//! PRIORITY (HTTP/3 only, when the client gave one) is the RFC 9218
//! priority the response was sent with, `u=N` or `u=N,i`.
//!
//! Serving an archive (`--archive`), PATH is the whole request URL as the
//! matching rule built it, `scheme://host[:port]/path?query` (so requests
//! can be told apart by origin), and a request no entry matched is a 404
//! whose line ends with the word `unmatched` (after the priority, if any):
//! `… h2 GET https://cdn.example.net/x.js 404 23 unmatched`.

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

/// One request, as its log line says it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Line<'a> {
    pub protocol: &'a str,
    pub method: &'a str,
    /// The path, or with an archive the whole URL.
    pub path: &'a str,
    pub status: u16,
    pub bytes: u64,
    /// The RFC 9218 priority the client asked for (HTTP/3).
    pub priority: Option<String>,
    /// No archive entry matched.
    pub unmatched: bool,
}

impl Line<'_> {
    /// The line as written at `t`, with its newline.
    pub fn format(&self, t: SystemTime) -> String {
        let mut line = format!(
            "{} {} {} {} {} {}",
            rfc3339_millis(t),
            self.protocol,
            clean(self.method),
            clean(self.path),
            self.status,
            self.bytes
        );
        if let Some(p) = &self.priority {
            line.push(' ');
            line.push_str(&clean(p));
        }
        if self.unmatched {
            line.push_str(" unmatched");
        }
        line.push('\n');
        line
    }
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

    /// Writes `line`, stamped now.
    pub fn request(&self, line: &Line) {
        let text = line.format(SystemTime::now());
        if let Ok(mut out) = self.out.lock() {
            let _ = out.write_all(text.as_bytes());
            let _ = out.flush();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::UNIX_EPOCH;

    fn line<'a>(protocol: &'a str, method: &'a str, path: &'a str, status: u16) -> Line<'a> {
        Line {
            protocol,
            method,
            path,
            status,
            bytes: 42,
            ..Line::default()
        }
    }

    #[test]
    fn formats_lines() {
        let f = |l: Line| l.format(UNIX_EPOCH);
        assert_eq!(
            f(line("h2", "GET", "/a b\n", 200)),
            "1970-01-01T00:00:00.000Z h2 GET /a%20b%0A 200 42\n"
        );
        assert_eq!(
            f(line("h3", "HEAD", "", 404)),
            "1970-01-01T00:00:00.000Z h3 HEAD - 404 42\n"
        );
        let prio = |p: &str| Line {
            priority: Some(p.into()),
            ..line("h3", "GET", "/a.css", 200)
        };
        assert_eq!(
            f(prio("u=0")),
            "1970-01-01T00:00:00.000Z h3 GET /a.css 200 42 u=0\n"
        );
        assert_eq!(
            f(prio("u=2,i")),
            "1970-01-01T00:00:00.000Z h3 GET /a.css 200 42 u=2,i\n"
        );
        // an archive's request: the URL, and unmatched last
        let url = "https://cdn.a.test/x.js?v=1";
        assert_eq!(
            f(Line {
                unmatched: true,
                ..line("http/1.1", "GET", url, 404)
            }),
            format!("1970-01-01T00:00:00.000Z http/1.1 GET {url} 404 42 unmatched\n")
        );
        assert_eq!(
            f(Line {
                unmatched: true,
                ..prio("u=3,i")
            }),
            "1970-01-01T00:00:00.000Z h3 GET /a.css 200 42 u=3,i unmatched\n"
        );
    }
}
