//! What every verifier of authn's tokens needs (the console, kube-api-proxy,
//! plugin-proxy): authn's public keys ([`Keys`]: the JWKS, fetched on first
//! use and again when a token names an unknown key) and the revoked sessions
//! ([`RevokedSessions`], followed live from authn). [`Credentials`] puts the
//! two together: a token verifies only if its signature and claims hold *and*
//! its session was not signed out.
#![forbid(unsafe_code)]

pub mod keys;
pub mod revoked;

use std::sync::Arc;

use fundament_tokens::{FrameTicketClaims, PluginClaims, TokenError, UserClaims};

pub use keys::Keys;
pub use revoked::RevokedSessions;

/// Why a token was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CredentialError {
    #[error(transparent)]
    Token(#[from] TokenError),
    #[error("the session was signed out")]
    SignedOut,
}

/// authn's keys and revoked sessions.
pub struct Credentials {
    pub keys: Keys,
    pub revoked: Arc<RevokedSessions>,
}

impl Credentials {
    /// Follows authn at `authn_url` (`http://localhost:8083`): its JWKS and its revocations.
    /// The JWKS is also fetched periodically ([`keys::PERIODIC_REFRESH`]).
    pub fn from_authn(authn_url: &str) -> Credentials {
        let base = authn_url.trim_end_matches('/');
        let keys = Keys::from_url(&format!("{base}/.well-known/jwks.json"));
        keys.spawn_periodic_refresh();
        Credentials { keys, revoked: RevokedSessions::follow(&format!("{base}/sessions/revocations")) }
    }

    /// Fixed keys and nothing revoked (tests, benchmarks).
    pub fn fixed(verifier: fundament_tokens::Verifier) -> Credentials {
        Credentials { keys: Keys::fixed(verifier), revoked: RevokedSessions::none() }
    }

    fn live(&self, sid: &str) -> Result<(), CredentialError> {
        if self.revoked.is_revoked(sid) { Err(CredentialError::SignedOut) } else { Ok(()) }
    }

    /// A UserToken of a live session (its `jti` is the session).
    pub async fn verify_user(&self, token: &str, now: i64) -> Result<UserClaims, CredentialError> {
        let claims = self.keys.verify_user(token, now).await?;
        self.live(&claims.jti)?;
        Ok(claims)
    }

    /// Like [`Credentials::verify_user`], with the keys at hand only (never waits for a fetch).
    pub fn verify_user_now(&self, token: &str, now: i64) -> Result<UserClaims, CredentialError> {
        let claims = self.keys.verify_user_now(token, now)?;
        self.live(&claims.jti)?;
        Ok(claims)
    }

    /// A PluginToken minted in a live session.
    pub async fn verify_plugin(&self, token: &str, now: i64) -> Result<PluginClaims, CredentialError> {
        let claims = self.keys.verify_plugin(token, now).await?;
        self.live(&claims.sid)?;
        Ok(claims)
    }

    /// A frame ticket minted in a live session (single use is the caller's to enforce).
    pub async fn verify_frame_ticket(
        &self,
        token: &str,
        now: i64,
    ) -> Result<FrameTicketClaims, CredentialError> {
        let claims = self.keys.verify_frame_ticket(token, now).await?;
        self.live(&claims.sid)?;
        Ok(claims)
    }
}
