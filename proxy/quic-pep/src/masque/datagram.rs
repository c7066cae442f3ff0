//! Pure: the HTTP/3 Datagrams of a UDP proxying request. A QUIC DATAGRAM
//! frame carries `Quarter Stream ID (varint) | HTTP Datagram Payload`
//! (RFC 9297 §2.1), and for CONNECT-UDP that payload is
//! `Context ID (varint) | UDP payload` (RFC 9298 §5); context 0 is a UDP
//! payload, other contexts are extensions we do not speak.

use satbench_transport::varint;

/// The longest UDP payload (RFC 9298 §5: 65535 less the UDP header).
pub const MAX_UDP_PAYLOAD: usize = 65527;

/// The Context ID of UDP payloads.
pub const UDP_CONTEXT: u64 = 0;

/// The largest Quarter Stream ID (a stream ID is below 2^62).
const MAX_QUARTER_STREAM_ID: u64 = (1 << 60) - 1;

/// An HTTP/3 Datagram, as received.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Datagram<'a> {
    /// The request stream it belongs to (Quarter Stream ID × 4).
    pub stream_id: u64,
    /// What the request's protocol makes of the rest.
    pub payload: &'a [u8],
}

/// A QUIC DATAGRAM frame that is no HTTP/3 Datagram: an H3_DATAGRAM_ERROR
/// connection error (RFC 9297 §2.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Malformed(pub &'static str);

/// The HTTP/3 connection error code of a malformed datagram.
pub const H3_DATAGRAM_ERROR: u32 = 0x33;

pub fn decode(frame: &[u8]) -> Result<Datagram<'_>, Malformed> {
    let (quarter, n) = varint::decode(frame).ok_or(Malformed("no Quarter Stream ID"))?;
    if quarter > MAX_QUARTER_STREAM_ID {
        return Err(Malformed("Quarter Stream ID above 2^60-1"));
    }
    Ok(Datagram {
        stream_id: quarter * 4,
        payload: &frame[n..],
    })
}

/// A CONNECT-UDP datagram's payload: its context and what it carries;
/// None when it has no Context ID (nothing to forward).
pub fn udp_payload(payload: &[u8]) -> Option<(u64, &[u8])> {
    let (context, n) = varint::decode(payload)?;
    Some((context, &payload[n..]))
}

/// The DATAGRAM frame carrying UDP payload `udp` for request stream
/// `stream_id` (a client-initiated bidirectional stream: a multiple of 4).
pub fn encode_udp(stream_id: u64, udp: &[u8]) -> Vec<u8> {
    debug_assert_eq!(stream_id % 4, 0, "a request stream");
    let mut out = Vec::with_capacity(udp.len() + 9);
    varint::encode(&mut out, stream_id / 4);
    varint::encode(&mut out, UDP_CONTEXT);
    out.extend_from_slice(udp);
    out
}

/// Sends `frame` as an HTTP Datagram on `conn`, counting in `displaced`
/// when the connection's queue had no room for it (quinn then discards the
/// oldest queued datagrams to make room, and says nothing).
pub fn send_counted(
    conn: &quinn::Connection,
    frame: bytes::Bytes,
    displaced: &std::sync::atomic::AtomicU64,
) -> Result<(), quinn::SendDatagramError> {
    let full = conn.datagram_send_buffer_space() < frame.len();
    conn.send_datagram(frame)?;
    if full {
        displaced.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_quarter_stream_id_and_context_lead_the_payload() {
        // stream 0: quarter 0, context 0
        assert_eq!(encode_udp(0, b"hi"), [0, 0, b'h', b'i']);
        // stream 4 is quarter 1; stream 256 is quarter 64, a 2-byte varint
        assert_eq!(encode_udp(4, b"x"), [1, 0, b'x']);
        assert_eq!(encode_udp(256, b""), [0x40, 0x40, 0]);
        for sid in [0u64, 4, 8, 252, 256, 1 << 20, (1 << 62) - 4] {
            let f = encode_udp(sid, b"payload");
            let d = decode(&f).unwrap();
            assert_eq!(d.stream_id, sid);
            assert_eq!(udp_payload(d.payload), Some((0, &b"payload"[..])));
        }
    }

    #[test]
    fn an_empty_udp_payload_is_a_datagram_and_a_missing_context_is_not_udp() {
        let f = encode_udp(8, b"");
        assert_eq!(
            udp_payload(decode(&f).unwrap().payload),
            Some((0, &b""[..]))
        );
        // Quarter Stream ID and nothing else
        assert_eq!(decode(&[2]).unwrap().payload, b"");
        assert_eq!(udp_payload(b""), None);
        // another context: an extension's, not a UDP payload
        assert_eq!(udp_payload(&[2, 7]), Some((2, &[7u8][..])));
    }

    #[test]
    fn a_frame_without_a_valid_quarter_stream_id_is_malformed() {
        assert_eq!(decode(&[]), Err(Malformed("no Quarter Stream ID")));
        // a 2-byte varint cut short
        assert_eq!(decode(&[0x40]), Err(Malformed("no Quarter Stream ID")));
        // 2^60 as an 8-byte varint
        let mut big = Vec::new();
        varint::encode(&mut big, 1 << 60);
        assert_eq!(
            decode(&big),
            Err(Malformed("Quarter Stream ID above 2^60-1"))
        );
    }
}
