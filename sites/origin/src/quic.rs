//! QUIC transport settings from the command line, as plain values, and the
//! quinn `TransportConfig` they make.

use std::sync::Arc;
use std::time::Duration;

use quinn::congestion::{BbrConfig, CubicConfig, NewRenoConfig};
use quinn::{AckFrequencyConfig, IdleTimeout, TransportConfig, VarInt};

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
}

impl Cc {
    pub fn parse(s: &str) -> Option<Cc> {
        match s.to_ascii_lowercase().as_str() {
            "cubic" => Some(Cc::Cubic),
            "newreno" | "new-reno" | "reno" => Some(Cc::NewReno),
            "bbr" => Some(Cc::Bbr),
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
    /// Sets one option by its name without a prefix (`cc`, `initial-window`,
    /// `initial-mtu`, `ack-frequency`, `ack-eliciting-threshold`,
    /// `max-ack-delay-ms`, `bdp-bytes`, `idle-timeout-ms`), so every tool of
    /// the workspace (origin, PEP, bulk) reads transport flags the same way.
    /// `Ok(false)` when `key` is not a transport option; errors start with
    /// `flag`, the name the user typed.
    pub fn set(&mut self, key: &str, value: Option<&str>, flag: &str) -> Result<bool, String> {
        let need = || value.ok_or_else(|| format!("{flag}: needs a value"));
        let num = |v: &str| -> Result<u64, String> {
            v.parse::<u64>()
                .map_err(|_| format!("{flag}: expected a whole number, got '{v}'"))
        };
        match key {
            "cc" => {
                let v = need()?;
                self.cc = Cc::parse(v)
                    .ok_or_else(|| format!("{flag}: expected cubic, newreno or bbr, got '{v}'"))?;
            }
            "initial-window" => {
                self.initial_window_packets = num(need()?)?;
                if self.initial_window_packets < 2 {
                    return Err(format!("{flag}: at least 2 packets"));
                }
            }
            "initial-mtu" => {
                let v = num(need()?)?;
                if !(1200..=65527).contains(&v) {
                    return Err(format!("{flag}: between 1200 and 65527 bytes"));
                }
                self.initial_mtu = v as u16;
            }
            "ack-frequency" => self.ack_frequency = true,
            "ack-eliciting-threshold" => {
                self.ack_eliciting_threshold = Some(num(need()?)?);
                self.ack_frequency = true;
            }
            "max-ack-delay-ms" => {
                self.max_ack_delay_ms = Some(num(need()?)?);
                self.ack_frequency = true;
            }
            "bdp-bytes" => self.bdp_bytes = num(need()?)?,
            "idle-timeout-ms" => self.idle_timeout_ms = num(need()?)?,
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// The names `set` knows.
    pub const KEYS: [&'static str; 8] = [
        "cc",
        "initial-window",
        "initial-mtu",
        "ack-frequency",
        "ack-eliciting-threshold",
        "max-ack-delay-ms",
        "bdp-bytes",
        "idle-timeout-ms",
    ];

    /// Whether option `key` (as for `set`) takes a value.
    pub fn takes_value(key: &str) -> bool {
        key != "ack-frequency"
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

#[cfg(test)]
mod tests {
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
        assert_eq!(Cc::parse("vegas"), None);
    }

    #[test]
    fn builds_a_transport_config_for_each_cc() {
        for cc in [Cc::Cubic, Cc::NewReno, Cc::Bbr] {
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
