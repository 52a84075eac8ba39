//! The audit page's URL: the gateway's filter ([`AuditFilter`]), with the time range as the
//! page's date inputs write it (`2026-12-04T10:30`, UTC) as well as unix milliseconds.

use fundament_kube_core::Query;
use fundament_plugin_types::audit::{AuditFilter, AuditFilterError};

/// Why the page's query cannot be read, in the words of its form.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PageFilterError {
    #[error(transparent)]
    Filter(#[from] AuditFilterError),
    /// `since`/`until` is neither a date input's value nor unix milliseconds.
    #[error("the audit filter {parameter} must be a date and time (YYYY-MM-DDTHH:MM, UTC), not {value:?}")]
    Time { parameter: &'static str, value: String },
    /// `since` is not before `until`: nothing could ever match.
    #[error("the time range is empty: since ({since}) is not before until ({until})")]
    EmptyRange { since: String, until: String },
}

/// Reads the page's query: the filter, with `since`/`until` given as a date input's
/// `YYYY-MM-DDTHH:MM[:SS]` (UTC) or as unix milliseconds.
pub fn filter_of(raw: &str) -> Result<AuditFilter, PageFilterError> {
    let mut query = Query::parse(raw);
    for parameter in ["since", "until"] {
        let Some(value) = query.get(parameter).map(str::trim).filter(|v| !v.is_empty()).map(str::to_owned)
        else {
            continue;
        };
        match date_input_ms(&value) {
            Some(ms) => query.set(parameter, &ms.to_string()),
            None if value.parse::<i64>().is_ok() => {}
            None => return Err(PageFilterError::Time { parameter, value }),
        }
    }
    // A tail position and a size are the page's business, not the URL's.
    for key in ["after", "before", "limit", "wait"] {
        query.set(key, "");
    }
    let filter = AuditFilter::from_query(&query)?;
    if let (Some(since), Some(until)) = (filter.since_ms, filter.until_ms)
        && since >= until
    {
        let shown = |key: &str| Query::parse(raw).get(key).map(str::trim).unwrap_or_default().to_owned();
        return Err(PageFilterError::EmptyRange { since: shown("since"), until: shown("until") });
    }
    Ok(filter)
}

/// The raw query `raw` without the parameter `key` (the page's own keys are plain ASCII).
pub fn without(raw: &str, key: &str) -> String {
    raw.split('&')
        .filter(|pair| !pair.is_empty() && pair.split('=').next() != Some(key))
        .collect::<Vec<_>>()
        .join("&")
}

/// `YYYY-MM-DDTHH:MM[:SS]` read as UTC, in unix milliseconds. `None` for anything else, a
/// year whose milliseconds do not fit an `i64` included (the form then says what a date looks
/// like, as for any other value it cannot read).
pub fn date_input_ms(value: &str) -> Option<i64> {
    let (date, clock) = value.trim().split_once('T')?;
    let mut d = date.split('-').map(|p| p.parse::<i64>().ok());
    let (year, month, day) = (d.next()??, d.next()??, d.next()??);
    let mut c = clock.split(':').map(|p| p.parse::<i64>().ok());
    let (hour, minute) = (c.next()??, c.next()??);
    let second = c.next().flatten().unwrap_or(0);
    if !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || !(0..=23).contains(&hour)
        || !(0..=59).contains(&minute)
        || !(0..=59).contains(&second)
    {
        return None;
    }
    let seconds = days_from_civil(year, month, day)?
        .checked_mul(86_400)?
        .checked_add(hour * 3600 + minute * 60 + second)?;
    seconds.checked_mul(1000)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm); `None`
/// past what an `i64` holds. Month and day are in range.
fn days_from_civil(year: i64, month: i64, day: i64) -> Option<i64> {
    let y = if month <= 2 { year.checked_sub(1)? } else { year };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era.checked_mul(146_097)?.checked_add(doe - 719_468)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn date_inputs_are_utc_milliseconds() {
        assert_eq!(date_input_ms("1970-01-01T00:00"), Some(0));
        assert_eq!(date_input_ms("2026-12-04T10:30"), Some(1_796_380_200_000));
        assert_eq!(date_input_ms("2024-02-29T23:59:59"), Some(1_709_251_199_000));
        for bad in ["", "2026-13-01T00:00", "2026-12-04", "2026-12-04T25:00", "x-y-zTa:b", "2026-12-04T-1:00"]
        {
            assert_eq!(date_input_ms(bad), None, "{bad}");
        }
    }

    #[test]
    fn years_past_what_milliseconds_hold_are_refused_like_any_bad_date() {
        // The latest time whose milliseconds fit an i64 is in the year 292,278,994.
        assert_eq!(date_input_ms("292278994-01-01T00:00"), Some(9_223_372_017_129_600_000));
        for huge in ["292278995-01-01T00:00", "292278994-12-31T23:59", "9223372036854775807-12-31T23:59:59"] {
            assert_eq!(date_input_ms(huge), None, "{huge}");
        }
        let error = filter_of("since=9223372036854775807-12-31T23:59").unwrap_err();
        assert!(
            matches!(error, PageFilterError::Time { parameter: "since", .. }),
            "the form's own message: {error}"
        );
    }

    #[test]
    fn the_page_query_is_the_filter_with_dates_read() {
        let filter =
            filter_of("user=bob&decision=denied&since=2026-12-04T10:30&until=1796380300000&live=1&after=9")
                .unwrap();
        assert_eq!(filter.user.as_deref(), Some("bob"));
        assert_eq!(filter.decision.as_deref(), Some("denied"));
        assert_eq!((filter.since_ms, filter.until_ms), (Some(1_796_380_200_000), Some(1_796_380_300_000)));
        assert_eq!(filter.after, None, "the URL does not position a tail");
        assert!(matches!(filter_of("status=teapot"), Err(PageFilterError::Filter(_))));
        assert_eq!(without("user=bob&live=1&verb=list", "live"), "user=bob&verb=list");
        assert_eq!(without("live=1", "live"), "");
    }

    #[test]
    fn a_time_that_is_no_date_and_an_empty_range_are_named_as_the_form_has_them() {
        assert_eq!(
            filter_of("since=notadate").unwrap_err().to_string(),
            "the audit filter since must be a date and time (YYYY-MM-DDTHH:MM, UTC), not \"notadate\""
        );
        assert_eq!(
            filter_of("since=2026-12-05T10:00&until=2026-12-04T10:00").unwrap_err().to_string(),
            "the time range is empty: since (2026-12-05T10:00) is not before until (2026-12-04T10:00)"
        );
        assert!(filter_of("since=2026-12-04T10:00&until=2026-12-04T10:00").is_err(), "until is exclusive");
        assert!(filter_of("since=2026-12-04T10:00&until=2026-12-04T10:01").is_ok());
        assert!(filter_of("since=&until=").is_ok());
    }
}
