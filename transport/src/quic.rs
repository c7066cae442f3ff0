//! QUIC transport settings as plain values, checked in one place
//! (`QuicOptions::set`, keyed by `quic_keys`), and the quinn
//! `TransportConfig` they make.

use std::sync::Arc;
use std::time::Duration;

use quinn::congestion::{BbrConfig, CubicConfig, NewRenoConfig};
use quinn::{AckFrequencyConfig, IdleTimeout, TransportConfig, VarInt};

use crate::quic_keys::{self, one_of, Key, Kind};

/// The UDP payload size quinn starts every connection with (its
/// `INITIAL_MTU`, 1200 bytes) unless `--quic-initial-mtu` raises it. Its
/// congestion controllers count the window in bytes; `--quic-initial-window`
/// is in packets of this size.
pub const QUIC_BASE_PACKET: u16 = 1200;

/// 250 Mbit/s × 650 ms, the largest QUIC4SAT scenario.
pub const DEFAULT_BDP_BYTES: u64 = 250_000_000 / 8 * 650 / 1000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cc {
    Cubic,
    NewReno,
    Bbr,
    /// Ours for a known, long link (`sat_cc`).
    Sat,
}

impl Cc {
    pub fn parse(s: &str) -> Option<Cc> {
        match s.to_ascii_lowercase().as_str() {
            "cubic" => Some(Cc::Cubic),
            "newreno" | "new-reno" | "reno" => Some(Cc::NewReno),
            "bbr" => Some(Cc::Bbr),
            "sat" => Some(Cc::Sat),
            _ => None,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QuicOptions {
    pub cc: Cc,
    /// Initial congestion window, in packets of `initial_mtu` bytes.
    pub initial_window_packets: u64,
    /// quinn's `initial_mtu` (UDP payload bytes, at least 1200).
    pub initial_mtu: u16,
    /// Ask the peer to use the ACK frequency extension
    /// (draft-ietf-quic-ack-frequency); ignored by peers that lack it.
    pub ack_frequency: bool,
    /// ack-eliciting packets the peer may receive before it must ACK.
    pub ack_eliciting_threshold: Option<u64>,
    /// max_ack_delay asked of the peer.
    pub max_ack_delay_ms: Option<u64>,
    /// Bandwidth-delay product the flow-control windows are sized for.
    pub bdp_bytes: u64,
    pub idle_timeout_ms: u64,
    /// Careful Resume in a server's sender (`careful_resume::Resumer`
    /// gives each connection its controller; `transport_config` alone
    /// builds the plain `cc`).
    pub careful_resume: bool,
}

impl Default for QuicOptions {
    fn default() -> Self {
        QuicOptions {
            cc: Cc::Cubic,
            initial_window_packets: 10,
            initial_mtu: QUIC_BASE_PACKET,
            ack_frequency: false,
            ack_eliciting_threshold: None,
            max_ack_delay_ms: None,
            bdp_bytes: DEFAULT_BDP_BYTES,
            idle_timeout_ms: 30_000,
            careful_resume: false,
        }
    }
}

/// Flow-control and buffer sizes derived from the BDP.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Windows {
    pub stream_receive: u64,
    pub connection_receive: u64,
    pub send: u64,
}

/// Each window is 2 × BDP, so neither flow control nor the send buffer ever
/// caps a transfer below the link rate.
pub fn windows(bdp_bytes: u64) -> Windows {
    let w = bdp_bytes
        .saturating_mul(2)
        .clamp(64 * 1024, (1u64 << 62) - 1);
    Windows {
        stream_receive: w,
        connection_receive: w,
        send: w,
    }
}

impl QuicOptions {
    /// Sets option `key` from its text, the one place option values are
    /// checked (command-line flags, `--accept-side` lists). Errors say what
    /// is wrong with the value; the caller names the flag.
    pub fn set(&mut self, key: Key, value: Option<&str>) -> Result<(), String> {
        let spec = key.spec();
        let value = match (spec.kind, value) {
            (Kind::Flag, Some(_)) => return Err("takes no value".into()),
            (Kind::Flag, None) => "",
            (_, None) => return Err("needs a value".into()),
            (_, Some(v)) => v,
        };
        let num = || -> Result<u64, String> {
            value
                .parse::<u64>()
                .map_err(|_| format!("expected a whole number, got '{value}'"))
        };
        match key {
            Key::Cc => {
                self.cc = Cc::parse(value)
                    .ok_or_else(|| format!("expected {}, got '{value}'", one_of(&spec.values)))?;
            }
            Key::InitialWindow => {
                let n = num()?;
                let min = spec.min.unwrap_or(0);
                if n < min {
                    return Err(format!("at least {min} packets"));
                }
                self.initial_window_packets = n;
            }
            Key::InitialMtu => {
                let n = num()?;
                let max_u16 = u64::from(u16::MAX);
                let (min, max) = (
                    spec.min.unwrap_or(0),
                    spec.max.unwrap_or(max_u16).min(max_u16),
                );
                if !(min..=max).contains(&n) {
                    return Err(format!("between {min} and {max} bytes"));
                }
                self.initial_mtu = n as u16;
            }
            Key::AckFrequency => self.ack_frequency = true,
            Key::AckElicitingThreshold => {
                self.ack_eliciting_threshold = Some(num()?);
                self.ack_frequency = true;
            }
            Key::MaxAckDelayMs => {
                self.max_ack_delay_ms = Some(num()?);
                self.ack_frequency = true;
            }
            Key::BdpBytes => self.bdp_bytes = num()?,
            Key::IdleTimeoutMs => self.idle_timeout_ms = num()?,
            Key::CarefulResume => {
                self.careful_resume = match value {
                    "on" => true,
                    "off" => false,
                    _ => return Err(format!("expected {}, got '{value}'", one_of(&spec.values))),
                }
            }
        }
        Ok(())
    }

    /// Applies a `KEY[=VALUE],…` list (`cc=newreno,initial-window=100,
    /// ack-frequency`), as quic-pep's `--accept-side` takes it; errors
    /// start with `flag`, or `flag KEY` for a bad value.
    pub fn apply_list(&mut self, list: &str, flag: &str) -> Result<(), String> {
        for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (name, value) = match item.split_once('=') {
                Some((k, v)) => (k.trim(), Some(v.trim())),
                None => (item, None),
            };
            let spec = quic_keys::by_name(name).ok_or_else(|| {
                let names: Vec<&str> = quic_keys::specs().iter().map(|s| s.name.as_str()).collect();
                format!(
                    "{flag}: unknown transport option '{name}' (one of {})",
                    names.join(", ")
                )
            })?;
            self.set(spec.key, value)
                .map_err(|e| format!("{flag} {name}: {e}"))?;
        }
        Ok(())
    }

    /// Initial congestion window in bytes: packets × initial MTU.
    pub fn initial_window_bytes(&self) -> u64 {
        self.initial_window_packets * u64::from(self.initial_mtu.max(QUIC_BASE_PACKET))
    }

    /// The ACK frequency configuration asked of the peer, if enabled.
    pub fn ack_frequency_config(&self) -> Option<AckFrequencyConfig> {
        if !self.ack_frequency {
            return None;
        }
        let mut c = AckFrequencyConfig::default();
        if let Some(n) = self.ack_eliciting_threshold {
            c.ack_eliciting_threshold(VarInt::from_u64(n).unwrap_or(VarInt::MAX));
        }
        if let Some(ms) = self.max_ack_delay_ms {
            c.max_ack_delay(Some(Duration::from_millis(ms)));
        }
        Some(c)
    }

    pub fn transport_config(&self) -> TransportConfig {
        let mut t = TransportConfig::default();
        let iw = self.initial_window_bytes();
        match self.cc {
            Cc::Cubic => {
                let mut c = CubicConfig::default();
                c.initial_window(iw);
                t.congestion_controller_factory(Arc::new(c));
            }
            Cc::NewReno => {
                let mut c = NewRenoConfig::default();
                c.initial_window(iw);
                t.congestion_controller_factory(Arc::new(c));
            }
            Cc::Bbr => {
                let mut c = BbrConfig::default();
                c.initial_window(iw);
                t.congestion_controller_factory(Arc::new(c));
            }
            Cc::Sat => {
                t.congestion_controller_factory(Arc::new(crate::sat_cc::SatConfig::new(iw)));
            }
        }
        t.initial_mtu(self.initial_mtu.max(QUIC_BASE_PACKET));
        let w = windows(self.bdp_bytes);
        t.stream_receive_window(VarInt::from_u64(w.stream_receive).unwrap_or(VarInt::MAX));
        t.receive_window(VarInt::from_u64(w.connection_receive).unwrap_or(VarInt::MAX));
        t.send_window(w.send);
        let idle = if self.idle_timeout_ms == 0 {
            None
        } else {
            Some(IdleTimeout::from(
                VarInt::from_u64(self.idle_timeout_ms).unwrap_or(VarInt::MAX),
            ))
        };
        t.max_idle_timeout(idle);
        t.ack_frequency_config(self.ack_frequency_config());
        t
    }
}

/// How often an end that must outlive quiet spells pings: a third of the
/// idle timeout (none without one), at most 10 s.
pub fn keep_alive_every(idle_timeout_ms: u64) -> Option<std::time::Duration> {
    (idle_timeout_ms > 0).then(|| {
        std::time::Duration::from_millis(idle_timeout_ms / 3)
            .min(std::time::Duration::from_secs(10))
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn keep_alives_come_a_third_into_the_idle_timeout_at_most_every_10_s() {
        use std::time::Duration;
        assert_eq!(keep_alive_every(0), None);
        assert_eq!(keep_alive_every(9000), Some(Duration::from_secs(3)));
        assert_eq!(keep_alive_every(300_000), Some(Duration::from_secs(10)));
    }

    use super::*;

    #[test]
    fn default_bdp_is_250_mbit_times_650_ms() {
        assert_eq!(DEFAULT_BDP_BYTES, 20_312_500);
        let w = windows(DEFAULT_BDP_BYTES);
        assert_eq!(w.stream_receive, 40_625_000);
        assert_eq!(w.connection_receive, 40_625_000);
        assert_eq!(w.send, 40_625_000);
    }

    #[test]
    fn windows_have_a_floor() {
        assert_eq!(windows(0).send, 64 * 1024);
        assert!(windows(u64::MAX).send < 1 << 62);
    }

    #[test]
    fn initial_window_is_packets_times_mtu() {
        let o = QuicOptions::default();
        // equal to quinn's own default (10 × 1200 bytes)
        assert_eq!(o.initial_window_bytes(), 12_000);
        let o = QuicOptions {
            initial_window_packets: 32,
            initial_mtu: 1400,
            ..o
        };
        assert_eq!(o.initial_window_bytes(), 44_800);
    }

    #[test]
    fn ack_frequency_only_when_enabled() {
        let o = QuicOptions::default();
        assert!(o.ack_frequency_config().is_none());
        let o = QuicOptions {
            ack_frequency: true,
            ack_eliciting_threshold: Some(10),
            max_ack_delay_ms: Some(50),
            ..o
        };
        let c = format!("{:?}", o.ack_frequency_config().unwrap());
        assert!(c.contains("ack_eliciting_threshold: 10"), "{c}");
        assert!(c.contains("50ms"), "{c}");
    }

    #[test]
    fn parses_cc_names() {
        assert_eq!(Cc::parse("cubic"), Some(Cc::Cubic));
        assert_eq!(Cc::parse("NewReno"), Some(Cc::NewReno));
        assert_eq!(Cc::parse("bbr"), Some(Cc::Bbr));
        assert_eq!(Cc::parse("sat"), Some(Cc::Sat));
        assert_eq!(Cc::parse("vegas"), None);
    }

    /// A value `set` takes for each kind of key.
    fn sample(spec: &quic_keys::Spec) -> Option<&str> {
        match spec.kind {
            Kind::Choice => Some(spec.values.last().unwrap()),
            Kind::Count => Some("1400"),
            Kind::Flag => None,
        }
    }

    #[test]
    fn set_handles_every_key_of_the_table_as_its_kind_says() {
        for spec in quic_keys::specs() {
            let mut o = QuicOptions::default();
            o.set(spec.key, sample(spec)).unwrap();
            assert_ne!(o, QuicOptions::default(), "{} changed nothing", spec.name);
            let mut o = QuicOptions::default();
            match spec.kind {
                Kind::Flag => assert_eq!(o.set(spec.key, Some("1")).unwrap_err(), "takes no value"),
                Kind::Count => {
                    assert_eq!(o.set(spec.key, None).unwrap_err(), "needs a value");
                    assert!(o
                        .set(spec.key, Some("many"))
                        .unwrap_err()
                        .contains("whole number"));
                }
                Kind::Choice => {
                    for v in &spec.values {
                        o.set(spec.key, Some(v)).unwrap();
                    }
                    assert!(o.set(spec.key, Some("vegas")).is_err());
                }
            }
        }
    }

    #[test]
    fn set_checks_ranges() {
        let mut o = QuicOptions::default();
        assert_eq!(
            o.set(Key::InitialWindow, Some("1")).unwrap_err(),
            "at least 2 packets"
        );
        assert!(o.set(Key::InitialMtu, Some("1199")).is_err());
        assert!(o.set(Key::InitialMtu, Some("65528")).is_err());
        assert_eq!(
            o.set(Key::Cc, Some("vegas")).unwrap_err(),
            "expected cubic, newreno, bbr or sat, got 'vegas'"
        );
        o.set(Key::MaxAckDelayMs, Some("40")).unwrap();
        assert!(o.ack_frequency, "max-ack-delay-ms implies ack-frequency");
        assert_eq!(
            o,
            QuicOptions {
                max_ack_delay_ms: Some(40),
                ack_frequency: true,
                ..Default::default()
            }
        );
    }

    #[test]
    fn lists_name_the_flag_and_the_key() {
        let mut o = QuicOptions::default();
        o.apply_list("cc=bbr, initial-window=32,ack-frequency,", "--x")
            .unwrap();
        assert_eq!(
            (o.cc, o.initial_window_packets, o.ack_frequency),
            (Cc::Bbr, 32, true)
        );
        assert!(o
            .apply_list("frob=1", "--x")
            .unwrap_err()
            .starts_with("--x: unknown transport option 'frob' (one of cc, initial-window,"));
        assert_eq!(
            o.apply_list("ack-frequency=1", "--x").unwrap_err(),
            "--x ack-frequency: takes no value"
        );
        assert_eq!(
            o.apply_list("initial-window", "--x").unwrap_err(),
            "--x initial-window: needs a value"
        );
    }

    #[test]
    fn builds_a_transport_config_for_each_cc() {
        for cc in [Cc::Cubic, Cc::NewReno, Cc::Bbr, Cc::Sat] {
            let o = QuicOptions {
                cc,
                ack_frequency: true,
                idle_timeout_ms: 0,
                ..Default::default()
            };
            let t = format!("{:?}", o.transport_config());
            assert!(t.contains("40625000"), "{t}");
        }
    }
}
