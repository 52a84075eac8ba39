//! The caller's UserToken, from `Authorization: Bearer` only. authn never reads a cookie: the
//! browser's session is the console's, and nothing a page can make a browser send (a form, a
//! `no-cors` fetch, a navigation) carries a bearer token.

use axum::http::{HeaderMap, header};
use fundament_tokens::{UserClaims, Verifier};

use crate::clock;
use crate::state::AuthnState;
use fundament_connect::{Code, ConnectError};

/// The same answer for a missing, broken, expired, revoked or wrong-kind token: which one it
/// was is logged at debug level, never told to the caller.
fn invalid_user_token() -> ConnectError {
    ConnectError::new(Code::Unauthenticated, "invalid user token")
}

/// Verifies the caller's UserToken against the signer's current JWKS and refuses a revoked
/// session. A PluginToken fails here (wrong audience): a plugin can never act as its user
/// through authn.
pub(crate) fn authenticate(state: &AuthnState, headers: &HeaderMap) -> Result<UserClaims, ConnectError> {
    let claims = verify_signature_and_claims(state, headers)?;
    if state.revocations.is_revoked(&claims.jti) {
        tracing::debug!("user token of a revoked session refused");
        return Err(invalid_user_token());
    }
    Ok(claims)
}

/// The UserToken's signature and claims, whether or not its session was revoked (sign-out).
pub(crate) fn verify_signature_and_claims(
    state: &AuthnState,
    headers: &HeaderMap,
) -> Result<UserClaims, ConnectError> {
    let Some(token) = bearer(headers) else {
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

fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
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
    fn only_a_bearer_counts() {
        assert_eq!(bearer(&headers(&[("authorization", "Bearer abc")])), Some("abc"));
        assert_eq!(bearer(&headers(&[("authorization", "bearer  abc ")])), Some("abc"));
        // The console's cookie is not a credential here, whatever it holds.
        assert_eq!(bearer(&headers(&[("cookie", "__Host-fundament_auth=def; fundament_auth=def")])), None);
        assert_eq!(bearer(&headers(&[("authorization", "Basic dXNlcjpwYXNz")])), None);
        assert_eq!(bearer(&headers(&[])), None);
        assert_eq!(bearer(&headers(&[("authorization", "Bearer ")])), None);
        assert_eq!(bearer(&headers(&[("authorization", "Bearer")])), None);
    }
}
