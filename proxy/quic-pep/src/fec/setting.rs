//! The `fec=K/N` setting (issue 31 item 3: `--pep-sat fec=8/10`) and the
//! time bounds that follow from the hop's round trip.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// The most datagrams (sources and repairs) a window may have. The decoder
/// keeps a window's datagrams until it is repaired or dropped, and marks
/// what it delivered in one 64-bit mask: 64 keeps a window's buffer at
/// 64 × MTU (about 96 kB) and is well past what a satellite hop's bursts
/// call for (16/20 already spans a burst of four).
pub const MAX_N: u8 = 64;

/// `K` source datagrams per window, `N − K` repair packets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FecSetting {
    k: u8,
    n: u8,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SettingError {
    /// Not `K/N` with two whole numbers.
    Syntax(String),
    KZero,
    NNotAboveK {
        k: String,
        n: String,
    },
    NTooLarge {
        n: String,
    },
}

impl fmt::Display for SettingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SettingError::Syntax(s) => write!(
                f,
                "fec={s}: expected K/N, K source datagrams and N datagrams in all per window (e.g. fec=8/10)"
            ),
            SettingError::KZero => write!(f, "fec: K must be at least 1"),
            SettingError::NNotAboveK { k, n } => write!(
                f,
                "fec={k}/{n}: N must be more than K (N − K repair packets per window)"
            ),
            SettingError::NTooLarge { n } => write!(f, "fec: N={n} is more than {MAX_N}"),
        }
    }
}

impl std::error::Error for SettingError {}

impl FecSetting {
    pub fn new(k: u8, n: u8) -> Result<FecSetting, SettingError> {
        match (k, n) {
            (0, _) => Err(SettingError::KZero),
            (k, n) if n <= k => Err(SettingError::NNotAboveK {
                k: k.to_string(),
                n: n.to_string(),
            }),
            (_, n) if n > MAX_N => Err(SettingError::NTooLarge { n: n.to_string() }),
            (k, n) => Ok(FecSetting { k, n }),
        }
    }

    /// Source datagrams in a full window.
    pub fn k(&self) -> usize {
        self.k.into()
    }

    /// Datagrams in a full window, sources and repairs.
    pub fn n(&self) -> usize {
        self.n.into()
    }

    /// Repair packets for a window of `sources` datagrams (at most K): a
    /// partial window, flushed when traffic pauses, keeps the ratio
    /// (N − K)/K, rounded up, so the tail of a burst, whose loss the inner
    /// QUIC notices last, is still covered, and a lone datagram costs one
    /// repair, not N − K.
    pub fn repairs_for(&self, sources: usize) -> usize {
        let (k, r) = (self.k(), self.n() - self.k());
        (sources * r).div_ceil(k).clamp(1, r)
    }
}

impl fmt::Display for FecSetting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.k, self.n)
    }
}

impl FromStr for FecSetting {
    type Err = SettingError;

    /// `K/N`, both whole numbers in decimal digits.
    fn from_str(s: &str) -> Result<FecSetting, SettingError> {
        let syntax = || SettingError::Syntax(s.to_string());
        let (k, n) = s.split_once('/').ok_or_else(syntax)?;
        let digits = |v: &str| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit());
        if !digits(k) || !digits(n) {
            return Err(syntax());
        }
        // Digits only: a parse can fail only by overflow, i.e. far too large.
        let k_value: u64 = k.parse().unwrap_or(u64::MAX);
        let n_value: u64 = n.parse().unwrap_or(u64::MAX);
        if k_value == 0 {
            return Err(SettingError::KZero);
        }
        if n_value <= k_value {
            return Err(SettingError::NNotAboveK {
                k: k.to_string(),
                n: n.to_string(),
            });
        }
        if n_value > MAX_N.into() {
            return Err(SettingError::NTooLarge { n: n.to_string() });
        }
        // n ≤ 64 and k < n: both fit in a u8.
        FecSetting::new(k_value as u8, n_value as u8)
    }
}

/// How long a partial window waits for more datagrams before its repairs
/// are sent: an eighth of the hop's round trip, between 1 and 5 ms.
///
/// The inner QUIC declares a packet lost 9/8 of its RTT after sending it
/// (RFC 9002 kTimeThreshold), and its RTT is at least the hop's: a repair
/// that leaves within RTT/8 of the lost datagram gets its ACK back before
/// that timer fires. Longer than 5 ms buys nothing but head-of-line delay
/// for the repaired datagram (at 15 Mbit/s of 1200-byte datagrams a window
/// of 8 fills within 5 ms anyway); 1 ms is the timer granularity RFC 9002
/// assumes (kGranularity).
pub fn flush_after(hop_rtt: Duration) -> Duration {
    (hop_rtt / 8).clamp(Duration::from_millis(1), Duration::from_millis(5))
}

/// How long the decoder keeps a window waiting for the datagrams that
/// would repair it: one hop round trip (and at least two flush bounds).
/// By then the inner QUIC, whose RTT is at least the hop's, is about to
/// retransmit for itself, and the window's repairs, which leave at most
/// `flush_after` behind its first datagram on the same hop, have come or
/// never will.
pub fn hold_for(hop_rtt: Duration) -> Duration {
    hop_rtt.max(2 * flush_after(hop_rtt))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<FecSetting, SettingError> {
        s.parse()
    }

    #[test]
    fn parses_the_issues_examples() {
        assert_eq!(parse("8/10"), FecSetting::new(8, 10));
        let s = parse("16/20").unwrap();
        assert_eq!((s.k(), s.n()), (16, 20));
        assert_eq!(s.to_string(), "16/20");
        assert_eq!(parse("1/2").unwrap().n(), 2);
        assert_eq!(parse("63/64").unwrap().k(), 63);
    }

    #[test]
    fn refuses_what_is_not_k_slash_n() {
        for bad in [
            "", "8", "8/", "/10", "8/10/12", "8:10", "a/10", "8/ten", " 8/10", "8/10 ", "+8/10",
            "-1/10", "8.0/10", "８/10",
        ] {
            assert_eq!(
                parse(bad),
                Err(SettingError::Syntax(bad.to_string())),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn refuses_out_of_range_with_the_reason() {
        assert_eq!(parse("0/4"), Err(SettingError::KZero));
        let not_above = |k: &str, n: &str| SettingError::NNotAboveK {
            k: k.into(),
            n: n.into(),
        };
        assert_eq!(parse("8/8"), Err(not_above("8", "8")));
        assert_eq!(parse("10/8"), Err(not_above("10", "8")));
        assert_eq!(parse("008/8"), Err(not_above("008", "8")));
        let huge = "99999999999999999999999";
        assert_eq!(parse(&format!("{huge}/8")), Err(not_above(huge, "8")));
        assert_eq!(
            parse("60/65"),
            Err(SettingError::NTooLarge { n: "65".into() })
        );
        // Too large for any integer type: still the range error, not syntax.
        assert_eq!(
            parse(&format!("1/{huge}")),
            Err(SettingError::NTooLarge { n: huge.into() })
        );
        assert_eq!(FecSetting::new(0, 2), Err(SettingError::KZero));
        assert_eq!(
            FecSetting::new(64, 65),
            Err(SettingError::NTooLarge { n: "65".into() })
        );
    }

    #[test]
    fn errors_are_one_line_naming_the_value() {
        for bad in ["x", "0/4", "8/8", "8/99"] {
            let msg = parse(bad).unwrap_err().to_string();
            assert!(!msg.contains('\n'), "{msg}");
            assert!(msg.starts_with("fec"), "{msg}");
        }
        assert!(parse("8/8").unwrap_err().to_string().contains("8/8"));
        assert!(parse("8/99").unwrap_err().to_string().contains("99"));
    }

    #[test]
    fn a_partial_window_keeps_the_ratio_rounded_up() {
        let s = FecSetting::new(8, 10).unwrap();
        assert_eq!(s.repairs_for(8), 2);
        assert_eq!(s.repairs_for(5), 2); // 1.25 → 2
        assert_eq!(s.repairs_for(4), 1);
        assert_eq!(s.repairs_for(1), 1);
        let s = FecSetting::new(4, 6).unwrap();
        assert_eq!(s.repairs_for(1), 1);
        assert_eq!(s.repairs_for(3), 2);
        let s = FecSetting::new(1, 3).unwrap();
        assert_eq!(s.repairs_for(1), 2);
    }

    #[test]
    fn time_bounds_follow_the_hop() {
        let ms = Duration::from_millis;
        assert_eq!(flush_after(ms(32)), ms(4)); // leo
        assert_eq!(flush_after(ms(600)), ms(5)); // geo: capped
        assert_eq!(flush_after(ms(2)), ms(1)); // loopback: the floor
        assert_eq!(hold_for(ms(600)), ms(600));
        assert_eq!(hold_for(ms(2)), ms(2));
        assert_eq!(hold_for(Duration::ZERO), ms(2));
    }
}
