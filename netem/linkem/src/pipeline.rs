//! One direction of the link: access stage (when configured), rate stage,
//! then loss stage, then delay stage, with FIFO delivery. Plain state, no
//! I/O, no clock: the caller passes the time.
//!
//! Stage order: the access stage (off by default) says when a packet may
//! start transmission (the frame clock, the grant of a demand-assigned
//! return link), its size on the air (encapsulation header, padding) and
//! the rate available before a grant (the CRA). Then the packet goes
//! through the rate stage (it may be
//! dropped because the queue is full; otherwise it occupies the link for its
//! serialization time), then the loss stage (a packet corrupted on the air
//! still used capacity), then the delay stage: it is delivered at
//! `tx_end + delay(tx_end) + jitter`, where `delay(t)` follows the schedule.
//!
//! FIFO: delivery never reorders a direction. The delivery time is
//! `max(computed, previous delivery time)`, so a large jitter draw or a
//! shrinking scheduled delay holds the packets behind it back instead of
//! letting them overtake (as a real single path would; netem reorders with
//! jitter unless it has a rate). This also lets the I/O side keep each
//! direction's delay line as a plain FIFO queue.

use crate::access::AccessStage;
use crate::config::Impairments;
use crate::delay::DelayStage;
use crate::frame_loss::{Fate, FrameLoss};
use crate::loss::LossStage;
use crate::rate::RateStage;
use crate::rng::Rng;
use crate::schedule::Schedule;
use crate::slots::{self, SlotStage};
use crate::stats::AccessStats;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropCause {
    Loss,
    Queue,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Drop(DropCause),
    /// Delivered at `at_ns`; any packets held before it go first, at the
    /// same time.
    Deliver {
        at_ns: u64,
    },
    /// Delivered later, with the next `Deliver` (frame loss with a hold).
    Hold,
}

#[derive(Debug)]
pub struct Pipeline {
    base_delay_ms: f64,
    base_rate_bps: Option<f64>,
    schedule: Option<Schedule>,
    access: Option<AccessStage>,
    rate: RateStage,
    loss: LossStage,
    /// With the access model's `frame_loss`: the loss model is drawn per
    /// link-layer frame instead of per packet.
    frames: Option<FrameLoss>,
    delay: DelayStage,
    /// A LEO slot process: its delay adds to the delay in force, its
    /// handover loss to the loss stage's.
    slots: Option<SlotStage>,
    last_deliver_ns: u64,
}

impl Pipeline {
    /// The pipeline of direction `dir` ("forward" or "return"); its random
    /// streams derive from `seed` and `dir`.
    pub fn new(imp: &Impairments, seed: u64, dir: &str) -> Pipeline {
        Pipeline {
            base_delay_ms: imp.delay_ms,
            base_rate_bps: imp.rate_mbit.map(|m| m * 1e6),
            schedule: imp.schedule.as_ref().map(Schedule::new),
            access: imp.access.as_ref().map(AccessStage::new),
            rate: RateStage::new(imp.limit),
            loss: LossStage::new(imp.loss.as_ref(), Rng::stream(seed, dir, "loss")),
            frames: imp
                .access
                .as_ref()
                .and_then(|a| a.frame_loss.as_ref())
                .map(FrameLoss::new),
            delay: DelayStage::new(
                imp.jitter_ms,
                imp.jitter_distribution,
                Rng::stream(seed, dir, "jitter"),
            ),
            // A wall-clock phase is resolved by the runtime (which knows the
            // time) into a fixed one before this; unresolved it is read as
            // at the epoch.
            slots: imp
                .slots
                .as_ref()
                .map(|c| SlotStage::new(c, slots::phase_s(c, 0), seed, dir)),
            last_deliver_ns: 0,
        }
    }

    /// Replaces the configured rate (bit/s; None: no rate) for the packets
    /// that arrive from now on; a schedule's points still override it. The
    /// queue and its limit stay as they are (a link whose capacity changes
    /// keeps its buffer).
    pub fn set_base_rate(&mut self, rate_bps: Option<f64>) {
        self.base_rate_bps = rate_bps;
    }

    /// The configured rate in force (bit/s).
    pub fn base_rate_bps(&self) -> Option<f64> {
        self.base_rate_bps
    }

    /// Decides the fate of a packet of `len` bytes arriving at `now_ns`
    /// (ns since the link became ready).
    pub fn on_packet(&mut self, now_ns: u64, len: usize) -> Verdict {
        let access = self.access.as_mut().map(|a| a.on_packet(now_ns, len));
        let (ready, air_len) = match access {
            Some(a) => (a.earliest_start_ns, a.air_bytes),
            None => (now_ns, len),
        };
        let start = self.rate.start_time(ready);
        let mut rate = match &self.schedule {
            Some(s) => s.rate_bps_at(start, self.base_rate_bps),
            None => self.base_rate_bps,
        };
        if let Some(a) = access {
            if let (Some(granted), Some(cra)) = (a.granted_from_ns, a.cra_bps) {
                if start < granted && cra > 0.0 {
                    // Before the grant only the constant rate is available.
                    rate = Some(rate.map_or(cra, |r| r.min(cra)));
                }
            }
        }
        let tx_end = match self.rate.on_packet(ready, air_len, rate) {
            None => return Verdict::Drop(DropCause::Queue),
            Some(t) => t,
        };
        let loss = &mut self.loss;
        let fate = match &mut self.frames {
            Some(f) => f.fate(start, tx_end, air_len, || loss.lose()),
            None if loss.lose() => Fate::Lost,
            None => Fate::Pass,
        };
        let handover_lost = |s: &mut Option<SlotStage>| s.as_mut().is_some_and(|s| s.lose(tx_end));
        let fate = match fate {
            Fate::Pass if handover_lost(&mut self.slots) => Fate::Lost,
            f => f,
        };
        match fate {
            Fate::Lost => return Verdict::Drop(DropCause::Loss),
            // Its time comes from the next packet that passes.
            Fate::Held => return Verdict::Hold,
            Fate::Pass => {}
        }
        let delay_ms = match &self.schedule {
            Some(s) => s.delay_ms_at(tx_end, self.base_delay_ms),
            None => self.base_delay_ms,
        } + self.slots.as_mut().map_or(0.0, |s| s.delay_ms_at(tx_end));
        let at = (tx_end + self.delay.sample_ns(delay_ms)).max(self.last_deliver_ns);
        self.last_deliver_ns = at;
        Verdict::Deliver { at_ns: at }
    }

    /// What the access model did so far; `None` without one.
    pub fn access_stats(&self) -> Option<AccessStats> {
        let a = self.access.as_ref()?;
        let (frames, frames_lost) = self.frames.as_ref().map_or((0, 0), |f| f.counts());
        Some(AccessStats {
            requests: a.requests(),
            frames,
            frames_lost,
        })
    }

    pub fn max_backlog_bytes(&self) -> u64 {
        self.rate.max_backlog_bytes()
    }

    pub fn backlog_bytes(&self) -> u64 {
        self.rate.backlog_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{
        AccessConfig, Carriage, DamaConfig, Distribution, FrameLossConfig, Limit, LossModel,
        RateChange, ScheduleConfig, SchedulePoint,
    };

    const MS: u64 = 1_000_000;

    fn at(v: Verdict) -> u64 {
        match v {
            Verdict::Deliver { at_ns } => at_ns,
            other => panic!("expected delivery, got {other:?}"),
        }
    }

    #[test]
    fn a_new_base_rate_serializes_the_next_packets_behind_the_queue() {
        let mut p = Pipeline::new(
            &Impairments {
                rate_mbit: Some(20.0),
                ..Default::default()
            },
            1,
            "forward",
        );
        // 1500 bytes: 0.6 ms at 20 Mbit/s, 1.2 ms at 10
        assert_eq!(at(p.on_packet(0, 1500)), 600_000);
        p.set_base_rate(Some(10e6));
        assert_eq!(p.base_rate_bps(), Some(10e6));
        assert_eq!(at(p.on_packet(0, 1500)), 1_800_000);
        p.set_base_rate(None);
        assert_eq!(at(p.on_packet(2 * MS, 1500)), 2 * MS);
    }

    #[test]
    fn constant_delay_only() {
        let mut p = Pipeline::new(
            &Impairments {
                delay_ms: 250.0,
                ..Default::default()
            },
            1,
            "forward",
        );
        assert_eq!(at(p.on_packet(0, 1500)), 250 * MS);
        assert_eq!(at(p.on_packet(7, 1500)), 250 * MS + 7);
    }

    #[test]
    fn rate_then_delay() {
        let imp = Impairments {
            delay_ms: 10.0,
            rate_mbit: Some(20.0),
            ..Default::default()
        };
        let mut p = Pipeline::new(&imp, 1, "forward");
        assert_eq!(at(p.on_packet(0, 1500)), 600_000 + 10 * MS);
        assert_eq!(at(p.on_packet(0, 1500)), 1_200_000 + 10 * MS);
        assert_eq!(p.backlog_bytes(), 1500);
    }

    #[test]
    fn queue_drops_before_loss_and_lost_packets_use_capacity() {
        let imp = Impairments {
            rate_mbit: Some(20.0),
            limit: Some(Limit::Packets(1)),
            loss: Some(LossModel::Random { pct: 100.0 }),
            ..Default::default()
        };
        let mut p = Pipeline::new(&imp, 1, "return");
        assert_eq!(p.on_packet(0, 1500), Verdict::Drop(DropCause::Loss));
        assert_eq!(p.on_packet(0, 1500), Verdict::Drop(DropCause::Loss));
        assert_eq!(p.on_packet(0, 1500), Verdict::Drop(DropCause::Queue));
        // The two lost packets still hold the link until 1.2 ms.
        assert_eq!(p.backlog_bytes(), 1500);
    }

    #[test]
    fn jitter_never_reorders() {
        let imp = Impairments {
            delay_ms: 50.0,
            jitter_ms: 20.0,
            jitter_distribution: Distribution::ParetoNormal,
            ..Default::default()
        };
        let mut p = Pipeline::new(&imp, 42, "forward");
        let mut last = 0;
        let mut raised = 0;
        for i in 0..50_000u64 {
            let t = at(p.on_packet(i * 100_000, 1200));
            assert!(t >= last, "packet {i} delivered before its predecessor");
            if t == last {
                raised += 1;
            }
            last = t;
        }
        assert!(
            raised > 100,
            "FIFO should have held back some packets ({raised})"
        );
    }

    #[test]
    fn shrinking_schedule_delay_never_reorders() {
        let imp = Impairments {
            delay_ms: 0.0,
            schedule: Some(ScheduleConfig {
                looped: false,
                points: vec![
                    SchedulePoint {
                        t_s: 0.0,
                        delay_ms: Some(100.0),
                        rate: RateChange::Keep,
                    },
                    SchedulePoint {
                        t_s: 1.0,
                        delay_ms: Some(100.0),
                        rate: RateChange::Keep,
                    },
                    SchedulePoint {
                        t_s: 1.0,
                        delay_ms: Some(10.0),
                        rate: RateChange::Keep,
                    },
                ],
            }),
            ..Default::default()
        };
        let mut p = Pipeline::new(&imp, 1, "forward");
        assert_eq!(at(p.on_packet(999 * MS, 100)), 1099 * MS);
        // 10 ms later the delay drops to 10 ms: computed 1010 ms, held to 1099 ms.
        assert_eq!(at(p.on_packet(1000 * MS, 100)), 1099 * MS);
        assert_eq!(at(p.on_packet(1095 * MS, 100)), 1105 * MS);
    }

    #[test]
    fn scheduled_rate_applies_at_transmission_start() {
        let imp = Impairments {
            rate_mbit: Some(20.0),
            schedule: Some(ScheduleConfig {
                looped: false,
                points: vec![SchedulePoint {
                    t_s: 0.001,
                    delay_ms: None,
                    rate: RateChange::Mbit(10.0),
                }],
            }),
            ..Default::default()
        };
        let mut p = Pipeline::new(&imp, 1, "forward");
        assert_eq!(at(p.on_packet(0, 1500)), 600_000);
        assert_eq!(at(p.on_packet(0, 1500)), 1_200_000); // starts at 0.6 ms: 20 Mbit/s
        assert_eq!(at(p.on_packet(0, 1500)), 2_400_000); // starts at 1.2 ms: 10 Mbit/s
    }

    #[test]
    fn frame_clock_and_overhead_then_rate_then_delay() {
        let imp = Impairments {
            delay_ms: 250.0,
            rate_mbit: Some(20.0),
            access: Some(AccessConfig {
                frame_ms: Some(10.0),
                header_bytes: 10,
                ..Default::default()
            }),
            ..Default::default()
        };
        let mut p = Pipeline::new(&imp, 1, "forward");
        // Arrives at 3 ms, leaves with the frame at 10 ms: 1510 B = 604 us.
        assert_eq!(at(p.on_packet(3 * MS, 1500)), 10 * MS + 604_000 + 250 * MS);
        // The next one in the same frame follows it on the link.
        assert_eq!(
            at(p.on_packet(4 * MS, 1500)),
            10 * MS + 1_208_000 + 250 * MS
        );
        // On a boundary exactly: no wait.
        assert_eq!(at(p.on_packet(20 * MS, 90)), 20 * MS + 40_000 + 250 * MS);
    }

    #[test]
    fn a_burst_after_idle_goes_at_the_cra_until_the_grant() {
        let imp = Impairments {
            delay_ms: 250.0,
            rate_mbit: Some(20.0),
            access: Some(AccessConfig {
                frame_ms: Some(10.0),
                dama: Some(DamaConfig {
                    cra_mbit: 1.0,
                    request_grant_ms: 500.0,
                    idle_release_ms: 600.0,
                }),
                ..Default::default()
            }),
            ..Default::default()
        };
        let mut p = Pipeline::new(&imp, 1, "return");
        // 1250 B at the 1 Mbit/s CRA: 10 ms each, from the 10 ms frame.
        assert_eq!(at(p.on_packet(MS, 1250)), 20 * MS + 250 * MS);
        assert_eq!(at(p.on_packet(MS, 1250)), 30 * MS + 250 * MS);
        assert_eq!(p.access_stats().unwrap().requests, 1);
        // After the grant (510 ms) the whole 20 Mbit/s: 0.5 ms.
        assert_eq!(
            at(p.on_packet(505 * MS, 1250)),
            510 * MS + 500_000 + 250 * MS
        );
        // Idle for a second (> 600 ms): the grant is gone, back to the CRA.
        assert_eq!(at(p.on_packet(1505 * MS, 1250)), 1520 * MS + 250 * MS);
        assert_eq!(p.access_stats().unwrap().requests, 2);
    }

    #[test]
    fn frame_loss_takes_whole_frames() {
        let imp = Impairments {
            rate_mbit: Some(10.0),
            loss: Some(LossModel::Random { pct: 5.0 }),
            access: Some(AccessConfig {
                frame_loss: Some(FrameLossConfig {
                    frame_bytes: 6000,
                    carriage: Carriage::Padded { datagrams: 1 },
                    hold_frames: None,
                }),
                ..Default::default()
            }),
            ..Default::default()
        };
        let mut p = Pipeline::new(&imp, 9, "forward");
        // A saturated link: 1500-byte packets back to back, 4 to a frame,
        // so losses come in runs of 4 starting on a frame boundary.
        let lost: Vec<bool> = (0..40_000u64)
            .map(|i| {
                matches!(
                    p.on_packet(i * 1_200_000, 1500),
                    Verdict::Drop(DropCause::Loss)
                )
            })
            .collect();
        let n = lost.iter().filter(|&&l| l).count();
        assert!(n > 1500 && n < 2500, "{n} of 40000 lost");
        for (k, frame) in lost.chunks(4).enumerate() {
            assert!(
                frame.iter().all(|&l| l == frame[0]),
                "frame {k} partly lost: {frame:?}"
            );
        }
        let a = p.access_stats().unwrap();
        assert_eq!(a.frames, 10_000);
        assert_eq!(a.frames_lost as usize * 4, n);
    }

    #[test]
    fn no_access_model_is_todays_pipeline() {
        let imp = Impairments {
            delay_ms: 10.0,
            rate_mbit: Some(20.0),
            ..Default::default()
        };
        let with_empty = Impairments {
            access: Some(AccessConfig::default()),
            ..imp.clone()
        };
        let mut a = Pipeline::new(&imp, 1, "forward");
        let mut b = Pipeline::new(&with_empty, 1, "forward");
        for i in 0..1000u64 {
            assert_eq!(
                a.on_packet(i * 333_333, 1500),
                b.on_packet(i * 333_333, 1500)
            );
        }
    }

    #[test]
    fn same_seed_same_verdicts() {
        let imp = Impairments {
            delay_ms: 20.0,
            jitter_ms: 5.0,
            loss: Some(LossModel::Random { pct: 3.0 }),
            rate_mbit: Some(5.0),
            limit: Some(Limit::Bytes(30_000)),
            ..Default::default()
        };
        let run = |seed| {
            let mut p = Pipeline::new(&imp, seed, "forward");
            (0..5000u64)
                .map(|i| p.on_packet(i * 1_000_000, 1000 + (i as usize % 500)))
                .collect::<Vec<_>>()
        };
        assert_eq!(run(7), run(7));
        assert_ne!(run(7), run(8));
    }

    #[test]
    fn the_slot_process_adds_its_delay_and_handover_loss() {
        use crate::config::{SlotPhase, SlotsConfig};
        let imp = Impairments {
            delay_ms: 5.0,
            slots: Some(SlotsConfig {
                period_s: 2.0,
                phase: SlotPhase::Fixed(0.0),
                delay_min_ms: 10.0,
                delay_max_ms: 20.0,
                spike_ms: 30.0,
                spike_s: 0.2,
                loss_p: 1.0,
                loss_s: 0.05,
                outages: None,
            }),
            ..Default::default()
        };
        let mut p = Pipeline::new(&imp, 3, "forward");
        let stage = SlotStage::new(imp.slots.as_ref().unwrap(), 0.0, 3, "forward");
        // inside the first 50 ms of a slot every packet is lost
        assert_eq!(p.on_packet(0, 100), Verdict::Drop(DropCause::Loss));
        // then the spike, then the slot's own delay
        let d1 = 5.0 + stage.slot_delay_ms(0) + 30.0;
        assert_eq!(
            at(p.on_packet(100 * MS, 100)),
            100 * MS + (d1 * 1e6).round() as u64
        );
        let d2 = 5.0 + stage.slot_delay_ms(0);
        let t = 1_000 * MS;
        assert_eq!(at(p.on_packet(t, 100)), t + (d2 * 1e6).round() as u64);
        assert_eq!(p.on_packet(2_000 * MS, 100), Verdict::Drop(DropCause::Loss));
    }
}
