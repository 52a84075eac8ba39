//! Wall-clock time in unix seconds, the unit of JWT claims.

pub(crate) fn now() -> i64 {
    time::OffsetDateTime::now_utc().unix_timestamp()
}
