//! The query string of a Kubernetes request, read as kube-apiserver reads it.
//!
//! Go's `url.ParseQuery` splits on `&`, drops a pair that contains `;` or a
//! malformed escape, and percent-decodes keys and values (`+` is a space), so
//! `?wat%63h=1` asks for `watch`. The API server's parameter codec then takes
//! the *first* value of a repeated single-valued parameter (`?watch=0&watch=1`
//! is not a watch), and reads a boolean as false only for `0` and `false`
//! (any case); every other value, the empty one included, is true.
//!
//! A reader that judged a request must forward exactly what it judged:
//! [`Query::canonical`] re-encodes the pairs it read, one value per
//! single-valued key, so the server behind it cannot read anything else.

/// Parameters the API server reads as lists: every value counts.
const MULTI_VALUED: &[&str] = &["dryRun"];

/// The decoded (key, value) pairs of a query, in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Query {
    pairs: Vec<(String, String)>,
}

impl Query {
    /// Reads a raw query string (without the `?`). Never fails: pairs Go would
    /// refuse are left out, as `URL.Query()` leaves them out.
    pub fn parse(raw: &str) -> Query {
        let pairs = raw
            .split('&')
            .filter(|pair| !pair.is_empty() && !pair.contains(';'))
            .filter_map(|pair| {
                let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
                Some((unescape(key)?, unescape(value)?))
            })
            .collect();
        Query { pairs }
    }

    /// Every pair as read.
    pub fn pairs(&self) -> &[(String, String)] {
        &self.pairs
    }

    /// The first value of `key`: the one the API server uses.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.pairs.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    /// Every value of `key`, in order.
    pub fn all<'a>(&'a self, key: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.pairs.iter().filter(move |(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    /// A boolean parameter by the API server's rule: absent, `0` or `false`
    /// (any case) is false; anything else, `?watch` and `?watch=` included, is true.
    pub fn flag(&self, key: &str) -> bool {
        self.get(key).is_some_and(|v| v != "0" && !v.eq_ignore_ascii_case("false"))
    }

    /// Whether the query has no pairs.
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    /// Sets `key` to a single `value` (replacing every value it had), keeping its place.
    pub fn set(&mut self, key: &str, value: &str) {
        match self.pairs.iter().position(|(k, _)| k == key) {
            Some(i) => {
                self.pairs[i].1 = value.to_string();
                let mut seen = false;
                self.pairs.retain(|(k, _)| {
                    if k != key {
                        return true;
                    }
                    let first = !seen;
                    seen = true;
                    first
                });
            }
            None => self.pairs.push((key.to_string(), value.to_string())),
        }
    }

    /// The query as it will be forwarded: what was read, percent-encoded, with
    /// only the first value of each single-valued key (every value of list
    /// parameters such as `dryRun`). `keep_all` keeps every value of every key:
    /// for a proxied backend, whose parameters are not the API server's.
    pub fn canonical(&self, keep_all: bool) -> String {
        let mut seen: Vec<&str> = Vec::new();
        let mut out = String::new();
        for (key, value) in &self.pairs {
            let repeat = seen.contains(&key.as_str());
            if repeat && !keep_all && !MULTI_VALUED.contains(&key.as_str()) {
                continue;
            }
            if !repeat {
                seen.push(key);
            }
            if !out.is_empty() {
                out.push('&');
            }
            escape_into(key, &mut out);
            out.push('=');
            escape_into(value, &mut out);
        }
        out
    }
}

/// Go's `QueryUnescape`: `+` is a space, `%XX` a byte; a bad escape (or, here,
/// bytes that are not UTF-8) makes the pair unreadable.
fn unescape(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b'%' => {
                let hex = bytes.get(i + 1..i + 3)?;
                let hex = std::str::from_utf8(hex).ok()?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 3;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

/// Percent-encodes all but the unreserved characters of RFC 3986.
pub(crate) fn escape_into(s: &str, out: &mut String) {
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_decoded_and_the_first_value_counts() {
        let q = Query::parse("wat%63h=1");
        assert!(q.flag("watch"));
        let q = Query::parse("watch=0&watch=1");
        assert!(!q.flag("watch"));
        assert_eq!(q.all("watch").collect::<Vec<_>>(), ["0", "1"]);
        assert_eq!(q.canonical(false), "watch=0");
        assert_eq!(q.canonical(true), "watch=0&watch=1");
    }

    #[test]
    fn booleans_follow_the_api_server() {
        for yes in ["watch", "watch=", "watch=1", "watch=true", "watch=yes", "watch=TRUE"] {
            assert!(Query::parse(yes).flag("watch"), "{yes}");
        }
        for no in ["", "watch=0", "watch=false", "watch=False", "other=1"] {
            assert!(!Query::parse(no).flag("watch"), "{no}");
        }
    }

    #[test]
    fn pairs_go_would_drop_are_dropped() {
        let q = Query::parse("a=1;watch=1&b=%zz&c=%ff&d=x+y%20z");
        assert_eq!(q.get("a"), None);
        assert!(!q.flag("watch"));
        assert_eq!(q.get("b"), None);
        assert_eq!(q.get("c"), None, "not UTF-8");
        assert_eq!(q.get("d"), Some("x y z"));
        assert_eq!(q.canonical(false), "d=x%20y%20z");
    }

    #[test]
    fn list_parameters_keep_every_value() {
        let q = Query::parse("dryRun=All&dryRun=All&fieldManager=a&fieldManager=b");
        assert_eq!(q.canonical(false), "dryRun=All&dryRun=All&fieldManager=a");
    }

    #[test]
    fn set_replaces_every_value_in_place() {
        let mut q = Query::parse("a=1&timeoutSeconds=9999&b=2&timeoutSeconds=1");
        q.set("timeoutSeconds", "1800");
        assert_eq!(q.canonical(true), "a=1&timeoutSeconds=1800&b=2");
        q.set("c", "3");
        assert_eq!(q.get("c"), Some("3"));
    }

    proptest::proptest! {
        #![proptest_config(fundament_fuzzing::config(512))]

        #[test]
        fn canonical_reads_back_as_the_same_judgement(
            raw in proptest::prop_oneof!["[a-z%0-9=&;+]{0,40}", proptest::prelude::any::<String>()],
        ) {
            let q = Query::parse(&raw);
            let again = Query::parse(&q.canonical(false));
            for (key, _) in q.pairs() {
                proptest::prop_assert_eq!(q.get(key), again.get(key));
                proptest::prop_assert_eq!(q.flag(key), again.flag(key));
            }
            proptest::prop_assert_eq!(Query::parse(&again.canonical(false)), again);
        }
    }
}
