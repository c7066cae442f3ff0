//! Pure: the Capsule Protocol (RFC 9297 §3.2) on a UDP proxying request's
//! data stream: `Type (varint) | Length (varint) | Value`. A DATAGRAM
//! capsule (type 0) carries an HTTP Datagram's payload, for CONNECT-UDP
//! `Context ID | UDP payload` (RFC 9298 §5); capsules of other types are
//! skipped without being buffered (§3.2: "MUST silently skip").

use satbench_transport::varint;

use super::datagram::{udp_payload, MAX_UDP_PAYLOAD, UDP_CONTEXT};

/// The DATAGRAM capsule type.
pub const DATAGRAM: u64 = 0x00;

/// The longest DATAGRAM capsule value buffered: a context ID (at most 8
/// bytes) and the longest UDP payload.
const MAX_DATAGRAM_VALUE: u64 = MAX_UDP_PAYLOAD as u64 + 8;

/// One capsule, as far as a UDP proxy cares.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Capsule {
    /// A DATAGRAM capsule with context 0: a UDP payload to forward.
    Udp(Vec<u8>),
    /// A DATAGRAM capsule of another context (an extension's): dropped.
    OtherContext(u64),
    /// A capsule of another type, skipped.
    Skipped(u64),
}

/// What ends the request stream (RFC 9297 §3.3: a malformed message).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CapsuleError(pub String);

/// Reads capsules from a data stream as its bytes arrive.
#[derive(Debug, Default)]
pub struct Reader {
    buf: Vec<u8>,
    /// Bytes of a skipped capsule still to come.
    skip: u64,
}

impl Reader {
    pub fn push(&mut self, data: &[u8]) {
        let skipped = self.skip.min(data.len() as u64);
        self.skip -= skipped;
        self.buf.extend_from_slice(&data[skipped as usize..]);
    }

    /// The next whole capsule, None until one has arrived.
    pub fn pop(&mut self) -> Result<Option<Capsule>, CapsuleError> {
        let Some((kind, n)) = varint::decode(&self.buf) else {
            return Ok(None);
        };
        let Some((len, m)) = varint::decode(&self.buf[n..]) else {
            return Ok(None);
        };
        let head = n + m;
        if kind != DATAGRAM {
            let here = len.min((self.buf.len() - head) as u64);
            self.buf.drain(..head + here as usize);
            self.skip = len - here;
            return Ok(Some(Capsule::Skipped(kind)));
        }
        if len > MAX_DATAGRAM_VALUE {
            return Err(CapsuleError(format!(
                "a DATAGRAM capsule of {len} bytes: more than a UDP payload can be"
            )));
        }
        let end = head + len as usize;
        if self.buf.len() < end {
            return Ok(None);
        }
        let capsule = match udp_payload(&self.buf[head..end]) {
            None => Err(CapsuleError(
                "a DATAGRAM capsule without a Context ID".into(),
            )),
            Some((UDP_CONTEXT, udp)) if udp.len() > MAX_UDP_PAYLOAD => Err(CapsuleError(format!(
                "a UDP payload of {} bytes (at most 65527)",
                udp.len()
            ))),
            Some((UDP_CONTEXT, udp)) => Ok(Capsule::Udp(udp.to_vec())),
            Some((context, _)) => Ok(Capsule::OtherContext(context)),
        };
        self.buf.drain(..end);
        capsule.map(Some)
    }

    /// At the stream's clean end: a capsule cut short is malformed.
    pub fn finish(&self) -> Result<(), CapsuleError> {
        match self.buf.is_empty() && self.skip == 0 {
            true => Ok(()),
            false => Err(CapsuleError("the stream ended inside a capsule".into())),
        }
    }
}

/// A DATAGRAM capsule carrying UDP payload `udp` (context 0).
pub fn encode_udp(udp: &[u8]) -> Vec<u8> {
    let mut value = Vec::with_capacity(udp.len() + 1);
    varint::encode(&mut value, UDP_CONTEXT);
    value.extend_from_slice(udp);
    let mut out = Vec::with_capacity(value.len() + 5);
    varint::encode(&mut out, DATAGRAM);
    varint::encode(&mut out, value.len() as u64);
    out.extend_from_slice(&value);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(r: &mut Reader) -> Vec<Capsule> {
        std::iter::from_fn(|| r.pop().unwrap()).collect()
    }

    #[test]
    fn datagram_capsules_give_their_udp_payloads_in_order() {
        assert_eq!(encode_udp(b"ab"), [0, 3, 0, b'a', b'b']);
        let mut r = Reader::default();
        let mut stream = encode_udp(b"one");
        stream.extend(encode_udp(b""));
        stream.extend(encode_udp(&[9u8; 300]));
        r.push(&stream);
        assert_eq!(
            all(&mut r),
            [
                Capsule::Udp(b"one".to_vec()),
                Capsule::Udp(vec![]),
                Capsule::Udp(vec![9; 300])
            ]
        );
        assert_eq!(r.finish(), Ok(()));
    }

    #[test]
    fn a_capsule_split_anywhere_comes_out_once_whole() {
        let stream = [encode_udp(&[1u8; 100]), encode_udp(b"tail")].concat();
        for cut in 0..stream.len() {
            let mut r = Reader::default();
            r.push(&stream[..cut]);
            let mut got = all(&mut r);
            r.push(&stream[cut..]);
            got.extend(all(&mut r));
            assert_eq!(
                got,
                [Capsule::Udp(vec![1; 100]), Capsule::Udp(b"tail".to_vec())],
                "cut at {cut}"
            );
            assert_eq!(r.finish(), Ok(()));
        }
    }

    #[test]
    fn other_types_are_skipped_unbuffered_and_other_contexts_dropped() {
        // an unknown type 0x2a of 70000 bytes, arriving in pieces, then a datagram
        let mut head = Vec::new();
        varint::encode(&mut head, 0x2a);
        varint::encode(&mut head, 70_000);
        let mut r = Reader::default();
        r.push(&head);
        r.push(&[0u8; 1000]);
        assert_eq!(all(&mut r), [Capsule::Skipped(0x2a)]);
        for _ in 0..68 {
            r.push(&[0u8; 1000]);
            assert!(r.buf.is_empty(), "a skipped capsule is not kept");
        }
        assert!(r.finish().is_err(), "still inside the skipped capsule");
        // its last 1000 bytes and a datagram capsule in one read
        r.push(&[&[0u8; 1000][..], &encode_udp(b"after")].concat());
        assert_eq!(all(&mut r), [Capsule::Udp(b"after".to_vec())]);
        // context 2 (an extension's)
        r.push(&[0, 2, 2, 7]);
        assert_eq!(all(&mut r), [Capsule::OtherContext(2)]);
        assert_eq!(r.finish(), Ok(()));
    }

    #[test]
    fn oversized_empty_and_truncated_capsules_are_malformed() {
        let mut big = Vec::new();
        varint::encode(&mut big, DATAGRAM);
        varint::encode(&mut big, 65_536 + 9);
        let mut r = Reader::default();
        r.push(&big);
        assert!(r.pop().unwrap_err().0.contains("more than a UDP payload"));
        // context 0 and 65528 bytes: within the capsule limit, over UDP's
        let mut r = Reader::default();
        r.push(&encode_udp(&vec![0u8; 65_528]));
        assert!(r.pop().unwrap_err().0.contains("65528"));
        let mut r = Reader::default();
        r.push(&[0, 0]);
        assert!(r.pop().unwrap_err().0.contains("without a Context ID"));
        let mut r = Reader::default();
        r.push(&encode_udp(b"cut")[..4]);
        assert_eq!(r.pop(), Ok(None));
        assert!(r.finish().is_err());
    }
}
