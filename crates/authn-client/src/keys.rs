//! The public keys that verify tokens: a JWKS, fetched from authn and
//! refetched when a token names a key it does not know (rotation), at most
//! every 10 seconds. Verifiers hold no secret.

use std::sync::RwLock;
use std::time::{Duration, Instant};

use fundament_tokens::{FrameTicketClaims, PluginClaims, TokenError, UserClaims, Verifier};
use http_body_util::BodyExt;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;

pub struct Keys {
    verifier: RwLock<Option<Verifier>>,
    jwks_url: Option<String>,
    /// Held across a fetch, so concurrent callers wait for its result instead
    /// of finding "fetched just now" while the keys are still missing.
    last_fetch: tokio::sync::Mutex<Option<Instant>>,
}

#[derive(Debug, thiserror::Error)]
pub enum KeysError {
    #[error("cannot fetch the JWKS from {url}: {detail}")]
    Fetch { url: String, detail: String },
}

impl Keys {
    /// Fixed keys (tests, or a process that holds the JWKS already).
    pub fn fixed(verifier: Verifier) -> Self {
        Self {
            verifier: RwLock::new(Some(verifier)),
            jwks_url: None,
            last_fetch: tokio::sync::Mutex::new(None),
        }
    }

    /// Keys known at start (the same process signs them), refetched from `url` later.
    pub fn fixed_then_follow(verifier: Verifier, url: &str) -> Self {
        Self {
            verifier: RwLock::new(Some(verifier)),
            jwks_url: Some(url.to_string()),
            last_fetch: tokio::sync::Mutex::new(None),
        }
    }

    /// Keys from authn's `/.well-known/jwks.json`, fetched on first use.
    pub fn from_url(url: &str) -> Self {
        Self {
            verifier: RwLock::new(None),
            jwks_url: Some(url.to_string()),
            last_fetch: tokio::sync::Mutex::new(None),
        }
    }

    async fn fetch(&self) -> Result<(), KeysError> {
        let Some(url) = &self.jwks_url else { return Ok(()) };
        let mut last = self.last_fetch.lock().await;
        if last.is_some_and(|t| t.elapsed() < Duration::from_secs(10)) {
            return Ok(());
        }
        *last = Some(Instant::now());
        let fail = |detail: String| KeysError::Fetch { url: url.clone(), detail };
        let client: Client<_, http_body_util::Empty<bytes::Bytes>> =
            Client::builder(TokioExecutor::new()).build_http();
        let uri: http::Uri = url.parse().map_err(|e: http::uri::InvalidUri| fail(e.to_string()))?;
        let res = tokio::time::timeout(Duration::from_secs(5), client.get(uri))
            .await
            .map_err(|_| fail("timeout".into()))?
            .map_err(|e| fail(e.to_string()))?;
        if !res.status().is_success() {
            return Err(fail(format!("status {}", res.status())));
        }
        let bytes = res.into_body().collect().await.map_err(|e| fail(e.to_string()))?.to_bytes();
        let jwks: serde_json::Value = serde_json::from_slice(&bytes).map_err(|e| fail(e.to_string()))?;
        let verifier = Verifier::from_jwks(&jwks).map_err(|e| fail(e.to_string()))?;
        *self.verifier.write().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(verifier);
        Ok(())
    }

    async fn with_verifier<T>(
        &self,
        check: impl Fn(&Verifier) -> Result<T, TokenError>,
    ) -> Result<T, TokenError> {
        let current = self.verifier.read().unwrap_or_else(std::sync::PoisonError::into_inner).clone();
        let first = match &current {
            Some(v) => check(v),
            None => Err(TokenError::UnknownKey),
        };
        match first {
            Err(TokenError::UnknownKey) if self.jwks_url.is_some() => {
                if let Err(e) = self.fetch().await {
                    tracing::warn!(error = %e, "JWKS refresh failed");
                }
                let refreshed =
                    self.verifier.read().unwrap_or_else(std::sync::PoisonError::into_inner).clone();
                match refreshed {
                    Some(v) => check(&v),
                    None => Err(TokenError::UnknownKey),
                }
            }
            other => other,
        }
    }

    pub async fn verify_user(&self, token: &str, now: i64) -> Result<UserClaims, TokenError> {
        self.with_verifier(|v| v.verify_user(token, now)).await
    }

    pub async fn verify_plugin(&self, token: &str, now: i64) -> Result<PluginClaims, TokenError> {
        self.with_verifier(|v| v.verify_plugin(token, now)).await
    }

    pub async fn verify_frame_ticket(&self, token: &str, now: i64) -> Result<FrameTicketClaims, TokenError> {
        self.with_verifier(|v| v.verify_frame_ticket(token, now)).await
    }

    /// A UserToken, with the keys at hand (an unknown key id fails instead of fetching; call
    /// [`Keys::refresh`] to keep the keys current).
    pub fn verify_user_now(&self, token: &str, now: i64) -> Result<UserClaims, TokenError> {
        match self.verifier.read().unwrap_or_else(std::sync::PoisonError::into_inner).as_ref() {
            Some(v) => v.verify_user(token, now),
            None => Err(TokenError::UnknownKey),
        }
    }

    /// Whether keys are held: fixed ones, or a JWKS fetched at least once.
    pub fn loaded(&self) -> bool {
        self.verifier.read().unwrap_or_else(std::sync::PoisonError::into_inner).is_some()
    }

    /// Fetches the JWKS now (at most every 10 seconds).
    pub async fn refresh(&self) -> Result<(), KeysError> {
        self.fetch().await
    }
}
