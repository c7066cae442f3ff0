//! The request a client sends on a fresh QUIC stream or TCP connection,
//! as plain parsing with no I/O.
//!
//! One ASCII line: `satbulk BYTES\n`. BYTES is how many bytes the server
//! sends back before it ends the stream (FIN); 0 means "until the client
//! goes away" (the client times a duration and closes). Nothing else
//! travels from client to server, so the line is small enough to arrive in
//! one packet and the server never buffers more than `MAX_LINE` bytes.

/// The longest request line, newline included ("satbulk " + 20 digits + "\n"
/// fits with room to spare).
pub const MAX_LINE: usize = 64;

const PREFIX: &str = "satbulk ";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    /// Bytes to send; `None` = until the client closes.
    pub bytes: Option<u64>,
}

impl Request {
    /// The wire form.
    pub fn encode(&self) -> String {
        format!("{PREFIX}{}\n", self.bytes.unwrap_or(0))
    }
}

#[derive(Debug, PartialEq, Eq)]
pub enum Parsed {
    /// Read more (no newline yet, and fewer than `MAX_LINE` bytes).
    Incomplete,
    Done(Request),
}

/// Parses what the server has read so far. Errors name what was wrong, for
/// the server's log; the server then drops the connection.
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
    let bytes: u64 = n
        .parse()
        .map_err(|_| format!("request: BYTES must be a whole number, got {n:?}"))?;
    Ok(Parsed::Done(Request {
        bytes: (bytes > 0).then_some(bytes),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        for bytes in [Some(1), Some(100_000_000), Some(u64::MAX), None] {
            let r = Request { bytes };
            assert_eq!(parse(r.encode().as_bytes()), Ok(Parsed::Done(r)));
        }
        assert_eq!(Request { bytes: None }.encode(), "satbulk 0\n");
    }

    #[test]
    fn zero_means_until_closed() {
        assert_eq!(
            parse(b"satbulk 0\n"),
            Ok(Parsed::Done(Request { bytes: None }))
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
            Ok(Parsed::Done(Request { bytes: Some(5) }))
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
        // the client sends nothing else, but a stray byte must not matter
        assert_eq!(
            parse(b"satbulk 7\nx"),
            Ok(Parsed::Done(Request { bytes: Some(7) }))
        );
    }
}
