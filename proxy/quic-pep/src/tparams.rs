//! The far side's stream limits, read from its QUIC transport parameters
//! (RFC 9000 §18: a sequence of id, length, value, each id and length a
//! variable-length integer). quinn keeps the peer's parameters to itself;
//! `tls::Capture` hands us their encoding and this module reads the few we
//! mirror towards the client in `--h3` mode.

use satbench_transport::varint;

/// The parameters the proxy mirrors or logs. Absent ones are 0, as
/// RFC 9000 §18.2 says.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PeerLimits {
    pub max_streams_bidi: u64,
    pub max_streams_uni: u64,
    pub max_data: u64,
    pub max_stream_data_bidi_local: u64,
    pub max_stream_data_bidi_remote: u64,
    pub max_stream_data_uni: u64,
}

const INITIAL_MAX_DATA: u64 = 0x04;
const INITIAL_MAX_STREAM_DATA_BIDI_LOCAL: u64 = 0x05;
const INITIAL_MAX_STREAM_DATA_BIDI_REMOTE: u64 = 0x06;
const INITIAL_MAX_STREAM_DATA_UNI: u64 = 0x07;
const INITIAL_MAX_STREAMS_BIDI: u64 = 0x08;
const INITIAL_MAX_STREAMS_UNI: u64 = 0x09;

/// The variable-length integer at `pos`; moves `pos` past it.
fn read_varint(buf: &[u8], pos: &mut usize) -> Result<u64, String> {
    let (v, len) = buf
        .get(*pos..)
        .and_then(varint::decode)
        .ok_or("truncated variable-length integer")?;
    *pos += len;
    Ok(v)
}

/// Reads the limits out of an encoded transport parameter list.
pub fn parse(buf: &[u8]) -> Result<PeerLimits, String> {
    let mut out = PeerLimits::default();
    let mut pos = 0;
    while pos < buf.len() {
        let id = read_varint(buf, &mut pos)?;
        let len = read_varint(buf, &mut pos)? as usize;
        let value = buf
            .get(pos..pos.saturating_add(len))
            .ok_or_else(|| format!("transport parameter {id:#x}: truncated"))?;
        pos += len;
        let field = match id {
            INITIAL_MAX_DATA => &mut out.max_data,
            INITIAL_MAX_STREAM_DATA_BIDI_LOCAL => &mut out.max_stream_data_bidi_local,
            INITIAL_MAX_STREAM_DATA_BIDI_REMOTE => &mut out.max_stream_data_bidi_remote,
            INITIAL_MAX_STREAM_DATA_UNI => &mut out.max_stream_data_uni,
            INITIAL_MAX_STREAMS_BIDI => &mut out.max_streams_bidi,
            INITIAL_MAX_STREAMS_UNI => &mut out.max_streams_uni,
            _ => continue,
        };
        let mut p = 0;
        *field = read_varint(value, &mut p)?;
        if p != value.len() {
            return Err(format!(
                "transport parameter {id:#x}: {} bytes for one integer",
                value.len()
            ));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(v: u64) -> Vec<u8> {
        let mut b = Vec::new();
        varint::encode(&mut b, v);
        b
    }

    fn param(id: u64, v: u64) -> Vec<u8> {
        let val = enc(v);
        [enc(id), enc(val.len() as u64), val].concat()
    }

    #[test]
    fn reads_the_stream_limits() {
        let buf = [
            param(0x01, 30_000), // max_idle_timeout: skipped
            param(INITIAL_MAX_STREAMS_BIDI, 100),
            param(INITIAL_MAX_STREAMS_UNI, 3),
            param(INITIAL_MAX_DATA, 40_625_000),
            param(INITIAL_MAX_STREAM_DATA_UNI, 1 << 40),
            vec![0x0f, 2, 0xab, 0xcd], // a parameter of raw bytes: skipped
            param(0x2ab2, 7),          // a greased id: skipped
        ]
        .concat();
        let l = parse(&buf).unwrap();
        assert_eq!(l.max_streams_bidi, 100);
        assert_eq!(l.max_streams_uni, 3);
        assert_eq!(l.max_data, 40_625_000);
        assert_eq!(l.max_stream_data_uni, 1 << 40);
        assert_eq!(l.max_stream_data_bidi_local, 0);
    }

    #[test]
    fn absent_means_zero() {
        assert_eq!(parse(&[]).unwrap(), PeerLimits::default());
    }

    #[test]
    fn truncated_input_is_an_error() {
        let mut buf = param(INITIAL_MAX_STREAMS_BIDI, 100);
        buf.pop();
        assert!(parse(&buf).unwrap_err().contains("truncated"));
        assert!(parse(&[0x40]).is_err());
        // a length that points past the end
        assert!(parse(&[0x08, 0x05, 0x01]).is_err());
        // a value with trailing bytes
        assert!(parse(&[0x08, 0x02, 0x01, 0x00])
            .unwrap_err()
            .contains("2 bytes"));
    }
}
