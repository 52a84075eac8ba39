//! The caller's UserToken, from `Authorization: Bearer` only. authn never reads a cookie: the
//! browser's session is the console's, and nothing a page can make a browser send (a form, a
//! `no-cors` fetch, a navigation) carries a bearer token.

use std::sync::Arc;

use axum::extract::{FromRequest, Request};
use axum::http::{HeaderMap, header};
use fundament_tokens::{UserClaims, Verifier};
use serde::Deserialize;

use crate::clock;
use crate::state::AuthnState;
use fundament_connect::{Code, ConnectError, ConnectJson};

/// The same answer for a missing, broken, expired, revoked or wrong-kind token: which one it
/// was is logged at debug level, never told to the caller.
fn invalid_user_token() -> ConnectError {
    ConnectError::new(Code::Unauthenticated, "invalid user token")
}

/// Verifies the caller's UserToken against the signer's current JWKS and refuses a revoked
/// session. A PluginToken fails here (wrong audience): a plugin can never act as its user
/// through authn.
pub(crate) fn authenticate(state: &AuthnState, headers: &HeaderMap) -> Result<UserClaims, ConnectError> {
    live(state, verify_signature_and_claims(state, headers)?)
}

/// The live session of a caller that may have none: a sign-in made in a browser that still
/// holds a session, which the sign-in replaces. `None` without a bearer token, and for one that
/// is no live session (expired, revoked, forged): there is nothing to replace then.
pub(crate) fn replaced_session(state: &AuthnState, headers: &HeaderMap) -> Option<UserClaims> {
    bearer(headers)?;
    authenticate(state, headers).ok()
}

/// The claims, unless their session was revoked.
fn live(state: &AuthnState, claims: UserClaims) -> Result<UserClaims, ConnectError> {
    match state.revocations.check(&claims.jti) {
        Ok(false) => Ok(claims),
        Ok(true) => {
            tracing::debug!("user token of a revoked session refused");
            Err(invalid_user_token())
        }
        // Fail closed: a replica that cannot read the revoked sessions vouches for none.
        Err(error) => {
            tracing::warn!(%error, "user token refused: the revoked sessions are not known");
            Err(ConnectError::new(
                Code::Unavailable,
                "sessions cannot be checked right now; try again shortly",
            ))
        }
    }
}

/// The message of a procedure without fields; unknown ones are ignored like everywhere in
/// Connect JSON.
#[derive(Debug, Deserialize)]
struct NoFields {}

/// The caller of a procedure without request fields, as an extractor: the call is checked and
/// its message read first, so a malformed call is refused as such whoever makes it; then the
/// UserToken's signature and claims. The session may have been revoked since: sign-out accepts
/// that, everything else asks [`Caller::live`].
pub(crate) struct Caller(pub(crate) UserClaims);

impl Caller {
    /// The caller's claims, unless their session was revoked.
    pub(crate) fn live(self, state: &AuthnState) -> Result<UserClaims, ConnectError> {
        live(state, self.0)
    }
}

impl FromRequest<Arc<AuthnState>> for Caller {
    type Rejection = ConnectError;

    async fn from_request(request: Request, state: &Arc<AuthnState>) -> Result<Self, ConnectError> {
        let headers = request.headers().clone();
        let ConnectJson(NoFields {}) = ConnectJson::<NoFields>::from_request(request, state).await?;
        verify_signature_and_claims(state, &headers).map(Caller)
    }
}

/// The UserToken's signature and claims, whether or not its session was revoked (sign-out).
fn verify_signature_and_claims(state: &AuthnState, headers: &HeaderMap) -> Result<UserClaims, ConnectError> {
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
