//! The receiving side: source datagrams are handed on as they arrive, in
//! whatever order; once a window with a loss has K of its datagrams
//! (sources and repairs alike: the code is MDS), the lost ones are
//! rebuilt and handed on too. A window that cannot be repaired is dropped
//! after `hold`, or when `horizon` newer windows have begun, and its
//! losses counted as left.
//!
//! No I/O and no clock of its own, as the encoder.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::time::{Duration, Instant};

use reed_solomon_erasure::galois_8::ReedSolomon;
use serde_json::{json, Value};

use super::setting::{hold_for, MAX_N};
use super::wire::{self, Header, WireError, LEN_PREFIX};

/// What the decoder received and handed on.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DecoderCounters {
    pub source_packets: u64,
    pub repair_packets: u64,
    /// Source datagrams handed on as they arrived.
    pub delivered: u64,
    /// Lost source datagrams rebuilt from repairs: losses repaired (a
    /// reordered one rebuilt before it came counts too).
    pub repaired: u64,
    /// Source datagrams of dropped windows that never came nor could be
    /// rebuilt: losses left. A window whose repairs were all lost does not
    /// say its K, so its lost last sources are not counted (a lower bound).
    pub lost: u64,
    /// Windows of which no packet came.
    pub windows_unseen: u64,
    /// Packets seen before: a source already delivered or rebuilt, a
    /// repair already held.
    pub duplicates: u64,
    /// Packets for windows already dropped (their sources still handed on).
    pub late: u64,
    /// Packets refused: a bad header, or one that disagrees with its window.
    pub malformed: u64,
}

impl DecoderCounters {
    pub fn json(&self) -> Value {
        json!({
            "source_packets": self.source_packets,
            "repair_packets": self.repair_packets,
            "delivered": self.delivered,
            "repaired": self.repaired,
            "lost": self.lost,
            "windows_unseen": self.windows_unseen,
            "duplicates": self.duplicates,
            "late": self.late,
            "malformed": self.malformed,
        })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rejected {
    Wire(WireError),
    /// The packet disagrees with what its window's other packets said.
    Inconsistent(&'static str),
}

impl fmt::Display for Rejected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rejected::Wire(e) => e.fmt(f),
            Rejected::Inconsistent(why) => {
                write!(f, "FEC packet that disagrees with its window: {why}")
            }
        }
    }
}

impl std::error::Error for Rejected {}

/// A repair comes right behind its window on the hop, so a window this many
/// windows back has had its chance; this bounds the decoder's memory at
/// `DEFAULT_HORIZON` × N × MTU.
pub const DEFAULT_HORIZON: usize = 32;

/// Codecs kept, one per window shape (K, N): a sender uses at most K of
/// them (its full window's and its partial ones').
const MAX_CODECS: usize = MAX_N as usize;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DecoderConfig {
    /// How long a window waits for its repairs (`setting::hold_for`).
    pub hold: Duration,
    /// How many windows are kept at most, the newest and those before it.
    pub horizon: usize,
}

impl DecoderConfig {
    /// The defaults for a hop of round trip `hop_rtt`.
    pub fn for_hop(hop_rtt: Duration) -> DecoderConfig {
        DecoderConfig {
            hold: hold_for(hop_rtt),
            horizon: DEFAULT_HORIZON,
        }
    }
}

/// A window's size as its repairs say it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Shape {
    k: u8,
    n: u8,
    shard_len: usize,
}

struct Slot {
    first_seen: Instant,
    seen: bool,
    shape: Option<Shape>,
    /// Source indices delivered (as received or rebuilt).
    delivered: u64,
    /// One past the highest source index seen.
    top: u8,
    /// Kept until the window is whole or rebuilt.
    sources: Vec<(u8, Vec<u8>)>,
    repairs: Vec<(u8, Vec<u8>)>,
    done: bool,
}

impl Slot {
    fn new(now: Instant) -> Slot {
        Slot {
            first_seen: now,
            seen: false,
            shape: None,
            delivered: 0,
            top: 0,
            sources: Vec::new(),
            repairs: Vec::new(),
            done: false,
        }
    }

    fn finish(&mut self) {
        self.done = true;
        self.sources = Vec::new();
        self.repairs = Vec::new();
    }
}

pub struct Decoder {
    config: DecoderConfig,
    /// `slots[i]` is window `base + i`; windows before `base` are dropped.
    base: u32,
    slots: VecDeque<Slot>,
    out: VecDeque<Vec<u8>>,
    /// The codec for each window shape (K, N) met, at most `MAX_CODECS`.
    codecs: HashMap<(u8, u8), ReedSolomon>,
    counters: DecoderCounters,
}

impl Decoder {
    pub fn new(config: DecoderConfig) -> Decoder {
        Decoder {
            config: DecoderConfig {
                horizon: config.horizon.max(1),
                ..config
            },
            base: 0,
            slots: VecDeque::new(),
            out: VecDeque::new(),
            codecs: HashMap::new(),
            counters: DecoderCounters::default(),
        }
    }

    pub fn counters(&self) -> &DecoderCounters {
        &self.counters
    }

    /// Takes one packet from the hop. What it makes deliverable (its own
    /// datagram, and any it lets the decoder rebuild) waits in
    /// `poll_datagram`. A refused packet changes nothing but the count.
    pub fn receive(&mut self, packet: &[u8], now: Instant) -> Result<(), Rejected> {
        self.expire(now);
        let (header, payload) = match wire::decode(packet) {
            Ok(p) => p,
            Err(e) => return self.refuse(Rejected::Wire(e)),
        };
        let Some(at) = self.slot_for(header.window(), now) else {
            // Its window is dropped. A source is still handed on: it may be
            // the one the inner QUIC misses, and were it a duplicate, QUIC
            // drops it by its packet number (RFC 9000 §12.3).
            self.counters.late += 1;
            if let Header::Source { .. } = header {
                self.counters.source_packets += 1;
                self.counters.delivered += 1;
                self.out.push_back(payload.to_vec());
            }
            return Ok(());
        };
        let result = match header {
            Header::Source { index, .. } => self.source(at, index, payload),
            Header::Repair { index, k, n, .. } => self.repair(at, index, k, n, payload),
        };
        match result {
            Err(e) => self.refuse(e),
            Ok(()) => {
                self.try_rebuild(at);
                Ok(())
            }
        }
    }

    /// Windows held now (at most the horizon).
    pub fn held_windows(&self) -> usize {
        self.slots.len()
    }

    /// The next datagram to hand on.
    pub fn poll_datagram(&mut self) -> Option<Vec<u8>> {
        self.out.pop_front()
    }

    /// When the oldest window is due to be dropped.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.slots.front().map(|s| s.first_seen + self.config.hold)
    }

    /// Drops the windows that have waited `hold`.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.expire(now);
    }

    fn refuse(&mut self, e: Rejected) -> Result<(), Rejected> {
        self.counters.malformed += 1;
        Err(e)
    }

    fn expire(&mut self, now: Instant) {
        while self
            .slots
            .front()
            .is_some_and(|s| now >= s.first_seen + self.config.hold)
        {
            self.drop_oldest();
        }
    }

    fn drop_oldest(&mut self) {
        let Some(s) = self.slots.pop_front() else {
            return;
        };
        self.base = self.base.wrapping_add(1);
        if !s.seen {
            self.counters.windows_unseen += 1;
            return;
        }
        let sources = s.shape.map_or(s.top, |sh| sh.k);
        let delivered = u64::from(s.delivered.count_ones());
        self.counters.lost += u64::from(sources).saturating_sub(delivered);
    }

    /// The slot of `window`, made (with any windows between) when it is
    /// new; None when it is already dropped. Window ids wrap: less than
    /// half the id space ahead of `base` is ahead.
    fn slot_for(&mut self, window: u32, now: Instant) -> Option<usize> {
        let mut ahead = window.wrapping_sub(self.base) as usize;
        if ahead >= 1 << 31 {
            if self.base.wrapping_sub(window) as usize <= self.config.horizon {
                return None;
            }
            // Too far behind for a straggler: the ids started again (or one
            // was wrong). Start over there rather than refuse the rest.
            while !self.slots.is_empty() {
                self.drop_oldest();
            }
            self.base = window;
            ahead = 0;
        }
        while ahead >= self.config.horizon && !self.slots.is_empty() {
            self.drop_oldest();
            ahead -= 1;
        }
        if ahead >= self.config.horizon {
            // Nothing kept and the window far ahead: the ones between were
            // never seen.
            self.counters.windows_unseen += ahead as u64;
            self.base = window;
            ahead = 0;
        }
        while self.slots.len() <= ahead {
            self.slots.push_back(Slot::new(now));
        }
        Some(ahead)
    }

    fn source(&mut self, at: usize, index: u8, datagram: &[u8]) -> Result<(), Rejected> {
        let slot = &mut self.slots[at];
        if let Some(sh) = slot.shape {
            if index >= sh.k {
                return Err(Rejected::Inconsistent("a source index past the window's K"));
            }
            if LEN_PREFIX + datagram.len() > sh.shard_len {
                return Err(Rejected::Inconsistent(
                    "a source longer than the window's shards",
                ));
            }
        }
        self.counters.source_packets += 1;
        slot.seen = true;
        let bit = 1u64 << index;
        if slot.delivered & bit != 0 {
            self.counters.duplicates += 1;
            return Ok(());
        }
        slot.delivered |= bit;
        slot.top = slot.top.max(index + 1);
        if !slot.done {
            slot.sources.push((index, datagram.to_vec()));
        }
        self.out.push_back(datagram.to_vec());
        self.counters.delivered += 1;
        Ok(())
    }

    fn repair(&mut self, at: usize, index: u8, k: u8, n: u8, shard: &[u8]) -> Result<(), Rejected> {
        let slot = &mut self.slots[at];
        let shape = Shape {
            k,
            n,
            shard_len: shard.len(),
        };
        match slot.shape {
            Some(sh) if sh != shape => {
                return Err(Rejected::Inconsistent(
                    "a repair that sizes its window otherwise",
                ));
            }
            Some(_) => {}
            None => {
                if slot.top > k {
                    return Err(Rejected::Inconsistent(
                        "a repair's K below a source index seen",
                    ));
                }
                if slot
                    .sources
                    .iter()
                    .any(|(_, d)| LEN_PREFIX + d.len() > shape.shard_len)
                {
                    return Err(Rejected::Inconsistent(
                        "a repair shorter than a source's shard",
                    ));
                }
                slot.shape = Some(shape);
            }
        }
        self.counters.repair_packets += 1;
        slot.seen = true;
        if slot.done {
            return Ok(());
        }
        if slot.repairs.iter().any(|(i, _)| *i == index) {
            self.counters.duplicates += 1;
            return Ok(());
        }
        slot.repairs.push((index, shard.to_vec()));
        Ok(())
    }

    /// Finishes the window at `at` when it is whole, or rebuilds its lost
    /// sources once it holds K datagrams.
    fn try_rebuild(&mut self, at: usize) {
        let slot = &mut self.slots[at];
        let Some(sh) = slot.shape.filter(|_| !slot.done) else {
            return;
        };
        let k = usize::from(sh.k);
        if slot.sources.len() == k {
            slot.finish();
            return;
        }
        if slot.sources.len() + slot.repairs.len() < k {
            return;
        }
        if self.codecs.len() >= MAX_CODECS && !self.codecs.contains_key(&(sh.k, sh.n)) {
            // Shapes a sender would not use (it has a full window's and its
            // partial ones'): start the cache again rather than grow it.
            self.codecs.clear();
        }
        let codec = self.codecs.entry((sh.k, sh.n)).or_insert_with(|| {
            ReedSolomon::new(k, usize::from(sh.n - sh.k)).expect("K + repairs ≤ 64 shards")
        });
        // The sources and repairs held, each at its index; the lost sources
        // are rebuilt in place. The wire and the checks above keep every
        // index in range and once, and every shard one size; should the
        // codec still refuse, the window's losses are left.
        let mut shards: Vec<Option<Vec<u8>>> = vec![None; usize::from(sh.n)];
        for (i, d) in &slot.sources {
            let mut shard = Vec::with_capacity(sh.shard_len);
            wire::write_shard(&mut shard, d, sh.shard_len);
            shards[usize::from(*i)] = Some(shard);
        }
        for (j, shard) in slot.repairs.drain(..) {
            shards[usize::from(j)] = Some(shard);
        }
        match codec.reconstruct_data(&mut shards) {
            Ok(()) => {
                for (i, shard) in shards.iter().take(k).enumerate() {
                    if slot.delivered & (1u64 << i) != 0 {
                        continue;
                    }
                    match shard.as_deref().and_then(wire::read_shard) {
                        Some(d) => {
                            slot.delivered |= 1u64 << i;
                            self.out.push_back(d.to_vec());
                            self.counters.repaired += 1;
                        }
                        None => self.counters.malformed += 1,
                    }
                }
            }
            Err(_) => self.counters.malformed += 1,
        }
        slot.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fec::{Encoder, FecSetting};

    /// One window per datagram (fec=1/2): its source and its repair.
    fn windows(from: u32, count: u32) -> Vec<[Vec<u8>; 2]> {
        let mut e = Encoder::new(
            FecSetting::new(1, 2).unwrap(),
            1200,
            Duration::from_millis(5),
        )
        .unwrap();
        let t = Instant::now();
        (0..from + count)
            .map(|w| {
                let source = e.push(&w.to_be_bytes(), t).unwrap();
                [source, e.poll_transmit().unwrap()]
            })
            .skip(from as usize)
            .collect()
    }

    /// The packet with its window id replaced.
    fn renumbered(packet: &[u8], window: u32) -> Vec<u8> {
        let mut p = packet.to_vec();
        p[1..5].copy_from_slice(&window.to_be_bytes());
        p
    }

    fn decoder() -> Decoder {
        Decoder::new(DecoderConfig::for_hop(Duration::from_millis(600)))
    }

    #[test]
    fn window_ids_wrap() {
        let mut d = decoder();
        d.base = u32::MAX - 1;
        let t = Instant::now();
        let w = windows(0, 4);
        for (i, id) in [u32::MAX - 1, u32::MAX, 0, 1].into_iter().enumerate() {
            // Every other window loses its source: the repair rebuilds it.
            let which = i % 2;
            d.receive(&renumbered(&w[i][which], id), t).unwrap();
        }
        let got: Vec<_> = std::iter::from_fn(|| d.poll_datagram()).collect();
        assert_eq!(
            got,
            (0..4u32)
                .map(|w| w.to_be_bytes().to_vec())
                .collect::<Vec<_>>()
        );
        let c = d.counters();
        assert_eq!(
            (c.delivered, c.repaired, c.late, c.windows_unseen),
            (2, 2, 0, 0)
        );
        assert_eq!(d.held_windows(), 4);
    }

    #[test]
    fn ids_far_behind_start_over_instead_of_being_refused() {
        let mut d = decoder();
        let t = Instant::now();
        for [source, _] in windows(0, 3) {
            d.receive(&source, t).unwrap();
        }
        // The sender's ids began again at 0 after, say, 1000 windows.
        d.base = 1000;
        for [_, repair] in windows(0, 2) {
            d.receive(&repair, t).unwrap();
        }
        let got: Vec<_> = std::iter::from_fn(|| d.poll_datagram()).collect();
        assert_eq!(got.len(), 5);
        assert_eq!(d.counters().repaired, 2);
        assert_eq!(d.counters().late, 0);
        // A straggler just behind is late, not a new start.
        d.receive(&renumbered(&windows(0, 1)[0][0], u32::MAX), t)
            .unwrap();
        assert_eq!(d.counters().late, 1);
        assert_eq!(d.held_windows(), 2);
    }
}
