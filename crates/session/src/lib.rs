//! The console's sign-in cookie, `fundament_auth`: its name, its `Set-Cookie`
//! value and how it is read back. Its value is a UserToken that authn issues
//! (an Ed25519-signed JWT), so the console, authn and kube-api-proxy all read
//! the same session. HttpOnly, SameSite=Strict, Path=/.
#![forbid(unsafe_code)]

/// Name of the session cookie (shared with authn and the gateway).
pub const COOKIE_NAME: &str = "fundament_auth";

/// The `Set-Cookie` value that stores `token` for `max_age` seconds (or clears
/// the cookie when `None`).
pub fn cookie_header(token: Option<&str>, max_age: i64, secure: bool) -> String {
    let secure = if secure { "; Secure" } else { "" };
    match token {
        Some(token) => {
            format!("{COOKIE_NAME}={token}; HttpOnly; SameSite=Strict; Path=/; Max-Age={max_age}{secure}")
        }
        None => format!("{COOKIE_NAME}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0{secure}"),
    }
}

/// Finds a cookie's value in `Cookie` header values.
pub fn cookie_value<'a>(headers: impl IntoIterator<Item = &'a str>, name: &str) -> Option<&'a str> {
    headers
        .into_iter()
        .flat_map(|h| h.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}

/// The session token among `Cookie` header values (an empty value is no session).
pub fn session_token<'a>(headers: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    cookie_value(headers, COOKIE_NAME).filter(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cookie_attributes() {
        let set = cookie_header(Some("t"), 28800, false);
        assert_eq!(set, "fundament_auth=t; HttpOnly; SameSite=Strict; Path=/; Max-Age=28800");
        assert!(cookie_header(None, 0, true).ends_with("Max-Age=0; Secure"));
    }

    #[test]
    fn finds_cookie_among_others() {
        let headers = ["a=1; fundament_auth=xyz", "b=2"];
        assert_eq!(cookie_value(headers, COOKIE_NAME), Some("xyz"));
        assert_eq!(cookie_value(["fundament_auth_x=1"], COOKIE_NAME), None);
    }
}
