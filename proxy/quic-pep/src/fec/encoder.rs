//! The sending side: each datagram leaves at once behind a source header;
//! when K have gone, or the caller's clock says the window has waited
//! `flush_after`, the window's repair packets follow.
//!
//! No I/O and no clock of its own (as quinn-proto): the caller passes
//! `now`, sends what `push` returns and what `poll_transmit` gives, and
//! calls `handle_timeout` at `poll_timeout`.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::time::{Duration, Instant};

use reed_solomon_erasure::galois_8::ReedSolomon;
use serde_json::{json, Value};

use super::setting::FecSetting;
use super::wire::{self, Header};

/// What the encoder sent.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EncoderCounters {
    /// Source datagrams and their bytes (without the FEC header).
    pub source_packets: u64,
    pub source_bytes: u64,
    /// The source headers' bytes: FEC's cost on every datagram.
    pub source_header_bytes: u64,
    /// Windows closed, and of those the ones flushed before they filled.
    pub windows: u64,
    pub partial_windows: u64,
    /// Repair packets and their bytes on the wire, header included.
    pub repair_packets: u64,
    pub repair_bytes: u64,
}

impl EncoderCounters {
    /// FEC's bytes (repairs and source headers) per source byte.
    pub fn overhead(&self) -> f64 {
        match self.source_bytes {
            0 => 0.0,
            b => (self.repair_bytes + self.source_header_bytes) as f64 / b as f64,
        }
    }

    pub fn json(&self) -> Value {
        json!({
            "source_packets": self.source_packets,
            "source_bytes": self.source_bytes,
            "source_header_bytes": self.source_header_bytes,
            "windows": self.windows,
            "partial_windows": self.partial_windows,
            "repair_packets": self.repair_packets,
            "repair_bytes": self.repair_bytes,
        })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EncoderError {
    /// The MTU leaves no room for a datagram, or is past 64 KiB.
    Mtu(usize),
    /// A datagram longer than `max_datagram`.
    TooLong { len: usize, max: usize },
}

impl fmt::Display for EncoderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EncoderError::Mtu(mtu) => write!(f, "FEC: an MTU of {mtu} bytes leaves no room"),
            EncoderError::TooLong { len, max } => {
                write!(f, "FEC: a datagram of {len} bytes, more than {max}")
            }
        }
    }
}

impl std::error::Error for EncoderError {}

pub struct Encoder {
    setting: FecSetting,
    max_datagram: usize,
    flush_after: Duration,
    /// The window being filled, its datagrams end to end in `data`
    /// (`ends[i]` where the i-th ends) and when its first one left.
    window: u32,
    data: Vec<u8>,
    ends: Vec<usize>,
    opened: Option<Instant>,
    repairs: VecDeque<Vec<u8>>,
    /// The codec for each window shape (K, repairs) met: a full window's,
    /// and at most K − 1 partial ones.
    codecs: HashMap<(usize, usize), ReedSolomon>,
    /// The window's shards, sources then repairs, kept from window to window.
    shards: Vec<Vec<u8>>,
    counters: EncoderCounters,
}

impl Encoder {
    /// No packet it sends is longer than `mtu`; a partial window's repairs
    /// leave `flush_after` after its first datagram (`setting::flush_after`).
    pub fn new(
        setting: FecSetting,
        mtu: usize,
        flush_after: Duration,
    ) -> Result<Encoder, EncoderError> {
        let max_datagram = wire::max_datagram(mtu);
        if max_datagram == 0 || mtu > usize::from(u16::MAX) {
            return Err(EncoderError::Mtu(mtu));
        }
        Ok(Encoder {
            setting,
            max_datagram,
            flush_after,
            window: 0,
            data: Vec::new(),
            ends: Vec::with_capacity(setting.k()),
            opened: None,
            repairs: VecDeque::new(),
            codecs: HashMap::new(),
            shards: Vec::new(),
            counters: EncoderCounters::default(),
        })
    }

    /// The longest datagram `push` takes: what the tunnel offers the inner
    /// QUIC as its MTU.
    pub fn max_datagram(&self) -> usize {
        self.max_datagram
    }

    pub fn counters(&self) -> &EncoderCounters {
        &self.counters
    }

    /// The source packet that carries `datagram`, to send now. When it
    /// fills its window, the window's repairs wait in `poll_transmit`.
    pub fn push(&mut self, datagram: &[u8], now: Instant) -> Result<Vec<u8>, EncoderError> {
        if datagram.len() > self.max_datagram {
            return Err(EncoderError::TooLong {
                len: datagram.len(),
                max: self.max_datagram,
            });
        }
        let header = Header::Source {
            window: self.window,
            // At most K − 1 < MAX_N: the window closes at K.
            index: self.ends.len() as u8,
        };
        let mut packet = Vec::with_capacity(header.size() + datagram.len());
        header.encode(&mut packet);
        packet.extend_from_slice(datagram);
        self.data.extend_from_slice(datagram);
        self.ends.push(self.data.len());
        self.opened.get_or_insert(now);
        self.counters.source_packets += 1;
        self.counters.source_bytes += datagram.len() as u64;
        self.counters.source_header_bytes += header.size() as u64;
        if self.ends.len() == self.setting.k() {
            self.close_window();
        }
        Ok(packet)
    }

    /// The next repair packet to send.
    pub fn poll_transmit(&mut self) -> Option<Vec<u8>> {
        self.repairs.pop_front()
    }

    /// When a partial window's repairs are due: call `handle_timeout` then.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.opened.map(|t| t + self.flush_after)
    }

    /// Flushes the partial window if it has waited long enough.
    pub fn handle_timeout(&mut self, now: Instant) {
        if self.poll_timeout().is_some_and(|due| now >= due) {
            self.close_window();
        }
    }

    /// Computes the window's repairs, queues them and opens the next.
    fn close_window(&mut self) {
        let k = self.ends.len();
        if k == 0 {
            return;
        }
        let r = self.setting.repairs_for(k);
        let nth = |i: usize| (i.checked_sub(1).map_or(0, |p| self.ends[p]), self.ends[i]);
        let longest = (0..k).map(|i| nth(i).1 - nth(i).0).max().unwrap_or(0);
        let shard_len = wire::shard_len(longest);
        // k + r ≤ 64 shards of one size: within the codec's 256, so it
        // cannot refuse.
        let codec = self.codecs.entry((k, r)).or_insert_with(|| {
            ReedSolomon::new(k, r).expect("FEC window within the codec's limits")
        });
        self.shards.resize_with(k + r, Vec::new);
        for i in 0..k {
            let (start, end) = nth(i);
            wire::write_shard(&mut self.shards[i], &self.data[start..end], shard_len);
        }
        for repair in &mut self.shards[k..k + r] {
            repair.clear();
            repair.resize(shard_len, 0);
        }
        codec
            .encode(&mut self.shards[..k + r])
            .expect("k + r shards of one size");
        for (i, shard) in self.shards[k..k + r].iter().enumerate() {
            let header = Header::Repair {
                window: self.window,
                index: (k + i) as u8,
                k: k as u8,
                n: (k + r) as u8,
            };
            let mut packet = Vec::with_capacity(header.size() + shard.len());
            header.encode(&mut packet);
            packet.extend_from_slice(shard);
            self.counters.repair_packets += 1;
            self.counters.repair_bytes += packet.len() as u64;
            self.repairs.push_back(packet);
        }
        self.counters.windows += 1;
        if k < self.setting.k() {
            self.counters.partial_windows += 1;
        }
        self.window = self.window.wrapping_add(1);
        self.data.clear();
        self.ends.clear();
        self.opened = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encoder(k: u8, n: u8, mtu: usize) -> Encoder {
        Encoder::new(
            FecSetting::new(k, n).unwrap(),
            mtu,
            Duration::from_millis(5),
        )
        .unwrap()
    }

    fn header(packet: &[u8]) -> Header {
        wire::decode(packet).unwrap().0
    }

    #[test]
    fn a_full_window_sends_its_sources_then_n_minus_k_repairs() {
        let mut e = encoder(4, 6, 1200);
        let t = Instant::now();
        for i in 0..4u8 {
            let p = e.push(&vec![i; 10 + i as usize], t).unwrap();
            assert_eq!(
                header(&p),
                Header::Source {
                    window: 0,
                    index: i
                }
            );
            assert_eq!(&p[6..], vec![i; 10 + i as usize]);
            if i < 3 {
                assert_eq!(e.poll_transmit(), None);
                assert!(e.poll_timeout().is_some());
            }
        }
        assert_eq!(e.poll_timeout(), None);
        for index in [4, 5] {
            let p = e.poll_transmit().unwrap();
            assert_eq!(
                header(&p),
                Header::Repair {
                    window: 0,
                    index,
                    k: 4,
                    n: 6
                }
            );
            // The longest datagram (13 bytes) with its length.
            assert_eq!(p.len(), 8 + 15);
        }
        assert_eq!(e.poll_transmit(), None);
        let p = e.push(b"next", t).unwrap();
        assert_eq!(
            header(&p),
            Header::Source {
                window: 1,
                index: 0
            }
        );
        let c = e.counters();
        assert_eq!((c.windows, c.partial_windows, c.repair_packets), (1, 0, 2));
        assert_eq!(
            (c.source_packets, c.source_bytes),
            (5, 10 + 11 + 12 + 13 + 4)
        );
        assert_eq!((c.repair_bytes, c.source_header_bytes), (46, 30));
    }

    #[test]
    fn a_partial_window_is_flushed_when_its_time_is_up() {
        let mut e = encoder(8, 10, 1200);
        let t = Instant::now();
        e.push(b"a", t).unwrap();
        e.push(b"b", t + Duration::from_millis(3)).unwrap();
        // The bound runs from the first datagram.
        assert_eq!(e.poll_timeout(), Some(t + Duration::from_millis(5)));
        e.handle_timeout(t + Duration::from_millis(4));
        assert_eq!(e.poll_transmit(), None);
        e.handle_timeout(t + Duration::from_millis(5));
        let p = e.poll_transmit().unwrap();
        assert_eq!(
            header(&p),
            Header::Repair {
                window: 0,
                index: 2,
                k: 2,
                n: 3
            }
        );
        assert_eq!(e.poll_transmit(), None);
        assert_eq!(e.poll_timeout(), None);
        // Nothing pending: a timeout does nothing.
        e.handle_timeout(t + Duration::from_secs(1));
        assert_eq!(e.poll_transmit(), None);
        assert_eq!(e.counters().partial_windows, 1);
        let p = e.push(b"c", t + Duration::from_secs(1)).unwrap();
        assert_eq!(
            header(&p),
            Header::Source {
                window: 1,
                index: 0
            }
        );
    }

    #[test]
    fn refuses_a_datagram_longer_than_the_mtu_allows() {
        let mut e = encoder(2, 3, 1200);
        assert_eq!(e.max_datagram(), 1190);
        let t = Instant::now();
        assert_eq!(
            e.push(&[0; 1191], t),
            Err(EncoderError::TooLong {
                len: 1191,
                max: 1190
            })
        );
        e.push(&[0; 1190], t).unwrap();
        e.push(&[1; 7], t).unwrap();
        // Every packet, repairs included, fits the MTU.
        assert_eq!(e.poll_transmit().unwrap().len(), 1200);
        assert_eq!(e.counters().source_packets, 2);
    }

    #[test]
    fn refuses_an_mtu_without_room() {
        let s = FecSetting::new(2, 3).unwrap();
        let d = Duration::from_millis(1);
        assert!(matches!(Encoder::new(s, 10, d), Err(EncoderError::Mtu(10))));
        assert!(matches!(
            Encoder::new(s, 70000, d),
            Err(EncoderError::Mtu(70000))
        ));
        assert!(Encoder::new(s, 12, d).is_ok());
    }

    #[test]
    fn window_ids_wrap() {
        let mut e = encoder(1, 2, 1200);
        e.window = u32::MAX;
        let t = Instant::now();
        assert_eq!(header(&e.push(b"x", t).unwrap()).window(), u32::MAX);
        assert_eq!(header(&e.push(b"y", t).unwrap()).window(), 0);
    }
}
