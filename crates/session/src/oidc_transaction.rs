//! The cookies of OpenID Connect sign-ins in progress: one per sign-in, so that two tabs of a
//! browser signing in at once both finish (one cookie for all made the second start overwrite
//! the first's transaction, and the first tab's callback failed).
//!
//! Each holds authn's sealed transaction (state, nonce, PKCE verifier, return path) from the
//! start of its sign-in until its callback, ten minutes at most, under the name
//! `__Host-fundament_oidc_tx_<stamp>_<tag>`:
//!
//! - `tag`: the first 16 characters of base64url(SHA-256(state)). The callback finds its
//!   transaction by the `state` the provider returns, with no memory on the server, and the
//!   name gives no part of the state away.
//! - `stamp`: the start's unix time, or one more than the newest stamp the browser holds if
//!   that is later, so a browser's transactions are ordered, oldest first, without opening
//!   them, even for starts within one second or on replicas whose clocks differ.
//!
//! A start keeps at most [`OIDC_TRANSACTIONS_KEPT`] of them in a browser: another site can make
//! a browser start sign-ins (a start from its link steps once through a page of the console's
//! own and then sets a cookie), and without a bound the `Cookie` header would grow until the
//! console answers 431 to every request for the ten minutes the cookies live.
//!
//! Its value is the sealed transaction, then (when the sign-in is to return elsewhere than `/`)
//! `.` and the return path in base64url ([`oidc_transaction_value`]): a sign-in that fails
//! (consent denied, an error of the provider, a callback that cannot be finished) goes back to
//! the sign-in page with that path, which authn's sealed copy, unopened on failure, cannot
//! give. Not sealed, so read only as a hint: the console checks it as any `next`.
//!
//! `SameSite=Lax`, not Strict: the cookie must come back on the provider's top-level redirect
//! to the callback, a cross-site navigation. It is useless to anyone else: sealed by authn, and
//! bound to the `state` the provider returns.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};

use crate::SessionCookie;

/// Where every name of a sign-in's transaction cookie begins.
pub const OIDC_TRANSACTION_COOKIE_PREFIX: &str = "__Host-fundament_oidc_tx_";

/// The one transaction cookie of earlier consoles, for all sign-ins of a browser. Read by no
/// one now; a start clears it when the browser still holds it (a sign-in started before the
/// upgrade then fails at its callback as one without a transaction, and is started again).
pub const LEGACY_OIDC_TRANSACTION_COOKIE: &str = "__Host-fundament_oidc_tx";

/// At most this many sign-ins in progress per browser, counting the one starting.
pub const OIDC_TRANSACTIONS_KEPT: usize = 3;

/// A return path longer than this is not kept beside the transaction (its failure then goes
/// back to the sign-in page without it): the cookie must stay under a browser's 4,096 bytes.
pub const MAX_KEPT_RETURN_PATH: usize = 1_024;

/// The value of a sign-in's transaction cookie: authn's `sealed` transaction (base64url, so
/// without a `.`) and the return path `next`, unless that is `/` or too long.
pub fn oidc_transaction_value(sealed: &str, next: &str) -> String {
    if next == "/" || next.is_empty() || next.len() > MAX_KEPT_RETURN_PATH {
        return sealed.to_owned();
    }
    format!("{sealed}.{}", URL_SAFE_NO_PAD.encode(next))
}

/// A transaction cookie's value read back: the sealed transaction, and the return path if one
/// is there and readable (else `None`: a failure then returns to `/`).
fn transaction_and_return_path(value: &str) -> (&str, Option<String>) {
    match value.split_once('.') {
        None => (value, None),
        Some((sealed, next)) => {
            let next = URL_SAFE_NO_PAD.decode(next).ok().and_then(|b| String::from_utf8(b).ok());
            (sealed, next.filter(|n| n.len() <= MAX_KEPT_RETURN_PATH))
        }
    }
}

/// Characters of the tag: 96 bits of the state's hash, as unlikely as the state itself to meet
/// another sign-in's.
const TAG_LEN: usize = 16;

/// Digits of a stamp at most (a `u64`; unix time has 10 until the year 2286).
const STAMP_MAX_DIGITS: usize = 20;

/// The name of one sign-in's transaction cookie. Ordered oldest first: by stamp, then by tag
/// (two concurrent starts may share a stamp; either order will do for them).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct OidcTransactionName {
    stamp: u64,
    tag: String,
}

impl OidcTransactionName {
    /// The name for the sign-in whose state is `state`, started at `stamp`.
    pub fn new(state: &str, stamp: u64) -> OidcTransactionName {
        OidcTransactionName { stamp, tag: tag_of(state) }
    }

    /// A cookie name, if it is one of ours exactly as [`OidcTransactionName::new`] writes it:
    /// the prefix, a stamp in decimal without leading zeros, `_`, and a tag of 16 base64url
    /// characters. Anything else is no transaction and is never looked at again.
    pub fn parse(name: &[u8]) -> Option<OidcTransactionName> {
        let rest = name.strip_prefix(OIDC_TRANSACTION_COOKIE_PREFIX.as_bytes())?;
        let at = rest.iter().position(|&b| b == b'_')?;
        let (digits, tag) = (&rest[..at], &rest[at + 1..]);
        let canonical = !digits.is_empty()
            && digits.len() <= STAMP_MAX_DIGITS
            && digits.iter().all(u8::is_ascii_digit)
            && (digits == b"0" || digits[0] != b'0');
        if !canonical || tag.len() != TAG_LEN || !tag.iter().all(|&b| is_base64url(b)) {
            return None;
        }
        let stamp = std::str::from_utf8(digits).ok()?.parse().ok()?;
        let tag = std::str::from_utf8(tag).ok()?.to_owned();
        Some(OidcTransactionName { stamp, tag })
    }

    /// When its sign-in started (see the module's doc).
    pub fn stamp(&self) -> u64 {
        self.stamp
    }

    /// Whether this is the cookie of the sign-in whose state is `state`.
    pub fn is_for(&self, state: &str) -> bool {
        self.tag == tag_of(state)
    }

    /// `Set-Cookie` that stores `value` under this name for `max_age` seconds (`None` clears it).
    pub fn set_cookie(&self, value: Option<&str>, max_age: i64) -> String {
        match value {
            Some(value) => {
                format!("{self}={value}; Secure; HttpOnly; SameSite=Lax; Path=/; Max-Age={max_age}")
            }
            None => format!("{self}=; Secure; HttpOnly; SameSite=Lax; Path=/; Max-Age=0"),
        }
    }
}

impl std::fmt::Display for OidcTransactionName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{OIDC_TRANSACTION_COOKIE_PREFIX}{}_{}", self.stamp, self.tag)
    }
}

fn is_base64url(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-' || b == b'_'
}

fn tag_of(state: &str) -> String {
    let mut tag = URL_SAFE_NO_PAD.encode(Sha256::digest(state.as_bytes()));
    tag.truncate(TAG_LEN);
    tag
}

/// The transaction cookies among `Cookie` header values, each name once, oldest first.
pub fn oidc_transactions<'a, H: AsRef<[u8]> + ?Sized + 'a>(
    headers: impl IntoIterator<Item = &'a H>,
) -> Vec<OidcTransactionName> {
    transactions_named(crate::pairs(headers).map(|(name, _)| name))
}

fn transactions_named<'a>(names: impl Iterator<Item = &'a [u8]>) -> Vec<OidcTransactionName> {
    let mut names: Vec<_> = names.filter_map(OidcTransactionName::parse).collect();
    names.sort();
    names.dedup();
    names
}

/// The `Set-Cookie` values of a sign-in's start: its own transaction (`sealed`, for `max_age`
/// seconds, under a name for `state` stamped `now` or later), and clearing the oldest ones the
/// browser holds (`headers`: the start's `Cookie` header values) beyond
/// [`OIDC_TRANSACTIONS_KEPT`] with this one, and the cookie of earlier consoles.
pub fn oidc_start_cookies<'a, H: AsRef<[u8]> + ?Sized + 'a>(
    headers: impl IntoIterator<Item = &'a H>,
    state: &str,
    sealed: &str,
    max_age: i64,
    now: u64,
) -> Vec<String> {
    let names: Vec<&[u8]> = crate::pairs(headers).map(|(name, _)| name).collect();
    let held = transactions_named(names.iter().copied());
    let stamp = held.last().map_or(now, |newest| now.max(newest.stamp.saturating_add(1)));
    let dropped = held.len().saturating_sub(OIDC_TRANSACTIONS_KEPT - 1);
    let mut cookies: Vec<String> = held[..dropped].iter().map(|old| old.set_cookie(None, 0)).collect();
    if names.contains(&LEGACY_OIDC_TRANSACTION_COOKIE.as_bytes()) {
        cookies.push(format!(
            "{LEGACY_OIDC_TRANSACTION_COOKIE}=; Secure; HttpOnly; SameSite=Lax; Path=/; Max-Age=0"
        ));
    }
    cookies.push(OidcTransactionName::new(state, stamp).set_cookie(Some(sealed), max_age));
    cookies
}

/// The transaction of the sign-in whose callback carries `state`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallbackTransaction<'a> {
    /// Its cookie: one, none (no cookie of this state, or an empty one), or several (or one
    /// whose value is not text), refused as [`crate::single_cookie`] refuses them.
    pub cookie: SessionCookie<'a>,
    /// What the callback clears, whatever its outcome: every cookie of this state the request
    /// carries, unless it carries none with a value (then nothing). Never another sign-in's.
    pub clear: Vec<String>,
    /// Where the sign-in was to return, as its start kept it beside the transaction: for a
    /// failure's way back only (unchecked; the console checks it as any `next`).
    pub return_path: Option<String>,
}

/// The transaction cookie of the sign-in whose callback carries `state`, among `Cookie` header
/// values; other sign-ins' cookies change nothing.
pub fn oidc_callback_transaction<'a, H: AsRef<[u8]> + ?Sized + 'a>(
    headers: impl IntoIterator<Item = &'a H>,
    state: &str,
) -> CallbackTransaction<'a> {
    let tag = tag_of(state);
    let mut cookie = SessionCookie::Absent;
    let mut return_path = None;
    let mut names = Vec::new();
    for (name, value) in crate::pairs(headers) {
        let Some(name) = OidcTransactionName::parse(name).filter(|name| name.tag == tag) else { continue };
        cookie = match (cookie, std::str::from_utf8(value)) {
            (SessionCookie::Absent, Ok("")) => SessionCookie::Absent,
            (SessionCookie::Absent, Ok(value)) => {
                let (sealed, next) = transaction_and_return_path(value);
                return_path = next;
                SessionCookie::One(sealed)
            }
            _ => SessionCookie::Conflict,
        };
        names.push(name);
    }
    names.sort();
    names.dedup();
    let clear = match cookie {
        SessionCookie::Absent => Vec::new(),
        _ => names.iter().map(|name| name.set_cookie(None, 0)).collect(),
    };
    if !matches!(cookie, SessionCookie::One(_)) {
        return_path = None;
    }
    CallbackTransaction { cookie, clear, return_path }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A browser's cookies for the console: `Set-Cookie` values applied, as the `Cookie` header.
    #[derive(Default)]
    struct Jar(Vec<(String, String)>);

    impl Jar {
        fn apply(&mut self, set_cookies: &[String]) {
            for set in set_cookies {
                let (pair, attributes) = set.split_once(';').unwrap();
                let (name, value) = pair.split_once('=').unwrap();
                self.0.retain(|(held, _)| held != name);
                if !attributes.contains("Max-Age=0") {
                    self.0.push((name.to_owned(), value.to_owned()));
                }
            }
        }
        fn header(&self) -> String {
            self.0.iter().map(|(n, v)| format!("{n}={v}")).collect::<Vec<_>>().join("; ")
        }
        fn names(&self) -> Vec<&str> {
            self.0.iter().map(|(n, _)| n.as_str()).collect()
        }
    }

    #[test]
    fn a_transaction_cookie_is_named_for_its_state_and_start_and_keeps_the_old_attributes() {
        let state = "k3Jt0n0ZlQ5Ry3Xv2wC4mI9s8fH1aB6dE7gJ0pLqU2w";
        let name = OidcTransactionName::new(state, 1_700_000_000);
        let tag = &URL_SAFE_NO_PAD.encode(Sha256::digest(state))[..16];
        assert_eq!(name.to_string(), format!("__Host-fundament_oidc_tx_1700000000_{tag}"));
        assert_eq!(
            name.set_cookie(Some("sealed"), 600),
            format!(
                "__Host-fundament_oidc_tx_1700000000_{tag}=sealed; Secure; HttpOnly; SameSite=Lax; Path=/; Max-Age=600"
            )
        );
        assert_eq!(
            name.set_cookie(None, 0),
            format!(
                "__Host-fundament_oidc_tx_1700000000_{tag}=; Secure; HttpOnly; SameSite=Lax; Path=/; Max-Age=0"
            )
        );
        assert!(name.is_for(state));
        assert!(!name.is_for("another-state"));
        assert!(!name.to_string().contains(&state[..8]), "the name gives no part of the state away");
        assert_eq!(OidcTransactionName::parse(name.to_string().as_bytes()), Some(name));
    }

    #[test]
    fn only_names_written_as_ours_are_transactions() {
        let tag = "AbCdEfGh-_012345";
        assert!(
            OidcTransactionName::parse(format!("__Host-fundament_oidc_tx_17_{tag}").as_bytes()).is_some()
        );
        assert!(OidcTransactionName::parse(format!("__Host-fundament_oidc_tx_0_{tag}").as_bytes()).is_some());
        for name in [
            "__Host-fundament_oidc_tx".to_owned(),
            "__Host-fundament_oidc_tx_".to_owned(),
            format!("__Host-fundament_oidc_tx__{tag}"),
            format!("__Host-fundament_oidc_tx_017_{tag}"),
            format!("__Host-fundament_oidc_tx_+17_{tag}"),
            format!("__Host-fundament_oidc_tx_1a_{tag}"),
            format!("__Host-fundament_oidc_tx_{}_{tag}", "9".repeat(21)),
            format!("__Host-fundament_oidc_tx_99999999999999999999_{tag}"),
            format!("__Host-fundament_oidc_tx_17_{tag}x"),
            format!("__Host-fundament_oidc_tx_17_{}", &tag[1..]),
            "__Host-fundament_oidc_tx_17_AbCdEfGh.-012345".to_owned(),
            format!("fundament_oidc_tx_17_{tag}"),
            format!("\u{a0}__Host-fundament_oidc_tx_17_{tag}"),
        ] {
            assert_eq!(OidcTransactionName::parse(name.as_bytes()), None, "{name:?}");
        }
    }

    #[test]
    fn ten_starts_leave_three_transactions_the_newest_ones() {
        let mut jar = Jar::default();
        jar.0.push(("theme".into(), "dark".into()));
        let mut names = Vec::new();
        // Ten starts within one second: their stamps still order them.
        for n in 0..10 {
            let header = jar.header();
            let set = oidc_start_cookies(
                [header.as_str()],
                &format!("state-{n}"),
                &format!("sealed-{n}"),
                600,
                1_000,
            );
            let own = set.last().unwrap().split('=').next().unwrap().to_owned();
            jar.apply(&set);
            let held = oidc_transactions([jar.header().as_str()]);
            assert!(held.len() <= OIDC_TRANSACTIONS_KEPT, "{n}: {held:?}");
            assert_eq!(
                held.last().map(ToString::to_string),
                Some(own.clone()),
                "{n}: the newest is the start's own"
            );
            names.push(own);
        }
        let mut left = jar.names();
        left.sort();
        let mut newest = vec!["theme", &names[7], &names[8], &names[9]];
        newest.sort();
        assert_eq!(left, newest);
        for (n, name) in names.iter().enumerate() {
            assert_eq!(OidcTransactionName::parse(name.as_bytes()).unwrap().stamp(), 1_000 + n as u64);
        }
        // Stamps follow the clock when it is ahead of them.
        let set = oidc_start_cookies([jar.header().as_str()], "later", "s", 600, 5_000);
        assert!(set.last().unwrap().starts_with("__Host-fundament_oidc_tx_5000_"), "{set:?}");
        assert_eq!(set.len(), 2, "one dropped, one set: {set:?}");
    }

    #[test]
    fn a_start_clears_the_cookie_of_earlier_consoles() {
        let set = oidc_start_cookies(["__Host-fundament_oidc_tx=old; a=1"], "s", "sealed", 600, 7);
        assert_eq!(set.len(), 2, "{set:?}");
        assert_eq!(set[0], "__Host-fundament_oidc_tx=; Secure; HttpOnly; SameSite=Lax; Path=/; Max-Age=0");
        assert!(set[1].starts_with("__Host-fundament_oidc_tx_7_"));
        assert_eq!(oidc_start_cookies(["a=1"], "s", "sealed", 600, 7).len(), 1);
    }

    #[test]
    fn a_callback_finds_only_its_own_transaction_and_clears_only_that() {
        let mut jar = Jar::default();
        for n in 0..3 {
            jar.apply(&oidc_start_cookies(
                [jar.header().as_str()],
                &format!("state-{n}"),
                &format!("sealed-{n}"),
                600,
                50,
            ));
        }
        let header = jar.header();
        let found = oidc_callback_transaction([header.as_str()], "state-1");
        assert_eq!(found.cookie, SessionCookie::One("sealed-1"));
        let own = OidcTransactionName::new("state-1", 51);
        assert_eq!(found.clear, vec![own.set_cookie(None, 0)]);
        jar.apply(&found.clear);
        assert_eq!(oidc_transactions([jar.header().as_str()]).len(), 2, "the others stay");
        assert_eq!(
            oidc_callback_transaction([jar.header().as_str()], "state-0").cookie,
            SessionCookie::One("sealed-0")
        );

        // A state of no sign-in here (one used already, or forged): nothing found, nothing cleared.
        for state in ["state-1", "state-9", ""] {
            let header = jar.header();
            let found = oidc_callback_transaction([header.as_str()], state);
            assert_eq!(
                found,
                CallbackTransaction { cookie: SessionCookie::Absent, clear: vec![], return_path: None },
                "{state:?}"
            );
        }
    }

    #[test]
    fn a_callback_refuses_several_cookies_of_its_state_as_strictly_as_a_single_cookie() {
        let a = OidcTransactionName::new("s", 1);
        let b = OidcTransactionName::new("s", 2);
        let other = OidcTransactionName::new("t", 3);
        let clear =
            |names: &[&OidcTransactionName]| names.iter().map(|n| n.set_cookie(None, 0)).collect::<Vec<_>>();
        // The same name twice, in one header or in two.
        let twice = format!("{a}=x; {other}=y; {a}=z");
        let found = oidc_callback_transaction([twice.as_str()], "s");
        assert_eq!(
            found,
            CallbackTransaction { cookie: SessionCookie::Conflict, clear: clear(&[&a]), return_path: None }
        );
        let (one, two) = (format!("{a}=x"), format!("{a}=z"));
        assert_eq!(
            oidc_callback_transaction([one.as_str(), two.as_str()], "s").cookie,
            SessionCookie::Conflict
        );
        // Two names of the same state: both refused and both cleared.
        let both = format!("{b}=x; {a}=z");
        let found = oidc_callback_transaction([both.as_str()], "s");
        assert_eq!(
            found,
            CallbackTransaction {
                cookie: SessionCookie::Conflict,
                clear: clear(&[&a, &b]),
                return_path: None
            }
        );
        // A value that is not text: set by no service of ours.
        let odd = [format!("{a}=").into_bytes(), vec![0xff]].concat();
        assert_eq!(oidc_callback_transaction([odd.as_slice()], "s").cookie, SessionCookie::Conflict);
        // An empty one is none, as for single_cookie; one beside it is the transaction.
        let empty = format!("{a}=");
        assert_eq!(oidc_callback_transaction([empty.as_str()], "s").cookie, SessionCookie::Absent);
        let beside = format!("{a}=; {b}=x");
        assert_eq!(oidc_callback_transaction([beside.as_str()], "s").cookie, SessionCookie::One("x"));
        // A no-break space before the name makes another name, as for the session cookie.
        let planted = format!("\u{a0}{a}=mallory; {a}=x");
        assert_eq!(oidc_callback_transaction([planted.as_str()], "s").cookie, SessionCookie::One("x"));
    }

    #[test]
    fn the_return_path_rides_beside_the_transaction_for_a_failure_only() {
        assert_eq!(oidc_transaction_value("sealed", "/"), "sealed");
        let value = oidc_transaction_value("sealed", "/clusters/prod?tab=nodes");
        assert!(
            value.starts_with("sealed.") && value.bytes().all(|b| is_base64url(b) || b == b'.'),
            "{value}"
        );
        let mut jar = Jar::default();
        jar.apply(&oidc_start_cookies(std::iter::empty::<&str>(), "s", &value, 600, 7));
        let header = jar.header();
        let found = oidc_callback_transaction([header.as_str()], "s");
        assert_eq!(found.cookie, SessionCookie::One("sealed"));
        assert_eq!(found.return_path.as_deref(), Some("/clusters/prod?tab=nodes"));
        // A start of an earlier console (no path), an unreadable one, one too long: none.
        for (value, path) in [("sealed", None), ("sealed.%%%", None), ("sealed.//8", None)] {
            let cookie = format!("{}={value}", OidcTransactionName::new("s", 7));
            let found = oidc_callback_transaction([cookie.as_str()], "s");
            assert_eq!((found.cookie, found.return_path), (SessionCookie::One("sealed"), path), "{value}");
        }
        let long = format!("/{}", "a".repeat(MAX_KEPT_RETURN_PATH));
        assert_eq!(oidc_transaction_value("sealed", &long), "sealed");
        // The largest kept path still leaves the cookie within a browser's bound.
        let largest = format!("/{}", "a".repeat(MAX_KEPT_RETURN_PATH - 1));
        let set = OidcTransactionName::new("s", 7)
            .set_cookie(Some(&oidc_transaction_value(&"s".repeat(2_000), &largest)), 600);
        assert!(crate::fits_a_browser(&set), "{}", set.len());
    }
}
