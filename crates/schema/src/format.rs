//! String `format`s kube-apiserver checks (kube-openapi's `strfmt.Default` registry).
//!
//! Formats the registry doesn't know (int32, int64, float, double, …) are not checked,
//! as in Kubernetes. Of the known ones, those whose Go check is too involved to copy
//! faithfully (email, uri, isbn, creditcard, ssn) are accepted as they are: accepting
//! more than the apiserver is the safe side for a development cluster.

use regex::Regex;
use std::net::{IpAddr, Ipv6Addr};
use std::sync::LazyLock;

/// Whether `format` is in kube-openapi's registry (names normalized as strfmt does:
/// case and dashes/underscores ignored).
pub(crate) fn is_known(format: &str) -> bool {
    matches!(
        normalize(format).as_str(),
        "bsonobjectid"
            | "uri"
            | "email"
            | "hostname"
            | "ipv4"
            | "ipv6"
            | "cidr"
            | "mac"
            | "uuid"
            | "uuid3"
            | "uuid4"
            | "uuid5"
            | "isbn"
            | "isbn10"
            | "isbn13"
            | "creditcard"
            | "ssn"
            | "hexcolor"
            | "rgbcolor"
            | "byte"
            | "password"
            | "date"
            | "duration"
            | "datetime"
    )
}

fn normalize(format: &str) -> String {
    format.chars().filter(|c| c.is_ascii_alphanumeric()).map(|c| c.to_ascii_lowercase()).collect()
}

macro_rules! re {
    ($name:ident, $src:expr) => {
        static $name: LazyLock<Regex> = LazyLock::new(|| Regex::new($src).expect("static regex"));
    };
}

re!(DATE_TIME_TIME, r"^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$");
re!(FULL_DATE, r"^([0-9]{4})-([0-9]{2})-([0-9]{2})$");
re!(UUID, r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$");
re!(UUID3, r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$");
re!(UUID4, r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$");
re!(UUID5, r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$");
re!(HEX_COLOR, r"^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$");
re!(
    RGB_COLOR,
    r"^rgb\(\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*\)$"
);
re!(
    HOSTNAME,
    r"^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$"
);
re!(GO_DURATION, r"^[-+]?(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+$");
re!(DURATION_PART, r"([0-9]+)\s*([A-Za-zµ]+)");

/// Whether `value` is valid for the (known) `format`.
pub(crate) fn validates(format: &str, value: &str) -> bool {
    match normalize(format).as_str() {
        "datetime" => is_date_time(value),
        "date" => is_date(value),
        "byte" => is_base64(value),
        "uuid" => UUID.is_match(value),
        "uuid3" => UUID3.is_match(value),
        "uuid4" => UUID4.is_match(value),
        "uuid5" => UUID5.is_match(value),
        "ipv4" => parse_ip(value).is_some() && value.contains('.'),
        "ipv6" => parse_ip(value).is_some() && value.contains(':'),
        "cidr" => is_cidr(value),
        "mac" => is_mac(value),
        "hexcolor" => HEX_COLOR.is_match(value),
        "rgbcolor" => RGB_COLOR.is_match(value),
        "bsonobjectid" => value.len() == 24 && value.bytes().all(|b| b.is_ascii_hexdigit()),
        "hostname" => is_hostname(value),
        "duration" => is_duration(value),
        _ => true,
    }
}

/// strfmt `IsDate`: Go's `time.Parse("2006-01-02", s)`.
pub(crate) fn is_date(s: &str) -> bool {
    let Some(c) = FULL_DATE.captures(s) else { return false };
    let (Ok(year), Ok(month), Ok(day)) = (c[1].parse::<i32>(), c[2].parse::<u8>(), c[3].parse::<u8>()) else {
        return false;
    };
    let Ok(month) = time::Month::try_from(month) else { return false };
    time::Date::from_calendar_date(year, month, day).is_ok()
}

/// strfmt `IsDateTime`: a date, `t`, and a time with a zone, case-insensitively.
pub(crate) fn is_date_time(s: &str) -> bool {
    if s.len() < 4 {
        return false;
    }
    let lower = s.to_lowercase();
    let parts: Vec<&str> = lower.split('t').collect();
    if parts.len() < 2 || !is_date(parts[0]) {
        return false;
    }
    let Some(m) = DATE_TIME_TIME.captures(parts[1]) else { return false };
    &m[1] <= "23" && &m[2] <= "59" && &m[3] <= "59"
}

/// Go's `base64.StdEncoding.DecodeString` succeeding: padded standard alphabet,
/// newlines ignored.
pub(crate) fn is_base64(s: &str) -> bool {
    decode_base64(s).is_some()
}

/// Decodes standard padded base64 as Go's `StdEncoding` does (ignoring `\r` and `\n`).
pub(crate) fn decode_base64(s: &str) -> Option<Vec<u8>> {
    let bytes: Vec<u8> = s.bytes().filter(|b| *b != b'\n' && *b != b'\r').collect();
    if !bytes.len().is_multiple_of(4) {
        return None;
    }
    let mut out = Vec::with_capacity(bytes.len() / 4 * 3);
    for (n, chunk) in bytes.chunks(4).enumerate() {
        let last = n == bytes.len() / 4 - 1;
        let pad = chunk.iter().rev().take_while(|b| **b == b'=').count();
        if pad > 2 || (pad > 0 && !last) {
            return None;
        }
        let mut acc: u32 = 0;
        for &b in &chunk[..4 - pad] {
            let v = match b {
                b'A'..=b'Z' => b - b'A',
                b'a'..=b'z' => b - b'a' + 26,
                b'0'..=b'9' => b - b'0' + 52,
                b'+' => 62,
                b'/' => 63,
                _ => return None,
            };
            acc = (acc << 6) | u32::from(v);
        }
        acc <<= 6 * pad as u32;
        let decoded = [(acc >> 16) as u8, (acc >> 8) as u8, acc as u8];
        out.extend_from_slice(&decoded[..3 - pad]);
    }
    Some(out)
}

fn parse_ip(s: &str) -> Option<IpAddr> {
    if s.contains('%') {
        return None;
    }
    s.parse::<IpAddr>().ok().or_else(|| s.parse::<Ipv6Addr>().ok().map(IpAddr::V6))
}

fn is_cidr(s: &str) -> bool {
    let Some((ip, bits)) = s.split_once('/') else { return false };
    let Some(addr) = parse_ip(ip) else { return false };
    if bits.is_empty() || bits.len() > 3 || !bits.bytes().all(|b| b.is_ascii_digit()) {
        return false;
    }
    let Ok(bits) = bits.parse::<u32>() else { return false };
    let max = if addr.is_ipv4() && !ip.contains(':') { 32 } else { 128 };
    bits <= max
}

/// Go's `net.ParseMAC`: 6, 8 or 20 bytes, `:`/`-` separated pairs or `.` separated
/// quads.
fn is_mac(s: &str) -> bool {
    let valid_len = |n: usize| matches!(n, 6 | 8 | 20);
    let hex = |p: &str, n: usize| p.len() == n && p.bytes().all(|b| b.is_ascii_hexdigit());
    for sep in [':', '-'] {
        if s.contains(sep) {
            let parts: Vec<&str> = s.split(sep).collect();
            return valid_len(parts.len()) && parts.iter().all(|p| hex(p, 2));
        }
    }
    if s.contains('.') {
        let parts: Vec<&str> = s.split('.').collect();
        return valid_len(parts.len() * 2) && parts.iter().all(|p| hex(p, 4));
    }
    false
}

fn is_hostname(s: &str) -> bool {
    HOSTNAME.is_match(s) && s.len() <= 255 && s.split('.').all(|p| p.len() <= 63)
}

/// strfmt `ParseDuration`: Go's `time.ParseDuration`, else `<n> <unit>` parts with
/// units up to weeks.
fn is_duration(s: &str) -> bool {
    if s == "0" || GO_DURATION.is_match(s) {
        return true;
    }
    const UNITS: &[&[&str]] = &[
        &["ns", "nanosecond"],
        &["us", "µs", "microsecond"],
        &["ms", "millisecond"],
        &["s", "sec", "second"],
        &["m", "min", "minute"],
        &["h", "hr", "hour"],
        &["d", "day"],
        &["w", "wk", "week"],
    ];
    DURATION_PART.captures_iter(s).any(|c| {
        let unit = c[2].trim().to_lowercase();
        c[1].parse::<i64>().is_ok()
            && UNITS.iter().any(|variants| {
                let last = variants.len() - 1;
                variants.iter().enumerate().any(|(i, v)| (i == last && unit.starts_with(v)) || unit == *v)
            })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64() {
        assert_eq!(decode_base64("aGVsbG8=").unwrap(), b"hello");
        assert_eq!(decode_base64("").unwrap(), b"");
        assert!(decode_base64("aGVsbG8").is_none());
        assert!(decode_base64("a=GV").is_none());
        assert!(decode_base64("****").is_none());
    }

    /// What each format accepts and refuses.
    #[test]
    fn formats() {
        let cases = [
            ("date-time", "2024-01-02T03:04:05Z", true),
            ("date-time", "2024-01-02t03:04:05.123+01:00", true),
            ("date-time", "2024-01-02T03:04:05", false),
            ("date-time", "2024-02-30T03:04:05Z", false),
            ("date-time", "2024-01-02T24:04:05Z", false),
            ("date-time", "yesterday", false),
            ("date", "2024-02-29", true),
            ("date", "2023-02-29", false),
            ("ipv4", "10.0.0.1", true),
            ("ipv4", "::1", false),
            ("ipv6", "::1", true),
            ("cidr", "10.0.0.0/8", true),
            ("cidr", "10.0.0.0/33", false),
            ("mac", "00:11:22:33:44:55", true),
            ("uuid", "123e4567-e89b-12d3-a456-426614174000", true),
            ("uuid", "nope", false),
            ("hostname", "example.com", true),
            ("hostname", "-bad-.com", false),
            ("duration", "1h30m", true),
            ("duration", "3 days", true),
            ("duration", "soon", false),
        ];
        for (format, value, valid) in cases {
            assert_eq!(validates(format, value), valid, "{format}: {value}");
        }
        assert!(is_known("date-time") && is_known("Date_Time") && !is_known("int32"));
    }
}
