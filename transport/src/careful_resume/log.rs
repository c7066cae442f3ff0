//! The Careful Resume log: one JSON line per connection that had a saved
//! path, written when the connection ends. quinn 0.11's qlog writer takes
//! no events from the application, so the draft's qlog events
//! (draft-ietf-tsvwg-careful-resume-qlog: `recovery:careful_resume_phase_updated`,
//! with old/new phase, trigger, state_data and restored_data) are in the
//! line's `events`, timed from the connection's start.

use std::time::{Duration, SystemTime};

use serde::Serialize;

use super::controller::Report;
use super::observe::Observer;
use super::phases::{Change, Phase, Saved};
use super::store::Endpoint;

pub const EVENT_NAME: &str = "recovery:careful_resume_phase_updated";

fn ms(d: Duration) -> f64 {
    (d.as_secs_f64() * 1e6).round() / 1e3
}

#[derive(Serialize)]
struct StateData {
    pipesize: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    first_unvalidated_packet: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    last_unvalidated_packet: Option<u64>,
    congestion_window: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    ssthresh: Option<u64>,
}

#[derive(Serialize)]
struct RestoredData {
    saved_congestion_window: u64,
    /// milliseconds
    saved_rtt: f64,
}

#[derive(Serialize)]
struct EventData {
    old: Phase,
    new: Phase,
    trigger: super::phases::Trigger,
    state_data: StateData,
    restored_data: RestoredData,
}

#[derive(Serialize)]
struct Event {
    time_ms: f64,
    name: &'static str,
    data: EventData,
}

#[derive(Serialize)]
struct SavedPath {
    cwnd_bytes: u64,
    capacity_bps: u64,
    rtt_ms: f64,
}

#[derive(Serialize)]
struct Line {
    time: String,
    endpoint: String,
    phase_reached: Phase,
    jump_bytes: u64,
    saved_cwnd_bytes: u64,
    saved_capacity_bps: u64,
    saved_rtt_ms: f64,
    /// The RTT the path was checked with (null: never checked).
    rtt_ms: Option<f64>,
    retreated: bool,
    events: Vec<Event>,
    /// What this connection measured, saved for the next one.
    #[serde(skip_serializing_if = "Option::is_none")]
    observed: Option<SavedPath>,
}

fn event(at: Duration, c: &Change, saved: &Saved) -> Event {
    Event {
        time_ms: ms(at),
        name: EVENT_NAME,
        data: EventData {
            old: c.old,
            new: c.new,
            trigger: c.trigger,
            state_data: StateData {
                pipesize: c.pipesize,
                first_unvalidated_packet: c.first_unvalidated_packet,
                last_unvalidated_packet: c.last_unvalidated_packet,
                congestion_window: c.congestion_window,
                ssthresh: c.ssthresh,
            },
            restored_data: RestoredData {
                saved_congestion_window: saved.cwnd,
                saved_rtt: ms(saved.rtt),
            },
        },
    }
}

fn saved_path(s: &Saved) -> SavedPath {
    SavedPath {
        cwnd_bytes: s.cwnd,
        capacity_bps: Observer::capacity_bps(s),
        rtt_ms: ms(s.rtt),
    }
}

/// The log line of a connection's report, None when it had no saved path.
pub fn line(report: &Report, endpoint: &Endpoint, ended: SystemTime) -> Option<String> {
    let saved = report.saved?;
    let l = Line {
        time: crate::time::rfc3339_millis(ended),
        endpoint: endpoint.name(),
        phase_reached: report.phase.unwrap_or(Phase::Reconnaissance),
        jump_bytes: report.jump_bytes,
        saved_cwnd_bytes: saved.cwnd,
        saved_capacity_bps: Observer::capacity_bps(&saved),
        saved_rtt_ms: ms(saved.rtt),
        rtt_ms: report.rtt_checked.map(ms),
        retreated: report.retreated,
        events: report
            .changes
            .iter()
            .map(|(at, c)| event(*at, c, &saved))
            .collect(),
        observed: report.observed.as_ref().map(saved_path),
    };
    serde_json::to_string(&l).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::careful_resume::phases::Trigger;

    #[test]
    fn a_line_names_the_phase_the_jump_and_the_drafts_events() {
        let e = Endpoint::new(
            "10.0.0.1:9".parse().unwrap(),
            Some("10.0.0.9".parse().unwrap()),
        );
        let idle = Report::default();
        assert_eq!(
            line(&idle, &e, SystemTime::UNIX_EPOCH),
            None,
            "no saved path, no line"
        );
        let saved = Saved {
            cwnd: 1_450_000,
            rtt: Duration::from_millis(580),
        };
        // 20 Mbit/s × 580 ms
        let r = Report {
            saved: Some(saved),
            changes: vec![(
                Duration::from_micros(1_160_500),
                Change {
                    old: Phase::Reconnaissance,
                    new: Phase::Unvalidated,
                    trigger: Trigger::CwndLimited,
                    pipesize: 12_000,
                    first_unvalidated_packet: Some(11),
                    last_unvalidated_packet: None,
                    congestion_window: 725_000,
                    ssthresh: None,
                },
            )],
            phase: Some(Phase::Unvalidated),
            jump_bytes: 725_000,
            retreated: false,
            rtt_checked: Some(Duration::from_millis(581)),
            observed: None,
            settled: Default::default(),
        };
        let v: serde_json::Value =
            serde_json::from_str(&line(&r, &e, SystemTime::UNIX_EPOCH).unwrap()).unwrap();
        assert_eq!(v["time"], "1970-01-01T00:00:00.000Z");
        assert_eq!(v["endpoint"], "10.0.0.1>10.0.0.9");
        assert_eq!(v["phase_reached"], "unvalidated");
        assert_eq!(v["jump_bytes"], 725_000);
        assert_eq!(v["saved_capacity_bps"], 20_000_000);
        assert_eq!(v["saved_rtt_ms"], 580.0);
        assert_eq!(v["rtt_ms"], 581.0);
        assert_eq!(v["retreated"], false);
        let ev = &v["events"][0];
        assert_eq!(ev["name"], "recovery:careful_resume_phase_updated");
        assert_eq!(ev["time_ms"], 1160.5);
        assert_eq!(ev["data"]["old"], "reconnaissance");
        assert_eq!(ev["data"]["trigger"], "cwnd_limited");
        assert_eq!(ev["data"]["state_data"]["congestion_window"], 725_000);
        assert_eq!(ev["data"]["restored_data"]["saved_rtt"], 580.0);
        assert!(ev["data"]["state_data"].get("ssthresh").is_none());
    }
}
