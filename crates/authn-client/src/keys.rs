//! The public keys that verify tokens: a JWKS, fetched from authn, refetched
//! when a token names a key it does not know (a rotation: at most every
//! [`MIN_REFETCH`], the caller waiting out the rest of that interval rather
//! than being refused), and every [`PERIODIC_REFRESH`] when followed
//! ([`Keys::spawn_periodic_refresh`]), so a key removed from authn's keys stops
//! verifying and a key published ahead of a rotation is known before it signs.
//! Verifiers hold no secret.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use fundament_tokens::{FrameTicketClaims, PluginClaims, TokenError, UserClaims, Verifier};
use http_body_util::BodyExt;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;

/// Fetches at most this often, whatever tokens arrive: a flood of made-up key ids costs authn
/// one JWKS request per interval.
pub const MIN_REFETCH: Duration = Duration::from_secs(2);
/// How often a followed JWKS is fetched regardless.
pub const PERIODIC_REFRESH: Duration = Duration::from_secs(30);

#[derive(Clone)]
pub struct Keys {
    inner: Arc<Inner>,
}

struct Inner {
    verifier: RwLock<Option<Verifier>>,
    /// Tokens the keys at hand verified, emptied whenever the keys change.
    verified: Mutex<Verified>,
    jwks_url: Option<String>,
    /// Held across a fetch, so concurrent callers wait for its result instead
    /// of finding "fetched just now" while the keys are still missing.
    last_fetch: tokio::sync::Mutex<Fetched>,
    /// A fetch for an unknown key runs in the background ([`Keys::learn_in_background`]).
    learning: AtomicBool,
}

/// What the fetches found so far.
#[derive(Default)]
struct Fetched {
    last: Option<LastFetch>,
    /// The JWKS the keys at hand were read from.
    jwks: Option<serde_json::Value>,
}

/// The last fetch: when it began, and how it ended.
struct LastFetch {
    at: Instant,
    outcome: Result<(), KeysError>,
}

/// Why a fetch is made.
#[derive(Debug, Clone, Copy)]
enum Fetch {
    /// Periodic or on request: skipped if one was made within [`MIN_REFETCH`].
    IfStale,
    /// A token names a key not at hand.
    Unknown,
}

#[derive(Debug, Clone, thiserror::Error)]
pub enum KeysError {
    #[error("cannot fetch the JWKS from {url}: {detail}")]
    Fetch { url: String, detail: String },
}

impl Keys {
    /// Fixed keys (tests, or a process that holds the JWKS already).
    pub fn fixed(verifier: Verifier) -> Self {
        Self::new(Some(verifier), None)
    }

    fn new(verifier: Option<Verifier>, jwks_url: Option<String>) -> Self {
        Self {
            inner: Arc::new(Inner {
                verifier: RwLock::new(verifier),
                verified: Mutex::default(),
                jwks_url,
                last_fetch: tokio::sync::Mutex::default(),
                learning: AtomicBool::new(false),
            }),
        }
    }

    /// Keys known at start (the same process signs them), refetched from `url` later.
    pub fn fixed_then_follow(verifier: Verifier, url: &str) -> Self {
        Self::new(Some(verifier), Some(url.to_string()))
    }

    /// Keys from authn's `/.well-known/jwks.json`, fetched on first use.
    pub fn from_url(url: &str) -> Self {
        Self::new(None, Some(url.to_string()))
    }

    /// Fetches the JWKS every [`PERIODIC_REFRESH`] for as long as the process runs (nothing for
    /// fixed keys).
    pub fn spawn_periodic_refresh(&self) {
        if self.inner.jwks_url.is_none() {
            return;
        }
        let keys = self.clone();
        tokio::spawn(async move {
            loop {
                // After a failure (authn not up yet, or unreachable) sooner: a verifier without
                // keys refuses every token until it has them.
                let next = match keys.fetch(Fetch::IfStale).await {
                    Ok(()) => PERIODIC_REFRESH,
                    Err(error) => {
                        tracing::warn!(%error, "JWKS refresh failed; keeping the keys at hand");
                        MIN_REFETCH
                    }
                };
                tokio::time::sleep(next).await;
            }
        });
    }

    /// Whether the keys at hand know `kid`.
    pub fn knows(&self, kid: &str) -> bool {
        self.inner
            .verifier
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .as_ref()
            .is_some_and(|v| v.kids().iter().any(|k| k == kid))
    }

    async fn fetch(&self, mode: Fetch) -> Result<(), KeysError> {
        let inner = &*self.inner;
        let Some(url) = &inner.jwks_url else { return Ok(()) };
        let asked = Instant::now();
        let mut fetched = inner.last_fetch.lock().await;
        if let Some(LastFetch { at, outcome }) = &fetched.last {
            // A fetch that began after this caller asked answers it too: callers that waited
            // for the lock together leave together, instead of each fetching in turn (a flood
            // of made-up key ids would otherwise queue without end, a fetch every interval).
            if *at >= asked {
                return outcome.clone();
            }
            let since = at.elapsed();
            if since < MIN_REFETCH {
                match mode {
                    // Someone fetched just now (while this caller may have waited for the lock).
                    Fetch::IfStale => return Ok(()),
                    // A key nobody knew a moment ago: wait out the interval and fetch, so a
                    // token of a key published seconds ago is not refused.
                    Fetch::Unknown => tokio::time::sleep(MIN_REFETCH - since).await,
                }
            }
        }
        let at = Instant::now();
        let outcome = self.fetch_from(url, &mut fetched.jwks).await;
        fetched.last = Some(LastFetch { at, outcome: outcome.clone() });
        outcome
    }

    /// Fetches the JWKS; `known` is the one the keys at hand were read from.
    async fn fetch_from(&self, url: &str, known: &mut Option<serde_json::Value>) -> Result<(), KeysError> {
        let fail = |detail: String| KeysError::Fetch { url: url.to_string(), detail };
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
        // The same keys as before (most fetches): what they verified still stands.
        if known.as_ref() == Some(&jwks) {
            return Ok(());
        }
        let verifier = Verifier::from_jwks(&jwks).map_err(|e| fail(e.to_string()))?;
        *self.inner.verifier.write().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(verifier);
        *known = Some(jwks);
        // After the new keys are in place: a verification that began with the old ones sees
        // the generation change and does not store its result.
        self.verified().forget_all();
        Ok(())
    }

    fn verified(&self) -> std::sync::MutexGuard<'_, Verified> {
        self.inner.verified.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// `verify`, or what an earlier verification of the same token with the same keys found,
    /// if the token is still within its lifetime at `now`.
    async fn verify_seen<C: Clone>(
        &self,
        token: &str,
        now: i64,
        seen: fn(&mut Verified) -> &mut Seen<C>,
        exp: fn(&C) -> i64,
        verify: impl Fn(&Verifier) -> Result<C, TokenError>,
    ) -> Result<C, TokenError> {
        let generation = {
            let mut verified = self.verified();
            if let Some(claims) = seen(&mut verified).get(token, now) {
                return Ok(claims);
            }
            verified.generation
        };
        let claims = self.with_verifier(verify).await?;
        let mut verified = self.verified();
        if verified.generation == generation {
            let at = exp(&claims);
            seen(&mut verified).insert(token, claims.clone(), at, now);
        }
        Ok(claims)
    }

    async fn with_verifier<T>(
        &self,
        check: impl Fn(&Verifier) -> Result<T, TokenError>,
    ) -> Result<T, TokenError> {
        let current = self.inner.verifier.read().unwrap_or_else(std::sync::PoisonError::into_inner).clone();
        let first = match &current {
            Some(v) => check(v),
            None => Err(TokenError::UnknownKey),
        };
        match first {
            Err(TokenError::UnknownKey) if self.inner.jwks_url.is_some() => {
                let fetched = self.fetch(Fetch::Unknown).await;
                if let Err(e) = &fetched {
                    tracing::warn!(error = %e, "JWKS refresh failed");
                }
                let refreshed =
                    self.inner.verifier.read().unwrap_or_else(std::sync::PoisonError::into_inner).clone();
                let again = match refreshed {
                    Some(v) => check(&v),
                    None => Err(TokenError::UnknownKey),
                };
                match again {
                    // The key may well exist: authn could not be asked. Not the token's fault.
                    Err(TokenError::UnknownKey) if fetched.is_err() => Err(TokenError::KeysUnavailable),
                    other => other,
                }
            }
            other => other,
        }
    }

    pub async fn verify_user(&self, token: &str, now: i64) -> Result<UserClaims, TokenError> {
        self.verify_seen(token, now, |v| &mut v.users, |c| c.exp, |v| v.verify_user(token, now)).await
    }

    pub async fn verify_plugin(&self, token: &str, now: i64) -> Result<PluginClaims, TokenError> {
        self.verify_seen(token, now, |v| &mut v.plugins, |c| c.exp, |v| v.verify_plugin(token, now)).await
    }

    pub async fn verify_frame_ticket(&self, token: &str, now: i64) -> Result<FrameTicketClaims, TokenError> {
        self.with_verifier(|v| v.verify_frame_ticket(token, now)).await
    }

    /// A UserToken, with the keys at hand (an unknown key id fails instead of fetching; call
    /// [`Keys::refresh`] to keep the keys current).
    pub fn verify_user_now(&self, token: &str, now: i64) -> Result<UserClaims, TokenError> {
        match self.inner.verifier.read().unwrap_or_else(std::sync::PoisonError::into_inner).as_ref() {
            Some(v) => v.verify_user(token, now),
            None => Err(TokenError::UnknownKey),
        }
    }

    /// Whether keys are held: fixed ones, or a JWKS fetched at least once.
    pub fn loaded(&self) -> bool {
        self.inner.verifier.read().unwrap_or_else(std::sync::PoisonError::into_inner).is_some()
    }

    /// Fetches the JWKS now (at most every [`MIN_REFETCH`]).
    pub async fn refresh(&self) -> Result<(), KeysError> {
        self.fetch(Fetch::IfStale).await
    }

    /// Fetches the JWKS for a key id the keys at hand do not know (a token that just came from
    /// authn): waits out [`MIN_REFETCH`] if a fetch was that recent.
    pub async fn learn(&self, kid: &str) -> Result<(), KeysError> {
        if self.knows(kid) { Ok(()) } else { self.fetch(Fetch::Unknown).await }
    }

    /// [`Keys::learn`] without waiting for it, for a caller that answers with the keys at hand.
    /// One such fetch at a time: while one runs, another unknown key id starts nothing (that
    /// fetch brings every key authn publishes). So cookies with made-up key ids, however many,
    /// cost one background task and one JWKS request per [`MIN_REFETCH`].
    pub fn learn_in_background(&self, kid: &str) {
        if self.inner.jwks_url.is_none()
            || self.knows(kid)
            || self.inner.learning.swap(true, Ordering::AcqRel)
        {
            return;
        }
        /// Clears the flag however the fetch ends (a panic included), so learning never stops.
        struct Learning(Keys);
        impl Drop for Learning {
            fn drop(&mut self) {
                self.0.inner.learning.store(false, Ordering::Release);
            }
        }
        let learning = Learning(self.clone());
        tokio::spawn(async move {
            if let Err(error) = learning.0.fetch(Fetch::Unknown).await {
                tracing::warn!(%error, "JWKS refresh for an unknown key failed");
            }
            drop(learning);
        });
    }
}

/// How many tokens of each kind are remembered as verified; past it, all are forgotten (only
/// tokens authn signed get here, so a flood of them is a flood of real sessions).
const MAX_VERIFIED: usize = 10_000;

/// Tokens verified with the keys at hand. A plugin page or a console sends the same token with
/// every call; its signature and claims do not change, so only its lifetime is checked again.
/// Revocation is not remembered here: [`crate::Credentials`] asks for every call.
#[derive(Default)]
struct Verified {
    /// Bumped when the keys change.
    generation: u64,
    users: Seen<UserClaims>,
    plugins: Seen<PluginClaims>,
}

impl Verified {
    fn forget_all(&mut self) {
        self.generation += 1;
        self.users.0.clear();
        self.plugins.0.clear();
    }
}

/// Token → its claims, its `exp`, and the clock reading it was verified at.
struct Seen<C>(HashMap<String, (C, i64, i64)>);

impl<C> Default for Seen<C> {
    fn default() -> Self {
        Self(HashMap::new())
    }
}

impl<C: Clone> Seen<C> {
    /// The claims of `token` if it verified before and is still valid at `now`. Of the claim
    /// rules only `exp` depends on the clock in a way that can turn a valid token invalid later
    /// (`iat` and `nbf` only become more valid), so a reading earlier than the one the token was
    /// verified at is verified afresh.
    fn get(&self, token: &str, now: i64) -> Option<C> {
        let (claims, exp, at) = self.0.get(token)?;
        (*at <= now && fundament_tokens::accepted_at(*exp, now)).then(|| claims.clone())
    }

    fn insert(&mut self, token: &str, claims: C, exp: i64, now: i64) {
        if self.0.len() >= MAX_VERIFIED {
            self.0.clear();
        }
        self.0.insert(token.to_string(), (claims, exp, now));
    }
}
