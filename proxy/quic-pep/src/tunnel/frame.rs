//! The tunnel's framing, as plain values: the header that opens every
//! tunnel stream and the messages of the tunnel's control stream.
//!
//! Every tunnel stream starts with
//!
//! ```text
//! version (1 byte, 1) | type (1 byte: 0 control, 1 client stream, 2 TCP)
//! client stream only: connection id (varint) | original stream id (varint)
//! TCP only: original destination (IPv4 address, 4 bytes | port, 2 bytes)
//! ```
//!
//! A TCP stream (QPEP) is one TCP connection Proxy-ST intercepted: a bidi
//! tunnel stream opened by Proxy-ST, its bytes the connection's bytes.
//!
//! The original stream ID is the ID the client and the origin see; its two
//! low bits are the original stream's type (RFC 9000 §2.1: initiator and
//! bidi/uni), so the type travels with the ID and cannot disagree with it.
//! Varints are QUIC's (RFC 9000 §16). The control stream then carries
//! messages `type (varint) | length (varint) | body`, at most `MAX_MESSAGE`
//! bytes of body. An Open that names its client connection's destination
//! (`--transparent`) is a message of its own type, so a Proxy-GW that
//! dials one fixed next hop never mistakes it for a plain Open.

use std::fmt;
use std::net::{Ipv4Addr, SocketAddrV4};

use satbench_transport::varint;

use crate::streams::Kind;

pub const VERSION: u8 = 1;
/// A control message's body is at most this long (a close reason is cut
/// to `close::MAX_REASON` = 512 bytes, and the rest is a few varints).
pub const MAX_MESSAGE: usize = 1024;
/// The longest header: 2 bytes and two 8-byte varints.
pub const MAX_HEADER: usize = 18;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Header {
    /// The tunnel's one control stream (the first bidi stream Proxy-ST opens).
    Control,
    /// One stream of client connection `conn`, `id` as the client and the
    /// origin number it.
    Stream { conn: u64, id: u64 },
    /// One TCP connection (QPEP) to `dst`, its original destination.
    Tcp { dst: SocketAddrV4 },
}

/// The bytes after the type byte of a TCP header.
pub const TCP_DST_LEN: usize = 6;

/// Where a client connection goes (`--transparent`): the address it was
/// sent to and the name it asked for (its SNI; empty when it sent none).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    pub addr: SocketAddrV4,
    pub name: String,
}

/// A destination's name is a DNS name: at most this many bytes.
pub const MAX_NAME: usize = 255;

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name.is_empty() {
            true => write!(f, "{} (no name)", self.addr),
            false => write!(f, "{} ({})", self.addr, self.name),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Message {
    /// Proxy-ST accepted client connection `conn`, which agreed on `alpn`:
    /// Proxy-GW connects to the origin with that ALPN; to `to` when it is
    /// given (`--transparent`), else to its own next hop.
    Open {
        conn: u64,
        alpn: Vec<u8>,
        to: Option<Target>,
    },
    /// Client connection `conn` ended on the sender's side: the receiver
    /// closes its own side with this application code and reason.
    Close {
        conn: u64,
        code: u64,
        reason: Vec<u8>,
    },
    /// The sender reset stream `id` of `conn` with `code`. A reset may
    /// discard the stream's header before it arrives; this message keeps
    /// the stream's place in the numbering anyway.
    Reset { conn: u64, id: u64, code: u64 },
}

const OPEN: u64 = 0;
const CLOSE: u64 = 1;
const RESET: u64 = 2;
/// An Open with its destination: conn | alpn | IPv4 (4) | port (2) | name.
const OPEN_TO: u64 = 3;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameError {
    /// More bytes are needed.
    Incomplete,
    /// Not a header or message of ours.
    Bad(&'static str),
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameError::Incomplete => f.write_str("truncated"),
            FrameError::Bad(why) => f.write_str(why),
        }
    }
}

/// The length of a varint from its first byte (the tunnel reads a header's
/// varints off the stream one at a time).
pub use satbench_transport::varint::len_from_first as varint_len;

/// A varint at the start of `b`, and its length; `Incomplete` if `b` ends
/// inside it.
pub fn get_varint(b: &[u8]) -> Result<(u64, usize), FrameError> {
    varint::decode(b).ok_or(FrameError::Incomplete)
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    varint::encode(out, b.len() as u64);
    out.extend_from_slice(b);
}

fn get_bytes(b: &[u8]) -> Result<(Vec<u8>, usize), FrameError> {
    let (len, n) = get_varint(b)?;
    let len = usize::try_from(len).map_err(|_| FrameError::Bad("length too large"))?;
    let end = n
        .checked_add(len)
        .ok_or(FrameError::Bad("length too large"))?;
    let v = b.get(n..end).ok_or(FrameError::Incomplete)?;
    Ok((v.to_vec(), end))
}

impl Header {
    pub fn encode(&self) -> Vec<u8> {
        let mut out = vec![VERSION];
        match *self {
            Header::Control => out.push(0),
            Header::Stream { conn, id } => {
                out.push(1);
                varint::encode(&mut out, conn);
                varint::encode(&mut out, id);
            }
            Header::Tcp { dst } => {
                out.push(2);
                out.extend_from_slice(&dst.ip().octets());
                out.extend_from_slice(&dst.port().to_be_bytes());
            }
        }
        out
    }

    /// A header at the start of `b`, and its length.
    pub fn decode(b: &[u8]) -> Result<(Header, usize), FrameError> {
        match b.first() {
            None => return Err(FrameError::Incomplete),
            Some(&VERSION) => {}
            Some(_) => return Err(FrameError::Bad("unknown tunnel version")),
        }
        match b.get(1) {
            None => Err(FrameError::Incomplete),
            Some(0) => Ok((Header::Control, 2)),
            Some(1) => {
                let (conn, n) = get_varint(&b[2..])?;
                let (id, m) = get_varint(&b[2 + n..])?;
                Ok((Header::Stream { conn, id }, 2 + n + m))
            }
            Some(2) => {
                let d = b.get(2..2 + TCP_DST_LEN).ok_or(FrameError::Incomplete)?;
                let ip = Ipv4Addr::new(d[0], d[1], d[2], d[3]);
                let dst = SocketAddrV4::new(ip, u16::from_be_bytes([d[4], d[5]]));
                Ok((Header::Tcp { dst }, 2 + TCP_DST_LEN))
            }
            Some(_) => Err(FrameError::Bad("unknown tunnel stream type")),
        }
    }

    /// Checks a client stream's header against the tunnel stream it came
    /// on: a bidi original on a bidi tunnel stream, and opened by the side
    /// that opened the tunnel stream (`peer_opens`: the kinds the peer
    /// relays to us).
    pub fn check(
        &self,
        tunnel_bidi: bool,
        peer_opens: crate::streams::Initiator,
    ) -> Result<(), FrameError> {
        match *self {
            Header::Control => Ok(()),
            // Proxy-ST intercepts TCP, so only it opens TCP streams
            Header::Tcp { .. } if !tunnel_bidi => {
                Err(FrameError::Bad("a TCP stream on a uni stream"))
            }
            Header::Tcp { .. } if peer_opens != crate::streams::Initiator::Client => {
                Err(FrameError::Bad("a TCP stream opened by Proxy-GW"))
            }
            Header::Tcp { .. } => Ok(()),
            Header::Stream { id, .. } => {
                let k = Kind::of(id);
                if (k.dir == crate::streams::Dir::Bi) != tunnel_bidi {
                    return Err(FrameError::Bad(
                        "stream type differs from the tunnel stream's",
                    ));
                }
                if k.initiator != peer_opens {
                    return Err(FrameError::Bad("stream opened by the wrong side"));
                }
                Ok(())
            }
        }
    }
}

impl Message {
    pub fn encode(&self) -> Vec<u8> {
        let mut body = Vec::new();
        let t = match self {
            Message::Open { conn, alpn, to } => {
                varint::encode(&mut body, *conn);
                put_bytes(&mut body, alpn);
                match to {
                    None => OPEN,
                    Some(t) => {
                        body.extend_from_slice(&t.addr.ip().octets());
                        body.extend_from_slice(&t.addr.port().to_be_bytes());
                        let name = t.name.as_bytes();
                        put_bytes(&mut body, &name[..name.len().min(MAX_NAME)]);
                        OPEN_TO
                    }
                }
            }
            Message::Close { conn, code, reason } => {
                varint::encode(&mut body, *conn);
                varint::encode(&mut body, *code);
                put_bytes(
                    &mut body,
                    &reason[..reason.len().min(crate::close::MAX_REASON)],
                );
                CLOSE
            }
            Message::Reset { conn, id, code } => {
                varint::encode(&mut body, *conn);
                varint::encode(&mut body, *id);
                varint::encode(&mut body, *code);
                RESET
            }
        };
        let mut out = Vec::with_capacity(body.len() + 4);
        varint::encode(&mut out, t);
        varint::encode(&mut out, body.len() as u64);
        out.extend_from_slice(&body);
        out
    }

    /// The type and body length of a message whose first bytes are `b`
    /// (what the reader needs before it reads the body).
    pub fn decode_prefix(b: &[u8]) -> Result<(u64, usize, usize), FrameError> {
        let (t, n) = get_varint(b)?;
        let (len, m) = get_varint(&b[n..])?;
        if len > MAX_MESSAGE as u64 {
            return Err(FrameError::Bad("control message too long"));
        }
        Ok((t, len as usize, n + m))
    }

    /// A whole message at the start of `b`, and its length.
    pub fn decode(b: &[u8]) -> Result<(Message, usize), FrameError> {
        let (t, len, n) = Message::decode_prefix(b)?;
        let body = b.get(n..n + len).ok_or(FrameError::Incomplete)?;
        let mut c = Body { b: body, at: 0 };
        let m = match t {
            OPEN => Message::Open {
                conn: c.varint()?,
                alpn: c.bytes()?,
                to: None,
            },
            OPEN_TO => Message::Open {
                conn: c.varint()?,
                alpn: c.bytes()?,
                to: Some(c.target()?),
            },
            CLOSE => Message::Close {
                conn: c.varint()?,
                code: c.varint()?,
                reason: c.bytes()?,
            },
            RESET => Message::Reset {
                conn: c.varint()?,
                id: c.varint()?,
                code: c.varint()?,
            },
            _ => return Err(FrameError::Bad("unknown control message")),
        };
        Ok((m, n + len))
    }
}

/// A complete message body being read field by field: running short here
/// is a malformed message, not a truncated one.
struct Body<'a> {
    b: &'a [u8],
    at: usize,
}

impl Body<'_> {
    fn short(e: FrameError) -> FrameError {
        match e {
            FrameError::Incomplete => FrameError::Bad("control message body too short"),
            bad => bad,
        }
    }

    fn varint(&mut self) -> Result<u64, FrameError> {
        let (v, n) = get_varint(&self.b[self.at..]).map_err(Body::short)?;
        self.at += n;
        Ok(v)
    }

    fn bytes(&mut self) -> Result<Vec<u8>, FrameError> {
        let (v, n) = get_bytes(&self.b[self.at..]).map_err(Body::short)?;
        self.at += n;
        Ok(v)
    }

    fn fixed<const N: usize>(&mut self) -> Result<[u8; N], FrameError> {
        let v = self
            .b
            .get(self.at..self.at + N)
            .ok_or(FrameError::Bad("control message body too short"))?;
        self.at += N;
        Ok(v.try_into().expect("N bytes"))
    }

    fn target(&mut self) -> Result<Target, FrameError> {
        let ip = Ipv4Addr::from(self.fixed::<4>()?);
        let port = u16::from_be_bytes(self.fixed::<2>()?);
        let name = self.bytes()?;
        if name.len() > MAX_NAME {
            return Err(FrameError::Bad("destination name too long"));
        }
        let name =
            String::from_utf8(name).map_err(|_| FrameError::Bad("destination name not UTF-8"))?;
        Ok(Target {
            addr: SocketAddrV4::new(ip, port),
            name,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::streams::Initiator;

    #[test]
    fn a_cut_varint_is_incomplete() {
        // the codec itself is tested in satbench_transport::varint
        assert_eq!(get_varint(&[0x7b, 0xbd]), Ok((15293, 2)));
        assert_eq!(get_varint(&[0x7b]), Err(FrameError::Incomplete));
        assert_eq!(get_varint(&[]), Err(FrameError::Incomplete));
    }

    #[test]
    fn headers_round_trip() {
        for h in [
            Header::Control,
            Header::Stream { conn: 1, id: 0 },
            Header::Stream {
                conn: 70_000,
                id: 4 * 1000 + 3,
            },
            Header::Stream {
                conn: (1 << 62) - 1,
                id: (1 << 62) - 1,
            },
            Header::Tcp {
                dst: "198.18.3.2:443".parse().unwrap(),
            },
            Header::Tcp {
                dst: "255.255.255.255:65535".parse().unwrap(),
            },
        ] {
            let mut b = h.encode();
            assert!(b.len() <= MAX_HEADER);
            let len = b.len();
            b.extend_from_slice(b"payload");
            assert_eq!(Header::decode(&b), Ok((h, len)));
        }
        assert_eq!(Header::Stream { conn: 1, id: 2 }.encode(), [1, 1, 1, 2]);
        let tcp = Header::Tcp {
            dst: "198.18.3.2:443".parse().unwrap(),
        };
        assert_eq!(tcp.encode(), [1, 2, 198, 18, 3, 2, 1, 187]);
    }

    #[test]
    fn truncated_headers_ask_for_more() {
        let tcp = Header::Tcp {
            dst: "198.18.3.2:80".parse().unwrap(),
        };
        for h in [
            Header::Stream {
                conn: 70_000,
                id: 20_000,
            },
            tcp,
        ] {
            let b = h.encode();
            for n in 0..b.len() {
                assert_eq!(
                    Header::decode(&b[..n]),
                    Err(FrameError::Incomplete),
                    "{h:?}: {n} bytes"
                );
            }
        }
    }

    #[test]
    fn bad_headers_are_refused() {
        assert_eq!(
            Header::decode(&[2, 1, 0, 0]),
            Err(FrameError::Bad("unknown tunnel version"))
        );
        assert_eq!(
            Header::decode(&[1, 9]),
            Err(FrameError::Bad("unknown tunnel stream type"))
        );
        let uni = Header::Stream { conn: 1, id: 2 };
        assert!(uni.check(false, Initiator::Client).is_ok());
        assert!(
            uni.check(true, Initiator::Client).is_err(),
            "uni on a bidi tunnel stream"
        );
        assert!(
            uni.check(false, Initiator::Server).is_err(),
            "client stream from the server side"
        );
        assert!(Header::Stream { conn: 1, id: 1 }
            .check(true, Initiator::Server)
            .is_ok());
        let tcp = Header::Tcp {
            dst: "198.18.3.2:80".parse().unwrap(),
        };
        assert!(tcp.check(true, Initiator::Client).is_ok(), "from Proxy-ST");
        assert_eq!(
            tcp.check(true, Initiator::Server),
            Err(FrameError::Bad("a TCP stream opened by Proxy-GW"))
        );
        assert_eq!(
            tcp.check(false, Initiator::Client),
            Err(FrameError::Bad("a TCP stream on a uni stream"))
        );
    }

    #[test]
    fn messages_round_trip() {
        for m in [
            Message::Open {
                conn: 1,
                alpn: b"h3".to_vec(),
                to: None,
            },
            Message::Open {
                conn: 2,
                alpn: vec![],
                to: None,
            },
            Message::Open {
                conn: 7,
                alpn: b"h3".to_vec(),
                to: Some(Target {
                    addr: "198.19.1.2:443".parse().unwrap(),
                    name: "cdn.example.test".into(),
                }),
            },
            Message::Open {
                conn: 8,
                alpn: b"h3".to_vec(),
                to: Some(Target {
                    addr: "198.19.250.250:8443".parse().unwrap(),
                    name: String::new(),
                }),
            },
            Message::Close {
                conn: 3,
                code: 0x10c,
                reason: b"bye".to_vec(),
            },
            Message::Close {
                conn: 3,
                code: 0,
                reason: vec![],
            },
            Message::Reset {
                conn: 4,
                id: 8,
                code: 0x10c,
            },
        ] {
            let mut b = m.encode();
            let len = b.len();
            b.push(0xff);
            assert_eq!(Message::decode(&b), Ok((m.clone(), len)));
            for n in 0..len {
                assert_eq!(
                    Message::decode(&b[..n]),
                    Err(FrameError::Incomplete),
                    "{m:?} cut at {n}"
                );
            }
        }
    }

    #[test]
    fn an_open_with_a_destination_has_its_own_type() {
        let plain = Message::Open {
            conn: 1,
            alpn: b"h3".to_vec(),
            to: None,
        };
        assert_eq!(plain.encode(), [0, 4, 1, 2, b'h', b'3']);
        let to = Message::Open {
            conn: 1,
            alpn: b"h3".to_vec(),
            to: Some(Target {
                addr: "198.19.1.1:443".parse().unwrap(),
                name: "a.test".into(),
            }),
        };
        let mut want = vec![3, 17, 1, 2, b'h', b'3', 198, 19, 1, 1, 1, 187, 6];
        want.extend_from_slice(b"a.test");
        assert_eq!(to.encode(), want);
        // a name that is not UTF-8, or longer than a DNS name may be
        let mut bad = vec![3, 11, 1, 0, 198, 19, 1, 1, 1, 187, 2, 0xff, 0xfe];
        assert_eq!(
            Message::decode(&bad),
            Err(FrameError::Bad("destination name not UTF-8"))
        );
        bad.truncate(10); // cut inside the address
        bad[1] = 8;
        assert!(matches!(Message::decode(&bad), Err(FrameError::Bad(_))));
        let mut long = vec![3];
        let mut body = vec![1, 0, 198, 19, 1, 1, 1, 187];
        varint::encode(&mut body, 300);
        body.extend_from_slice(&[b'a'; 300]);
        varint::encode(&mut long, body.len() as u64);
        long.extend_from_slice(&body);
        assert_eq!(
            Message::decode(&long),
            Err(FrameError::Bad("destination name too long"))
        );
        // the sender cuts its own to fit
        let cut = Message::Open {
            conn: 1,
            alpn: vec![],
            to: Some(Target {
                addr: "198.19.1.1:443".parse().unwrap(),
                name: "a".repeat(400),
            }),
        };
        let (back, _) = Message::decode(&cut.encode()).unwrap();
        assert!(matches!(back, Message::Open { to: Some(t), .. } if t.name.len() == MAX_NAME));
        assert_eq!(
            Target {
                addr: "198.19.1.1:443".parse().unwrap(),
                name: "a.test".into()
            }
            .to_string(),
            "198.19.1.1:443 (a.test)"
        );
    }

    #[test]
    fn long_reasons_are_cut() {
        let m = Message::Close {
            conn: 1,
            code: 1,
            reason: vec![b'x'; 5000],
        };
        let (back, _) = Message::decode(&m.encode()).unwrap();
        assert!(
            matches!(back, Message::Close { reason, .. } if reason.len() == crate::close::MAX_REASON)
        );
    }

    #[test]
    fn bad_messages_are_refused() {
        // unknown type 9, empty body
        assert_eq!(
            Message::decode(&[9, 0]),
            Err(FrameError::Bad("unknown control message"))
        );
        // too long
        let mut b = vec![0];
        varint::encode(&mut b, MAX_MESSAGE as u64 + 1);
        assert_eq!(
            Message::decode(&b),
            Err(FrameError::Bad("control message too long"))
        );
        // a body shorter than its fields
        assert!(matches!(
            Message::decode(&[2, 1, 5]),
            Err(FrameError::Bad(_))
        ));
        // an ALPN longer than the body
        assert!(matches!(
            Message::decode(&[0, 2, 1, 9]),
            Err(FrameError::Bad(_))
        ));
    }

    #[test]
    fn garbage_never_panics() {
        // a small deterministic generator: every input is an error or a value
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for len in 0..64 {
            for _ in 0..200 {
                let b: Vec<u8> = (0..len)
                    .map(|_| {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        x as u8
                    })
                    .collect();
                let _ = Header::decode(&b);
                let _ = Message::decode(&b);
            }
        }
    }
}
