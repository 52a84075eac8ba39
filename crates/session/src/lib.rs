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
#![forbid(unsafe_code)]

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

/// The OpenID Connect sign-in in progress: authn's sealed transaction (state, nonce, PKCE
/// verifier, return path), from the start of a sign-in until its callback, ten minutes at most.
/// `SameSite=Lax`, not Strict: it must come back on the provider's top-level redirect to the
/// callback, which is a cross-site navigation. It is useless to anyone else: sealed by authn,
/// and bound to the `state` the provider returns.
pub const OIDC_TRANSACTION_COOKIE: &str = "__Host-fundament_oidc_tx";

/// The provider's ID token of this session, kept only as the `id_token_hint` that ends the
/// provider's session at sign-out. HttpOnly and Strict like the session cookie.
pub const OIDC_ID_TOKEN_COOKIE: &str = "__Host-fundament_oidc_id";

/// `Set-Cookie` for the sign-in transaction (`None` clears it).
pub fn oidc_transaction_cookie(value: Option<&str>, max_age: i64) -> String {
    match value {
        Some(value) => format!(
            "{OIDC_TRANSACTION_COOKIE}={value}; Secure; HttpOnly; SameSite=Lax; Path=/; Max-Age={max_age}"
        ),
        None => format!("{OIDC_TRANSACTION_COOKIE}=; Secure; HttpOnly; SameSite=Lax; Path=/; Max-Age=0"),
    }
}

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

/// Finds a cookie's value in `Cookie` header values (the first of that name).
pub fn cookie_value<'a>(headers: impl IntoIterator<Item = &'a str>, name: &str) -> Option<&'a str> {
    headers
        .into_iter()
        .flat_map(|h| h.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}

/// A credential cookie a request carries (the session here, a plugin frame's at plugin-proxy):
/// one, none, or several, which is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionCookie<'a> {
    /// None (or an empty one).
    Absent,
    /// Exactly one.
    One(&'a str),
    /// More than one: planted or shadowed. Refused, never resolved to one of them.
    Conflict,
}

/// The session cookie among `Cookie` header values.
pub fn session_cookie<'a>(headers: impl IntoIterator<Item = &'a str>) -> SessionCookie<'a> {
    single_cookie(headers, COOKIE_NAME)
}

/// The cookie `wanted` among `Cookie` header values, which must appear at most once.
pub fn single_cookie<'a>(headers: impl IntoIterator<Item = &'a str>, wanted: &str) -> SessionCookie<'a> {
    let mut found = SessionCookie::Absent;
    for (name, value) in
        headers.into_iter().flat_map(|h| h.split(';')).filter_map(|p| p.trim().split_once('='))
    {
        if name != wanted {
            continue;
        }
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
    fn oidc_cookies_are_host_only_http_only_and_the_transaction_comes_back_from_the_provider() {
        let tx = oidc_transaction_cookie(Some("sealed"), 600);
        assert_eq!(
            tx,
            "__Host-fundament_oidc_tx=sealed; Secure; HttpOnly; SameSite=Lax; Path=/; Max-Age=600"
        );
        assert!(oidc_transaction_cookie(None, 0).ends_with("Max-Age=0"));
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
}
