//! The I/O edge: tun devices, threads, clock, signals.
//!
//! Per direction one reader thread blocks on the source tun, runs the
//! pipeline and pushes `(deliver_at, packet)` onto the direction's delay
//! line (a FIFO: the pipeline never reorders). One writer thread waits until
//! the front packet is due and writes it to the destination tun. Waits use
//! a condvar (futex) with 1 ns timer slack; the writer wakes a little ahead
//! of time (by its running estimate of how late wake-ups are) and spins the
//! last few microseconds.

use crate::config::{Config, Impairments, SlotPhase};
use crate::pcap::PcapWriter;
use crate::pipeline::{DropCause, Pipeline, Verdict};
use crate::slots;
use crate::stats::{Counters, StatsFile};
use nix::sys::signal::{SigSet, Signal};
use satbench_transport::time::unix_now;
use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, Read, Write};
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Monotonic nanoseconds since time 0 (when the link became ready).
#[derive(Clone, Copy)]
pub struct Clock {
    t0: Instant,
}

impl Clock {
    pub fn start() -> Clock {
        Clock { t0: Instant::now() }
    }
    pub fn now_ns(&self) -> u64 {
        self.t0.elapsed().as_nanos() as u64
    }
}

/// Sets the calling thread's timer slack to 1 ns (threads created after
/// inherit it).
pub fn set_timer_slack_1ns() {
    let _ = rustix::thread::set_current_timer_slack(std::num::NonZeroU64::new(1));
}

/// One end of the link: the tun fd and, optionally, its capture file.
pub struct Side {
    pub label: String,
    pub tun: File,
    pub pcap: Option<Mutex<PcapWriter>>,
}

impl Side {
    fn capture(&self, pkt: &[u8]) {
        if let Some(p) = &self.pcap {
            // wall-clock ns since the epoch, taken before waiting for the lock
            let ts = unix_now().as_nanos() as u64;
            let _ = p.lock().unwrap().write_packet(ts, pkt);
        }
    }
}

/// A direction's delay line: packets with their delivery time, in order.
#[derive(Default)]
struct DelayLine {
    q: Mutex<VecDeque<(u64, Vec<u8>)>>,
    cv: Condvar,
}

/// Recycled packet buffers, so the steady state does not allocate.
#[derive(Default)]
struct Pool(Mutex<Vec<Vec<u8>>>);

const POOL_MAX: usize = 4096;
const BUF_CAP: usize = 2048;
/// How the writer waits: it spins when the front packet is due within
/// `spin_ns`; otherwise it sleeps on the condvar, aiming to wake `lead`
/// early, where `lead` is its running estimate (EWMA) of how late timed
/// waits return, bounded by `lead_max_ns`.
#[derive(Clone, Copy, Debug)]
pub struct WaitTuning {
    pub spin_ns: u64,
    pub lead_max_ns: u64,
}

impl WaitTuning {
    pub const DEFAULT: WaitTuning = WaitTuning {
        spin_ns: 15_000,
        lead_max_ns: 150_000,
    };

    /// The defaults, overridden by LINKEM_SPIN_US / LINKEM_LEAD_MAX_US.
    pub fn from_env() -> WaitTuning {
        let get = |k: &str, d: u64| {
            std::env::var(k)
                .ok()
                .and_then(|v| v.trim().parse::<f64>().ok())
                .map(|us| (us * 1000.0) as u64)
                .unwrap_or(d)
        };
        WaitTuning {
            spin_ns: get("LINKEM_SPIN_US", Self::DEFAULT.spin_ns),
            lead_max_ns: get("LINKEM_LEAD_MAX_US", Self::DEFAULT.lead_max_ns),
        }
    }
}

/// Packets written per lock of the delay line, at most.
const BATCH: usize = 64;

impl Pool {
    fn get(&self, data: &[u8]) -> Vec<u8> {
        let mut v = self
            .0
            .lock()
            .unwrap()
            .pop()
            .unwrap_or_else(|| Vec::with_capacity(BUF_CAP.max(data.len())));
        v.clear();
        v.extend_from_slice(data);
        v
    }
    fn put_all(&self, bufs: &mut Vec<Vec<u8>>) {
        let mut p = self.0.lock().unwrap();
        while let Some(b) = bufs.pop() {
            if p.len() < POOL_MAX && b.capacity() <= 1 << 16 {
                p.push(b);
            }
        }
    }
}

/// One direction: where it reads, where it writes, and its state.
pub struct Direction {
    pub name: &'static str,
    pub counters: Counters,
    line: DelayLine,
    pool: Pool,
    /// The configured rate (SIGUSR2 changes it), bit/s as f64 bits; 0: no
    /// rate. The reader hands a change to its pipeline.
    rate_bits: AtomicU64,
}

/// A rate as `Direction::rate_bits` holds it.
fn rate_to_bits(rate_bps: Option<f64>) -> u64 {
    rate_bps.map_or(0, f64::to_bits)
}

fn rate_from_bits(bits: u64) -> Option<f64> {
    (bits != 0).then(|| f64::from_bits(bits))
}

impl Direction {
    pub fn new(name: &'static str) -> Direction {
        Direction {
            name,
            counters: Counters::default(),
            line: DelayLine::default(),
            pool: Pool::default(),
            rate_bits: AtomicU64::new(0),
        }
    }
}

fn reader(link: String, dir: Arc<Direction>, src: Arc<Side>, mut pipeline: Pipeline, clock: Clock) {
    let mut buf = vec![0u8; 65536];
    // Packets held behind a lost frame until the next delivery (frame loss with a hold).
    let mut held: Vec<Vec<u8>> = Vec::new();
    let c = &dir.counters;
    let mut rate_bits = rate_to_bits(pipeline.base_rate_bps());
    loop {
        let n = match (&src.tun).read(&mut buf) {
            // A tun never reads 0 bytes; a closed stand-in (tests) does.
            Ok(0) => return,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                eprintln!(
                    "linkem {link}: {}: read from {} failed, direction stopped: {e}",
                    dir.name, src.label
                );
                return;
            }
        };
        let now = clock.now_ns();
        let pkt = &buf[..n];
        src.capture(pkt);
        c.packets_in.fetch_add(1, Relaxed);
        c.bytes_in.fetch_add(n as u64, Relaxed);
        let bits = dir.rate_bits.load(Relaxed);
        if bits != rate_bits {
            pipeline.set_base_rate(rate_from_bits(bits));
            rate_bits = bits;
        }
        match pipeline.on_packet(now, n) {
            Verdict::Drop(DropCause::Loss) => {
                c.drops_loss.fetch_add(1, Relaxed);
            }
            Verdict::Drop(DropCause::Queue) => {
                c.drops_queue.fetch_add(1, Relaxed);
            }
            Verdict::Hold => held.push(dir.pool.get(pkt)),
            Verdict::Deliver { at_ns } => {
                let v = dir.pool.get(pkt);
                let mut q = dir.line.q.lock().unwrap();
                let was_empty = q.is_empty();
                // Held packets go first, in their order, at the same time.
                q.extend(held.drain(..).map(|h| (at_ns, h)));
                q.push_back((at_ns, v));
                drop(q);
                // A writer with packets queued sleeps until the front one,
                // which is due before this one: only an empty line needs a
                // wake-up.
                if was_empty {
                    dir.line.cv.notify_one();
                }
            }
        }
        c.max_backlog_bytes
            .store(pipeline.max_backlog_bytes(), Relaxed);
        if let Some(a) = pipeline.access_stats() {
            c.store_access(&a);
        }
    }
}

fn writer(link: String, dir: Arc<Direction>, dst: Arc<Side>, clock: Clock, tuning: WaitTuning) {
    let c = &dir.counters;
    let mut batch: Vec<(u64, Vec<u8>)> = Vec::with_capacity(BATCH);
    let mut spent: Vec<Vec<u8>> = Vec::with_capacity(BATCH);
    // Running estimate of how late a timed wait returns (ns).
    let mut lead_ns: u64 = 40_000u64.min(tuning.lead_max_ns);
    let mut errors: u64 = 0;
    loop {
        let mut q = dir.line.q.lock().unwrap();
        loop {
            let Some(&(at, _)) = q.front() else {
                q = dir.line.cv.wait(q).unwrap();
                continue;
            };
            let now = clock.now_ns();
            if at <= now {
                break;
            }
            let rem = at - now;
            if rem <= tuning.spin_ns {
                // Only this thread pops, so the front stays where it is.
                drop(q);
                while clock.now_ns() < at {
                    std::hint::spin_loop();
                }
                q = dir.line.q.lock().unwrap();
                break;
            }
            // Aim `lead` early; when that is too close, aim `spin_ns` early
            // and accept being up to (wake-up latency - spin_ns) late.
            let sleep = if rem > lead_ns + tuning.spin_ns {
                rem - lead_ns
            } else {
                rem - tuning.spin_ns
            };
            let (g, res) = dir
                .line
                .cv
                .wait_timeout(q, Duration::from_nanos(sleep))
                .unwrap();
            q = g;
            if res.timed_out() {
                let late = clock.now_ns().saturating_sub(now + sleep) as i64;
                // EWMA with weight 1/16, bounded.
                let l = lead_ns as i64 + (late - lead_ns as i64) / 16;
                lead_ns = l.clamp(0, tuning.lead_max_ns as i64) as u64;
            }
        }
        let now = clock.now_ns();
        while batch.len() < BATCH {
            match q.front() {
                Some(&(at, _)) if at <= now => batch.push(q.pop_front().unwrap()),
                _ => break,
            }
        }
        drop(q);
        for (_, pkt) in batch.drain(..) {
            match (&dst.tun).write(&pkt) {
                Ok(_) => {
                    c.packets_out.fetch_add(1, Relaxed);
                    c.bytes_out.fetch_add(pkt.len() as u64, Relaxed);
                    dst.capture(&pkt);
                }
                Err(e) => {
                    errors += 1;
                    if errors == 1 || errors.is_power_of_two() {
                        eprintln!(
                            "linkem {link}: {}: write to {} failed ({errors} so far): {e}",
                            dir.name, dst.label
                        );
                    }
                }
            }
            spent.push(pkt);
        }
        dir.pool.put_all(&mut spent);
    }
}

/// The running link.
pub struct Link {
    pub name: String,
    pub clock: Clock,
    pub forward: Arc<Direction>,
    pub ret: Arc<Direction>,
    a: Arc<Side>,
    b: Arc<Side>,
    pub stats_path: std::path::PathBuf,
    /// Seconds into its slot at time 0, with a slot process.
    pub slot_phase_s: Option<f64>,
    /// Time 0 on the wall clock (ms since the epoch), with a slot process.
    pub slot_t0_unix_ms: Option<f64>,
}

/// The slot phase at time 0 (wall-clock time `unix_ns`): both directions
/// share it, taken from the first direction with a slot process.
pub fn slot_phase_at(cfg: &Config, unix_ns: u128) -> Option<f64> {
    [&cfg.forward, &cfg.ret]
        .iter()
        .find_map(|imp| imp.slots.as_ref())
        .map(|s| slots::phase_s(s, unix_ns))
}

/// `imp` with its slot process's phase fixed to `phase_s`.
fn with_slot_phase(imp: &Impairments, phase_s: Option<f64>) -> Impairments {
    let mut imp = imp.clone();
    if let (Some(s), Some(p)) = (imp.slots.as_mut(), phase_s) {
        s.phase = SlotPhase::Fixed(p);
    }
    imp
}

impl Link {
    /// Starts the four threads; time 0 is now.
    pub fn start(cfg: &Config, a: Side, b: Side) -> io::Result<Link> {
        let a = Arc::new(a);
        let b = Arc::new(b);
        let forward = Arc::new(Direction::new("forward"));
        let ret = Arc::new(Direction::new("return"));
        let tuning = WaitTuning::from_env();
        let clock = Clock::start();
        let unix_ns = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let slot_phase_s = slot_phase_at(cfg, unix_ns);
        let (fwd_imp, ret_imp) = (
            with_slot_phase(&cfg.forward, slot_phase_s),
            with_slot_phase(&cfg.ret, slot_phase_s),
        );
        let plans = [
            (
                forward.clone(),
                b.clone(),
                a.clone(),
                Pipeline::new(&fwd_imp, cfg.seed, "forward"),
            ),
            (
                ret.clone(),
                a.clone(),
                b.clone(),
                Pipeline::new(&ret_imp, cfg.seed, "return"),
            ),
        ];
        for (dir, src, dst, pipeline) in plans {
            dir.rate_bits
                .store(rate_to_bits(pipeline.base_rate_bps()), Relaxed);
            let short = if dir.name == "forward" { "fwd" } else { "ret" };
            let (l, d) = (cfg.name.clone(), dir.clone());
            std::thread::Builder::new()
                .name(format!("{short}-write"))
                .spawn(move || writer(l, d, dst, clock, tuning))?;
            let (l, d) = (cfg.name.clone(), dir.clone());
            std::thread::Builder::new()
                .name(format!("{short}-read"))
                .spawn(move || reader(l, d, src, pipeline, clock))?;
        }
        Ok(Link {
            name: cfg.name.clone(),
            clock,
            forward,
            ret,
            a,
            b,
            stats_path: cfg.stats_path.clone(),
            slot_phase_s,
            slot_t0_unix_ms: slot_phase_s.map(|_| unix_ns as f64 / 1e6),
        })
    }

    pub fn stats(&self) -> StatsFile {
        StatsFile {
            name: self.name.clone(),
            uptime_s: self.clock.now_ns() as f64 / 1e9,
            forward: self.forward.counters.snapshot(),
            ret: self.ret.counters.snapshot(),
            slot_phase_s: self.slot_phase_s,
            slot_t0_unix_ms: self.slot_t0_unix_ms,
        }
    }

    /// Sets each direction's configured rate (Mbit/s; None: no rate) for
    /// the packets read from now on.
    pub fn set_rates(&self, forward_mbit: Option<f64>, return_mbit: Option<f64>) {
        for (dir, mbit) in [(&self.forward, forward_mbit), (&self.ret, return_mbit)] {
            dir.rate_bits
                .store(rate_to_bits(mbit.map(|m| m * 1e6)), Relaxed);
        }
    }

    /// Flushes the captures and writes the stats file.
    pub fn checkpoint(&self) -> io::Result<()> {
        for side in [&self.a, &self.b] {
            if let Some(p) = &side.pcap {
                p.lock().unwrap().flush()?;
            }
        }
        self.stats().write(&self.stats_path)
    }
}

/// Blocks SIGINT, SIGTERM, SIGUSR1 and SIGUSR2 in the calling thread (and
/// so in the threads it creates afterwards); returns the set for
/// [`wait_signal`].
pub fn block_signals() -> io::Result<SigSet> {
    let mut set = SigSet::empty();
    for s in [
        Signal::SIGINT,
        Signal::SIGTERM,
        Signal::SIGUSR1,
        Signal::SIGUSR2,
    ] {
        set.add(s);
    }
    set.thread_block()?;
    Ok(set)
}

/// Waits for one of the blocked signals.
pub fn wait_signal(set: &SigSet) -> Signal {
    loop {
        if let Ok(sig) = set.wait() {
            return sig;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::OwnedFd;
    use std::os::unix::net::UnixDatagram;

    /// A datagram socket pair stands in for a tun device: one end for the
    /// link, one for the test (message boundaries are kept, as with tun).
    fn fake_tun(label: &str) -> (Side, UnixDatagram) {
        let (link, user) = UnixDatagram::pair().unwrap();
        let tun = File::from(OwnedFd::from(link));
        (
            Side {
                label: label.into(),
                tun,
                pcap: None,
            },
            user,
        )
    }

    fn config(forward: &str, ret: &str) -> Config {
        crate::config::parse(&format!(
            r#"{{"name": "t", "seed": 1, "a": {{"netns": "x", "dev": "sat0"}}, "b": {{"netns": "y", "dev": "sat0"}},
                "forward": {forward}, "return": {ret}, "stats_path": "/nonexistent/stats.json"}}"#
        ))
        .unwrap()
    }

    #[test]
    fn forwards_both_ways_with_delay_in_order_and_counts() {
        let cfg = config(
            r#"{"delay_ms": 30}"#,
            r#"{"delay_ms": 5, "loss": {"model": "random", "pct": 100}}"#,
        );
        let (a, a_user) = fake_tun("a");
        let (b, b_user) = fake_tun("b");
        let link = Link::start(&cfg, a, b).unwrap();
        a_user
            .set_read_timeout(Some(Duration::from_secs(2)))
            .unwrap();
        let t = Instant::now();
        for i in 0..20u8 {
            b_user
                .send(&[
                    0x45, i, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                ])
                .unwrap();
        }
        let mut buf = [0u8; 100];
        for i in 0..20u8 {
            let n = a_user.recv(&mut buf).unwrap();
            assert_eq!(n, 20);
            assert_eq!(buf[1], i, "order kept");
        }
        let took = t.elapsed();
        assert!(took >= Duration::from_millis(30), "{took:?}");
        assert!(took < Duration::from_millis(200), "{took:?}");
        // The return direction loses everything.
        a_user.send(&[0x45; 20]).unwrap();
        b_user
            .set_read_timeout(Some(Duration::from_millis(100)))
            .unwrap();
        assert!(b_user.recv(&mut buf).is_err());
        let s = link.stats();
        assert_eq!(
            (
                s.forward.packets_in,
                s.forward.packets_out,
                s.forward.bytes_out
            ),
            (20, 20, 400)
        );
        assert_eq!(
            (s.ret.packets_in, s.ret.packets_out, s.ret.drops.loss),
            (1, 0, 1)
        );
        assert!(s.uptime_s > 0.0);
    }

    #[test]
    fn packets_held_behind_a_lost_frame_go_with_the_one_that_releases_them() {
        // One 20-byte packet per frame (20 ms apart, the link idle between
        // them), 30 % of the frames lost, hold 1: the intact frame right
        // behind a lost one waits for the next intact one.
        let fwd = r#"{"rate_mbit": 10, "loss": {"model": "random", "pct": 30},
                      "access": {"frame_loss": {"frame_bytes": 1000, "hold_frames": 1}}}"#;
        let cfg = config(fwd, "{}");
        // The verdicts the pipeline gives (the same seed and stream): each
        // packet its own frame, so they do not depend on the exact times.
        let mut p = Pipeline::new(&cfg.forward, cfg.seed, "forward");
        let n = 40u8;
        let verdicts: Vec<Verdict> = (0..n as u64)
            .map(|i| p.on_packet(i * 20_000_000, 20))
            .collect();
        assert!(verdicts.contains(&Verdict::Hold), "{verdicts:?}");
        let (a, a_user) = fake_tun("a");
        let (b, b_user) = fake_tun("b");
        let _link = Link::start(&cfg, a, b).unwrap();
        a_user
            .set_read_timeout(Some(Duration::from_millis(300)))
            .unwrap();
        let t0 = Instant::now();
        let receiver = std::thread::spawn(move || {
            let mut got = Vec::new();
            let mut buf = [0u8; 100];
            while a_user.recv(&mut buf).is_ok() {
                got.push((buf[1], t0.elapsed()));
            }
            got
        });
        for i in 0..n {
            std::thread::sleep(
                (t0 + Duration::from_millis(20 * i as u64))
                    .saturating_duration_since(Instant::now()),
            );
            b_user
                .send(&[
                    0x45, i, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                ])
                .unwrap();
        }
        let got = receiver.join().unwrap();
        // Held packets with no delivery after them are still waiting.
        let released = |i: usize| {
            verdicts[i..]
                .iter()
                .any(|v| matches!(v, Verdict::Deliver { .. }))
        };
        let expected: Vec<u8> = (0..n)
            .filter(|&i| match verdicts[i as usize] {
                Verdict::Drop(_) => false,
                Verdict::Hold => released(i as usize),
                _ => true,
            })
            .collect();
        assert_eq!(
            got.iter().map(|g| g.0).collect::<Vec<_>>(),
            expected,
            "every packet not lost or still held arrives, in order"
        );
        let when = |i: u8| got.iter().find(|g| g.0 == i).unwrap().1;
        for (i, v) in verdicts.iter().enumerate() {
            if *v != Verdict::Hold || !released(i) {
                continue;
            }
            let release = (i + 1..verdicts.len())
                .find(|&k| matches!(verdicts[k], Verdict::Deliver { .. }))
                .expect("a delivery follows") as u8;
            let (held, rel) = (when(i as u8), when(release));
            assert!(
                held + Duration::from_millis(5) >= rel
                    && held >= Duration::from_millis(20 * i as u64 + 15),
                "packet {i} arrived at {held:?}, not with packet {release} at {rel:?}"
            );
        }
    }

    #[test]
    fn rate_limit_paces_delivery() {
        // 10 packets of 1250 B at 10 Mbit/s: 1 ms each, the last out at ~10 ms.
        let cfg = config(r#"{"delay_ms": 0, "rate_mbit": 10}"#, "{}");
        let (a, a_user) = fake_tun("a");
        let (b, b_user) = fake_tun("b");
        let _link = Link::start(&cfg, a, b).unwrap();
        a_user
            .set_read_timeout(Some(Duration::from_secs(2)))
            .unwrap();
        let t = Instant::now();
        for _ in 0..10 {
            b_user.send(&[0x45; 1250]).unwrap();
        }
        let mut buf = [0u8; 2000];
        let mut at = vec![];
        for _ in 0..10 {
            a_user.recv(&mut buf).unwrap();
            at.push(t.elapsed());
        }
        assert!(at[0] >= Duration::from_micros(1000), "{:?}", at[0]);
        assert!(at[9] >= Duration::from_micros(10_000), "{:?}", at[9]);
        assert!(at[9] < Duration::from_millis(60), "{:?}", at[9]);
    }
}
