//! The console's sign-in cookie, `__Host-fundament_auth`: its name, its
//! `Set-Cookie` value and how it is read back. Its value is a UserToken that
//! authn issues (an Ed25519-signed JWT).
//!
//! The `__Host-` prefix makes the browser refuse the cookie unless it is
//! `Secure`, has `Path=/` and no `Domain`: a page on any other host (a plugin
//! origin, a sibling subdomain) can neither set it nor shadow it with a more
//! specific path. Chromium treats `http://localhost` as secure, so this holds
//! in development too. Only the console reads it: kube-api-proxy, authn and
//! plugin-proxy take bearer tokens only.
//!
//! The cookies of OpenID Connect sign-ins are here too: one per sign-in in progress
//! ([`oidc_transaction`]) and the provider's ID token for sign-out.
#![forbid(unsafe_code)]

pub mod oidc_transaction;
pub use oidc_transaction::{
    CallbackTransaction, OidcTransactionName, oidc_callback_transaction, oidc_start_cookies,
    oidc_transaction_value, oidc_transactions,
};

/// Name of the session cookie.
pub const COOKIE_NAME: &str = "__Host-fundament_auth";

/// The `Set-Cookie` value that stores `token` for `max_age` seconds (or clears
/// the cookie when `None`). HttpOnly, so no script reads it; SameSite=Strict,
/// so no other site's page makes the browser send it.
pub fn cookie_header(token: Option<&str>, max_age: i64) -> String {
    match token {
        Some(token) => {
            format!("{COOKIE_NAME}={token}; Secure; HttpOnly; SameSite=Strict; Path=/; Max-Age={max_age}")
        }
        None => format!("{COOKIE_NAME}=; Secure; HttpOnly; SameSite=Strict; Path=/; Max-Age=0"),
    }
}

/// The provider's ID token of this session, kept only as the `id_token_hint` that ends the
/// provider's session at sign-out. HttpOnly and Strict like the session cookie.
pub const OIDC_ID_TOKEN_COOKIE: &str = "__Host-fundament_oidc_id";

/// `Set-Cookie` for the ID token hint (`None` clears it).
pub fn oidc_id_token_cookie(value: Option<&str>, max_age: i64) -> String {
    match value {
        Some(value) => format!(
            "{OIDC_ID_TOKEN_COOKIE}={value}; Secure; HttpOnly; SameSite=Strict; Path=/; Max-Age={max_age}"
        ),
        None => format!("{OIDC_ID_TOKEN_COOKIE}=; Secure; HttpOnly; SameSite=Strict; Path=/; Max-Age=0"),
    }
}

/// Whether a browser keeps this `Set-Cookie` value: RFC 6265bis lets browsers drop a cookie
/// whose name and value together exceed 4,096 bytes, and they do, silently.
pub fn fits_a_browser(set_cookie: &str) -> bool {
    set_cookie.split(';').next().is_some_and(|name_and_value| name_and_value.len() <= 4_096)
}

/// The `name=value` pairs of `Cookie` header values, read as bytes.
///
/// A browser sends whatever bytes a page put in a cookie: Chromium keeps UTF-8 in names and
/// values. Where the plugin origins share the console's parent domain, a plugin page may set
/// such a cookie for that domain, and it then rides along with every request to the console and
/// to every other plugin origin. So the header is never read as text as a whole (one byte past
/// ASCII would make the whole header unreadable, and the request carry no session: the user
/// signed out for as long as the planted cookie lives); each pair stands on its own. Only the
/// blanks of the header's syntax (space and tab) are trimmed, never Unicode white space: a
/// no-break space before a name is part of it (the browser's `__Host-` check does not take
/// `\u{a0}__Host-…` for a prefixed name, so no reader here may either).
fn pairs<'a, H: AsRef<[u8]> + ?Sized + 'a>(
    headers: impl IntoIterator<Item = &'a H>,
) -> impl Iterator<Item = (&'a [u8], &'a [u8])> {
    headers.into_iter().flat_map(|h| h.as_ref().split(|&b| b == b';')).filter_map(|pair| {
        let pair = blanks_trimmed(pair);
        let at = pair.iter().position(|&b| b == b'=')?;
        Some((&pair[..at], &pair[at + 1..]))
    })
}

/// `bytes` without the space and tab around them (`trim_ascii` would also take form and line
/// feeds, which are no blanks of a `Cookie` header).
fn blanks_trimmed(bytes: &[u8]) -> &[u8] {
    let blank = |b: &u8| *b == b' ' || *b == b'\t';
    let start = bytes.iter().position(|b| !blank(b)).unwrap_or(bytes.len());
    let end = bytes.iter().rposition(|b| !blank(b)).map_or(start, |i| i + 1);
    &bytes[start..end]
}

/// Finds a cookie's value in `Cookie` header values (the first of that name whose value is
/// text; header values as bytes, see [`pairs`]).
pub fn cookie_value<'a, H: AsRef<[u8]> + ?Sized + 'a>(
    headers: impl IntoIterator<Item = &'a H>,
    name: &str,
) -> Option<&'a str> {
    pairs(headers).filter(|(k, _)| *k == name.as_bytes()).find_map(|(_, v)| std::str::from_utf8(v).ok())
}

/// A credential cookie a request carries (the session here, a plugin frame's at plugin-proxy):
/// one, none, or several, which is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionCookie<'a> {
    /// None (or an empty one).
    Absent,
    /// Exactly one.
    One(&'a str),
    /// More than one: planted or shadowed; or one whose value is not text, which no service
    /// of ours set. Refused, never resolved to one of them.
    Conflict,
}

/// The session cookie among `Cookie` header values.
pub fn session_cookie<'a, H: AsRef<[u8]> + ?Sized + 'a>(
    headers: impl IntoIterator<Item = &'a H>,
) -> SessionCookie<'a> {
    single_cookie(headers, COOKIE_NAME)
}

/// The cookie `wanted` among `Cookie` header values, which must appear at most once. Other
/// cookies, whatever bytes they hold, change nothing.
pub fn single_cookie<'a, H: AsRef<[u8]> + ?Sized + 'a>(
    headers: impl IntoIterator<Item = &'a H>,
    wanted: &str,
) -> SessionCookie<'a> {
    let mut found = SessionCookie::Absent;
    for (name, value) in pairs(headers) {
        if name != wanted.as_bytes() {
            continue;
        }
        let Ok(value) = std::str::from_utf8(value) else { return SessionCookie::Conflict };
        found = match found {
            SessionCookie::Absent if value.is_empty() => SessionCookie::Absent,
            SessionCookie::Absent => SessionCookie::One(value),
            _ => return SessionCookie::Conflict,
        };
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_id_token_cookie_is_host_only_http_only_and_strict() {
        let id = oidc_id_token_cookie(Some("eyJ"), 100);
        assert_eq!(
            id,
            "__Host-fundament_oidc_id=eyJ; Secure; HttpOnly; SameSite=Strict; Path=/; Max-Age=100"
        );
        assert!(oidc_id_token_cookie(None, 0).starts_with("__Host-fundament_oidc_id=;"));
        let name = OIDC_ID_TOKEN_COOKIE.len() + 1;
        assert!(fits_a_browser(&oidc_id_token_cookie(Some(&"a".repeat(4_096 - name)), 100)));
        assert!(!fits_a_browser(&oidc_id_token_cookie(Some(&"a".repeat(4_097 - name)), 100)));
    }

    #[test]
    fn cookie_attributes() {
        let set = cookie_header(Some("t"), 28800);
        assert_eq!(set, "__Host-fundament_auth=t; Secure; HttpOnly; SameSite=Strict; Path=/; Max-Age=28800");
        assert!(cookie_header(None, 0).contains("Max-Age=0"));
        assert!(!set.contains("Domain"));
    }

    #[test]
    fn finds_cookie_among_others() {
        let headers = ["a=1; __Host-fundament_auth=xyz", "b=2"];
        assert_eq!(cookie_value(headers, COOKIE_NAME), Some("xyz"));
        assert_eq!(cookie_value(["__Host-fundament_auth_x=1"], COOKIE_NAME), None);
    }

    #[test]
    fn one_session_cookie_or_a_conflict() {
        assert_eq!(session_cookie(["a=1; __Host-fundament_auth=x"]), SessionCookie::One("x"));
        assert_eq!(session_cookie(["a=1"]), SessionCookie::Absent);
        assert_eq!(session_cookie(["__Host-fundament_auth="]), SessionCookie::Absent);
        // The unprefixed name that older consoles (and a planted cookie) use is no session.
        assert_eq!(session_cookie(["fundament_auth=x"]), SessionCookie::Absent);
        // Two of them (a cookie planted under a more specific path sorts first): refused.
        assert_eq!(
            session_cookie(["__Host-fundament_auth=mallory; __Host-fundament_auth=alice"]),
            SessionCookie::Conflict
        );
        assert_eq!(
            session_cookie(["__Host-fundament_auth=a", "__Host-fundament_auth=b"]),
            SessionCookie::Conflict
        );
    }

    #[test]
    fn a_planted_cookie_of_any_bytes_leaves_the_session_readable_and_is_never_it() {
        // What Chromium sends for cookies a sibling page set for the parent domain: UTF-8 bytes
        // in values and names. Read as text as a whole, the header was unreadable: no session.
        let header: &[u8] = b"tossed=\xc3\xbc; \xc2\xa0n=1; __Host-fundament_auth=alice; raw=\xff\xfe";
        assert_eq!(session_cookie([header]), SessionCookie::One("alice"));
        assert_eq!(cookie_value([header], COOKIE_NAME), Some("alice"));
        assert_eq!(cookie_value([header], "tossed"), Some("\u{fc}"));
        // A no-break space (or any Unicode white space) before the name is part of the name:
        // the browser let a sibling set it because it is not the `__Host-` name.
        for planted in [
            "\u{a0}__Host-fundament_auth=bob",
            "\u{2003}__Host-fundament_auth=bob",
            "__Host-fundament_auth\u{a0}=bob",
        ] {
            assert_eq!(session_cookie([planted]), SessionCookie::Absent, "{planted:?}");
            assert_eq!(cookie_value([planted], COOKIE_NAME), None, "{planted:?}");
            let beside = format!("{planted}; __Host-fundament_auth=alice");
            assert_eq!(session_cookie([beside.as_str()]), SessionCookie::One("alice"), "{planted:?}");
        }
        // The header's own blanks are still no part of a name.
        assert_eq!(session_cookie(["a=1;\t __Host-fundament_auth=alice \t"]), SessionCookie::One("alice"));
        // A session cookie whose value is not text was set by no service of ours: refused.
        let odd: &[u8] = b"__Host-fundament_auth=\xff";
        assert_eq!(session_cookie([odd]), SessionCookie::Conflict);
    }
}
