//! The caller's UserToken: from `Authorization: Bearer`, else from the `fundament_auth` cookie.

use axum::http::{HeaderMap, header};
use fundament_tokens::{UserClaims, Verifier};

use crate::clock;
use crate::connect::{Code, ConnectError};
use crate::cookie::AUTH_COOKIE;
use crate::state::AuthnState;

/// The same answer for a missing, broken, expired or wrong-kind token: which one it was is
/// logged at debug level, never told to the caller.
fn invalid_user_token() -> ConnectError {
    ConnectError::new(Code::Unauthenticated, "invalid user token")
}

/// Verifies the caller's UserToken against the signer's current JWKS. A PluginToken fails here
/// (wrong audience): a plugin can never act as its user through authn.
pub(crate) fn authenticate(state: &AuthnState, headers: &HeaderMap) -> Result<UserClaims, ConnectError> {
    let Some(token) = presented_token(headers) else {
        tracing::debug!("no user token presented");
        return Err(invalid_user_token());
    };
    // Built per request from the signer's public keys: a JWKS holds two keys at most, so this is
    // cheap, and a rotation by the caller takes effect at once.
    let jwks = state.signer().jwks();
    let verifier =
        Verifier::from_jwks(&jwks).map_err(|err| ConnectError::internal("signer JWKS unusable", err))?;
    verifier.verify_user(token, clock::now()).map_err(|err| {
        tracing::debug!(reason = %err, "user token refused");
        invalid_user_token()
    })
}

/// The bearer token if there is one, else the auth cookie.
fn presented_token(headers: &HeaderMap) -> Option<&str> {
    bearer(headers).or_else(|| cookie(headers, AUTH_COOKIE))
}

fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(key, value)| *key == name && !value.is_empty())
        .map(|(_, value)| value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(*name, HeaderValue::from_static(value));
        }
        map
    }

    #[test]
    fn bearer_wins_over_the_cookie() {
        let map = headers(&[("authorization", "Bearer abc"), ("cookie", "fundament_auth=def")]);
        assert_eq!(presented_token(&map), Some("abc"));
        assert_eq!(presented_token(&headers(&[("authorization", "bearer  abc ")])), Some("abc"));
    }

    #[test]
    fn falls_back_to_the_cookie() {
        let map = headers(&[("cookie", "theme=dark; fundament_auth=def; other=1")]);
        assert_eq!(presented_token(&map), Some("def"));
        let map = headers(&[("cookie", "theme=dark"), ("cookie", "fundament_auth=ghi")]);
        assert_eq!(presented_token(&map), Some("ghi"));
        let map = headers(&[("authorization", "Basic dXNlcjpwYXNz"), ("cookie", "fundament_auth=def")]);
        assert_eq!(presented_token(&map), Some("def"));
    }

    #[test]
    fn nothing_usable_is_none() {
        assert_eq!(presented_token(&headers(&[])), None);
        assert_eq!(presented_token(&headers(&[("authorization", "Bearer ")])), None);
        assert_eq!(presented_token(&headers(&[("authorization", "Bearer")])), None);
        assert_eq!(presented_token(&headers(&[("cookie", "fundament_auth=")])), None);
        assert_eq!(presented_token(&headers(&[("cookie", "xfundament_auth=abc")])), None);
    }
}
