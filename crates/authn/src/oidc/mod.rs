//! OpenID Connect sign-in: the authorization code flow with PKCE (S256), `state` and `nonce`.
//!
//! authn holds the client secret and is the only part that talks to the provider. The console
//! starts a sign-in by asking [`Oidc::start`] for the authorization URL and a sealed
//! [`transaction`] that the browser keeps in a short-lived cookie of the console; on the
//! callback it hands code, state and that transaction to [`Oidc::finish`], which checks the
//! state, exchanges the code, verifies the ID token and answers the profile of the user. No
//! replica remembers anything between the two (see docs/security.md).

pub mod id_token;
pub mod identity;
pub mod provider;
pub mod transaction;

use std::sync::{Arc, RwLock};

use jsonwebtoken::jwk::JwkSet;

use self::id_token::{Expected, IdTokenError};
use self::identity::{ClaimNames, Profile};
use self::provider::{Exchange, Metadata, ProviderClient, ProviderError};
pub use self::transaction::ReplacedSession;
use self::transaction::{
    Sealer, TRANSACTION_TTL_SECS, Transaction, TransactionError, pkce_challenge, random_token, same,
};
use fundament_directory::Directory;

/// What the operator configured.
#[derive(Clone)]
pub struct OidcConfig {
    /// Exactly as the provider names itself in discovery and in `iss`.
    pub issuer: String,
    pub client_id: String,
    pub client_secret: String,
    /// Shown as "Sign in with <name>".
    pub provider_name: String,
    pub scopes: Vec<String>,
    pub claims: ClaimNames,
    /// `<console-url>/sign-in/oidc/callback`.
    pub redirect_uri: String,
    /// Where the provider sends the browser after ending its session: the console's sign-in page.
    pub post_logout_redirect_uri: String,
}

impl std::fmt::Debug for OidcConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OidcConfig")
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .field("provider_name", &self.provider_name)
            .field("scopes", &self.scopes)
            .field("redirect_uri", &self.redirect_uri)
            .finish_non_exhaustive()
    }
}

/// Why a sign-in failed: a code the console turns into a readable page
/// (`/sign-in?error=<code>`). The Connect error's message is exactly [`Failure::code`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// The provider could not be reached, or answered nonsense.
    ProviderUnavailable,
    /// The transaction cookie is missing, not ours, or tampered with.
    TransactionInvalid,
    /// The sign-in took longer than the transaction lives.
    TransactionExpired,
    /// `state` of the callback is not the transaction's.
    StateMismatch,
    /// The provider refused the code: expired, already used, or issued to someone else.
    CodeRejected,
    /// The ID token failed a check (issuer, audience, nonce, signature, shape).
    TokenInvalid,
    /// The ID token was signed by a key the provider does not publish.
    UnknownKey,
    /// The ID token's times are off by more than the allowed skew.
    ClockSkew,
}

impl Failure {
    /// Every failure (the console maps each code to its page; a test in server/ keeps the two
    /// in step).
    pub const ALL: [Failure; 8] = [
        Failure::ProviderUnavailable,
        Failure::TransactionInvalid,
        Failure::TransactionExpired,
        Failure::StateMismatch,
        Failure::CodeRejected,
        Failure::TokenInvalid,
        Failure::UnknownKey,
        Failure::ClockSkew,
    ];

    pub fn code(self) -> &'static str {
        match self {
            Failure::ProviderUnavailable => "provider-unavailable",
            Failure::TransactionInvalid => "transaction-invalid",
            Failure::TransactionExpired => "transaction-expired",
            Failure::StateMismatch => "state-mismatch",
            Failure::CodeRejected => "code-rejected",
            Failure::TokenInvalid => "token-invalid",
            Failure::UnknownKey => "unknown-key",
            Failure::ClockSkew => "clock-skew",
        }
    }

    pub fn connect_code(self) -> fundament_connect::Code {
        use fundament_connect::Code;
        match self {
            Failure::ProviderUnavailable => Code::Unavailable,
            Failure::TransactionInvalid | Failure::TransactionExpired | Failure::StateMismatch => {
                Code::FailedPrecondition
            }
            Failure::CodeRejected | Failure::TokenInvalid | Failure::UnknownKey | Failure::ClockSkew => {
                Code::PermissionDenied
            }
        }
    }
}

impl From<IdTokenError> for Failure {
    fn from(error: IdTokenError) -> Failure {
        match error {
            IdTokenError::UnknownKey(_) => Failure::UnknownKey,
            IdTokenError::Expired(_) | IdTokenError::IssuedInFuture(_) => Failure::ClockSkew,
            _ => Failure::TokenInvalid,
        }
    }
}

impl From<&ProviderError> for Failure {
    fn from(error: &ProviderError) -> Failure {
        match error {
            ProviderError::Refused { .. } => Failure::CodeRejected,
            _ => Failure::ProviderUnavailable,
        }
    }
}

/// A failure with what the log should say about it (never a secret).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignInError {
    pub failure: Failure,
    pub detail: String,
}

impl SignInError {
    fn new(failure: Failure, detail: impl std::fmt::Display) -> SignInError {
        SignInError { failure, detail: detail.to_string() }
    }
}

/// The start of a sign-in.
#[derive(Debug, Clone)]
pub struct Started {
    pub authorization_url: String,
    /// The sealed transaction, for the console's cookie.
    pub transaction: String,
    pub expires_in: i64,
}

/// A finished sign-in: who it is.
#[derive(Debug, Clone)]
pub struct SignedIn {
    pub user_id: String,
    pub profile: Profile,
    /// The provider's ID token, kept by the console as `id_token_hint` for ending the
    /// provider's session at sign-out.
    pub id_token: String,
    pub return_path: String,
    /// The session the browser held when this sign-in started, to be revoked now.
    pub replaces: Option<ReplacedSession>,
}

/// The callback's parameters.
#[derive(Debug, Clone)]
pub struct Callback<'a> {
    pub code: &'a str,
    pub state: &'a str,
    pub transaction: &'a str,
}

/// A JWKS is fetched again for an unknown key id at most this often, so tokens naming random
/// key ids cannot make authn hammer the provider.
pub const JWKS_REFETCH_SECS: i64 = 10;

/// A JWKS is used for at most this long, then fetched again whatever key id the token names: a
/// key the provider withdrew (rotated out, perhaps after a leak) stops verifying within this
/// time, not only at authn's restart.
pub const JWKS_MAX_AGE_SECS: i64 = 600;

/// A discovery, good or failed, is answered from memory for this long, then fetched again.
/// Every sign-in start used to fetch it, so a loop of anonymous starts became as many calls
/// from authn to the provider; now they make one call each 5 s at most, against a provider
/// that is down too (the callers that waited for a failed fetch get its error). Kept short on
/// purpose: the fetch at start is also how a provider that is down is told on the console's own
/// page (`provider-unavailable`) before the browser is sent to it, and that holds within 5 s of
/// the provider going down, as a recovery is seen within 5 s of it coming back.
pub const DISCOVERY_MAX_AGE_SECS: i64 = 5;

/// The last discovery, good or failed, and when it was fetched (unix seconds).
struct Discovery {
    result: Result<Metadata, ProviderError>,
    fetched_at: i64,
}

impl Discovery {
    fn usable(&self, now: i64) -> bool {
        // A clock that went back (a negative age) counts as expired, not as fresh for longer.
        (0..DISCOVERY_MAX_AGE_SECS).contains(&(now - self.fetched_at))
    }
}

struct Keys {
    uri: String,
    set: JwkSet,
    fetched_at: i64,
}

/// The OIDC part of authn.
pub struct Oidc {
    pub config: OidcConfig,
    sealer: Sealer,
    client: ProviderClient,
    directory: Arc<dyn Directory>,
    /// The last discovery ([`Oidc::metadata`]). An async lock, held across the fetch, so that
    /// concurrent misses share one fetch.
    discovery: tokio::sync::Mutex<Option<Discovery>>,
    keys: RwLock<Option<Keys>>,
}

impl std::fmt::Debug for Oidc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Oidc").field("config", &self.config).finish_non_exhaustive()
    }
}

impl Oidc {
    pub fn new(config: OidcConfig, directory: Arc<dyn Directory>) -> Oidc {
        Oidc {
            sealer: Sealer::from_secret(config.client_secret.as_bytes()),
            config,
            client: ProviderClient::new(),
            directory,
            discovery: tokio::sync::Mutex::new(None),
            keys: RwLock::new(None),
        }
    }

    /// The discovery document: the one fetched within [`DISCOVERY_MAX_AGE_SECS`], else a fresh
    /// one. Callers that miss together wait for one fetch and share its answer; a failure is
    /// shared too and kept as long (also a refusal for
    /// [`ProviderError::Busy`]: otherwise the callers queued on the lock would each wait for a
    /// slot in turn, one after the other).
    async fn metadata(&self, now: i64) -> Result<Metadata, SignInError> {
        let mut discovery = self.discovery.lock().await;
        let result = match discovery.as_ref().filter(|d| d.usable(now)) {
            Some(cached) => cached.result.clone(),
            None => {
                let result = self.client.discover(&self.config.issuer).await;
                *discovery = Some(Discovery { result: result.clone(), fetched_at: now });
                result
            }
        };
        result.map_err(|e| SignInError::new(Failure::from(&e), e))
    }

    /// Starts a sign-in that returns to `return_path` (a console path the console checked).
    pub async fn start(&self, return_path: &str, now: i64) -> Result<Started, SignInError> {
        self.start_replacing(return_path, None, now).await
    }

    /// Starts a sign-in that, once finished, replaces the live session `replaces` (which the
    /// caller verified): [`SignedIn::replaces`] names it again, sealed in between, so the
    /// browser cannot change which session that is.
    pub async fn start_replacing(
        &self,
        return_path: &str,
        replaces: Option<ReplacedSession>,
        now: i64,
    ) -> Result<Started, SignInError> {
        let metadata = self.metadata(now).await?;
        let transaction = Transaction {
            state: random_token(),
            nonce: random_token(),
            pkce_verifier: random_token(),
            return_path: return_path.to_owned(),
            expires_at: now + TRANSACTION_TTL_SECS,
            replaces,
        };
        let mut url = url::Url::parse(&metadata.authorization_endpoint).map_err(|e| {
            SignInError::new(
                Failure::ProviderUnavailable,
                format!("authorization_endpoint is not a URL: {e}"),
            )
        })?;
        url.query_pairs_mut()
            .append_pair("response_type", "code")
            .append_pair("client_id", &self.config.client_id)
            .append_pair("redirect_uri", &self.config.redirect_uri)
            .append_pair("scope", &self.config.scopes.join(" "))
            .append_pair("state", &transaction.state)
            .append_pair("nonce", &transaction.nonce)
            .append_pair("code_challenge", &pkce_challenge(&transaction.pkce_verifier))
            .append_pair("code_challenge_method", "S256");
        Ok(Started {
            authorization_url: url.into(),
            transaction: self.sealer.seal(&transaction),
            expires_in: TRANSACTION_TTL_SECS,
        })
    }

    /// Opens the transaction and checks the callback's state against it.
    pub fn check_callback(&self, callback: &Callback<'_>, now: i64) -> Result<Transaction, SignInError> {
        let transaction = self.sealer.open(callback.transaction, now).map_err(|e| match e {
            TransactionError::Expired => SignInError::new(Failure::TransactionExpired, e),
            TransactionError::Invalid => SignInError::new(Failure::TransactionInvalid, e),
        })?;
        if callback.state.is_empty() || !same(callback.state, &transaction.state) {
            return Err(SignInError::new(Failure::StateMismatch, "callback state is not the transaction's"));
        }
        Ok(transaction)
    }

    /// Finishes a sign-in: state, code exchange, ID token, profile and user id.
    pub async fn finish(&self, callback: &Callback<'_>, now: i64) -> Result<SignedIn, SignInError> {
        let transaction = self.check_callback(callback, now)?;
        if callback.code.is_empty() {
            return Err(SignInError::new(Failure::CodeRejected, "callback without a code"));
        }
        let metadata = self.metadata(now).await?;
        let id_token = self
            .client
            .exchange(&Exchange {
                token_endpoint: &metadata.token_endpoint,
                client_id: &self.config.client_id,
                client_secret: &self.config.client_secret,
                code: callback.code,
                redirect_uri: &self.config.redirect_uri,
                verifier: &transaction.pkce_verifier,
            })
            .await
            .map_err(|e| SignInError::new(Failure::from(&e), e))?;
        let claims = self.verify(&metadata, &id_token, &transaction.nonce, now).await?;
        let profile = identity::profile(&claims, &self.config.claims)
            .ok_or_else(|| SignInError::new(Failure::TokenInvalid, "ID token without a subject"))?;
        let user_id = identity::user_id(&*self.directory, &self.config.issuer, &profile.subject);
        Ok(SignedIn {
            user_id,
            profile,
            id_token,
            return_path: transaction.return_path,
            replaces: transaction.replaces,
        })
    }

    /// Verifies the ID token with the provider's keys, fetching them when none are at hand, when
    /// those at hand are [`JWKS_MAX_AGE_SECS`] old, or when the token names a key id we do not
    /// have (the provider rotated) or a signature that does not verify with the key of that id
    /// (a new key under the same id), at most every [`JWKS_REFETCH_SECS`].
    ///
    /// A set past its age is never used, even when fetching it again fails: the age exists so
    /// that a withdrawn key stops verifying, and falling back to the old set would let whoever
    /// can make that fetch fail (a provider hiccup, or [`provider::MAX_IN_FLIGHT`] filled with
    /// junk callbacks) keep it trusted. Little availability is lost: the fetch comes right after
    /// a code exchange that the same provider has just answered.
    async fn verify(
        &self,
        metadata: &Metadata,
        token: &str,
        nonce: &str,
        now: i64,
    ) -> Result<serde_json::Map<String, serde_json::Value>, SignInError> {
        let expected = Expected { issuer: &self.config.issuer, client_id: &self.config.client_id, nonce };
        let attempt = {
            let keys = self.keys.read().unwrap_or_else(std::sync::PoisonError::into_inner);
            // A clock that went back (a negative age) counts as stale.
            let fresh = |k: &&Keys| (0..JWKS_MAX_AGE_SECS).contains(&(now - k.fetched_at));
            match keys.as_ref().filter(|k| k.uri == metadata.jwks_uri).filter(fresh) {
                Some(keys) => match id_token::verify(token, &keys.set, &expected, now) {
                    Err(IdTokenError::UnknownKey(_)) if now - keys.fetched_at < JWKS_REFETCH_SECS => {
                        return Err(SignInError::new(
                            Failure::UnknownKey,
                            "ID token key id unknown; JWKS fetched moments ago",
                        ));
                    }
                    Err(IdTokenError::UnknownKey(_)) => None,
                    // A signature that does not verify with a key of the cached set: the
                    // provider may have made a new key under the same id (restarted with a
                    // fresh one). Fetched again, as for an unknown key id, at most every
                    // JWKS_REFETCH_SECS; a forged token gets the same refusal after it.
                    Err(IdTokenError::Signature) if now - keys.fetched_at >= JWKS_REFETCH_SECS => None,
                    other => Some(other),
                },
                None => None,
            }
        };
        let result = match attempt {
            Some(result) => result,
            None => {
                let set = self
                    .client
                    .jwks(&metadata.jwks_uri)
                    .await
                    .map_err(|e| SignInError::new(Failure::from(&e), e))?;
                let result = id_token::verify(token, &set, &expected, now);
                *self.keys.write().unwrap_or_else(std::sync::PoisonError::into_inner) =
                    Some(Keys { uri: metadata.jwks_uri.clone(), set, fetched_at: now });
                result
            }
        };
        result.map_err(|e| SignInError::new(Failure::from(e.clone()), e))
    }

    /// Where to send the browser to end the provider's session too (RP-Initiated Logout 1.0),
    /// if the provider offers `end_session_endpoint`.
    pub async fn end_session_url(&self, id_token_hint: &str, now: i64) -> Option<String> {
        let metadata = match self.metadata(now).await {
            Ok(metadata) => metadata,
            Err(error) => {
                tracing::warn!(detail = %error.detail, "oidc: provider session not ended: discovery failed");
                return None;
            }
        };
        let mut url = url::Url::parse(metadata.end_session_endpoint.as_deref()?).ok()?;
        {
            let mut query = url.query_pairs_mut();
            if !id_token_hint.is_empty() {
                query.append_pair("id_token_hint", id_token_hint);
            }
            query
                .append_pair("client_id", &self.config.client_id)
                .append_pair("post_logout_redirect_uri", &self.config.post_logout_redirect_uri);
        }
        Some(url.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn oidc() -> Oidc {
        Oidc::new(
            OidcConfig {
                issuer: "https://id.example.com".into(),
                client_id: "console".into(),
                client_secret: "s3cret".into(),
                provider_name: "Example".into(),
                scopes: vec!["openid".into()],
                claims: ClaimNames::default(),
                redirect_uri: "http://localhost:3000/sign-in/oidc/callback".into(),
                post_logout_redirect_uri: "http://localhost:3000/sign-in".into(),
            },
            Arc::new(fundament_directory::seed()),
        )
    }

    fn sealed(oidc: &Oidc, state: &str, expires_at: i64) -> String {
        oidc.sealer.seal(&Transaction {
            state: state.into(),
            nonce: "n".into(),
            pkce_verifier: "v".into(),
            return_path: "/".into(),
            expires_at,
            replaces: None,
        })
    }

    #[test]
    fn the_callback_must_carry_the_transactions_state() {
        let oidc = oidc();
        let tx = sealed(&oidc, "state-1", 100);
        let check = |state: &str, tx: &str, now: i64| {
            oidc.check_callback(&Callback { code: "c", state, transaction: tx }, now).map_err(|e| e.failure)
        };
        assert_eq!(check("state-1", &tx, 99).map(|t| t.nonce), Ok("n".into()));
        assert_eq!(check("state-2", &tx, 99).err(), Some(Failure::StateMismatch));
        assert_eq!(check("", &tx, 99).err(), Some(Failure::StateMismatch));
        assert_eq!(check("state-1", &tx, 100).err(), Some(Failure::TransactionExpired));
        assert_eq!(check("state-1", "", 99).err(), Some(Failure::TransactionInvalid));
        let other = Oidc::new(
            OidcConfig { client_secret: "other".into(), ..oidc.config.clone() },
            Arc::new(fundament_directory::seed()),
        );
        assert_eq!(
            check("state-1", &sealed(&other, "state-1", 100), 99).err(),
            Some(Failure::TransactionInvalid)
        );
    }

    #[test]
    fn failures_have_distinct_codes_and_secrets_stay_out_of_the_debug_output() {
        let all = Failure::ALL;
        let mut codes: Vec<_> = all.iter().map(|f| f.code()).collect();
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), all.len());
        let printed = format!("{:?}", oidc());
        assert!(!printed.contains("s3cret"), "{printed}");
        assert_eq!(Failure::from(IdTokenError::IssuedInFuture(120)), Failure::ClockSkew);
        assert_eq!(Failure::from(IdTokenError::UnknownKey(None)), Failure::UnknownKey);
        assert_eq!(
            Failure::from(&ProviderError::Refused { error: "invalid_grant".into() }),
            Failure::CodeRejected
        );
        assert_eq!(
            Failure::from(&ProviderError::Busy { limit: provider::MAX_IN_FLIGHT }),
            Failure::ProviderUnavailable
        );
    }
}
