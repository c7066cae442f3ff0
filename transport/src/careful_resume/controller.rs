//! Careful Resume around any of our congestion controllers, as quinn's
//! `congestion::Controller`: the base controller (`cc=`) sees every event
//! and owns the window in Reconnaissance and Normal; `phases` owns it from
//! the jump until it is validated or retreated from, then hands the window
//! it reached back by building the base controller afresh at that window
//! (quinn's controllers take an initial window but have no setter, and no
//! ssthresh: after a Safe Retreat the base slow-starts from PipeSize / 2
//! until its first loss instead of stopping at ssthresh = PipeSize; and a
//! rebuilt NewReno or Cubic counts only packets sent after it was built, as
//! after a recovery). Every connection is observed, for the next one's
//! saved path.

use std::any::Any;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use quinn::congestion::{
    BbrConfig, Controller, ControllerFactory, ControllerMetrics, CubicConfig, NewRenoConfig,
};
use quinn_proto::RttEstimator;

use super::observe::Observer;
use super::phases::{CarefulResume, Change, Phase, Rtt, Saved};
use super::store::{Endpoint, Store};
use crate::quic::Cc;
use crate::sat_cc::Sat;

/// The base controller and its initial window, to build at any window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Base {
    pub cc: Cc,
    pub initial_window: u64,
}

impl Base {
    /// The base controller, starting at `window` (None: its initial one).
    pub fn build(&self, now: Instant, mtu: u16, window: Option<u64>) -> Box<dyn Controller> {
        let w = window.unwrap_or(self.initial_window);
        match self.cc {
            Cc::Cubic => {
                let mut c = CubicConfig::default();
                c.initial_window(w);
                Arc::new(c).build(now, mtu)
            }
            Cc::NewReno => {
                let mut c = NewRenoConfig::default();
                c.initial_window(w);
                Arc::new(c).build(now, mtu)
            }
            Cc::Bbr => {
                let mut c = BbrConfig::default();
                c.initial_window(w);
                Arc::new(c).build(now, mtu)
            }
            Cc::Sat => Box::new(Sat::resumed(self.initial_window, mtu, w)),
        }
    }
}

/// What one connection's Careful Resume did, shared with the server that
/// logs it when the connection ends.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// The saved path it started with (None: Careful Resume was idle).
    pub saved: Option<Saved>,
    /// Each phase change, with the time since the controller was built.
    pub changes: Vec<(Duration, Change)>,
    pub phase: Option<Phase>,
    pub jump_bytes: u64,
    pub retreated: bool,
    /// The RTT the path was checked with.
    pub rtt_checked: Option<Duration>,
    /// What this connection measured, to save for the next one.
    pub observed: Option<Saved>,
    /// Told once Careful Resume has settled (Normal: nothing it reports
    /// changes after), so the server can log it before the connection ends.
    pub settled: Arc<tokio::sync::Notify>,
}

pub type SharedReport = Arc<Mutex<Report>>;

fn lock(r: &SharedReport) -> std::sync::MutexGuard<'_, Report> {
    r.lock().unwrap_or_else(|e| e.into_inner())
}

/// Builds one connection's controller.
pub struct CarefulResumeFactory {
    pub base: Base,
    pub saved: Option<Saved>,
    pub report: SharedReport,
    /// Where this client's saved path lives: refreshed as this connection
    /// measures the path (a client that returns before the server has seen
    /// its last connection close finds it too), forgotten on a Safe Retreat.
    pub path: Option<(Arc<Store>, Endpoint)>,
}

impl ControllerFactory for CarefulResumeFactory {
    fn build(self: Arc<Self>, now: Instant, current_mtu: u16) -> Box<dyn Controller> {
        lock(&self.report).saved = self.saved;
        Box::new(CarefulResumeController {
            base_of: self.base,
            base: self.base.build(now, current_mtu, None),
            cr: self.saved.map(|s| CarefulResume::new(s, current_mtu)),
            observer: Observer::default(),
            report: self.report.clone(),
            path: self.path.clone(),
            in_flight: 0,
            mtu: current_mtu,
            rtt: None,
            start: now,
        })
    }
}

pub struct CarefulResumeController {
    base_of: Base,
    base: Box<dyn Controller>,
    cr: Option<CarefulResume>,
    observer: Observer,
    report: SharedReport,
    path: Option<(Arc<Store>, Endpoint)>,
    in_flight: u64,
    mtu: u16,
    rtt: Option<Rtt>,
    start: Instant,
}

impl CarefulResumeController {
    fn apply(&mut self, now: Instant, change: Option<Change>) {
        let (Some(change), Some(cr)) = (change, &self.cr) else {
            return;
        };
        let owned = matches!(
            change.old,
            Phase::Unvalidated | Phase::Validating | Phase::SafeRetreat
        );
        if change.new == Phase::Normal && owned {
            self.base = self
                .base_of
                .build(now, self.mtu, Some(change.congestion_window));
        }
        if change.new == Phase::SafeRetreat {
            if let Some((store, e)) = &self.path {
                store.forget(e);
            }
        }
        let mut r = lock(&self.report);
        if change.new == Phase::Normal {
            r.settled.notify_one();
        }
        r.phase = Some(change.new);
        r.jump_bytes = cr.jump_bytes();
        r.retreated = cr.retreated();
        r.rtt_checked = cr.rtt_checked();
        r.changes
            .push((now.saturating_duration_since(self.start), change));
    }
}

impl Controller for CarefulResumeController {
    fn on_sent(&mut self, now: Instant, bytes: u64, last_packet_number: u64) {
        self.in_flight += bytes;
        self.base.on_sent(now, bytes, last_packet_number);
        let base_window = self.base.window();
        let (in_flight, rtt) = (self.in_flight, self.rtt);
        let change = self
            .cr
            .as_mut()
            .and_then(|cr| cr.on_sent(now, last_packet_number, in_flight, base_window, rtt));
        self.apply(now, change);
    }

    fn on_ack(
        &mut self,
        now: Instant,
        sent: Instant,
        bytes: u64,
        app_limited: bool,
        rtt: &RttEstimator,
    ) {
        self.in_flight = self.in_flight.saturating_sub(bytes);
        // The minimum over the acked packets' own round trips, not quinn's
        // estimator's: that one says its initial RTT (333 ms) until its
        // first sample, and a 0-RTT connection's first acks (of 0.5-RTT
        // data, sent before the handshake completes) may come before it.
        let sample = now.saturating_duration_since(sent);
        let min = self.rtt.map_or(sample, |r| r.min.min(sample));
        self.rtt = Some(Rtt {
            min,
            smoothed: rtt.get(),
        });
        self.observer.on_ack(now, sent, bytes, min);
        if let Some(cr) = self.cr.as_mut() {
            cr.on_ack(bytes);
        }
        self.base.on_ack(now, sent, bytes, app_limited, rtt);
    }

    fn on_end_acks(
        &mut self,
        now: Instant,
        in_flight: u64,
        app_limited: bool,
        largest_packet_num_acked: Option<u64>,
    ) {
        self.in_flight = in_flight;
        self.base
            .on_end_acks(now, in_flight, app_limited, largest_packet_num_acked);
        let mut r = lock(&self.report);
        if let Some(o) = self.observer.saved().filter(|o| Some(*o) != r.observed) {
            if let Some((store, e)) = &self.path {
                store.save(*e, o, now);
            }
            r.observed = Some(o);
        }
        drop(r);
        let base_window = self.base.window();
        let rtt = self.rtt;
        let change = self.cr.as_mut().and_then(|cr| {
            cr.on_end_acks(now, largest_packet_num_acked, in_flight, base_window, rtt)
        });
        self.apply(now, change);
    }

    fn on_congestion_event(
        &mut self,
        now: Instant,
        sent: Instant,
        is_persistent_congestion: bool,
        lost_bytes: u64,
    ) {
        self.in_flight = self.in_flight.saturating_sub(lost_bytes);
        self.base
            .on_congestion_event(now, sent, is_persistent_congestion, lost_bytes);
        let change = self
            .cr
            .as_mut()
            .and_then(|cr| cr.on_congestion(is_persistent_congestion));
        self.apply(now, change);
    }

    fn on_mtu_update(&mut self, new_mtu: u16) {
        self.mtu = new_mtu;
        self.base.on_mtu_update(new_mtu);
    }

    fn window(&self) -> u64 {
        self.cr
            .as_ref()
            .and_then(CarefulResume::window)
            .unwrap_or_else(|| self.base.window())
    }

    fn metrics(&self) -> ControllerMetrics {
        let mut m = self.base.metrics();
        m.congestion_window = self.window();
        m
    }

    fn clone_box(&self) -> Box<dyn Controller> {
        Box::new(CarefulResumeController {
            base_of: self.base_of,
            base: self.base.clone_box(),
            cr: self.cr.clone(),
            observer: self.observer.clone(),
            report: self.report.clone(),
            path: self.path.clone(),
            in_flight: self.in_flight,
            mtu: self.mtu,
            rtt: self.rtt,
            start: self.start,
        })
    }

    fn initial_window(&self) -> u64 {
        self.base.initial_window()
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_base_can_be_built_at_a_handed_over_window() {
        let now = Instant::now();
        for cc in [Cc::Cubic, Cc::NewReno, Cc::Bbr, Cc::Sat] {
            let base = Base {
                cc,
                initial_window: 12_000,
            };
            assert_eq!(base.build(now, 1200, None).window(), 12_000, "{cc:?}");
            let w = base.build(now, 1200, Some(30_000)).window();
            assert_eq!(w, 30_000, "{cc:?}");
        }
    }

    #[test]
    fn without_a_saved_path_the_base_decides_alone_and_the_path_is_observed() {
        let now = Instant::now();
        let report = SharedReport::default();
        let f = Arc::new(CarefulResumeFactory {
            base: Base {
                cc: Cc::NewReno,
                initial_window: 12_000,
            },
            saved: None,
            report: report.clone(),
            path: None,
        });
        let mut c = f.build(now, 1200);
        c.on_sent(now, 12_000, 9);
        assert_eq!(c.window(), 12_000);
        // NewReno ignores losses of packets sent before it was built
        let later = now + Duration::from_millis(1);
        c.on_congestion_event(later, later, false, 1200);
        assert_eq!(c.window(), 6000, "NewReno's own halving");
        let r = lock(&report);
        assert!(r.saved.is_none() && r.changes.is_empty());
    }
}
