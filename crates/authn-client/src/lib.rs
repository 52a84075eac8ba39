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

/// Why a verifier cannot serve yet: its `/readyz` answers 503 with this.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum NotReady {
    #[error("authn's keys (JWKS) not fetched yet")]
    Keys,
    #[error("the revoked sessions not received from authn yet")]
    Revocations,
}

/// How long a readiness check waits for a first JWKS fetch: shorter than a probe's timeout.
const READY_FETCH: std::time::Duration = std::time::Duration::from_secs(2);

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

    /// Whether tokens can be verified: keys held and the first snapshot of revoked sessions
    /// received (before it, a signed-out session would pass). Once keys are held this is two
    /// loads, never a call to authn: an authn outage later does not take verifiers out of
    /// service (they keep the keys they have). Until then it fetches the JWKS (rate-limited
    /// like every fetch of [`Keys`]) for at most 2 seconds, since keys are otherwise fetched on
    /// a first token only, which an unready replica never gets.
    pub async fn ready(&self) -> Result<(), NotReady> {
        if !self.keys.loaded() {
            if let Ok(Err(error)) = tokio::time::timeout(READY_FETCH, self.keys.refresh()).await {
                tracing::debug!(%error, "readiness: authn's JWKS not fetched yet");
            }
            if !self.keys.loaded() {
                return Err(NotReady::Keys);
            }
        }
        if !self.revoked.synced() {
            return Err(NotReady::Revocations);
        }
        Ok(())
    }

    /// [`Credentials::ready`] as two gating checks of a `/readyz` answer, `authn-keys` and
    /// `authn-revocations`: a verifier cannot tell a valid token without either. The plain
    /// answer's reason is the same as [`Credentials::ready`]'s.
    pub async fn gate(&self, readiness: &mut fundament_health::Readiness) {
        // Fetches the keys if none are held yet; the two loads below tell what holds.
        let _ = self.ready().await;
        let holds = |held: bool, missing: NotReady| if held { Ok(()) } else { Err(missing.to_string()) };
        readiness
            .gate("authn-keys", holds(self.keys.loaded(), NotReady::Keys))
            .gate("authn-revocations", holds(self.revoked.synced(), NotReady::Revocations));
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
