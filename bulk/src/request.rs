//! The request a client sends on a fresh QUIC stream or TCP connection,
//! as plain parsing with no I/O.
//!
//! One ASCII line. A download: `satbulk BYTES\n`; BYTES is how many bytes
//! the server sends back before it ends the stream (FIN); 0 means "until
//! the client goes away" (the client times a duration and closes). Nothing
//! else travels from client to server.
//!
//! An upload: `satbulk up BYTES DURATION_MS T0_UNIX_US BIN_MS\n`, then the
//! body. The server counts what arrives per BIN_MS bin from the client's t0
//! (Unix time in µs: client and server share the host's clock, each in its
//! own network namespace), until BYTES arrived or, with BYTES 0, until
//! DURATION_MS after t0; then it answers with one JSON line
//! (`bins::Receipt`) and ends its side. The line is small enough to arrive
//! in one packet, and the server never buffers more than `MAX_LINE` bytes
//! of it.

/// The longest request line, newline included (an upload's four numbers of
/// up to 20 digits fit).
pub const MAX_LINE: usize = 96;

const PREFIX: &str = "satbulk ";
const UP: &str = "up ";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    /// Bytes to send (download) or to receive (upload); `None` = until the
    /// client closes (download) or for `Upload::duration_ms` (upload).
    pub bytes: Option<u64>,
    /// The client sends, the server counts: `None` for a download.
    pub upload: Option<Upload>,
}

/// What the server needs to time an upload as the client would.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Upload {
    /// For a timed upload (`bytes` None): count what arrives this long after t0.
    pub duration_ms: Option<u64>,
    /// The client's t0 (just before it connected), Unix time in µs.
    pub t0_unix_us: u64,
    pub bin_ms: u64,
}

impl Request {
    pub fn download(bytes: Option<u64>) -> Request {
        Request {
            bytes,
            upload: None,
        }
    }

    /// The wire form.
    pub fn encode(&self) -> String {
        let bytes = self.bytes.unwrap_or(0);
        match self.upload {
            None => format!("{PREFIX}{bytes}\n"),
            Some(u) => format!(
                "{PREFIX}{UP}{bytes} {} {} {}\n",
                u.duration_ms.unwrap_or(0),
                u.t0_unix_us,
                u.bin_ms
            ),
        }
    }
}

fn whole(n: &str, what: &str) -> Result<u64, String> {
    n.parse()
        .map_err(|_| format!("request: {what} must be a whole number, got {n:?}"))
}

/// `BYTES DURATION_MS T0_UNIX_US BIN_MS` of an upload line.
fn parse_upload(rest: &str) -> Result<Request, String> {
    let f: Vec<&str> = rest.split(' ').collect();
    let [bytes, duration, t0, bin] = f[..] else {
        return Err(format!(
            "request: expected 'satbulk up BYTES DURATION_MS T0_UNIX_US BIN_MS', got {rest:?}"
        ));
    };
    let (bytes, duration) = (whole(bytes, "BYTES")?, whole(duration, "DURATION_MS")?);
    if (bytes == 0) == (duration == 0) {
        return Err("request: an upload gives BYTES or DURATION_MS (one of them)".into());
    }
    let bin_ms = whole(bin, "BIN_MS")?;
    if bin_ms == 0 {
        return Err("request: BIN_MS must be at least 1".into());
    }
    Ok(Request {
        bytes: (bytes > 0).then_some(bytes),
        upload: Some(Upload {
            duration_ms: (duration > 0).then_some(duration),
            t0_unix_us: whole(t0, "T0_UNIX_US")?,
            bin_ms,
        }),
    })
}

#[derive(Debug, PartialEq, Eq)]
pub enum Parsed {
    /// Read more (no newline yet, and fewer than `MAX_LINE` bytes).
    Incomplete,
    Done(Request, usize),
}

/// Parses what the server has read so far. Errors name what was wrong, for
/// the server's log; the server then drops the connection. `Done` carries
/// the request and how many bytes of `buf` it took (an upload's body
/// follows at once).
pub fn parse(buf: &[u8]) -> Result<Parsed, String> {
    let Some(end) = buf.iter().position(|&b| b == b'\n') else {
        return if buf.len() >= MAX_LINE {
            Err(format!("request: no newline in the first {MAX_LINE} bytes"))
        } else {
            Ok(Parsed::Incomplete)
        };
    };
    if end >= MAX_LINE {
        return Err(format!("request: line longer than {MAX_LINE} bytes"));
    }
    let line = std::str::from_utf8(&buf[..end])
        .map_err(|_| "request: not ASCII".to_string())?
        .trim_end_matches('\r');
    let n = line
        .strip_prefix(PREFIX)
        .ok_or_else(|| format!("request: expected 'satbulk BYTES', got {line:?}"))?;
    let req = match n.strip_prefix(UP) {
        Some(rest) => parse_upload(rest)?,
        None => {
            let bytes = whole(n, "BYTES")?;
            Request::download((bytes > 0).then_some(bytes))
        }
    };
    Ok(Parsed::Done(req, end + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        for bytes in [Some(1), Some(100_000_000), Some(u64::MAX), None] {
            let r = Request::download(bytes);
            let wire = r.encode();
            assert_eq!(parse(wire.as_bytes()), Ok(Parsed::Done(r, wire.len())));
        }
        assert_eq!(Request::download(None).encode(), "satbulk 0\n");
        for (bytes, duration_ms) in [(Some(u64::MAX), None), (None, Some(u64::MAX))] {
            let r = Request {
                bytes,
                upload: Some(Upload {
                    duration_ms,
                    t0_unix_us: u64::MAX,
                    bin_ms: u64::MAX,
                }),
            };
            let wire = r.encode();
            assert!(wire.len() <= MAX_LINE, "{wire}");
            assert_eq!(parse(wire.as_bytes()), Ok(Parsed::Done(r, wire.len())));
        }
    }

    #[test]
    fn an_upload_line() {
        let up = |bytes, duration_ms| Request {
            bytes,
            upload: Some(Upload {
                duration_ms,
                t0_unix_us: 1_700_000_000_000_000,
                bin_ms: 100,
            }),
        };
        assert_eq!(
            up(Some(2_000_000), None).encode(),
            "satbulk up 2000000 0 1700000000000000 100\n"
        );
        assert_eq!(
            parse(b"satbulk up 0 10000 1700000000000000 100\nbody"),
            Ok(Parsed::Done(up(None, Some(10_000)), 40))
        );
    }

    #[test]
    fn an_upload_line_names_what_is_wrong() {
        let e = |s: &[u8]| parse(s).unwrap_err();
        assert!(e(b"satbulk up 1 0 5\n").contains("expected 'satbulk up BYTES"));
        assert!(e(b"satbulk up 1 0 5 100 7\n").contains("expected 'satbulk up BYTES"));
        assert!(e(b"satbulk up 0 0 5 100\n").contains("one of them"));
        assert!(e(b"satbulk up 1 1 5 100\n").contains("one of them"));
        assert!(e(b"satbulk up 1 0 5 0\n").contains("BIN_MS must be at least 1"));
        assert!(e(b"satbulk up 1 0 x 100\n").contains("T0_UNIX_US must be a whole number"));
    }

    #[test]
    fn zero_means_until_closed() {
        assert_eq!(
            parse(b"satbulk 0\n"),
            Ok(Parsed::Done(Request::download(None), 10))
        );
    }

    #[test]
    fn waits_for_the_newline() {
        assert_eq!(parse(b""), Ok(Parsed::Incomplete));
        assert_eq!(parse(b"satbulk 12"), Ok(Parsed::Incomplete));
    }

    #[test]
    fn accepts_crlf() {
        assert_eq!(
            parse(b"satbulk 5\r\n"),
            Ok(Parsed::Done(Request::download(Some(5)), 11))
        );
    }

    #[test]
    fn rejects_garbage() {
        assert!(parse(b"GET / HTTP/1.1\r\n")
            .unwrap_err()
            .contains("expected"));
        assert!(parse(b"satbulk -1\n").unwrap_err().contains("whole number"));
        assert!(parse(b"satbulk 1e6\n")
            .unwrap_err()
            .contains("whole number"));
        assert!(parse(b"satbulk 99999999999999999999999\n").is_err());
        assert!(parse(b"satbulk \xff\n").unwrap_err().contains("ASCII"));
    }

    #[test]
    fn bounds_what_it_buffers() {
        let long = vec![b'9'; MAX_LINE];
        assert!(parse(&long).unwrap_err().contains("no newline"));
        let mut long_line = b"satbulk ".to_vec();
        long_line.extend(vec![b'1'; MAX_LINE]);
        long_line.push(b'\n');
        assert!(parse(&long_line).unwrap_err().contains("longer"));
    }

    #[test]
    fn ignores_bytes_after_the_line() {
        // a download's client sends nothing else, but a stray byte must not matter
        assert_eq!(
            parse(b"satbulk 7\nx"),
            Ok(Parsed::Done(Request::download(Some(7)), 10))
        );
    }
}
