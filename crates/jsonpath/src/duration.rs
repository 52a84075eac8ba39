//! Ages: `k8s.io/apimachinery/pkg/util/duration.HumanDuration` and the API
//! server's reading of `date` cells (`metav1.Time.UnmarshalQueryParameter`,
//! which is Go's lenient `time.Parse(time.RFC3339, …)`).
//!
//! The current time is always a parameter: this crate does no I/O and also
//! runs in the browser.

use time::{Date, Duration, Month, OffsetDateTime, PrimitiveDateTime, Time};

const NANOS_PER_SECOND: i64 = 1_000_000_000;
const NANOS_PER_MINUTE: i64 = 60 * NANOS_PER_SECOND;
const NANOS_PER_HOUR: i64 = 60 * NANOS_PER_MINUTE;

/// A duration as kubectl prints ages, with ~2–3 significant figures, exactly
/// as `duration.HumanDuration`:
///
/// | duration `d`            | output            |
/// |-------------------------|-------------------|
/// | below −1s (≤ −2s)       | `<invalid>`       |
/// | −2s < d < 0             | `0s`              |
/// | under 2 minutes         | `59s`, `119s`     |
/// | under 10 minutes        | `2m`, `9m59s`     |
/// | under 3 hours           | `10m`, `179m`     |
/// | under 8 hours           | `3h`, `7h59m`     |
/// | under 48 hours          | `8h`, `47h`       |
/// | under 8 days            | `2d`, `7d23h`     |
/// | under 2×365 days        | `8d`, `729d`      |
/// | under 8×365 days        | `2y`, `7y364d`    |
/// | longer                  | `8y`              |
///
/// Units truncate (90s is `90s`, 150s is `2m30s`); years are 365 days. Like
/// Go's `time.Duration`, the duration saturates at about ±292 years.
pub fn human_duration(d: Duration) -> String {
    let nanos =
        i64::try_from(d.whole_nanoseconds()).unwrap_or(if d.is_negative() { i64::MIN } else { i64::MAX });
    let seconds = nanos / NANOS_PER_SECOND;
    if seconds < -1 {
        return "<invalid>".into();
    }
    if seconds < 0 {
        return "0s".into();
    }
    if seconds < 60 * 2 {
        return format!("{seconds}s");
    }
    let minutes = nanos / NANOS_PER_MINUTE;
    if minutes < 10 {
        let s = seconds % 60;
        return if s == 0 { format!("{minutes}m") } else { format!("{minutes}m{s}s") };
    }
    if minutes < 60 * 3 {
        return format!("{minutes}m");
    }
    let hours = nanos / NANOS_PER_HOUR;
    if hours < 8 {
        let m = minutes % 60;
        return if m == 0 { format!("{hours}h") } else { format!("{hours}h{m}m") };
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    if hours < 24 * 8 {
        let h = hours % 24;
        return if h == 0 { format!("{}d", hours / 24) } else { format!("{}d{h}h", hours / 24) };
    }
    if hours < 24 * 365 * 2 {
        return format!("{}d", hours / 24);
    }
    if hours < 24 * 365 * 8 {
        let days = (hours / 24) % 365;
        let years = hours / 24 / 365;
        return if days == 0 { format!("{years}y") } else { format!("{years}y{days}d") };
    }
    format!("{}y", hours / 24 / 365)
}

/// The age shown for a timestamp, as the API server computes a `date` cell:
/// `<unknown>` for an empty (or `null`, or zero-time) timestamp, `<invalid>`
/// for one that is not RFC 3339, else [`human_duration`] of `now − ts`
/// (so a timestamp in the future by 2s or more is `<invalid>` too).
pub fn age(ts: &str, now: OffsetDateTime) -> String {
    if ts.is_empty() || ts == "null" {
        return "<unknown>".into();
    }
    match parse_rfc3339(ts) {
        None => "<invalid>".into(),
        Some(t) if is_go_zero(t) => "<unknown>".into(),
        Some(t) => human_duration(now - t),
    }
}

/// Go's zero `time.Time` (0001-01-01T00:00:00Z), which Kubernetes treats as unset.
fn is_go_zero(t: OffsetDateTime) -> bool {
    Date::from_calendar_date(1, Month::January, 1)
        .map(|d| PrimitiveDateTime::new(d, Time::MIDNIGHT).assume_utc() == t)
        .unwrap_or(false)
}

/// Go's `time.Parse(time.RFC3339, s)`, which is more lenient than RFC 3339:
/// a one-digit hour is accepted, fractional seconds may use `,` and any
/// number of digits (beyond nanoseconds they are dropped), offsets may reach
/// ±24:60. Upper-case `T` and `Z` only; no leap seconds.
pub(crate) fn parse_rfc3339(s: &str) -> Option<OffsetDateTime> {
    let b = s.as_bytes();
    let mut at = 0;
    let digits = |at: &mut usize, n: usize| -> Option<u32> {
        let part = b.get(*at..*at + n)?;
        if !part.iter().all(u8::is_ascii_digit) {
            return None;
        }
        *at += n;
        Some(part.iter().fold(0, |v, d| v * 10 + u32::from(d - b'0')))
    };
    let literal = |at: &mut usize, c: u8| -> Option<()> { (b.get(*at) == Some(&c)).then(|| *at += 1) };

    let year = digits(&mut at, 4)?;
    literal(&mut at, b'-')?;
    let month = digits(&mut at, 2)?;
    literal(&mut at, b'-')?;
    let day = digits(&mut at, 2)?;
    literal(&mut at, b'T')?;
    // Go's `15` layout element takes one or two digits.
    let hour =
        if b.get(at + 1).is_some_and(u8::is_ascii_digit) { digits(&mut at, 2)? } else { digits(&mut at, 1)? };
    literal(&mut at, b':')?;
    let minute = digits(&mut at, 2)?;
    literal(&mut at, b':')?;
    let second = digits(&mut at, 2)?;

    let mut nanos = 0;
    if matches!(b.get(at), Some(b'.' | b',')) && b.get(at + 1).is_some_and(u8::is_ascii_digit) {
        at += 1;
        let start = at;
        while b.get(at).is_some_and(u8::is_ascii_digit) {
            at += 1;
        }
        let fraction = &b[start..at.min(start + 9)];
        nanos = fraction.iter().fold(0u32, |v, d| v * 10 + u32::from(d - b'0'))
            * 10u32.pow(u32::try_from(9 - fraction.len()).ok()?);
    }

    let offset_seconds: i64 = if literal(&mut at, b'Z').is_some() {
        0
    } else {
        let sign = match b.get(at) {
            Some(b'+') => 1,
            Some(b'-') => -1,
            _ => return None,
        };
        at += 1;
        let hours = digits(&mut at, 2)?;
        literal(&mut at, b':')?;
        let minutes = digits(&mut at, 2)?;
        if hours > 24 || minutes > 60 {
            return None;
        }
        sign * (i64::from(hours) * 3600 + i64::from(minutes) * 60)
    };
    if at != b.len() || hour > 23 || minute > 59 || second > 59 {
        return None;
    }

    let month = Month::try_from(u8::try_from(month).ok()?).ok()?;
    let date = Date::from_calendar_date(i32::try_from(year).ok()?, month, u8::try_from(day).ok()?).ok()?;
    let time = Time::from_hms_nano(
        u8::try_from(hour).ok()?,
        u8::try_from(minute).ok()?,
        u8::try_from(second).ok()?,
        nanos,
    )
    .ok()?;
    PrimitiveDateTime::new(date, time).assume_utc().checked_sub(Duration::seconds(offset_seconds))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A UTC instant from its parts (kept independent of the parser under test).
    fn utc(ymd: (i32, u8, u8), hms: (u8, u8, u8), nanos: u32) -> OffsetDateTime {
        let date = Date::from_calendar_date(ymd.0, Month::try_from(ymd.1).unwrap(), ymd.2).unwrap();
        PrimitiveDateTime::new(date, Time::from_hms_nano(hms.0, hms.1, hms.2, nanos).unwrap()).assume_utc()
    }

    fn secs(s: i64) -> Duration {
        Duration::seconds(s)
    }

    /// The boundaries of `HumanDuration`, one row per branch.
    #[test]
    fn human_duration_boundaries() {
        const M: i64 = 60;
        const H: i64 = 60 * M;
        const D: i64 = 24 * H;
        const Y: i64 = 365 * D;
        let cases = [
            (secs(-3), "<invalid>"),
            (secs(-2), "<invalid>"),
            (Duration::milliseconds(-1999), "0s"),
            (secs(-1), "0s"),
            (Duration::milliseconds(-1), "0s"),
            (secs(0), "0s"),
            (Duration::milliseconds(999), "0s"),
            (secs(59), "59s"),
            (secs(60), "60s"),
            (secs(119), "119s"),
            (secs(120), "2m"),
            (secs(150), "2m30s"),
            (secs(10 * M - 1), "9m59s"),
            (secs(10 * M), "10m"),
            (secs(3 * H - 1), "179m"),
            (secs(3 * H), "3h"),
            (secs(3 * H + 30 * M), "3h30m"),
            (secs(8 * H - 1), "7h59m"),
            (secs(8 * H), "8h"),
            (secs(48 * H - 1), "47h"),
            (secs(48 * H), "2d"),
            (secs(2 * D + 5 * H), "2d5h"),
            (secs(8 * D - 1), "7d23h"),
            (secs(8 * D), "8d"),
            (secs(2 * Y - 1), "729d"),
            (secs(2 * Y), "2y"),
            (secs(2 * Y + 10 * D), "2y10d"),
            (secs(8 * Y - 1), "7y364d"),
            (secs(8 * Y), "8y"),
            (secs(100 * Y), "100y"),
            // Go durations saturate at 2^63-1 ns (~292 years).
            (secs(1000 * Y), "292y"),
            (secs(-1000 * Y), "<invalid>"),
        ];
        for (d, want) in cases {
            assert_eq!(human_duration(d), want, "{d}");
        }
    }

    #[test]
    fn ages() {
        let now = utc((2024, 5, 10), (12, 0, 0), 0);
        assert_eq!(age("2024-05-10T11:59:30Z", now), "30s");
        assert_eq!(age("2024-05-09T23:30:00Z", now), "12h");
        assert_eq!(age("2024-05-10T13:30:00+02:00", now), "30m");
        assert_eq!(age("2024-05-10T11:00:00.123456789Z", now), "59m", "units truncate");
        assert_eq!(age("2024-05-10T12:00:01Z", now), "0s", "a second in the future is clock skew");
        assert_eq!(age("2024-05-10T12:00:02Z", now), "<invalid>");
        assert_eq!(age("", now), "<unknown>");
        assert_eq!(age("null", now), "<unknown>");
        assert_eq!(age("0001-01-01T00:00:00Z", now), "<unknown>", "Go's zero time");
        assert_eq!(age("yesterday", now), "<invalid>");
        assert_eq!(age("2024-05-10", now), "<invalid>");
    }

    #[test]
    fn go_rfc3339_leniency() {
        let t = |s: &str| parse_rfc3339(s);
        assert_eq!(t("2024-05-10T12:00:00Z"), Some(utc((2024, 5, 10), (12, 0, 0), 0)));
        assert_eq!(t("2024-05-10T12:00:00.5Z"), Some(utc((2024, 5, 10), (12, 0, 0), 500000000)));
        assert_eq!(t("2024-05-10T12:00:00,25Z"), Some(utc((2024, 5, 10), (12, 0, 0), 250000000)));
        assert_eq!(t("2024-05-10T12:00:00.1234567891234Z"), Some(utc((2024, 5, 10), (12, 0, 0), 123456789)));
        assert_eq!(t("2024-05-10T2:00:00Z"), Some(utc((2024, 5, 10), (2, 0, 0), 0)));
        assert_eq!(t("2024-05-10T12:00:00-05:30"), Some(utc((2024, 5, 10), (17, 30, 0), 0)));
        assert_eq!(t("2024-05-10T12:00:00+24:00"), Some(utc((2024, 5, 9), (12, 0, 0), 0)));
        assert_eq!(t("0000-01-01T00:00:00Z").map(|t| t.year()), Some(0));
        for bad in [
            "2024-05-10t12:00:00Z",
            "2024-05-10T12:00:00z",
            "2024-05-10 12:00:00Z",
            "2024-05-10T12:00:00",
            "2024-05-10T12:00:60Z",
            "2024-05-10T24:00:00Z",
            "2024-02-30T12:00:00Z",
            "2024-13-01T12:00:00Z",
            "2024-5-10T12:00:00Z",
            "2024-05-10T12:00:00+0200",
            "2024-05-10T12:00:00+25:00",
            "2024-05-10T12:00:00.Z",
            "2024-05-10T12:00:00Zjunk",
            "+024-05-10T12:00:00Z",
            "２０２４-05-10T12:00:00Z",
        ] {
            assert_eq!(t(bad), None, "{bad}");
        }
    }
}
