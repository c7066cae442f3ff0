//! `cc=sat`: a congestion controller for a long link whose rate and delay
//! are known, as a PEP's satellite hop is (quinn's `congestion::Controller`).
//!
//! - It starts at its initial window, which the harness sets to the link's
//!   rate × RTT, and never slow-starts past it: a loss-based slow start that
//!   begins at one bandwidth-delay product doubles into the link's queue
//!   within a round trip, and the queue then drops about every second
//!   packet for most of a round trip. On a 650 ms path those are thousands
//!   of holes in one stream, more than quinn-proto accepts (1024 spans per
//!   stream), and the connection dies with "too many gaps in stream buffer".
//! - It grows by one packet per round trip (as Reno's congestion avoidance)
//!   up to `MAX_GROWTH` × the initial window, so a link whose RTT grew with
//!   its queue is still filled, and no further. quinn paces at 1.25 × window
//!   / RTT, so the link is kept full without bursts.
//! - A loss event that lost less than `ISOLATED` of the window is taken as
//!   random loss and changes nothing; a larger one (a queue overflowing, a
//!   rate that dropped) cuts the window by `CUT`, once per round trip, never
//!   below half the initial window. Persistent congestion (nothing acked for
//!   several PTOs) starts again from half the initial window.
//!
//! The decisions are plain functions of the state below; quinn calls them.

use std::any::Any;
use std::sync::Arc;

use std::time::Instant;

use quinn::congestion::{Controller, ControllerFactory};
use quinn_proto::RttEstimator;

/// The window grows to at most this × the initial window.
pub const MAX_GROWTH: u64 = 3;
/// Losing less than this share of the window at once is random loss.
pub const ISOLATED: f64 = 0.02;
/// A congestion loss keeps this share of the window.
pub const CUT: f64 = 0.7;

/// The factory: `initial` is the window to start at, in bytes.
#[derive(Clone, Debug)]
pub struct SatConfig {
    initial: u64,
}

impl SatConfig {
    pub fn new(initial_window_bytes: u64) -> SatConfig {
        SatConfig {
            initial: initial_window_bytes,
        }
    }
}

impl ControllerFactory for SatConfig {
    fn build(self: Arc<Self>, _now: Instant, current_mtu: u16) -> Box<dyn Controller> {
        Box::new(Sat::new(self.initial, current_mtu))
    }
}

#[derive(Clone, Debug)]
pub struct Sat {
    initial: u64,
    window: u64,
    mtu: u64,
    /// Bytes acked since the window last grew by a packet.
    acked: u64,
    /// Losses of packets sent before this do not cut the window again.
    recovery_start: Option<Instant>,
}

impl Sat {
    pub fn new(initial: u64, mtu: u16) -> Sat {
        let mtu = u64::from(mtu).max(1200);
        let initial = initial.max(2 * mtu);
        Sat {
            initial,
            window: initial,
            mtu,
            acked: 0,
            recovery_start: None,
        }
    }

    /// Starts at `window` instead of the initial window (Careful Resume
    /// hands over the window it validated), never below the floor.
    pub fn resumed(initial: u64, mtu: u16, window: u64) -> Sat {
        let mut s = Sat::new(initial, mtu);
        s.window = window.clamp(s.floor(), s.ceiling());
        s
    }

    fn floor(&self) -> u64 {
        (self.initial / 2).max(2 * self.mtu)
    }

    fn ceiling(&self) -> u64 {
        self.initial.saturating_mul(MAX_GROWTH)
    }

    /// `bytes` acked of a packet sent at `sent`.
    pub fn acked(&mut self, sent: Instant, bytes: u64, app_limited: bool) {
        if app_limited || self.recovery_start.is_some_and(|r| sent <= r) {
            return;
        }
        self.acked += bytes;
        if self.acked >= self.window {
            self.acked -= self.window;
            self.window = (self.window + self.mtu).min(self.ceiling());
        }
    }

    /// A loss event at `now` of `lost` bytes, the newest sent at `sent`.
    pub fn lost(&mut self, now: Instant, sent: Instant, persistent: bool, lost: u64) {
        if persistent {
            self.window = self.floor();
            self.acked = 0;
            self.recovery_start = Some(now);
            return;
        }
        if self.recovery_start.is_some_and(|r| sent <= r) {
            return;
        }
        if (lost as f64) < ISOLATED * self.window as f64 {
            return;
        }
        self.window = ((self.window as f64 * CUT) as u64).max(self.floor());
        self.acked = 0;
        self.recovery_start = Some(now);
    }
}

impl Controller for Sat {
    fn on_ack(
        &mut self,
        _now: Instant,
        sent: Instant,
        bytes: u64,
        app_limited: bool,
        _rtt: &RttEstimator,
    ) {
        self.acked(sent, bytes, app_limited);
    }

    fn on_congestion_event(
        &mut self,
        now: Instant,
        sent: Instant,
        is_persistent_congestion: bool,
        lost_bytes: u64,
    ) {
        self.lost(now, sent, is_persistent_congestion, lost_bytes);
    }

    fn on_mtu_update(&mut self, new_mtu: u16) {
        self.mtu = u64::from(new_mtu).max(1200);
    }

    fn window(&self) -> u64 {
        self.window
    }

    fn clone_box(&self) -> Box<dyn Controller> {
        Box::new(self.clone())
    }

    fn initial_window(&self) -> u64 {
        self.initial
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    const MTU: u16 = 1200;
    const BDP: u64 = 3_000_000;

    fn at(t0: Instant, ms: u64) -> Instant {
        t0 + Duration::from_millis(ms)
    }

    #[test]
    fn starts_at_the_link_and_grows_a_packet_per_window_up_to_its_ceiling() {
        let t0 = Instant::now();
        let mut s = Sat::new(BDP, MTU);
        assert_eq!((s.window, s.initial), (BDP, BDP));
        s.acked(t0, BDP - 1, false);
        assert_eq!(s.window, BDP, "less than a window acked");
        s.acked(t0, 1, false);
        assert_eq!(s.window, BDP + 1200, "no slow start: one packet per window");
        s.acked(t0, 10 * BDP, true);
        assert_eq!(s.window, BDP + 1200, "app-limited acks do not grow it");
        for _ in 0..100_000 {
            s.acked(t0, s.window, false);
        }
        assert_eq!(s.window, MAX_GROWTH * BDP);
    }

    #[test]
    fn random_loss_leaves_the_window_and_a_burst_cuts_it_once_per_round_trip() {
        let t0 = Instant::now();
        let mut s = Sat::new(BDP, MTU);
        s.lost(at(t0, 700), at(t0, 10), false, 1200);
        s.lost(at(t0, 700), at(t0, 20), false, 40_000);
        assert_eq!(s.window, BDP, "under 2 % of the window: random loss");
        s.lost(at(t0, 800), at(t0, 100), false, 200_000);
        assert_eq!(s.window, 2_100_000, "a burst: × 0.7");
        s.lost(at(t0, 810), at(t0, 700), false, 200_000);
        assert_eq!(s.window, 2_100_000, "sent before the cut: the same event");
        s.acked(at(t0, 700), 10 * BDP, false);
        assert_eq!(
            s.window, 2_100_000,
            "acks of packets sent before the cut do not grow it"
        );
        s.lost(at(t0, 1600), at(t0, 900), false, 200_000);
        assert_eq!(s.window, 1_500_000, "never below half the initial window");
    }

    #[test]
    fn a_resumed_window_stays_within_the_floor_and_the_ceiling() {
        assert_eq!(Sat::resumed(BDP, MTU, 2_000_000).window, 2_000_000);
        assert_eq!(Sat::resumed(BDP, MTU, 1000).window, BDP / 2);
        assert_eq!(Sat::resumed(BDP, MTU, u64::MAX).window, MAX_GROWTH * BDP);
    }

    #[test]
    fn persistent_congestion_starts_again_from_half_the_link() {
        let t0 = Instant::now();
        let mut s = Sat::new(BDP, MTU);
        s.lost(at(t0, 5000), at(t0, 10), true, 1200);
        assert_eq!(s.window, BDP / 2);
        let mut tiny = Sat::new(1000, MTU);
        assert_eq!(tiny.window, 2400, "at least two packets");
        tiny.lost(at(t0, 5000), at(t0, 10), true, 1200);
        assert_eq!(tiny.window, 2400);
    }
}
