//! HTTP/3 response priorities (RFC 9218, Extensible Priorities) as plain
//! functions: the `priority` field value (a Structured Fields dictionary,
//! read by the `sfv` crate) → urgency and incremental, those →
//! a quinn send-stream priority, and a reader that picks PRIORITY_UPDATE
//! frames out of the bytes of the peer's HTTP/3 control stream. No I/O;
//! `h3_quinn_prio` applies the numbers to the streams.
//!
//! The scheduling this gives by default (`Policy::Rfc9218`; quinn sends the
//! highest priority with data pending first, equal priorities round-robin):
//!
//! - a lower urgency number is always sent first (`u=0` before `u=1` …);
//! - within one urgency, non-incremental responses come before incremental
//!   ones, one after another in request order (stream id);
//! - incremental responses of one urgency share the link round-robin.

use std::fmt;

use satbench_transport::varint;

/// RFC 9218 §4: urgency 0 (highest) to 7, default 3; incremental, default
/// false.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Priority {
    pub urgency: u8,
    pub incremental: bool,
}

impl Default for Priority {
    fn default() -> Priority {
        Priority {
            urgency: 3,
            incremental: false,
        }
    }
}

/// `u=N` or `u=N,i`: the request-log form (no spaces).
impl fmt::Display for Priority {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "u={}", self.urgency)?;
        if self.incremental {
            f.write_str(",i")?;
        }
        Ok(())
    }
}

/// RFC 9218 §4: a `priority` field value (a Structured Fields Dictionary)
/// → its priority. Parameters it does not know are ignored, as is `u` out of
/// 0–7 or not an integer and `i` not a boolean (they keep their defaults); a
/// value that is not a valid dictionary is ignored as a whole. The last of
/// repeated keys wins.
pub fn parse(value: &str) -> Priority {
    let mut p = Priority::default();
    let Ok(dict) = sfv::Parser::new(value).parse::<sfv::Dictionary>() else {
        return p;
    };
    // a dictionary keeps one value per key, the last one given
    for (key, member) in &dict {
        let sfv::ListEntry::Item(item) = member else {
            continue; // an inner list means nothing here
        };
        match key.as_str() {
            "u" => {
                let u = item.bare_item.as_integer().map(i64::from);
                if let Some(n) = u.filter(|n| (0..=7).contains(n)) {
                    p.urgency = n as u8;
                }
            }
            "i" => {
                if let Some(b) = item.bare_item.as_boolean() {
                    p.incremental = b;
                }
            }
            _ => {}
        }
    }
    p
}

/// The priority a request carried in its `priority` header field(s), None
/// when it carried none. Several field lines are one list joined by commas
/// (RFC 9110 §5.3); a value that is not text is ignored as invalid.
pub fn from_headers(headers: &http::HeaderMap) -> Option<Priority> {
    let mut joined = String::new();
    let mut any = false;
    for v in headers.get_all("priority") {
        any = true;
        let Ok(s) = v.to_str() else {
            return Some(Priority::default());
        };
        if !joined.is_empty() {
            joined.push(',');
        }
        joined.push_str(s);
    }
    any.then(|| parse(&joined))
}

/// How HTTP/3 responses are ordered (`origin serve --h3-priorities`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Policy {
    /// RFC 9218 as written: urgency first; within an urgency,
    /// non-incremental responses in request order, then the incremental
    /// ones round-robin.
    #[default]
    Rfc9218,
    /// Non-incremental responses as in `Rfc9218` (urgency, then request
    /// order), all ahead of every incremental response; the incremental
    /// ones share the link round-robin whatever their urgency.
    IncrementalLast,
    /// No priorities: every response equal, round-robin (quinn's default,
    /// the server's behaviour before it read priorities).
    Off,
}

impl Policy {
    pub const NAMES: [&'static str; 3] = ["rfc9218", "incremental-last", "off"];

    pub fn parse(s: &str) -> Option<Policy> {
        match s {
            "rfc9218" => Some(Policy::Rfc9218),
            "incremental-last" => Some(Policy::IncrementalLast),
            "off" => Some(Policy::Off),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Policy::Rfc9218 => "rfc9218",
            Policy::IncrementalLast => "incremental-last",
            Policy::Off => "off",
        }
    }
}

/// Requests per urgency band that keep their own place in line; later ones
/// share the last place (at 2^26 requests on one connection, never reached).
const ORDER_SLOTS: u64 = 1 << 26;

/// The quinn send priority (higher is sent first) of a response with
/// priority `p` on the client-initiated bidirectional stream `stream_id`.
///
/// Layout (all non-negative, below 2^30): urgency `u` owns the band
/// `(7 - u) × 2^27 … (8 - u) × 2^27 - 1`. Incremental responses take the
/// band's bottom value, all the same, so quinn serves them round-robin
/// (`IncrementalLast`: 0, the bottom of all bands). Non-incremental ones
/// take `2^26 + (2^26 - 1 - n)` above it, `n` being the request's number on
/// the connection (stream id / 4), so each earlier request outranks each
/// later one of the same urgency and they go out one at a time, whole, in
/// request order. `Off`: 0 for everything.
pub fn send_priority(policy: Policy, p: Priority, stream_id: u64) -> i32 {
    let band = (7 - i64::from(p.urgency.min(7))) << 27;
    match (policy, p.incremental) {
        (Policy::Off, _) | (Policy::IncrementalLast, true) => return 0,
        (Policy::Rfc9218, true) => return band as i32,
        (_, false) => {}
    }
    let n = (stream_id >> 2).min(ORDER_SLOTS - 1) as i64;
    (band + ORDER_SLOTS as i64 + (ORDER_SLOTS as i64 - 1 - n)) as i32
}

/// The send priority of streams the server opens itself (HTTP/3 control,
/// QPACK encoder and decoder streams): above every response, so SETTINGS
/// and GOAWAY never queue behind bodies.
pub const SERVER_STREAM_PRIORITY: i32 = i32::MAX;

// ---- PRIORITY_UPDATE on the peer's control stream (RFC 9218 §7) ----

/// RFC 9218 §7.1: PRIORITY_UPDATE for a request stream.
const PRIORITY_UPDATE_REQUEST: u64 = 0xf0700;
/// Longer PRIORITY_UPDATE payloads are skipped (real ones are a few bytes).
const MAX_UPDATE_LEN: u64 = 1024;

#[derive(Debug)]
enum TapState {
    /// reading the stream type
    StreamType,
    /// a control stream: reading a frame's type and length
    FrameHead,
    /// skipping this many payload bytes of a frame we do not read
    Skip(u64),
    /// collecting a PRIORITY_UPDATE payload of this length
    Update(usize),
    /// not a control stream: nothing to read
    Off,
}

/// Watches the bytes of one peer-initiated unidirectional stream as h3 reads
/// them (it only looks; h3 still gets every byte). If the stream is the
/// HTTP/3 control stream (type 0x00), it yields each PRIORITY_UPDATE for a
/// request stream as (stream id, priority). h3 0.0.8 skips these frames as
/// unknown, so this is the only place they can be seen.
#[derive(Debug)]
pub struct ControlStreamTap {
    state: TapState,
    buf: Vec<u8>,
}

impl Default for ControlStreamTap {
    fn default() -> Self {
        ControlStreamTap {
            state: TapState::StreamType,
            buf: Vec::new(),
        }
    }
}

impl ControlStreamTap {
    /// True once the stream turned out not to be the control stream.
    pub fn is_off(&self) -> bool {
        matches!(self.state, TapState::Off)
    }

    /// Feed the next bytes of the stream; returns the updates they complete.
    pub fn feed(&mut self, mut data: &[u8]) -> Vec<(u64, Priority)> {
        let mut out = Vec::new();
        loop {
            match self.state {
                TapState::Off => return out,
                TapState::Skip(n) => {
                    let k = (n.min(data.len() as u64)) as usize;
                    data = &data[k..];
                    self.state = if n > k as u64 {
                        TapState::Skip(n - k as u64)
                    } else {
                        TapState::FrameHead
                    };
                    if data.is_empty() {
                        return out;
                    }
                }
                TapState::Update(len) => {
                    let k = (len - self.buf.len()).min(data.len());
                    self.buf.extend_from_slice(&data[..k]);
                    data = &data[k..];
                    if self.buf.len() < len {
                        return out;
                    }
                    if let Some((id, n)) = varint::decode(&self.buf) {
                        let field = String::from_utf8_lossy(&self.buf[n..]);
                        out.push((id, parse(&field)));
                    }
                    self.buf.clear();
                    self.state = TapState::FrameHead;
                }
                TapState::StreamType => {
                    if !self.take_into_buf(&mut data, 1) {
                        return out;
                    }
                    let Some((ty, _)) = varint::decode(&self.buf) else {
                        return out;
                    };
                    self.buf.clear();
                    self.state = if ty == 0 {
                        TapState::FrameHead
                    } else {
                        TapState::Off
                    };
                }
                TapState::FrameHead => {
                    // type and length: two varints
                    if !self.take_into_buf(&mut data, 2) {
                        return out;
                    }
                    let (ty, a) = varint::decode(&self.buf).expect("complete");
                    let (len, _) = varint::decode(&self.buf[a..]).expect("complete");
                    self.buf.clear();
                    self.state = if ty == PRIORITY_UPDATE_REQUEST && len <= MAX_UPDATE_LEN {
                        TapState::Update(len as usize)
                    } else {
                        TapState::Skip(len)
                    };
                    if len == 0 {
                        self.state = TapState::FrameHead;
                    }
                }
            }
        }
    }

    /// Move bytes from `data` into `buf` until it holds `count` whole
    /// varints; true when it does.
    fn take_into_buf(&mut self, data: &mut &[u8], count: usize) -> bool {
        loop {
            let mut at = 0;
            let mut have = 0;
            while have < count {
                match self.buf.get(at) {
                    None => break,
                    Some(&b) => {
                        let len = varint::len_from_first(b);
                        if self.buf.len() < at + len {
                            break;
                        }
                        at += len;
                        have += 1;
                    }
                }
            }
            if have == count {
                return true;
            }
            let Some((&b, rest)) = data.split_first() else {
                return false;
            };
            self.buf.push(b);
            *data = rest;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const R: Policy = Policy::Rfc9218;

    fn p(urgency: u8, incremental: bool) -> Priority {
        Priority {
            urgency,
            incremental,
        }
    }

    #[test]
    fn parses_the_fields_chromium_sends() {
        assert_eq!(parse("u=0"), p(0, false));
        assert_eq!(parse("u=0, i"), p(0, true));
        assert_eq!(parse("u=1"), p(1, false));
        assert_eq!(parse("u=4, i"), p(4, true));
        assert_eq!(parse("i"), p(3, true));
        assert_eq!(parse(""), p(3, false));
    }

    #[test]
    fn parses_booleans_parameters_and_unknown_keys() {
        assert_eq!(parse("u=2, i=?1"), p(2, true));
        assert_eq!(parse("u=2, i=?0"), p(2, false));
        assert_eq!(parse("i, i=?0"), p(3, false)); // the last wins
        assert_eq!(parse("u=5;a=1;b, i;x=\"y\""), p(5, true));
        assert_eq!(parse("foo=\"a, u=0\", u=6"), p(6, false));
        assert_eq!(
            parse("x=(1 2 \"three\");q, u=1, y=:aGk=:, z=tok/en, w=1.5"),
            p(1, false)
        );
        assert_eq!(parse("  u=7,\ti"), p(7, true));
        assert_eq!(parse("u=1,u=2"), p(2, false));
        assert_eq!(parse("u=1, u=(2)"), p(3, false)); // the last u is a list
        assert_eq!(parse("d=@1659578233, s=%\"caf%c3%a9\", u=2"), p(2, false)); // RFC 9651 types
    }

    #[test]
    fn ignores_bad_values_and_bad_fields() {
        // out of range, wrong type: the parameter keeps its default
        assert_eq!(parse("u=8, i"), p(3, true));
        assert_eq!(parse("u=-1"), p(3, false));
        assert_eq!(parse("u=?1, i=1"), p(3, false));
        assert_eq!(parse("u=1.0"), p(3, false));
        assert_eq!(parse("u=\"0\""), p(3, false));
        // not a dictionary: all defaults
        assert_eq!(parse("u=0,"), p(3, false));
        assert_eq!(parse("U=0"), p(3, false));
        assert_eq!(parse("u=0 i"), p(3, false));
        assert_eq!(parse("u==0"), p(3, false));
        assert_eq!(parse("u=0, i=?2"), p(3, false));
        assert_eq!(parse("u=\"unterminated"), p(3, false));
        assert_eq!(parse("u=1234567890123456"), p(3, false));
    }

    #[test]
    fn reads_header_fields() {
        let mut h = http::HeaderMap::new();
        assert_eq!(from_headers(&h), None);
        h.append("priority", "u=1".parse().unwrap());
        assert_eq!(from_headers(&h), Some(p(1, false)));
        h.append("priority", "i".parse().unwrap());
        assert_eq!(from_headers(&h), Some(p(1, true)));
    }

    #[test]
    fn displays_for_the_log() {
        assert_eq!(p(0, false).to_string(), "u=0");
        assert_eq!(p(5, true).to_string(), "u=5,i");
    }

    #[test]
    fn lower_urgency_numbers_go_first() {
        for u in 0..7 {
            for (a, b) in [(false, false), (true, true), (false, true), (true, false)] {
                // whatever the order and incremental flags
                for (early, late) in [(0, 400), (400, 0)] {
                    assert!(
                        send_priority(R, p(u, a), early) > send_priority(R, p(u + 1, b), late),
                        "u={u} {a} vs u={} {b}",
                        u + 1
                    );
                }
            }
        }
        assert!(send_priority(R, p(0, false), 4 * 1000) > send_priority(R, p(5, false), 0));
    }

    #[test]
    fn non_incremental_go_in_request_order_before_incremental() {
        for u in 0..=7 {
            let first = send_priority(R, p(u, false), 0);
            let second = send_priority(R, p(u, false), 4);
            let later = send_priority(R, p(u, false), 4 * 5000);
            assert!(first > second && second > later);
            assert!(later > send_priority(R, p(u, true), 0));
        }
    }

    #[test]
    fn incremental_share_one_priority() {
        assert_eq!(
            send_priority(R, p(4, true), 0),
            send_priority(R, p(4, true), 400)
        );
    }

    #[test]
    fn priorities_stay_in_range() {
        let all: Vec<i32> = (0..=7u8)
            .flat_map(|u| {
                [false, true].into_iter().flat_map(move |i| {
                    [0u64, 4, 1 << 40, !3u64]
                        .into_iter()
                        .map(move |id| send_priority(R, p(u, i), id))
                })
            })
            .collect();
        assert!(all
            .iter()
            .all(|&x| (0..SERVER_STREAM_PRIORITY).contains(&x)));
        // u=7 incremental is the lowest, u=0 first request the highest
        assert_eq!(*all.iter().min().unwrap(), 0);
        assert_eq!(*all.iter().max().unwrap(), send_priority(R, p(0, false), 0));
        assert_eq!(send_priority(R, p(0, false), 0), (1 << 30) - 1);
    }

    #[test]
    fn incremental_last_puts_every_incremental_response_below() {
        let il = Policy::IncrementalLast;
        // non-incremental: as rfc9218
        for (u, id) in [(0, 0), (3, 8), (7, 4000)] {
            assert_eq!(
                send_priority(il, p(u, false), id),
                send_priority(R, p(u, false), id)
            );
        }
        // incremental: one level, below the least urgent non-incremental
        assert_eq!(
            send_priority(il, p(0, true), 0),
            send_priority(il, p(7, true), 400)
        );
        assert!(send_priority(il, p(0, true), 0) < send_priority(il, p(7, false), !3u64));
    }

    #[test]
    fn off_is_round_robin_for_all() {
        for u in 0..=7 {
            for i in [false, true] {
                assert_eq!(send_priority(Policy::Off, p(u, i), 4 * u64::from(u)), 0);
            }
        }
    }

    #[test]
    fn policy_names() {
        for n in Policy::NAMES {
            assert_eq!(Policy::parse(n).unwrap().name(), n);
        }
        assert_eq!(Policy::default(), Policy::Rfc9218);
        assert_eq!(Policy::parse("strict"), None);
    }

    /// A control stream: type 0, SETTINGS, an unknown frame, PRIORITY_UPDATE
    /// for stream 8 (`u=1, i`), PRIORITY_UPDATE for a push (0xf0701,
    /// ignored), PRIORITY_UPDATE for stream 16 (`u=0`).
    fn control_stream() -> Vec<u8> {
        let mut s = vec![0x00];
        s.extend_from_slice(&[0x04, 0x04, 0x01, 0x40, 0x64, 0x06]); // SETTINGS
        s.extend_from_slice(&[0x21, 0x03, b'a', b'b', b'c']); // reserved type 0x21
        s.extend_from_slice(&[0x80, 0x0f, 0x07, 0x00, 7, 0x08]);
        s.extend_from_slice(b"u=1, i");
        s.extend_from_slice(&[0x80, 0x0f, 0x07, 0x01, 4, 0x02, b'u', b'=', b'0']);
        s.extend_from_slice(&[0x80, 0x0f, 0x07, 0x00, 4, 0x10, b'u', b'=', b'0']);
        s
    }

    #[test]
    fn tap_reads_priority_updates_whole_and_byte_by_byte() {
        let want = vec![(8, p(1, true)), (16, p(0, false))];
        let mut tap = ControlStreamTap::default();
        assert_eq!(tap.feed(&control_stream()), want);
        let mut tap = ControlStreamTap::default();
        let mut got = Vec::new();
        for b in control_stream() {
            got.extend(tap.feed(&[b]));
        }
        assert_eq!(got, want);
        assert!(!tap.is_off());
    }

    #[test]
    fn tap_ignores_other_streams() {
        let mut tap = ControlStreamTap::default();
        let mut s = vec![0x02]; // QPACK encoder stream
        s.extend_from_slice(&control_stream()[1..]);
        assert!(tap.feed(&s).is_empty());
        assert!(tap.is_off());
    }
}
