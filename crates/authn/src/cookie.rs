//! The `fundament_auth` cookie that carries the UserToken to the console and plugin-proxy.

use axum::http::HeaderValue;

use crate::state::AuthnConfig;

/// The cookie's name, shared with the services that read it.
pub(crate) const AUTH_COOKIE: &str = "fundament_auth";

/// `Set-Cookie` for a UserToken: HttpOnly so plugin JavaScript can never read it, SameSite=Strict
/// so no other site can make the browser send it, Path=/ for every route, Max-Age = the token's
/// lifetime. `Secure` and `Domain` come from the config. Fails only on a cookie domain that is
/// not a plain host name (a misconfiguration that could inject cookie attributes).
pub(crate) fn auth_cookie(
    config: &AuthnConfig,
    token: &str,
    max_age_secs: i64,
) -> Result<HeaderValue, String> {
    let mut cookie =
        format!("{AUTH_COOKIE}={token}; HttpOnly; SameSite=Strict; Path=/; Max-Age={max_age_secs}");
    if config.secure_cookies {
        cookie.push_str("; Secure");
    }
    if let Some(domain) = &config.cookie_domain {
        let plain =
            !domain.is_empty() && domain.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-');
        if !plain {
            return Err(format!("cookie domain {domain:?} is not a host name"));
        }
        cookie.push_str("; Domain=");
        cookie.push_str(domain);
    }
    HeaderValue::from_str(&cookie).map_err(|_| "token is not a valid cookie value".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(secure: bool, domain: Option<&str>) -> AuthnConfig {
        AuthnConfig {
            secure_cookies: secure,
            cookie_domain: domain.map(str::to_string),
            ..AuthnConfig::default()
        }
    }

    #[test]
    fn dev_cookie_is_host_only_and_not_secure() {
        let value = auth_cookie(&config(false, None), "t.o.k", 60).unwrap();
        assert_eq!(value, "fundament_auth=t.o.k; HttpOnly; SameSite=Strict; Path=/; Max-Age=60");
    }

    #[test]
    fn production_cookie_is_secure_with_the_shared_domain() {
        let value = auth_cookie(&config(true, Some("example.io")), "t", 60).unwrap();
        assert_eq!(
            value,
            "fundament_auth=t; HttpOnly; SameSite=Strict; Path=/; Max-Age=60; Secure; Domain=example.io"
        );
    }

    #[test]
    fn refuses_a_domain_that_would_inject_attributes() {
        assert!(auth_cookie(&config(true, Some("example.io; SameSite=None")), "t", 60).is_err());
        assert!(auth_cookie(&config(true, Some("")), "t", 60).is_err());
    }
}
