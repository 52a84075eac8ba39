//! The console's sessions, from authn: sign-in calls authn's `DevSignIn`;
//! a session cookie is valid when it is a UserToken that authn's public keys
//! verify and whose session was not signed out (the revoked sessions are
//! followed live from authn); sign-out asks authn to revoke the session. OpenID Connect
//! sign-in goes through authn's `OidcService`, which alone talks to the provider.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use app::api::session::SignInFailure;
use app::state::{
    IssuedSession, OidcSignedIn, OidcStarted, SessionAuthority, SessionUser, SignInError, SignOutOutcome,
};
use bytes::Bytes;
use fundament_authn_client::Credentials;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;
use tracing::Instrument;

type AuthnClient = Client<HttpConnector, Full<Bytes>>;

/// POSTs `body` to authn's `path` (JSON both ways): its status and answer, or why there is none.
async fn post(
    client: &AuthnClient,
    authn_url: &str,
    path: &str,
    bearer: Option<&str>,
    body: Value,
) -> Result<(u16, Value), String> {
    let mut req = http::Request::post(format!("{authn_url}{path}"))
        .header(http::header::CONTENT_TYPE, "application/json");
    if let Some(token) = bearer {
        req = req.header(http::header::AUTHORIZATION, format!("Bearer {token}"));
    }
    let req = req.body(Full::new(Bytes::from(body.to_string()))).map_err(|e| e.to_string())?;
    let res = tokio::time::timeout(Duration::from_secs(10), client.request(req))
        .await
        .map_err(|_| "timeout".to_string())?
        .map_err(|e| e.to_string())?;
    let status = res.status().as_u16();
    let bytes = res.into_body().collect().await.map_err(|e| e.to_string())?.to_bytes();
    Ok((status, serde_json::from_slice(&bytes).unwrap_or(Value::Null)))
}

/// How long a sign-out authn could not take waits before it is sent again: doubling from 1 s,
/// at most [`SIGN_OUT_RETRY_MAX`].
const SIGN_OUT_RETRY_FIRST: Duration = Duration::from_secs(1);
const SIGN_OUT_RETRY_MAX: Duration = Duration::from_secs(10);

/// Asks authn to revoke the session of `token`: whether it did (or the token is no session of
/// its any more), or why it did not.
async fn revoke_at_authn(client: &AuthnClient, authn_url: &str, token: &str) -> Result<(), String> {
    match post(client, authn_url, "/authn.v1.AuthnService/SignOut", Some(token), serde_json::json!({})).await
    {
        Ok((200, _)) => Ok(()),
        // authn no longer takes the token as a session (expired, revoked already).
        Ok((401, _)) => Ok(()),
        Ok((status, body)) => Err(format!("status {status}, code {:?}", body["code"].as_str())),
        Err(error) => Err(error),
    }
}

pub struct AuthnSessions {
    authn_url: String,
    credentials: Credentials,
    client: AuthnClient,
    /// The sessions (by id) whose sign-out is retried in the background: one task each.
    retrying: Arc<std::sync::Mutex<std::collections::HashSet<String>>>,
}

/// Sign-outs retried in the background at once, at most (each is a session this console
/// verified, so a flood needs as many real sessions).
const RETRYING_MAX: usize = 10_000;

impl std::fmt::Debug for AuthnSessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthnSessions").field("authn_url", &self.authn_url).finish_non_exhaustive()
    }
}

impl AuthnSessions {
    /// `credentials`: authn's keys and revoked sessions.
    pub fn new(authn_url: &str, credentials: Credentials) -> Arc<Self> {
        Arc::new(Self {
            authn_url: authn_url.trim_end_matches('/').to_string(),
            credentials,
            client: Client::builder(TokioExecutor::new()).build_http(),
            retrying: Arc::default(),
        })
    }

    async fn post(&self, path: &str, bearer: Option<&str>, body: Value) -> Result<(u16, Value), String> {
        post(&self.client, &self.authn_url, path, bearer, body).await
    }

    /// A failure answer of authn's `OidcService` as the sign-in page's code. authn logged the
    /// reason; an answer that is not one of its codes is logged here.
    fn oidc_failure(status: u16, body: &Value) -> SignInFailure {
        let message = body["message"].as_str().unwrap_or_default();
        match SignInFailure::from_code(message) {
            Some(failure) => failure,
            // authn itself down, restarting or overloaded (a load balancer's 503 included).
            None if matches!(status, 429 | 502..=504) => {
                tracing::warn!(status, "console: authn is unavailable for OIDC sign-in");
                SignInFailure::AuthnUnavailable
            }
            None => {
                tracing::error!(
                    status,
                    code = body["code"].as_str(),
                    "console: authn's OIDC sign-in failed unexpectedly"
                );
                SignInFailure::Failed
            }
        }
    }

    /// Fetches authn's JWKS now and then every minute, for as long as the process runs (sessions
    /// are verified with the keys at hand: a page render never waits for a fetch).
    pub fn spawn_refresh(self: &Arc<Self>) {
        let this = Arc::clone(self);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_secs(60));
            loop {
                tick.tick().await;
                if let Err(error) = this.credentials.keys.refresh().await {
                    tracing::warn!(%error, "console: authn JWKS refresh failed");
                }
            }
        });
    }
}

impl SessionAuthority for AuthnSessions {
    fn dev_sign_in<'a>(
        &'a self,
        email: &'a str,
    ) -> Pin<Box<dyn Future<Output = Result<IssuedSession, SignInError>> + Send + 'a>> {
        Box::pin(async move {
            let (status, body) = self
                .post("/authn.v1.AuthnService/DevSignIn", None, serde_json::json!({"email": email}))
                .await
                .map_err(|error| {
                    tracing::error!(%error, "console: authn unreachable for sign-in");
                    SignInError::Unreachable
                })?;
            match (status, body["code"].as_str()) {
                (200, _) => {
                    let token = body["accessToken"].as_str().unwrap_or_default().to_string();
                    let max_age = body["expiresIn"].as_str().and_then(|s| s.parse().ok()).unwrap_or(3600);
                    if token.is_empty() {
                        tracing::error!("console: authn answered sign-in without a token");
                        return Err(SignInError::Failed);
                    }
                    // Signed with a key this replica has not fetched yet (a rotation moments
                    // ago): learn it now, so the new session's first page is not refused.
                    if let Some(kid) = fundament_tokens::peek_kid(&token)
                        && let Err(error) = self.credentials.keys.learn(&kid).await
                    {
                        tracing::warn!(%error, "console: cannot fetch authn's keys after sign-in");
                    }
                    Ok(IssuedSession { token, max_age })
                }
                (404, Some("not_found")) | (400, Some("invalid_argument")) => Err(SignInError::UnknownUser),
                (404, Some("unimplemented")) => Err(SignInError::Unavailable),
                (429 | 502..=504, code) => {
                    tracing::warn!(status, code, "console: authn is unavailable for sign-in");
                    Err(SignInError::Unreachable)
                }
                (status, code) => {
                    tracing::error!(status, code, "console: authn refused sign-in unexpectedly");
                    Err(SignInError::Failed)
                }
            }
        })
    }

    fn ready(&self) -> Pin<Box<dyn Future<Output = Result<(), String>> + Send + '_>> {
        Box::pin(async move { self.credentials.ready().await.map_err(|reason| reason.to_string()) })
    }

    fn oidc_start<'a>(
        &'a self,
        return_path: &'a str,
        replacing: Option<&'a str>,
    ) -> Pin<Box<dyn Future<Output = Result<OidcStarted, SignInFailure>> + Send + 'a>> {
        Box::pin(async move {
            let body = serde_json::json!({ "returnPath": return_path });
            // The browser's session, as authn takes a caller's: the sign-in's end revokes it.
            let (status, body) =
                self.post("/authn.v1.OidcService/StartSignIn", replacing, body).await.map_err(|error| {
                    tracing::error!(%error, "console: authn unreachable for OIDC sign-in");
                    SignInFailure::AuthnUnavailable
                })?;
            if status != 200 {
                return Err(Self::oidc_failure(status, &body));
            }
            let text = |name: &str| body[name].as_str().unwrap_or_default().to_owned();
            let started = OidcStarted {
                authorization_url: text("authorizationUrl"),
                transaction: text("transaction"),
                max_age: body["expiresIn"].as_str().and_then(|s| s.parse().ok()).unwrap_or(600),
            };
            if started.authorization_url.is_empty() || started.transaction.is_empty() {
                tracing::error!("console: authn started an OIDC sign-in without URL or transaction");
                return Err(SignInFailure::Failed);
            }
            Ok(started)
        })
    }

    fn oidc_finish<'a>(
        &'a self,
        code: &'a str,
        state: &'a str,
        transaction: &'a str,
    ) -> Pin<Box<dyn Future<Output = Result<OidcSignedIn, SignInFailure>> + Send + 'a>> {
        Box::pin(async move {
            let body = serde_json::json!({ "code": code, "state": state, "transaction": transaction });
            let (status, body) =
                self.post("/authn.v1.OidcService/FinishSignIn", None, body).await.map_err(|error| {
                    tracing::error!(%error, "console: authn unreachable for OIDC sign-in");
                    SignInFailure::AuthnUnavailable
                })?;
            if status != 200 {
                return Err(Self::oidc_failure(status, &body));
            }
            let text = |name: &str| body[name].as_str().unwrap_or_default().to_owned();
            let token = text("accessToken");
            if token.is_empty() {
                tracing::error!("console: authn finished an OIDC sign-in without a token");
                return Err(SignInFailure::Failed);
            }
            Ok(OidcSignedIn {
                session: IssuedSession {
                    token,
                    max_age: body["expiresIn"].as_str().and_then(|s| s.parse().ok()).unwrap_or(3600),
                },
                id_token: text("idToken"),
                return_path: text("returnPath"),
            })
        })
    }

    fn oidc_end_session_url<'a>(
        &'a self,
        id_token_hint: &'a str,
    ) -> Pin<Box<dyn Future<Output = Option<String>> + Send + 'a>> {
        Box::pin(async move {
            let body = serde_json::json!({ "idTokenHint": id_token_hint });
            match self.post("/authn.v1.OidcService/EndSessionUrl", None, body).await {
                Ok((200, body)) => body["url"].as_str().filter(|u| !u.is_empty()).map(str::to_owned),
                Ok((status, body)) => {
                    tracing::error!(
                        status,
                        code = body["code"].as_str(),
                        "console: authn gave no end-session URL"
                    );
                    None
                }
                Err(error) => {
                    tracing::error!(%error, "console: authn unreachable for ending the provider's session");
                    None
                }
            }
        })
    }

    fn verify(&self, token: &str) -> Option<SessionUser> {
        let now = time::OffsetDateTime::now_utc().unix_timestamp();
        match self.credentials.verify_user_now(token, now) {
            Ok(c) => Some(SessionUser { id: c.sub, email: c.email, name: c.name }),
            Err(reason) => {
                // A key not at hand (a session of another replica after a rotation): fetch the
                // keys in the background; pages verify with the keys at hand, never waiting.
                if reason
                    == fundament_authn_client::CredentialError::Token(
                        fundament_tokens::TokenError::UnknownKey,
                    )
                    && let Some(kid) = fundament_tokens::peek_kid(token)
                {
                    self.credentials.keys.learn_in_background(&kid);
                }
                tracing::debug!(%reason, "session refused");
                None
            }
        }
    }

    fn sign_out<'a>(&'a self, token: &'a str) -> Pin<Box<dyn Future<Output = SignOutOutcome> + Send + 'a>> {
        Box::pin(async move {
            let now = time::OffsetDateTime::now_utc().unix_timestamp();
            let claims = match self.credentials.keys.verify_user_now(token, now) {
                Ok(claims) => {
                    // This console refuses the session at once, before authn's stream could tell it.
                    self.credentials.revoked.record(&claims.jti, claims.exp);
                    Some(claims)
                }
                // Signed with a key not at hand (another replica's, after a rotation): authn
                // decides whether it is a session, asked once.
                Err(fundament_tokens::TokenError::UnknownKey) => None,
                // Not a live session (forged, malformed, expired, revoked): nothing to end, and
                // authn is not sent a token anyone could have made up.
                Err(reason) => {
                    tracing::debug!(%reason, "sign-out of a token that is no live session");
                    return SignOutOutcome::Ended;
                }
            };
            // A sign-out already being retried is not sent again.
            if let Some(claims) = &claims
                && self
                    .retrying
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .contains(&claims.jti)
            {
                return SignOutOutcome::Pending;
            }
            let Err(error) = revoke_at_authn(&self.client, &self.authn_url, token).await else {
                return SignOutOutcome::Ended;
            };
            let Some(claims) = claims else {
                tracing::error!(%error, "console: authn did not end a session this console cannot verify");
                return SignOutOutcome::Pending;
            };
            // Until authn has it, a copy of the token works everywhere but here: tell authn again
            // for as long as the token would be accepted, one task per session.
            {
                let mut retrying = self.retrying.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                if retrying.contains(&claims.jti) {
                    return SignOutOutcome::Pending;
                }
                if retrying.len() >= RETRYING_MAX {
                    tracing::error!(%error, "console: authn did not end the session, and too many sign-outs wait already");
                    return SignOutOutcome::Pending;
                }
                retrying.insert(claims.jti.clone());
            }
            tracing::error!(%error, "console: authn did not end the session; telling it again in the background");
            let until = claims.exp;
            let (client, authn_url, token) = (self.client.clone(), self.authn_url.clone(), token.to_owned());
            let (retrying, jti) = (Arc::clone(&self.retrying), claims.jti);
            tokio::spawn(
                async move {
                    let mut wait = SIGN_OUT_RETRY_FIRST;
                    loop {
                        tokio::time::sleep(wait).await;
                        match revoke_at_authn(&client, &authn_url, &token).await {
                            Ok(()) => {
                                tracing::info!("console: authn ended the session on a later try");
                                break;
                            }
                            Err(error) => {
                                let now = time::OffsetDateTime::now_utc().unix_timestamp();
                                if !fundament_tokens::accepted_at(until, now) {
                                    tracing::warn!(%error, "console: authn never ended the session; it has expired");
                                    break;
                                }
                                tracing::debug!(%error, "console: authn still does not end the session");
                            }
                        }
                        wait = (wait * 2).min(SIGN_OUT_RETRY_MAX);
                    }
                    retrying.lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(&jti);
                }
                .instrument(tracing::info_span!("sign-out retry")),
            );
            SignOutOutcome::Pending
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A token that is no session of authn's never reaches authn; a real one whose sign-out
    /// authn does not take is retried by one task, however often it is signed out.
    #[tokio::test]
    async fn only_sessions_go_to_authn_and_each_is_retried_once() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let calls = Arc::new(AtomicUsize::new(0));
        let app = axum::Router::new().fallback({
            let calls = Arc::clone(&calls);
            move || {
                calls.fetch_add(1, Ordering::SeqCst);
                async { (http::StatusCode::SERVICE_UNAVAILABLE, "{}") }
            }
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await });
        let signer = fundament_tokens::Signer::generate();
        let verifier = fundament_tokens::Verifier::from_jwks(&signer.jwks()).unwrap();
        let credentials = Credentials {
            keys: fundament_authn_client::Keys::fixed(verifier),
            revoked: fundament_authn_client::RevokedSessions::none(),
        };
        let sessions = AuthnSessions::new(&url, credentials);
        let now = time::OffsetDateTime::now_utc().unix_timestamp();
        let real = signer.sign_user("alice", "alice@acme-corp.com", "alice", now, 3600);
        // The same key id, a signature that does not match (a character inside it changed).
        let mut tampered = real.clone();
        let at = tampered.len() - 10;
        let changed = if &tampered[at..=at] == "A" { "B" } else { "A" };
        tampered.replace_range(at..=at, changed);
        let expired = signer.sign_user("alice", "alice@acme-corp.com", "alice", now - 7200, 3600);
        for token in ["not-a-token", tampered.as_str(), expired.as_str()] {
            assert_eq!(sessions.sign_out(token).await, SignOutOutcome::Ended);
        }
        assert_eq!(calls.load(Ordering::SeqCst), 0, "authn was sent none of them");

        // A key this console does not have (another replica's, after a rotation): authn is
        // asked once, and nothing is retried.
        let other_key = fundament_tokens::Signer::generate().sign_user(
            "alice",
            "alice@acme-corp.com",
            "alice",
            now,
            3600,
        );
        assert_eq!(sessions.sign_out(&other_key).await, SignOutOutcome::Pending);
        assert_eq!(calls.load(Ordering::SeqCst), 1);

        let first = std::time::Instant::now();
        for _ in 0..20 {
            assert_eq!(sessions.sign_out(&real).await, SignOutOutcome::Pending);
        }
        // The first sign-out of the session asked authn, then its task once after 1 s. The 19
        // others found it being retried: nothing sent, no task of their own. The task's call
        // may land late on a loaded machine: wait for it (up to 5 s; the task's next call comes
        // 2 s after this one, so the count is read before that), and at least the 1.5 s in which
        // tasks of the 19 others, had they any, would have called too.
        while calls.load(Ordering::SeqCst) < 3 && first.elapsed() < Duration::from_secs(5) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        tokio::time::sleep(Duration::from_millis(1_500).saturating_sub(first.elapsed())).await;
        assert_eq!(calls.load(Ordering::SeqCst), 3);
        assert_eq!(sessions.retrying.lock().unwrap().len(), 1);
    }

    /// authn's OIDC failures are codes the console must know: an unknown one would show
    /// only "Sign-in failed" instead of the reason.
    #[test]
    fn every_oidc_failure_of_authn_has_its_page_in_the_console() {
        for failure in fundament_authn::oidc::Failure::ALL {
            let body = serde_json::json!({ "code": "permission_denied", "message": failure.code() });
            let shown = AuthnSessions::oidc_failure(403, &body);
            assert_ne!(shown, SignInFailure::Failed, "{}", failure.code());
            assert_eq!(shown.code(), failure.code());
        }
    }
}
