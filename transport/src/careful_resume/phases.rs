//! Careful Resume's phases (RFC 9959) as
//! a plain state machine: what the sender saw goes in (packets sent, bytes
//! acked, the largest packet number acked, a congestion event, the RTT),
//! the window Careful Resume imposes and each phase change come out. No
//! I/O and no quinn types: `controller.rs` feeds it from quinn's
//! congestion-control calls.
//!
//! - Reconnaissance: the base controller's window (the initial window);
//!   the sender measures the RTT. Once it has an RTT sample, has had data
//!   acked without congestion, and is limited by the window, it checks the
//!   path: an RTT outside [saved RTT / 2, saved RTT × 10] means another path
//!   (Normal, `rtt_not_validated`); a jump no larger than the current window
//!   gains nothing (Normal, `no_gain`, ours); otherwise Unvalidated. A
//!   congestion event here also ends in Normal.
//! - Unvalidated: PipeSize starts at the window; the window jumps to at most
//!   half the saved window (`jump_cwnd`). It becomes Validating when the
//!   first packet sent in the jump is acked, when more than an RTT has
//!   passed, or when the jump is all in flight.
//! - Validating: the window is cut to the flight size (never below
//!   PipeSize); acked bytes grow PipeSize; when the last packet sent
//!   unvalidated is acked, Normal. Entered with nothing unvalidated in
//!   flight (flight ≤ PipeSize), it is Normal at once (`rate_limited`).
//! - Safe Retreat: the first congestion event in Unvalidated or Validating
//!   cuts the window to PipeSize / 2 (not below the minimum window); PipeSize
//!   keeps counting acks; when the last unvalidated packet is acked, Normal
//!   with ssthresh = PipeSize. The saved path is to be forgotten.
//! - Normal: the base controller again, from the window handed over.

use std::time::{Duration, Instant};

use serde::Serialize;

/// The draft's phases, as its qlog names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    Reconnaissance,
    Unvalidated,
    Validating,
    Normal,
    SafeRetreat,
}

/// Why a phase changed: the qlog draft's triggers, and `no_gain` (ours:
/// the jump would not be larger than the window already is) and
/// `congestion_in_reconnaissance`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Trigger {
    CwndLimited,
    RttNotValidated,
    NoGain,
    CongestionInReconnaissance,
    FirstUnvalidatedPacketAcknowledged,
    RttExceeded,
    LastUnvalidatedPacketSent,
    RateLimited,
    LastUnvalidatedPacketAcknowledged,
    PacketLoss,
    ExitRecovery,
}

/// What the previous connection to this endpoint left.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Saved {
    /// Bytes the path carried in one round trip (the saved_cwnd).
    pub cwnd: u64,
    /// Its minimum RTT (the saved_rtt).
    pub rtt: Duration,
}

/// Is `current` within the draft's bounds of `saved`: at least half of it
/// and at most ten times it?
pub fn rtt_confirmed(current: Duration, saved: Duration) -> bool {
    current >= saved / 2 && current <= saved * 10
}

/// The window of the jump: half the saved window, the draft's most.
pub fn jump_cwnd(saved: &Saved) -> u64 {
    saved.cwnd / 2
}

/// One phase change, with the state the qlog event carries.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Change {
    pub old: Phase,
    pub new: Phase,
    pub trigger: Trigger,
    pub pipesize: u64,
    pub first_unvalidated_packet: Option<u64>,
    pub last_unvalidated_packet: Option<u64>,
    /// The window from now on (Normal: what the base controller starts
    /// from).
    pub congestion_window: u64,
    pub ssthresh: Option<u64>,
}

/// Careful Resume for one connection that has a saved path.
#[derive(Clone, Debug)]
pub struct CarefulResume {
    saved: Saved,
    /// A packet: the sender is window-limited when less than one fits.
    mtu: u64,
    /// The least window (two packets), as the base controllers keep.
    min_window: u64,
    phase: Phase,
    /// The window while Careful Resume sets it (Unvalidated, Validating,
    /// Safe Retreat).
    cwnd: u64,
    pipesize: u64,
    jump: u64,
    first_unvalidated: Option<u64>,
    last_unvalidated: Option<u64>,
    unvalidated_since: Option<Instant>,
    last_sent: Option<u64>,
    acked_any: bool,
    /// The RTT measured when the path was checked.
    rtt_checked: Option<Duration>,
    ssthresh: Option<u64>,
    retreated: bool,
}

/// The RTT as the sender knows it now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rtt {
    pub min: Duration,
    pub smoothed: Duration,
}

impl CarefulResume {
    pub fn new(saved: Saved, mtu: u16) -> CarefulResume {
        CarefulResume {
            saved,
            mtu: u64::from(mtu.max(1200)),
            min_window: 2 * u64::from(mtu.max(1200)),
            phase: Phase::Reconnaissance,
            cwnd: 0,
            pipesize: 0,
            jump: 0,
            first_unvalidated: None,
            last_unvalidated: None,
            unvalidated_since: None,
            last_sent: None,
            acked_any: false,
            rtt_checked: None,
            ssthresh: None,
            retreated: false,
        }
    }

    pub fn phase(&self) -> Phase {
        self.phase
    }
    pub fn saved(&self) -> Saved {
        self.saved
    }
    /// The jump's window, 0 without a jump.
    pub fn jump_bytes(&self) -> u64 {
        self.jump
    }
    pub fn retreated(&self) -> bool {
        self.retreated
    }
    pub fn rtt_checked(&self) -> Option<Duration> {
        self.rtt_checked
    }
    pub fn pipesize(&self) -> u64 {
        self.pipesize
    }

    /// The window Careful Resume imposes, or None when the base
    /// controller's applies (Reconnaissance, Normal).
    pub fn window(&self) -> Option<u64> {
        match self.phase {
            Phase::Unvalidated | Phase::Validating | Phase::SafeRetreat => Some(self.cwnd),
            Phase::Reconnaissance | Phase::Normal => None,
        }
    }

    /// Less than a packet fits in `window` (quinn sends no packet that
    /// would reach it).
    fn full(&self, in_flight: u64, window: u64) -> bool {
        in_flight + self.mtu >= window
    }

    fn change(&mut self, new: Phase, trigger: Trigger) -> Change {
        let old = self.phase;
        self.phase = new;
        Change {
            old,
            new,
            trigger,
            pipesize: self.pipesize,
            first_unvalidated_packet: self.first_unvalidated,
            last_unvalidated_packet: self.last_unvalidated,
            congestion_window: self.cwnd,
            ssthresh: self.ssthresh,
        }
    }

    /// Packets up to number `pn` were sent; `in_flight` bytes are now in
    /// flight and `base_window` is the base controller's window.
    pub fn on_sent(
        &mut self,
        now: Instant,
        pn: u64,
        in_flight: u64,
        base_window: u64,
        rtt: Option<Rtt>,
    ) -> Option<Change> {
        self.last_sent = Some(self.last_sent.map_or(pn, |p| p.max(pn)));
        match self.phase {
            Phase::Reconnaissance if self.full(in_flight, base_window) => {
                self.check_path(now, pn, in_flight, base_window, rtt?)
            }
            Phase::Unvalidated => {
                if self.full(in_flight, self.cwnd) {
                    return Some(self.validate(in_flight, Trigger::LastUnvalidatedPacketSent));
                }
                self.rtt_exceeded(now, in_flight, rtt)
            }
            _ => None,
        }
    }

    /// Reconnaissance, window-limited: jump, or leave for Normal.
    fn check_path(
        &mut self,
        now: Instant,
        pn: u64,
        in_flight: u64,
        base_window: u64,
        rtt: Rtt,
    ) -> Option<Change> {
        if !self.acked_any {
            return None;
        }
        self.rtt_checked = Some(rtt.min);
        if !rtt_confirmed(rtt.min, self.saved.rtt) {
            self.cwnd = base_window;
            return Some(self.change(Phase::Normal, Trigger::RttNotValidated));
        }
        let jump = jump_cwnd(&self.saved);
        if jump <= base_window {
            self.cwnd = base_window;
            return Some(self.change(Phase::Normal, Trigger::NoGain));
        }
        // PipeSize is what the window already carried; the packets after
        // `pn` are the unvalidated ones
        self.pipesize = base_window.max(in_flight);
        self.jump = jump;
        self.cwnd = jump;
        self.first_unvalidated = Some(pn + 1);
        self.unvalidated_since = Some(now);
        Some(self.change(Phase::Unvalidated, Trigger::CwndLimited))
    }

    fn rtt_exceeded(&mut self, now: Instant, in_flight: u64, rtt: Option<Rtt>) -> Option<Change> {
        let since = self.unvalidated_since?;
        (now.saturating_duration_since(since) > rtt?.smoothed)
            .then(|| self.validate(in_flight, Trigger::RttExceeded))
    }

    /// Unvalidated → Validating: the window comes down to what is in
    /// flight; with nothing unvalidated in flight, straight on to Normal.
    fn validate(&mut self, in_flight: u64, trigger: Trigger) -> Change {
        self.last_unvalidated = self.last_sent;
        self.cwnd = in_flight.min(self.jump).max(self.pipesize);
        if in_flight <= self.pipesize {
            self.cwnd = self.pipesize.max(self.min_window);
            return self.change(Phase::Normal, Trigger::RateLimited);
        }
        self.change(Phase::Validating, trigger)
    }

    /// `bytes` of one packet were acked.
    pub fn on_ack(&mut self, bytes: u64) {
        self.acked_any = true;
        if matches!(
            self.phase,
            Phase::Unvalidated | Phase::Validating | Phase::SafeRetreat
        ) {
            self.pipesize += bytes;
        }
    }

    /// A batch of acks ended: `largest_acked` is the largest packet number
    /// acked so far, `in_flight` what is still in flight.
    pub fn on_end_acks(
        &mut self,
        now: Instant,
        largest_acked: Option<u64>,
        in_flight: u64,
        base_window: u64,
        rtt: Option<Rtt>,
    ) -> Option<Change> {
        let acked =
            |mark: Option<u64>| matches!((largest_acked, mark), (Some(a), Some(m)) if a >= m);
        match self.phase {
            Phase::Reconnaissance if self.full(in_flight, base_window) => {
                let pn = self.last_sent?;
                self.check_path(now, pn, in_flight, base_window, rtt?)
            }
            Phase::Unvalidated => {
                if acked(self.first_unvalidated) {
                    return Some(
                        self.validate(in_flight, Trigger::FirstUnvalidatedPacketAcknowledged),
                    );
                }
                self.rtt_exceeded(now, in_flight, rtt)
            }
            Phase::Validating if acked(self.last_unvalidated) => {
                self.cwnd = self.cwnd.max(self.pipesize);
                Some(self.change(Phase::Normal, Trigger::LastUnvalidatedPacketAcknowledged))
            }
            Phase::SafeRetreat if acked(self.last_unvalidated) => {
                self.ssthresh = Some(self.pipesize);
                Some(self.change(Phase::Normal, Trigger::ExitRecovery))
            }
            _ => None,
        }
    }

    /// A congestion event (loss, or persistent congestion).
    pub fn on_congestion(&mut self, persistent: bool) -> Option<Change> {
        match self.phase {
            Phase::Reconnaissance => {
                Some(self.change(Phase::Normal, Trigger::CongestionInReconnaissance))
            }
            Phase::Unvalidated | Phase::Validating => {
                if self.last_unvalidated.is_none() {
                    self.last_unvalidated = self.last_sent;
                }
                self.cwnd = (self.pipesize / 2).max(self.min_window);
                if persistent {
                    self.cwnd = self.min_window;
                }
                self.retreated = true;
                Some(self.change(Phase::SafeRetreat, Trigger::PacketLoss))
            }
            // the window was cut on entry; only persistent congestion
            // (nothing acked for several PTOs) cuts it again
            Phase::SafeRetreat => {
                if persistent {
                    self.cwnd = self.min_window;
                }
                None
            }
            Phase::Normal => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MTU: u16 = 1200;
    const IW: u64 = 12_000;
    const SAVED: Saved = Saved {
        cwnd: 1_000_000,
        rtt: Duration::from_millis(600),
    };

    fn rtt(ms: u64) -> Option<Rtt> {
        let d = Duration::from_millis(ms);
        Some(Rtt {
            min: d,
            smoothed: d,
        })
    }

    fn at(t0: Instant, ms: u64) -> Instant {
        t0 + Duration::from_millis(ms)
    }

    /// A connection whose handshake was acked and whose sender then filled
    /// the initial window with packets up to number 10: it jumps.
    fn jumped(t0: Instant) -> (CarefulResume, Change) {
        let mut cr = CarefulResume::new(SAVED, MTU);
        assert_eq!(cr.on_sent(t0, 1, 1200, IW, None), None);
        cr.on_ack(1200);
        assert_eq!(cr.on_end_acks(at(t0, 600), Some(1), 0, IW, rtt(600)), None);
        let c = cr.on_sent(at(t0, 601), 10, IW, IW, rtt(600)).unwrap();
        (cr, c)
    }

    #[test]
    fn rtt_bounds_are_half_to_ten_times_the_saved_rtt() {
        let s = Duration::from_millis(600);
        assert!(rtt_confirmed(Duration::from_millis(300), s));
        assert!(rtt_confirmed(Duration::from_millis(6000), s));
        assert!(!rtt_confirmed(Duration::from_millis(299), s));
        assert!(!rtt_confirmed(Duration::from_millis(6001), s));
    }

    #[test]
    fn reconnaissance_jumps_to_half_the_saved_window_once_window_limited_and_acked() {
        let t0 = Instant::now();
        let mut cr = CarefulResume::new(SAVED, MTU);
        assert_eq!(cr.window(), None, "Reconnaissance: the base's window");
        // window-limited but nothing acked yet: no RTT, no jump
        assert_eq!(cr.on_sent(t0, 9, IW, IW, None), None);
        assert_eq!(cr.phase(), Phase::Reconnaissance);
        let (cr, c) = jumped(t0);
        assert_eq!(
            (c.old, c.new, c.trigger),
            (
                Phase::Reconnaissance,
                Phase::Unvalidated,
                Trigger::CwndLimited
            )
        );
        assert_eq!(cr.window(), Some(500_000), "half the saved window, no more");
        assert_eq!(cr.jump_bytes(), SAVED.cwnd / 2);
        assert_eq!(c.pipesize, IW, "PipeSize starts at the window");
        assert_eq!(c.first_unvalidated_packet, Some(11));
        assert_eq!(cr.rtt_checked(), Some(Duration::from_millis(600)));
    }

    #[test]
    fn no_jump_when_the_rtt_is_out_of_bounds() {
        for ms in [200, 7000] {
            let t0 = Instant::now();
            let mut cr = CarefulResume::new(SAVED, MTU);
            cr.on_ack(1200);
            let c = cr.on_sent(t0, 10, IW, IW, rtt(ms)).unwrap();
            assert_eq!(
                (c.new, c.trigger),
                (Phase::Normal, Trigger::RttNotValidated),
                "{ms} ms"
            );
            assert_eq!(cr.window(), None);
            assert_eq!(cr.jump_bytes(), 0);
        }
    }

    #[test]
    fn no_jump_when_it_would_not_raise_the_window() {
        let t0 = Instant::now();
        let mut cr = CarefulResume::new(
            Saved {
                cwnd: 2 * IW,
                ..SAVED
            },
            MTU,
        );
        cr.on_ack(1200);
        let c = cr.on_sent(t0, 10, IW, IW, rtt(600)).unwrap();
        assert_eq!((c.new, c.trigger), (Phase::Normal, Trigger::NoGain));
    }

    #[test]
    fn congestion_in_reconnaissance_means_normal_without_a_jump() {
        let mut cr = CarefulResume::new(SAVED, MTU);
        let c = cr.on_congestion(false).unwrap();
        assert_eq!(
            (c.new, c.trigger),
            (Phase::Normal, Trigger::CongestionInReconnaissance)
        );
        assert!(!cr.retreated());
    }

    #[test]
    fn unvalidated_becomes_validating_when_the_first_jump_packet_is_acked() {
        let t0 = Instant::now();
        let (mut cr, _) = jumped(t0);
        assert_eq!(cr.on_sent(at(t0, 700), 200, 250_000, IW, rtt(600)), None);
        cr.on_ack(IW);
        // packet 10 is not one of the jump's
        assert_eq!(
            cr.on_end_acks(at(t0, 1200), Some(10), 238_000, IW, rtt(600)),
            None
        );
        let c = cr
            .on_end_acks(at(t0, 1201), Some(11), 236_800, IW, rtt(600))
            .unwrap();
        assert_eq!(
            (c.new, c.trigger),
            (
                Phase::Validating,
                Trigger::FirstUnvalidatedPacketAcknowledged
            )
        );
        assert_eq!(c.last_unvalidated_packet, Some(200));
        assert_eq!(cr.window(), Some(236_800), "cut to the flight size");
        assert_eq!(cr.pipesize(), 2 * IW);
    }

    #[test]
    fn unvalidated_becomes_validating_when_the_jump_is_all_sent_or_a_round_trip_passed() {
        let t0 = Instant::now();
        let (mut cr, _) = jumped(t0);
        let c = cr.on_sent(at(t0, 700), 430, 500_000, IW, rtt(600)).unwrap();
        assert_eq!(
            (c.new, c.trigger),
            (Phase::Validating, Trigger::LastUnvalidatedPacketSent)
        );
        assert_eq!(cr.window(), Some(500_000));

        let (mut cr, _) = jumped(t0);
        assert_eq!(cr.on_sent(at(t0, 1200), 100, 100_000, IW, rtt(600)), None);
        let c = cr
            .on_sent(at(t0, 1202), 101, 101_200, IW, rtt(600))
            .unwrap();
        assert_eq!(
            (c.new, c.trigger),
            (Phase::Validating, Trigger::RttExceeded)
        );
    }

    #[test]
    fn nothing_unvalidated_in_flight_means_normal_at_once() {
        let t0 = Instant::now();
        let (mut cr, _) = jumped(t0);
        cr.on_ack(IW);
        let c = cr
            .on_end_acks(at(t0, 1201), Some(11), 0, IW, rtt(600))
            .unwrap();
        assert_eq!((c.new, c.trigger), (Phase::Normal, Trigger::RateLimited));
        assert_eq!(c.congestion_window, 2 * IW, "the validated PipeSize");
    }

    #[test]
    fn validating_becomes_normal_when_the_last_jump_packet_is_acked() {
        let t0 = Instant::now();
        let (mut cr, _) = jumped(t0);
        cr.on_sent(at(t0, 700), 430, 500_000, IW, rtt(600)).unwrap();
        for _ in 0..400 {
            cr.on_ack(1200);
        }
        assert_eq!(
            cr.on_end_acks(at(t0, 1300), Some(429), 1200, IW, rtt(600)),
            None
        );
        let c = cr
            .on_end_acks(at(t0, 1301), Some(430), 0, IW, rtt(600))
            .unwrap();
        assert_eq!(
            (c.old, c.new, c.trigger),
            (
                Phase::Validating,
                Phase::Normal,
                Trigger::LastUnvalidatedPacketAcknowledged
            )
        );
        assert_eq!(c.congestion_window, 500_000, "the validated window goes on");
        assert_eq!(cr.window(), None, "Normal: the base controller's");
        assert!(!cr.retreated());
    }

    #[test]
    fn the_first_loss_of_the_jump_retreats_to_half_the_pipesize() {
        let t0 = Instant::now();
        let (mut cr, _) = jumped(t0);
        cr.on_sent(at(t0, 700), 300, 360_000, IW, rtt(600));
        cr.on_ack(1200);
        cr.on_ack(1200);
        let c = cr.on_congestion(false).unwrap();
        assert_eq!(
            (c.old, c.new, c.trigger),
            (Phase::Unvalidated, Phase::SafeRetreat, Trigger::PacketLoss)
        );
        assert!(cr.retreated());
        assert_eq!(cr.window(), Some((IW + 2400) / 2));
        assert_eq!(c.last_unvalidated_packet, Some(300));
        // a second loss of the same jump does not cut again
        assert_eq!(cr.on_congestion(false), None);
        assert_eq!(cr.window(), Some((IW + 2400) / 2));
        // acks count into PipeSize, not the window
        cr.on_ack(100_000);
        assert_eq!(cr.window(), Some((IW + 2400) / 2));
        assert_eq!(
            cr.on_end_acks(at(t0, 1400), Some(299), 1200, IW, rtt(600)),
            None
        );
        let c = cr
            .on_end_acks(at(t0, 1401), Some(300), 0, IW, rtt(600))
            .unwrap();
        assert_eq!((c.new, c.trigger), (Phase::Normal, Trigger::ExitRecovery));
        assert_eq!(c.ssthresh, Some(IW + 2400 + 100_000), "ssthresh = PipeSize");
    }

    #[test]
    fn a_loss_while_validating_retreats_too_and_never_below_two_packets() {
        let t0 = Instant::now();
        let (mut cr, _) = jumped(t0);
        cr.on_sent(at(t0, 700), 430, 500_000, IW, rtt(600)).unwrap();
        assert_eq!(cr.phase(), Phase::Validating);
        let c = cr.on_congestion(false).unwrap();
        assert_eq!((c.old, c.new), (Phase::Validating, Phase::SafeRetreat));
        assert_eq!(c.last_unvalidated_packet, Some(430));
        let mut tiny = CarefulResume::new(SAVED, MTU);
        tiny.on_ack(1);
        tiny.on_sent(t0, 1, 1200, 1200, rtt(600)).unwrap();
        tiny.on_congestion(false).unwrap();
        assert_eq!(tiny.window(), Some(2400));
        let (mut cr, _) = jumped(t0);
        cr.on_congestion(true).unwrap();
        assert_eq!(
            cr.window(),
            Some(2400),
            "persistent congestion: the least window"
        );
    }
}
