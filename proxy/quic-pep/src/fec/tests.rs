//! The encoder and decoder together: what crosses a lossy hop comes out.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64Mcg;

use super::decoder::DEFAULT_HORIZON;
use super::wire::{self, Header, WireError};
use super::*;

const MS: Duration = Duration::from_millis(1);

fn encoder(k: u8, n: u8) -> Encoder {
    Encoder::new(FecSetting::new(k, n).unwrap(), 1200, 5 * MS).unwrap()
}

fn decoder() -> Decoder {
    Decoder::new(DecoderConfig {
        hold: Duration::from_secs(1),
        horizon: DEFAULT_HORIZON,
    })
}

/// One window of `datagrams` through `e`: its sources, then its repairs.
fn window(e: &mut Encoder, datagrams: &[&[u8]], t: Instant) -> Vec<Vec<u8>> {
    let mut out: Vec<_> = datagrams.iter().map(|d| e.push(d, t).unwrap()).collect();
    e.handle_timeout(t + Duration::from_secs(1));
    out.extend(std::iter::from_fn(|| e.poll_transmit()));
    out
}

fn drain(d: &mut Decoder) -> Vec<Vec<u8>> {
    std::iter::from_fn(|| d.poll_datagram()).collect()
}

const FOUR: [&[u8]; 4] = [b"first", b"the second, longer", b"", b"4th"];

#[test]
fn a_lost_source_is_rebuilt_from_a_repair() {
    let t = Instant::now();
    let p = window(&mut encoder(4, 6), &FOUR, t);
    assert_eq!(p.len(), 6);
    let mut d = decoder();
    for i in [0, 2, 3] {
        d.receive(&p[i], t).unwrap();
    }
    assert_eq!(drain(&mut d), [FOUR[0], FOUR[2], FOUR[3]]);
    d.receive(&p[4], t).unwrap();
    assert_eq!(drain(&mut d), [FOUR[1]]);
    d.receive(&p[5], t).unwrap();
    assert_eq!(drain(&mut d), Vec::<Vec<u8>>::new());
    d.handle_timeout(t + Duration::from_secs(1));
    let c = d.counters();
    assert_eq!((c.delivered, c.repaired, c.lost), (3, 1, 0));
    assert_eq!((c.source_packets, c.repair_packets, c.malformed), (3, 2, 0));
}

#[test]
fn any_k_of_n_rebuild_the_window_and_fewer_rebuild_nothing() {
    let t = Instant::now();
    let p = window(&mut encoder(4, 6), &FOUR, t);
    let mut rng = Pcg64Mcg::seed_from_u64(1);
    for kept in 0u32..64 {
        let mut order: Vec<usize> = (0..6).filter(|i| kept & (1 << i) != 0).collect();
        // In a random order: repairs before sources as often as after.
        for i in (1..order.len()).rev() {
            order.swap(i, rng.random_range(0..=i));
        }
        let mut d = decoder();
        for &i in &order {
            d.receive(&p[i], t).unwrap();
        }
        let got: BTreeSet<Vec<u8>> = drain(&mut d).into_iter().collect();
        let want: BTreeSet<Vec<u8>> = match order.len() >= 4 {
            true => FOUR.iter().map(|d| d.to_vec()).collect(),
            false => order
                .iter()
                .filter(|&&i| i < 4)
                .map(|&i| FOUR[i].to_vec())
                .collect(),
        };
        assert_eq!(got, want, "kept {kept:06b}");
        d.handle_timeout(t + Duration::from_secs(1));
        let c = d.counters();
        assert_eq!(c.delivered + c.repaired, want.len() as u64);
        // Without a repair the window's K is unknown: only the sources
        // below the highest one seen count as lost.
        let lost = match (
            order.iter().any(|&i| i >= 4),
            order.iter().filter(|&&i| i < 4).max(),
        ) {
            (true, _) => 4 - want.len() as u64,
            (false, Some(&top)) => top as u64 + 1 - want.len() as u64,
            (false, None) => 0,
        };
        assert_eq!(c.lost, lost, "kept {kept:06b}");
        assert_eq!(c.windows_unseen, 0);
    }
}

#[test]
fn duplicates_and_late_packets_are_counted_not_delivered() {
    let t = Instant::now();
    let p = window(&mut encoder(4, 6), &FOUR, t);
    let mut d = decoder();
    for i in [1, 2, 3, 4, 1, 4] {
        d.receive(&p[i], t).unwrap();
    }
    // Source 0 was rebuilt; when it comes after all, it is a duplicate.
    d.receive(&p[0], t).unwrap();
    assert_eq!(drain(&mut d).len(), 4);
    assert_eq!(d.counters().duplicates, 2);
    d.handle_timeout(t + Duration::from_secs(1));
    assert_eq!(d.held_windows(), 0);
    // After its window is dropped a source is still handed on, a repair not.
    d.receive(&p[2], t + Duration::from_secs(1)).unwrap();
    d.receive(&p[5], t + Duration::from_secs(1)).unwrap();
    assert_eq!(drain(&mut d), [FOUR[2]]);
    let c = d.counters();
    assert_eq!((c.late, c.repaired, c.lost), (2, 1, 0));
}

#[test]
fn packets_that_disagree_with_their_window_are_refused() {
    let t = Instant::now();
    let p = window(&mut encoder(2, 3), &[b"ab", b"cdef"], t);
    let mut d = decoder();
    d.receive(&p[2], t).unwrap(); // the repair: K = 2, shards of 6 bytes
    let source = |index, data: &[u8]| {
        let mut v = Vec::new();
        Header::Source { window: 0, index }.encode(&mut v);
        v.extend_from_slice(data);
        v
    };
    let repair = |k, n, shard: &[u8]| {
        let mut v = Vec::new();
        Header::Repair {
            window: 0,
            index: k,
            k,
            n,
        }
        .encode(&mut v);
        v.extend_from_slice(shard);
        v
    };
    let inconsistent = |r: Result<(), Rejected>| matches!(r, Err(Rejected::Inconsistent(_)));
    assert!(inconsistent(d.receive(&source(2, b"x"), t)));
    assert!(inconsistent(d.receive(&source(0, b"12345"), t)));
    assert!(inconsistent(d.receive(&repair(3, 4, &[0; 6]), t)));
    assert!(inconsistent(d.receive(&repair(2, 3, &[0; 8]), t)));
    assert_eq!(
        d.receive(&[9, 9], t),
        Err(Rejected::Wire(WireError::UnknownType(9)))
    );
    assert_eq!(d.counters().malformed, 5);
    // The window is untouched: its sources still come and complete it.
    d.receive(&p[0], t).unwrap();
    assert_eq!(drain(&mut d), [b"ab".to_vec(), b"cdef".to_vec()]);

    // Sources first: a repair whose K is below one of them, or whose
    // shards are shorter than one of them, is refused.
    let mut d = decoder();
    d.receive(&source(3, b"abcdef"), t).unwrap();
    assert!(inconsistent(d.receive(&repair(3, 4, &[0; 8]), t)));
    assert!(inconsistent(d.receive(&repair(4, 5, &[0; 6]), t)));
    d.receive(&repair(4, 5, &[0; 8]), t).unwrap();
}

#[test]
fn a_window_left_unrepaired_counts_its_losses_when_dropped() {
    let t = Instant::now();
    let mut e = encoder(4, 6);
    let p = window(&mut e, &FOUR, t);
    let mut d = decoder();
    // Sources 1 and 2 and one repair lost: three of four, K unmet.
    for i in [0, 3, 5] {
        d.receive(&p[i], t).unwrap();
    }
    assert_eq!(d.poll_timeout(), Some(t + Duration::from_secs(1)));
    d.handle_timeout(t + Duration::from_millis(999));
    assert_eq!(d.counters().lost, 0);
    d.handle_timeout(t + Duration::from_secs(1));
    assert_eq!(d.counters().lost, 2);
    assert_eq!(d.poll_timeout(), None);
}

#[test]
fn the_horizon_drops_the_oldest_windows_and_counts_unseen_ones() {
    let t = Instant::now();
    let mut e = encoder(1, 2);
    let p: Vec<Vec<Vec<u8>>> = (0..40).map(|i| window(&mut e, &[&[i as u8]], t)).collect();
    let mut d = Decoder::new(DecoderConfig {
        hold: Duration::from_secs(1),
        horizon: 4,
    });
    d.receive(&p[0][0], t).unwrap();
    // Windows 1 and 2 never come; 3 is within the horizon of 0.
    d.receive(&p[3][1], t).unwrap();
    assert_eq!(d.held_windows(), 4);
    // Window 5 drops 0 and 1 (unseen).
    d.receive(&p[5][0], t).unwrap();
    assert_eq!(d.held_windows(), 4);
    assert_eq!(d.counters().windows_unseen, 1);
    d.receive(&p[0][1], t).unwrap();
    assert_eq!(d.counters().late, 1);
    // Far ahead: everything held is dropped, the windows between unseen.
    d.receive(&p[39][0], t).unwrap();
    assert_eq!(d.held_windows(), 1);
    // 1, 2 and 4 held unseen or dropped unseen, then 6..=38 skipped.
    assert_eq!(d.counters().windows_unseen, 1 + 2 + 33);
    assert_eq!(drain(&mut d), [[0u8], [3], [5], [39]]);
    assert_eq!(d.counters().repaired, 1);
}

/// A hop's random losses, reordering and duplicates over random windows,
/// datagram sizes and pauses: the decoder hands on exactly the sources
/// that came and those of every window that kept K of its N datagrams,
/// each once, and counts the rest as lost.
#[test]
fn random_losses_are_repaired_exactly_when_a_window_keeps_k() {
    for seed in 0..400 {
        let mut rng = Pcg64Mcg::seed_from_u64(seed);
        let k = rng.random_range(1..=16u8);
        let n = rng.random_range(k + 1..=(k + 6).min(64));
        let mtu = rng.random_range(40..=1500);
        let setting = FecSetting::new(k, n).unwrap();
        let mut e = Encoder::new(setting, mtu, 5 * MS).unwrap();
        let loss = rng.random_range(0.0..0.5);
        let mut t = Instant::now();
        let mut sent = Vec::new();
        for seq in 0..rng.random_range(1..300u32) {
            t += Duration::from_micros(100);
            if rng.random_bool(0.05) {
                t += 10 * MS;
                e.handle_timeout(t);
                sent.extend(std::iter::from_fn(|| e.poll_transmit()));
            }
            let len = rng.random_range(4..=e.max_datagram());
            let mut d = seq.to_le_bytes().to_vec();
            d.resize(len, seq as u8);
            let p = e.push(&d, t).unwrap();
            sent.push(p);
            sent.extend(std::iter::from_fn(|| e.poll_transmit()));
        }
        e.handle_timeout(t + Duration::from_secs(1));
        sent.extend(std::iter::from_fn(|| e.poll_transmit()));
        assert!(sent.iter().all(|p| p.len() <= mtu), "seed {seed}");

        // The hop: losses, a neighbour swapped now and then, a duplicate.
        let mut hop: Vec<&Vec<u8>> = Vec::new();
        for p in &sent {
            if !rng.random_bool(loss) {
                hop.push(p);
                if rng.random_bool(0.02) {
                    hop.push(p);
                }
            }
        }
        for i in 1..hop.len() {
            if rng.random_bool(0.1) {
                hop.swap(i - 1, i);
            }
        }

        // What should come out, window by window.
        #[derive(Default)]
        struct Truth {
            sources: BTreeMap<u8, Vec<u8>>,
            k: usize,
            came: BTreeSet<u8>,
            repair_came: bool,
            /// Sources not yet come when the window first held K packets:
            /// those the decoder rebuilds (a reordered one among them).
            rebuilt: usize,
        }
        let mut truth: BTreeMap<u32, Truth> = BTreeMap::new();
        for p in &sent {
            let (h, payload) = wire::decode(p).unwrap();
            let w = truth.entry(h.window()).or_default();
            match h {
                Header::Source { index, .. } => {
                    w.sources.insert(index, payload.to_vec());
                }
                Header::Repair { k, .. } => w.k = k.into(),
            }
        }
        for p in &hop {
            let (h, _) = wire::decode(p).unwrap();
            let w = truth.get_mut(&h.window()).unwrap();
            match h {
                Header::Source { index, .. } => w.came.insert(index),
                Header::Repair { index, .. } => {
                    w.repair_came = true;
                    w.came.insert(index)
                }
            };
            if w.came.len() == w.k && w.repair_came && w.rebuilt == 0 {
                w.rebuilt = w.k - w.came.iter().filter(|&&i| usize::from(i) < w.k).count();
            }
        }
        let mut want = BTreeSet::new();
        let (mut lost, mut repaired) = (0, 0);
        for w in truth.values() {
            assert_eq!(w.sources.len(), w.k);
            let got_sources: Vec<u8> = w
                .came
                .iter()
                .copied()
                .filter(|&i| usize::from(i) < w.k)
                .collect();
            if w.came.len() >= w.k {
                want.extend(w.sources.values().cloned());
                repaired += w.rebuilt;
            } else {
                want.extend(got_sources.iter().map(|i| w.sources[i].clone()));
                lost += match (w.repair_came, got_sources.last()) {
                    (true, _) => w.k - got_sources.len(),
                    (false, Some(&top)) => usize::from(top) + 1 - got_sources.len(),
                    (false, None) => 0,
                };
            }
        }

        let mut d = Decoder::new(DecoderConfig {
            hold: Duration::from_secs(10),
            horizon: DEFAULT_HORIZON,
        });
        let mut out = Vec::new();
        for p in &hop {
            d.receive(p, t).unwrap();
            out.extend(std::iter::from_fn(|| d.poll_datagram()));
            assert!(d.held_windows() <= DEFAULT_HORIZON);
        }
        d.handle_timeout(t + Duration::from_secs(10));
        let got: BTreeSet<Vec<u8>> = out.iter().cloned().collect();
        assert_eq!(
            got.len(),
            out.len(),
            "seed {seed}: a datagram handed on twice"
        );
        assert_eq!(got, want, "seed {seed}: k {k} n {n} loss {loss:.2}");
        let c = d.counters();
        assert_eq!(c.repaired as usize, repaired, "seed {seed}");
        assert_eq!(c.lost as usize, lost, "seed {seed}");
        assert_eq!(c.malformed, 0, "seed {seed}");
    }
}

/// Garbage, cut and bit-flipped packets among real ones: the decoder
/// refuses or takes each without panicking and holds no more than its
/// horizon.
#[test]
fn garbage_and_mutated_packets_never_panic() {
    for seed in 0..200 {
        let mut rng = Pcg64Mcg::seed_from_u64(1000 + seed);
        let k = rng.random_range(1..=16u8);
        let n = rng.random_range(k + 1..=64);
        let mut e = Encoder::new(FecSetting::new(k, n).unwrap(), 1200, 5 * MS).unwrap();
        let mut d = Decoder::new(DecoderConfig {
            hold: Duration::from_millis(50),
            horizon: 8,
        });
        let mut t = Instant::now();
        for seq in 0..300u32 {
            t += Duration::from_micros(rng.random_range(0..2000));
            e.handle_timeout(t);
            let len = rng.random_range(0..=e.max_datagram());
            let mut packets = vec![e.push(&vec![seq as u8; len], t).unwrap()];
            packets.extend(std::iter::from_fn(|| e.poll_transmit()));
            for mut p in packets {
                match rng.random_range(0..8) {
                    0 => {
                        let i = rng.random_range(0..p.len());
                        p[i] ^= 1 << rng.random_range(0..8);
                    }
                    1 => p.truncate(rng.random_range(0..=p.len())),
                    2 => p.extend((0..rng.random_range(1..9)).map(|_| rng.random::<u8>())),
                    3 => {
                        p = (0..rng.random_range(0..40))
                            .map(|_| rng.random::<u8>())
                            .collect();
                    }
                    4 => {
                        // A valid header with a window far off.
                        let w: u32 = rng.random();
                        p[1..5].copy_from_slice(&w.to_be_bytes());
                    }
                    _ => {}
                }
                let _ = d.receive(&p, t);
                while d.poll_datagram().is_some() {}
                assert!(d.held_windows() <= 8);
            }
        }
        d.handle_timeout(t + Duration::from_secs(1));
        assert_eq!(d.held_windows(), 0);
    }
}
