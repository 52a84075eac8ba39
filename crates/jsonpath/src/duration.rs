//! Ages: `k8s.io/apimachinery/pkg/util/duration.HumanDuration` and the API
//! server's reading of `date` cells (`metav1.Time.UnmarshalQueryParameter`,
//! which is Go's lenient `time.Parse(time.RFC3339, …)`).
//!
//! The current time is always a parameter: this crate does no I/O and also
//! runs in the browser.

use time::{Date, Duration, Month, OffsetDateTime, PrimitiveDateTime, Time};

const NANOS_PER_SECOND: i64 = 1_000_000_000;

/// A unit of `HumanDuration`.
#[derive(Clone, Copy)]
struct Unit {
    seconds: i64,
    suffix: &'static str,
}

const SECOND: Unit = Unit { seconds: 1, suffix: "s" };
const MINUTE: Unit = Unit { seconds: 60, suffix: "m" };
const HOUR: Unit = Unit { seconds: 60 * 60, suffix: "h" };
const DAY: Unit = Unit { seconds: 24 * 60 * 60, suffix: "d" };
/// 365 days, as in Go.
const YEAR: Unit = Unit { seconds: 365 * 24 * 60 * 60, suffix: "y" };

/// `HumanDuration`'s steps, in order: a duration below `limit` seconds is shown in whole
/// `unit`s, followed by the rest in whole `rest` units unless that is zero. Longer ones are
/// shown in years.
const STEPS: [(i64, Unit, Option<Unit>); 8] = [
    (2 * MINUTE.seconds, SECOND, None),
    (10 * MINUTE.seconds, MINUTE, Some(SECOND)),
    (3 * HOUR.seconds, MINUTE, None),
    (8 * HOUR.seconds, HOUR, Some(MINUTE)),
    (48 * HOUR.seconds, HOUR, None),
    (8 * DAY.seconds, DAY, Some(HOUR)),
    (2 * YEAR.seconds, DAY, None),
    (8 * YEAR.seconds, YEAR, Some(DAY)),
];

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
    let (_, unit, rest) =
        STEPS.into_iter().find(|&(limit, _, _)| seconds < limit).unwrap_or((i64::MAX, YEAR, None));
    let shown = format!("{}{}", seconds / unit.seconds, unit.suffix);
    match rest.map(|rest| (seconds % unit.seconds / rest.seconds, rest.suffix)) {
        Some((rest, suffix)) if rest != 0 => format!("{shown}{rest}{suffix}"),
        _ => shown,
    }
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

    /// Seconds in a minute, hour, day and (Go's) year.
    const M: i64 = 60;
    const H: i64 = 60 * M;
    const D: i64 = 24 * H;
    const Y: i64 = 365 * D;

    /// The boundaries of `HumanDuration`: each step's limit, a second below and at it.
    #[test]
    fn human_duration_boundaries() {
        // (limit, shown a second below it, shown at it)
        let limits = [
            (2 * M, "119s", "2m"),
            (10 * M, "9m59s", "10m"),
            (3 * H, "179m", "3h"),
            (8 * H, "7h59m", "8h"),
            (48 * H, "47h", "2d"),
            (8 * D, "7d23h", "8d"),
            (2 * Y, "729d", "2y"),
            (8 * Y, "7y364d", "8y"),
        ];
        for (limit, below, at) in limits {
            assert_eq!(human_duration(secs(limit - 1)), below, "{limit}s - 1s");
            assert_eq!(human_duration(secs(limit)), at, "{limit}s");
        }
    }

    /// Negative durations, the first step, a rest within each two-unit step, and saturation.
    #[test]
    fn human_duration_values() {
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
            (secs(150), "2m30s"),
            (secs(3 * H + 30 * M), "3h30m"),
            (secs(2 * D + 5 * H), "2d5h"),
            (secs(2 * Y + 10 * D), "2y10d"),
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
