//! Wall-clock time for the tools' logs and captures: now since the Unix
//! epoch, and RFC 3339 timestamps (UTC, milliseconds).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The wall clock now, as time since 1970-01-01T00:00:00Z (zero if the
/// clock is set before that). Take `.as_millis()`, `.as_micros()` or
/// `.as_nanos()` for the unit a log or file format wants.
pub fn unix_now() -> Duration {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
}

/// RFC 3339 UTC with milliseconds, e.g. `2026-05-01T12:00:00.123Z`.
pub fn rfc3339_millis(t: SystemTime) -> String {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs();
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, day) = civil_from_days(days as i64);
    format!(
        "{y:04}-{m:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60,
        d.subsec_millis()
    )
}

/// Days since 1970-01-01 → (year, month, day), proleptic Gregorian
/// (H. Hinnant's algorithm).
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn now_is_after_2025() {
        assert!(unix_now() > Duration::from_secs(1_735_689_600));
    }

    #[test]
    fn formats_times() {
        assert_eq!(rfc3339_millis(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let t = UNIX_EPOCH + Duration::from_millis(951_782_400_000 + 3_723_456); // 2000-02-29 01:02:03.456
        assert_eq!(rfc3339_millis(t), "2000-02-29T01:02:03.456Z");
        let t = UNIX_EPOCH + Duration::from_secs(1_767_225_599); // last second of 2025
        assert_eq!(rfc3339_millis(t), "2025-12-31T23:59:59.000Z");
    }

    #[test]
    fn days_before_the_epoch() {
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
        assert_eq!(civil_from_days(0), (1970, 1, 1));
    }
}
